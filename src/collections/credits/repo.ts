// SQL of inbound credits: every credit a provider announced, stored first, then applied once.
import { camelColumns, rowReaders, type Queryable } from '../../platform/db.ts'
import type { CreditStatus } from './states.ts'

export type { CreditStatus } from './states.ts'

export interface InboundCredit {
  id: string
  provider: string
  sessionId: string
  accountNumber: string
  amountKobo: number
  currency: string
  payerName: string | null
  payerAccountNumber: string | null
  payerBankCode: string | null
  narration: string | null
  accountReference: string | null
  creditedAt: Date
  receivedAt: Date
  status: CreditStatus
  partnerId: string | null
  virtualAccountId: string | null
  brr: string | null
  unmatchedReason: string | null
  resolution: Record<string, unknown> | null
  appliedAt: Date | null
  resolvedAt: Date | null
  /** The wallet the credit was paid into (wallet funding by transfer); null for a virtual account's credit. */
  walletId: string | null
  /** How Rail learned of it: the provider's notice, the partner's requery, or the sweep of every account. */
  foundBy: FoundBy
}

export type FoundBy = 'notice' | 'requery' | 'sweep'

const COLUMN_NAMES = `id, provider, session_id, account_number, amount_kobo, currency, payer_name, payer_account_number, payer_bank_code, narration, account_reference, credited_at,
  received_at, status, partner_id, virtual_account_id, brr, unmatched_reason, resolution, applied_at, resolved_at, wallet_id, found_by`
const COLUMNS = camelColumns(COLUMN_NAMES)

/** The columns, qualified for a statement where the credit is `c`. */
const QUALIFIED_COLUMNS = camelColumns(COLUMN_NAMES, 'c')

const { one, all } = rowReaders((row: InboundCredit) => row)

/** A credit as the provider reported it, under Rail's id. */
export type NewCredit = Pick<
  InboundCredit,
  | 'id'
  | 'provider'
  | 'sessionId'
  | 'accountNumber'
  | 'amountKobo'
  | 'currency'
  | 'payerName'
  | 'payerAccountNumber'
  | 'payerBankCode'
  | 'narration'
  | 'accountReference'
  | 'creditedAt'
  | 'foundBy'
>

/**
 * Stores a credit and enqueues the job that applies it, in one statement (so one commit): once
 * per provider session id. Undefined when the session id was stored before (a duplicate notice).
 */
export async function insertCreditWithJob(db: Queryable, credit: NewCredit, task: string): Promise<string | undefined> {
  const result = await db.query<{ id: string }>(
    `WITH inserted AS (
       INSERT INTO inbound_credits (id, provider, session_id, account_number, amount_kobo, currency, payer_name, payer_account_number, payer_bank_code, narration,
                                    account_reference, credited_at, found_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $14)
       ON CONFLICT (provider, session_id) DO NOTHING
       RETURNING id
     )
     SELECT id, (graphile_worker.add_job($13::text, json_build_object('creditId', id), job_key => 'inbound_credit:' || id)).id AS job_id FROM inserted`,
    [
      credit.id,
      credit.provider,
      credit.sessionId,
      credit.accountNumber,
      credit.amountKobo,
      credit.currency,
      credit.payerName,
      credit.payerAccountNumber,
      credit.payerBankCode,
      credit.narration,
      credit.accountReference,
      credit.creditedAt,
      task,
      credit.foundBy,
    ],
  )
  return result.rows[0]?.id
}

/**
 * The unmatched excess of a credit its owner took only part of: a triage item of its own, with
 * the credit's payer, under a session id of its own (`excess-<id>`: the provider's ids are
 * never of that form). It names the credit it was split off (excess_of), whose refundable amount leaves it out.
 */
export async function insertExcess(
  db: Queryable,
  input: {
    id: string
    of: InboundCredit
    amountKobo: number
    partnerId: string
    virtualAccountId: string
    unmatchedReason: string
    at: Date
  },
): Promise<InboundCredit> {
  const result = await db.query<InboundCredit>(
    `INSERT INTO inbound_credits (id, provider, session_id, account_number, amount_kobo, currency, payer_name, payer_account_number, payer_bank_code, narration,
                                  credited_at, status, partner_id, virtual_account_id, unmatched_reason, applied_at, excess_of, found_by)
     SELECT $1::uuid, provider, 'excess-' || $1::text, account_number, $3, currency, payer_name, payer_account_number, payer_bank_code, narration,
            credited_at, 'unmatched', $4, $5, $6, $7, id, found_by
       FROM inbound_credits WHERE id = $2
     RETURNING ${COLUMNS}`,
    [input.id, input.of.id, input.amountKobo, input.partnerId, input.virtualAccountId, input.unmatchedReason, input.at],
  )
  return result.rows[0]!
}

/** Which of these session ids of a provider Rail has stored. */
export async function selectKnownSessions(
  db: Queryable,
  provider: string,
  sessionIds: readonly string[],
): Promise<Set<string>> {
  const result = await db.query<{ session_id: string }>(
    `SELECT session_id FROM inbound_credits WHERE provider = $1 AND session_id = ANY ($2::text[])`,
    [provider, sessionIds],
  )
  return new Set(result.rows.map((row) => row.session_id))
}

