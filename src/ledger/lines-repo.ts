// SQL of an account's lines, as statements read them. A line is a transfer that changed the
// account's booked balance — phase single, or the post of a hold — and its running balance is the
// one the ledger stored on that side of it when it was applied (`debit_booked_after` /
// `credit_booked_after`, written under the account's row lock, so the account's lines in sequence
// order chain exactly: each line's balance is the previous one's plus or minus its amount).
import type { Queryable } from '../platform/db.ts'
import type { AccountKind } from './types.ts'

/** The greatest sequence a page can start below: "no cursor". */
export const NO_UPPER_SEQUENCE = Number.MAX_SAFE_INTEGER

export interface LedgerLine {
  id: string
  sequence: number
  code: string
  sourceType: string | null
  sourceId: string | null
  amountKobo: number
  isCredit: boolean
  bookedAfterKobo: number
  postedAt: Date
}

/** The sequences bounding a from/to range ($1 account, $2 from, $3 to). */
export const RANGE_SQL = `SELECT
    (SELECT sequence FROM (
       (SELECT sequence, created_at FROM ledger_transfers
         WHERE debit_account_id = $1 AND phase IN ('single', 'post') AND created_at >= $2 ORDER BY created_at, sequence LIMIT 1)
       UNION ALL
       (SELECT sequence, created_at FROM ledger_transfers
         WHERE credit_account_id = $1 AND phase IN ('single', 'post') AND created_at >= $2 ORDER BY created_at, sequence LIMIT 1)
     ) earliest ORDER BY created_at, sequence LIMIT 1) AS first,
    (SELECT sequence FROM (
       (SELECT sequence, created_at FROM ledger_transfers
         WHERE debit_account_id = $1 AND phase IN ('single', 'post') AND created_at < $3 ORDER BY created_at DESC, sequence DESC LIMIT 1)
       UNION ALL
       (SELECT sequence, created_at FROM ledger_transfers
         WHERE credit_account_id = $1 AND phase IN ('single', 'post') AND created_at < $3 ORDER BY created_at DESC, sequence DESC LIMIT 1)
     ) latest ORDER BY created_at DESC, sequence DESC LIMIT 1) AS last`

/** A page of lines ($1 account, $2 lowest and $3 highest sequence, $4 limit). */
export const LINES_SQL = `(SELECT id, sequence, code, source_type, source_id, amount_kobo, false AS is_credit, debit_booked_after AS booked_after, created_at
       FROM ledger_transfers
      WHERE debit_account_id = $1 AND phase IN ('single', 'post') AND sequence BETWEEN $2 AND $3
      ORDER BY sequence DESC LIMIT $4)
    UNION ALL
    (SELECT id, sequence, code, source_type, source_id, amount_kobo, true, credit_booked_after, created_at
       FROM ledger_transfers
      WHERE credit_account_id = $1 AND phase IN ('single', 'post') AND sequence BETWEEN $2 AND $3
      ORDER BY sequence DESC LIMIT $4)
    ORDER BY sequence DESC LIMIT $4`

/** The booked balance after the last line at or below a sequence ($1 account, $2 sequence). */
export const BOOKED_AT_SQL = `(SELECT sequence, debit_booked_after AS booked_after FROM ledger_transfers
    WHERE debit_account_id = $1 AND phase IN ('single', 'post') AND sequence <= $2 ORDER BY sequence DESC LIMIT 1)
  UNION ALL
  (SELECT sequence, credit_booked_after FROM ledger_transfers
    WHERE credit_account_id = $1 AND phase IN ('single', 'post') AND sequence <= $2 ORDER BY sequence DESC LIMIT 1)
  ORDER BY sequence DESC LIMIT 1`

/** The partner's account of this kind and currency, if it was ever made (a read makes none). */
export async function selectPartnerAccountId(
  db: Queryable,
  partnerId: string,
  currency: string,
  kind: AccountKind,
): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM ledger_accounts WHERE partner_id = $1 AND currency = $2 AND kind = $3`,
    [partnerId, currency, kind],
  )
  return rows[0]?.id
}

/**
 * The sequences of the account's first line posted at or after `from` and of its last line posted
 * before `to` (null: no such line). One probe of each side's (account, created_at, sequence) index.
 */
export async function selectRangeSequences(
  db: Queryable,
  accountId: string,
  from: Date,
  to: Date,
): Promise<{ first: number | null; last: number | null }> {
  const { rows } = await db.query<{ first: number | null; last: number | null }>(RANGE_SQL, [accountId, from, to])
  return rows[0]!
}

/**
 * The account's lines with `lowest` <= sequence <= `highest`, newest first, at most `limit`: each
 * side is a backward range scan of its (account, sequence) index that stops after `limit` rows.
 */
export async function selectLines(
  db: Queryable,
  accountId: string,
  lowest: number,
  highest: number,
  limit: number,
): Promise<LedgerLine[]> {
  const { rows } = await db.query<{
    id: string
    sequence: number
    code: string
    source_type: string | null
    source_id: string | null
    amount_kobo: number
    is_credit: boolean
    booked_after: number
    created_at: Date
  }>(LINES_SQL, [accountId, lowest, highest, limit])
  return rows.map((row) => ({
    id: row.id,
    sequence: row.sequence,
    code: row.code,
    sourceType: row.source_type,
    sourceId: row.source_id,
    amountKobo: row.amount_kobo,
    isCredit: row.is_credit,
    bookedAfterKobo: row.booked_after,
    postedAt: row.created_at,
  }))
}

/** The account's booked balance after its last line with sequence <= `highest` (0 before its first). */
export async function selectBookedAt(db: Queryable, accountId: string, highest: number): Promise<number> {
  const { rows } = await db.query<{ booked_after: number }>(BOOKED_AT_SQL, [accountId, highest])
  return rows[0]?.booked_after ?? 0
}

export interface AccountFigures {
  bookedKobo: number
  availableKobo: number
}

/** The partner's accounts of these kinds in one currency: booked and available, by kind (an account never made is absent). */
export async function selectPartnerFigures(
  db: Queryable,
  partnerId: string,
  currency: string,
  kinds: readonly AccountKind[],
): Promise<Partial<Record<AccountKind, AccountFigures>>> {
  const { rows } = await db.query<{ accounts: Partial<Record<AccountKind, AccountFigures>> | null }>(
    `SELECT json_object_agg(kind, json_build_object('bookedKobo', credits_posted - debits_posted, 'availableKobo', credits_posted - debits_posted - debits_pending)) AS accounts
       FROM ledger_accounts
      WHERE partner_id = $1 AND currency = $2 AND kind = ANY ($3::text[])`,
    [partnerId, currency, kinds],
  )
  return rows[0]?.accounts ?? {}
}

/** How many of these transfers are holds still pending, and what they hold, in kobo. */
export async function selectPendingHolds(
  db: Queryable,
  transferIds: readonly string[],
): Promise<{ count: number; amountKobo: number }> {
  const { rows } = await db.query<{ count: number; amount: number }>(
    `SELECT count(*)::int AS count, COALESCE(sum(hold.amount_kobo), 0)::bigint AS amount
       FROM ledger_pending_transfers pending
       JOIN ledger_transfers hold ON hold.id = pending.transfer_id
      WHERE pending.transfer_id = ANY ($1::uuid[]) AND pending.status = 'pending'`,
    [transferIds],
  )
  return { count: rows[0]!.count, amountKobo: rows[0]!.amount }
}
