// SQL of balances and statements. Reads only: the ledger is the truth (docs/statements.md). A line
// is a transfer that changed the account's booked balance — phase single, or the post of a hold —
// and its running balance is the one the ledger stored on that side of it when it was applied
// (`debit_booked_after` / `credit_booked_after`, written under the account's row lock, so the
// account's lines in sequence order chain exactly: each line's balance is the previous one's plus
// or minus its amount).
import type { Queryable } from '../platform/db.ts'

// A source id is cast to uuid only when it is one: a line is never refused for its source's id.
const UUID_TEXT = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'

/** The greatest sequence a page can start below: "no cursor". */
export const NO_UPPER_SEQUENCE = Number.MAX_SAFE_INTEGER

export interface LineRow {
  id: string
  sequence: number
  code: string
  sourceType: string | null
  sourceId: string | null
  originType: string | null
  /** The handle the partner knows the object by, where it is not its id: a move's or payout's reference, an escrow's ref. */
  objectReference: string | null
  amountKobo: number
  isCredit: boolean
  bookedAfterKobo: number
  postedAt: Date
  narration: string | null
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

/** A page of lines ($1 account, $2 lowest and $3 highest sequence, $4 limit, $5 the UUID pattern). */
export const LINES_SQL = `WITH lines AS (
    (SELECT id, sequence, code, source_type, source_id, amount_kobo, false AS is_credit, debit_booked_after AS booked_after, created_at
       FROM ledger_transfers
      WHERE debit_account_id = $1 AND phase IN ('single', 'post') AND sequence BETWEEN $2 AND $3
      ORDER BY sequence DESC LIMIT $4)
    UNION ALL
    (SELECT id, sequence, code, source_type, source_id, amount_kobo, true, credit_booked_after, created_at
       FROM ledger_transfers
      WHERE credit_account_id = $1 AND phase IN ('single', 'post') AND sequence BETWEEN $2 AND $3
      ORDER BY sequence DESC LIMIT $4)
    ORDER BY sequence DESC LIMIT $4
  )
  SELECT l.*, o.origin_type, COALESCE(m.reference, o.client_reference, e.ref) AS object_reference,
         COALESCE(m.narration, o.narration, c.narration) AS narration
    FROM lines l
    LEFT JOIN LATERAL (SELECT origin_type, client_reference, narration FROM outbound_transfers
                        WHERE id = CASE WHEN l.source_type = 'outbound_transfer' AND l.source_id ~ $5 THEN l.source_id::uuid END LIMIT 1) o ON true
    LEFT JOIN LATERAL (SELECT reference, narration FROM wallet_moves
                        WHERE id = CASE WHEN l.source_type = 'wallet_move' AND l.source_id ~ $5 THEN l.source_id::uuid END LIMIT 1) m ON true
    LEFT JOIN LATERAL (SELECT narration FROM inbound_credits
                        WHERE id = CASE WHEN l.source_type = 'inbound_credit' AND l.source_id ~ $5 THEN l.source_id::uuid END LIMIT 1) c ON true
    LEFT JOIN LATERAL (SELECT ref FROM escrows
                        WHERE id = CASE WHEN l.source_type = 'escrow' AND l.source_id ~ $5 THEN l.source_id::uuid END LIMIT 1) e ON true
   ORDER BY l.sequence DESC`

/** The booked balance after the last line at or below a sequence ($1 account, $2 sequence). */
export const BOOKED_AT_SQL = `(SELECT sequence, debit_booked_after AS booked_after FROM ledger_transfers
    WHERE debit_account_id = $1 AND phase IN ('single', 'post') AND sequence <= $2 ORDER BY sequence DESC LIMIT 1)
  UNION ALL
  (SELECT sequence, credit_booked_after FROM ledger_transfers
    WHERE credit_account_id = $1 AND phase IN ('single', 'post') AND sequence <= $2 ORDER BY sequence DESC LIMIT 1)
  ORDER BY sequence DESC LIMIT 1`

export async function selectPartnerAccountId(db: Queryable, partnerId: string, currency: string, kind: 'float' | 'collections'): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>(`SELECT id FROM ledger_accounts WHERE partner_id = $1 AND currency = $2 AND kind = $3`, [partnerId, currency, kind])
  return rows[0]?.id
}