export async function selectBySession(
  db: Queryable,
  provider: string,
  sessionId: string,
): Promise<InboundCredit | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM inbound_credits WHERE provider = $1 AND session_id = $2`, [
    provider,
    sessionId,
  ])
}

/** Locks a credit; the caller checks its status (a credit is applied or resolved once). */
export async function lockCredit(db: Queryable, id: string): Promise<InboundCredit | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM inbound_credits WHERE id = $1 FOR UPDATE`, [id])
}

/** The credit's amount less the excess split off it (an overpayment, a triage item of its own); 0 for no such credit. */
export async function selectAmountLessExcessKobo(db: Queryable, id: string): Promise<number> {
  const result = await db.query<{ kobo: string }>(
    `SELECT c.amount_kobo - COALESCE((SELECT sum(e.amount_kobo) FROM inbound_credits e WHERE e.excess_of = c.id), 0) AS kobo
       FROM inbound_credits c WHERE c.id = $1`,
    [id],
  )
  return Number(result.rows[0]?.kobo ?? 0)
}

/** The partner's credits confirmed to an account (applied there, or assigned there by its tracking id), newest first. */
export async function selectConfirmedIds(
  db: Queryable,
  partnerId: string,
  account: { id: string; trackingId: string },
): Promise<string[]> {
  const result = await db.query<{ id: string }>(
    `SELECT id FROM inbound_credits
      WHERE partner_id = $1
        AND ((status = 'applied' AND virtual_account_id = $2) OR (status = 'assigned' AND resolution->>'trackingId' = $3))
      ORDER BY credited_at DESC, id DESC`,
    [partnerId, account.id, account.trackingId],
  )
  return result.rows.map((row) => row.id)
}

/** What a statement line shows of the credits behind it: each one's narration. */
export async function selectNarrations(
  db: Queryable,
  ids: readonly string[],
): Promise<{ id: string; narration: string | null }[]> {
  const result = await db.query<{ id: string; narration: string | null }>(
    `SELECT id, narration FROM inbound_credits WHERE id = ANY ($1::uuid[])`,
    [ids],
  )
  return result.rows
}

export async function selectCredit(db: Queryable, partnerId: string, id: string): Promise<InboundCredit | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM inbound_credits WHERE partner_id = $1 AND id = $2`, [partnerId, id])
}

export async function selectByBrr(db: Queryable, partnerId: string, brr: string): Promise<InboundCredit | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM inbound_credits WHERE partner_id = $1 AND brr = $2`, [partnerId, brr])
}

export async function isReceived(db: Queryable, id: string): Promise<boolean> {
  const result = await db.query<{ status: CreditStatus }>(`SELECT status FROM inbound_credits WHERE id = $1`, [id])
  return result.rows[0]?.status === 'received'
}

/**
 * Locks received credits for one batch: this one first (if no other batch holds it), then the
 * oldest others no other batch holds.
 */
export async function claimReceived(db: Queryable, firstId: string, limit: number): Promise<InboundCredit[]> {
  const first = await db.query<InboundCredit>(
    `SELECT ${COLUMNS} FROM inbound_credits WHERE id = $1 AND status = 'received' FOR UPDATE SKIP LOCKED`,
    [firstId],
  )
  // Credits that failed when applied alone are left to their own jobs: in a batch they would fail it.
  const others = await db.query<InboundCredit>(
    `SELECT ${COLUMNS} FROM inbound_credits WHERE status = 'received' AND apply_failures = 0 AND id <> $1 ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [firstId, limit - first.rows.length],
  )
  return [...first.rows, ...others.rows]
}

/** A credit failed when applied alone: later batches leave it to its own job. */
export async function countApplyFailure(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE inbound_credits SET apply_failures = apply_failures + 1 WHERE id = $1`, [id])
}

export interface Settlement {
  id: string
  status: 'applied' | 'unmatched' | 'unattributed'
  partnerId: string | null
  virtualAccountId: string | null
  brr: string | null
  unmatchedReason: string | null
  /** The wallet the credit was paid into (wallet funding by transfer), else null. */
  walletId: string | null
}

/** Settles many received credits in one statement, at `at` (the caller's clock); answers them as settled. */
export async function settleMany(
  db: Queryable,
  settlements: readonly Settlement[],
  at: Date,
): Promise<InboundCredit[]> {
  if (settlements.length === 0) return []
  const result = await db.query<InboundCredit>(
    `UPDATE inbound_credits c
        SET status = u.status, partner_id = u.partner_id, virtual_account_id = u.virtual_account_id, brr = u.brr, unmatched_reason = u.unmatched_reason, wallet_id = u.wallet_id,
            applied_at = $8
       FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::uuid[]) AS u(id, status, partner_id, virtual_account_id, brr, unmatched_reason, wallet_id)
      WHERE c.id = u.id AND c.status = 'received'
      RETURNING ${QUALIFIED_COLUMNS}`,
    [
      settlements.map((item) => item.id),
      settlements.map((item) => item.status),
      settlements.map((item) => item.partnerId),
      settlements.map((item) => item.virtualAccountId),
      settlements.map((item) => item.brr),
      settlements.map((item) => item.unmatchedReason),
      settlements.map((item) => item.walletId),
      at,
    ],
  )
  if (result.rows.length !== settlements.length)
    throw new Error(`settled ${result.rows.length} of ${settlements.length} credits: some were not received`)
  return result.rows
}

/** Drops the apply jobs of credits a batch applied (jobs already running are left to find them done). */
export async function removeApplyJobs(db: Queryable, creditIds: string[]): Promise<void> {
  if (creditIds.length === 0) return
  await db.query(`SELECT graphile_worker.remove_job('inbound_credit:' || id) FROM unnest($1::text[]) AS id`, [
    creditIds,
  ])
}

/** Triage settles an unmatched credit at `at` (the caller's clock), once: undefined when it is not (or no longer) unmatched. */
export async function resolveUnmatched(
  db: Queryable,
  id: string,
  status: 'refund_pending' | 'assigned',
  resolution: Record<string, unknown>,
  at: Date,
): Promise<InboundCredit | undefined> {
  return one(
    db,
    `UPDATE inbound_credits SET status = $2, resolution = $3, resolved_at = $4 WHERE id = $1 AND status = 'unmatched' RETURNING ${COLUMNS}`,
    [id, status, JSON.stringify(resolution), at],
  )
}

/** The refund was paid: refund_pending → refunded, at `at` (the caller's clock). */
export async function markRefunded(db: Queryable, id: string, at: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE inbound_credits SET status = 'refunded', resolved_at = $2 WHERE id = $1 AND status = 'refund_pending'`,
    [id, at],
  )
  return rowCount === 1
}

/** The refund payout failed: refund_pending → unmatched again, with what was tried. */
export async function reopenAfterFailedRefund(
  db: Queryable,
  id: string,
  resolution: Record<string, unknown>,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE inbound_credits SET status = 'unmatched', resolution = $2, resolved_at = NULL WHERE id = $1 AND status = 'refund_pending'`,
    [id, JSON.stringify(resolution)],
  )
  return rowCount === 1
}

/** The triage list: credits that were unmatched (still, or since resolved), newest first. */
export async function listTriage(
  db: Queryable,
  query: { partnerId: string; status?: CreditStatus; limit: number; cursor?: string },
): Promise<InboundCredit[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM inbound_credits
      WHERE partner_id = $1 AND unmatched_reason IS NOT NULL AND ($2::text IS NULL OR status = $2) AND ($3::uuid IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [query.partnerId, query.status ?? null, query.cursor ?? null, query.limit],
  )
}

/** A partner's credits, newest first: all of them, or of one status, or of one virtual account. */
export async function listByPartner(
  db: Queryable,
  query: { partnerId: string; status?: CreditStatus; virtualAccountId?: string; limit: number; cursor?: string },
): Promise<InboundCredit[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM inbound_credits
      WHERE partner_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::uuid IS NULL OR virtual_account_id = $3) AND ($4::uuid IS NULL OR id < $4)
      ORDER BY id DESC LIMIT $5`,
    [query.partnerId, query.status ?? null, query.virtualAccountId ?? null, query.cursor ?? null, query.limit],
  )
}

export async function listByAccount(db: Queryable, virtualAccountId: string, limit: number): Promise<InboundCredit[]> {
  return all(db, `SELECT ${COLUMNS} FROM inbound_credits WHERE virtual_account_id = $1 ORDER BY id DESC LIMIT $2`, [
    virtualAccountId,
    limit,
  ])
}

/** Credits stored a while ago and still not applied: their job was lost with a worker, or failed for good. */
export async function selectStranded(db: Queryable, olderThanS: number, limit: number): Promise<string[]> {
  const result = await db.query<{ id: string }>(
    `SELECT id FROM inbound_credits WHERE status = 'received' AND received_at < now() - make_interval(secs => $1) ORDER BY received_at LIMIT $2`,
    [olderThanS, limit],
  )
  return result.rows.map((row) => row.id)
}

/** Credits received for the partner in [from, before): how many and how much, and how many of them are unmatched. */
export async function selectReceivedVolume(
  db: Queryable,
  partnerId: string,
  from: Date,
  before: Date,
): Promise<{ count: number; amountKobo: number; unmatchedCount: number }> {
  const { rows } = await db.query<{ count: number; amount_kobo: string; unmatched_count: number }>(
    `SELECT count(*)::int AS count, coalesce(sum(amount_kobo), 0)::text AS amount_kobo, (count(*) FILTER (WHERE status = 'unmatched'))::int AS unmatched_count
       FROM inbound_credits WHERE partner_id = $1 AND received_at >= $2 AND received_at < $3`,
    [partnerId, from, before],
  )
  const row = rows[0]!
  return { count: row.count, amountKobo: Number(row.amount_kobo), unmatchedCount: row.unmatched_count }
}