/**
 * The sequences of the account's first line posted at or after `from` and of its last line posted
 * before `to` (null: no such line). One probe of each side's (account, created_at, sequence) index.
 */
export async function selectRangeSequences(db: Queryable, accountId: string, from: Date, to: Date): Promise<{ first: number | null; last: number | null }> {
  const { rows } = await db.query<{ first: number | null; last: number | null }>(
    RANGE_SQL,
    [accountId, from, to],
  )
  return rows[0]!
}

/**
 * The account's lines with `lowest` <= sequence <= `highest`, newest first, at most `limit`: each
 * side is a backward range scan of its (account, sequence) index that stops after `limit` rows.
 * The object behind each line is looked up by its id (one primary-key probe per line — LIMIT 1 keeps
 * each look-up a subquery of its own, never a join planned as a scan of the object's table) for its narration, the handle the partner knows it by, and a payout's origin.
 */
export async function selectLines(db: Queryable, accountId: string, lowest: number, highest: number, limit: number): Promise<LineRow[]> {
  const { rows } = await db.query<{
    id: string
    sequence: number
    code: string
    source_type: string | null
    source_id: string | null
    origin_type: string | null
    object_reference: string | null
    amount_kobo: number
    is_credit: boolean
    booked_after: number
    created_at: Date
    narration: string | null
  }>(
    LINES_SQL,
    [accountId, lowest, highest, limit, UUID_TEXT],
  )
  return rows.map((row) => ({
    id: row.id,
    sequence: row.sequence,
    code: row.code,
    sourceType: row.source_type,
    sourceId: row.source_id,
    originType: row.origin_type,
    objectReference: row.object_reference,
    amountKobo: row.amount_kobo,
    isCredit: row.is_credit,
    bookedAfterKobo: row.booked_after,
    postedAt: row.created_at,
    narration: row.narration,
  }))
}

/** The account's booked balance after its last line with sequence <= `highest` (0 before its first). */
export async function selectBookedAt(db: Queryable, accountId: string, highest: number): Promise<number> {
  const { rows } = await db.query<{ booked_after: number }>(
    BOOKED_AT_SQL,
    [accountId, highest],
  )
  return rows[0]?.booked_after ?? 0
}

export interface AccountFigures {
  bookedKobo: number
  availableKobo: number
}

export interface PartnerBalancesRow {
  float: AccountFigures | null
  collections: AccountFigures | null
  escrowHolding: AccountFigures | null
  pendingPayoutCount: number
  pendingPayoutKobo: number
}

/**
 * The partner's float, collections and escrow holding accounts, and its payouts in flight, in one
 * statement (one snapshot). A payout in flight is an outbound transfer not yet final whose hold
 * is still pending in the ledger; its amount is the hold's.
 */
export async function selectPartnerBalances(db: Queryable, partnerId: string, currency: string): Promise<PartnerBalancesRow> {
  const { rows } = await db.query<{ accounts: Record<string, AccountFigures> | null; count: number; amount: number }>(
    `WITH accounts AS (
       SELECT kind, credits_posted - debits_posted AS booked, credits_posted - debits_posted - debits_pending AS available
         FROM ledger_accounts
        WHERE partner_id = $1 AND currency = $2 AND kind IN ('float', 'collections', 'escrow_holding')
     ), in_flight AS (
       SELECT count(*)::int AS count, COALESCE(sum(hold.amount_kobo), 0)::bigint AS amount
         FROM outbound_transfers o
         JOIN ledger_pending_transfers pending ON pending.transfer_id = o.hold_transfer_id AND pending.status = 'pending'
         JOIN ledger_transfers hold ON hold.id = o.hold_transfer_id
        WHERE o.partner_id = $1 AND o.currency = $2 AND o.state IN ('pending', 'submitted', 'unknown')
     )
     SELECT (SELECT json_object_agg(kind, json_build_object('bookedKobo', booked, 'availableKobo', available)) FROM accounts) AS accounts,
            in_flight.count, in_flight.amount
       FROM in_flight`,
    [partnerId, currency],
  )
  const row = rows[0]!
  const accounts = row.accounts ?? {}
  return {
    float: accounts.float ?? null,
    collections: accounts.collections ?? null,
    escrowHolding: accounts.escrow_holding ?? null,
    pendingPayoutCount: row.count,
    pendingPayoutKobo: row.amount,
  }
}
