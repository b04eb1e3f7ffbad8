// SQL of escrows. The camelCase ↔ snake_case mapping lives here; the funding credits
// (credits-repo.ts) and the registered webhook (webhooks-repo.ts) have their own.
import { camelColumns, rowReaders, type Queryable } from '../platform/db.ts'
import {
  disbursementStates,
  escrowRefundStates,
  escrowStates,
  type DisbursementState,
  type EscrowRefundState,
  type EscrowStatus,
} from './states.ts'

export { insertFundingCredit, selectFundingCredits, type FundingCredit } from './credits-repo.ts'
export { selectWebhook, upsertWebhook, type EscrowWebhook } from './webhooks-repo.ts'

export type EscrowType = 'goods' | 'services' | 'property' | 'conditional'

/** A bank account the released amount is paid to (NUBAN-checked before it is stored). */
export interface Destination {
  accountNumber: string
  bankCode: string
  accountName: string
}

/** Why a disbursement's payout failed, as the payout says. */
export type FailureReason = Record<string, unknown>

export interface Escrow {
  id: string
  partnerId: string
  ref: string
  reference: string | null
  requestHash: string
  type: EscrowType
  status: EscrowStatus
  amountKobo: number
  fundedAmountKobo: number
  currency: string
  description: string
  payerEmail: string
  recipientEmail: string
  metadata: Record<string, unknown>
  webhookUrl: string | null
  fundingPaymentIntentId: string | null
  /** Where the amount goes at release; null: the partner's float. */
  destination: Destination | null
  disbursementState: DisbursementState | null
  disbursementOutboundTransferId: string | null
  disbursementFailureReason: FailureReason | null
  disbursementAttempts: number
  refundState: EscrowRefundState | null
  releaseReason: string | null
  cancelReason: string | null
  createdAt: Date
  expiresAt: Date
  fundedAt: Date | null
  releasedAt: Date | null
  cancelledAt: Date | null
  expiredAt: Date | null
}

const COLUMNS =
  camelColumns(`id, partner_id, ref, reference, request_hash, type, status, amount_kobo, funded_amount_kobo, currency, description, payer_email,
  recipient_email, metadata, webhook_url, funding_payment_intent_id, disbursement_account_number, disbursement_bank_code,
  disbursement_account_name, disbursement_state, disbursement_outbound_transfer_id, disbursement_failure_reason, disbursement_attempts,
  refund_state, release_reason, cancel_reason, created_at, expires_at, funded_at, released_at, cancelled_at, expired_at`)

/** An escrow as its row holds it: the destination in three columns, all null when there is none. */
type EscrowRow = Omit<Escrow, 'destination'> & {
  disbursementAccountNumber: string | null
  disbursementBankCode: string | null
  disbursementAccountName: string | null
}

function toEscrow(row: EscrowRow): Escrow {
  const { disbursementAccountNumber: accountNumber, disbursementBankCode, disbursementAccountName, ...escrow } = row
  const destination =
    accountNumber === null
      ? null
      : { accountNumber, bankCode: disbursementBankCode!, accountName: disbursementAccountName! }
  return { ...escrow, destination }
}

const { one, all } = rowReaders(toEscrow)

export type NewEscrow = Pick<
  Escrow,
  | 'id'
  | 'partnerId'
  | 'ref'
  | 'reference'
  | 'requestHash'
  | 'type'
  | 'amountKobo'
  | 'currency'
  | 'description'
  | 'payerEmail'
  | 'recipientEmail'
  | 'metadata'
  | 'webhookUrl'
  | 'destination'
  | 'createdAt'
  | 'expiresAt'
>

/** Inserts the escrow unless its reference is taken (then undefined: read the existing one). */
export async function insertEscrow(db: Queryable, escrow: NewEscrow): Promise<Escrow | undefined> {
  return one(
    db,
    `INSERT INTO escrows (id, partner_id, ref, reference, request_hash, type, status, amount_kobo, currency, description, payer_email,
                          recipient_email, metadata, webhook_url, created_at, expires_at,
                          disbursement_account_number, disbursement_bank_code, disbursement_account_name)
     VALUES ($1, $2, $3, $4, $5, $6, 'initiated', $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
     ON CONFLICT (partner_id, reference) WHERE reference IS NOT NULL DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      escrow.id,
      escrow.partnerId,
      escrow.ref,
      escrow.reference,
      escrow.requestHash,
      escrow.type,
      escrow.amountKobo,
      escrow.currency,
      escrow.description,
      escrow.payerEmail,
      escrow.recipientEmail,
      JSON.stringify(escrow.metadata),
      escrow.webhookUrl,
      escrow.createdAt,
      escrow.expiresAt,
      escrow.destination?.accountNumber ?? null,
      escrow.destination?.bankCode ?? null,
      escrow.destination?.accountName ?? null,
    ],
  )
}

export async function selectByRef(db: Queryable, partnerId: string, ref: string): Promise<Escrow | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM escrows WHERE partner_id = $1 AND ref = $2`, [partnerId, ref])
}

export async function selectById(db: Queryable, partnerId: string, id: string): Promise<Escrow | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM escrows WHERE partner_id = $1 AND id = $2`, [partnerId, id])
}

export async function selectByReference(
  db: Queryable,
  partnerId: string,
  reference: string,
): Promise<Escrow | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM escrows WHERE partner_id = $1 AND reference = $2`, [partnerId, reference])
}

/** Locks the escrow for a change of funding; undefined when it does not exist or is another partner's. */
export async function selectForUpdate(db: Queryable, id: string, partnerId: string): Promise<Escrow | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM escrows WHERE id = $1 AND partner_id = $2 FOR UPDATE`, [id, partnerId])
}

/** Which escrow a transition names: by the partner's ref (API), or by id (jobs). */
export type EscrowKey = { partnerId: string; ref: string } | { id: string }

export interface TransitionFields {
  at: Date
  reason?: string | null
  /** Expiry only: the TTL must have elapsed by `at` (checked in the same statement). */
  dueBy?: Date
}

const STAMP_COLUMN: Partial<Record<EscrowStatus, string>> = {
  released: 'released_at',
  cancelled: 'cancelled_at',
  expired: 'expired_at',
}

const REASON_COLUMN: Partial<Record<EscrowStatus, string>> = { released: 'release_reason', cancelled: 'cancel_reason' }

/**
 * Moves an escrow to a terminal status if its current status allows it (the transition table, in
 * SQL). Returns the changed escrow, or undefined when it is in another status (or absent): the
 * first of several racing changes wins, the others change nothing.
 */
export async function transition(
  db: Queryable,
  key: EscrowKey,
  next: 'released' | 'cancelled' | 'expired',
  fields: TransitionFields,
): Promise<Escrow | undefined> {
  const params: unknown[] = [next, escrowStates.from(next), fields.at]
  const param = (value: unknown, type: string) => `$${params.push(value)}::${type}`
  const sets = [`status = $1`, `${STAMP_COLUMN[next]!} = $3`]
  const reasonColumn = REASON_COLUMN[next]
  if (reasonColumn) sets.push(`${reasonColumn} = ${param(fields.reason ?? null, 'text')}`)
  const where = ['status = ANY ($2::text[])']
  if ('id' in key) where.push(`id = ${param(key.id, 'uuid')}`)
  else where.push(`partner_id = ${param(key.partnerId, 'uuid')}`, `ref = ${param(key.ref, 'text')}`)
  // Due by the partner's time (its sandbox test clock, or the given time for a live partner).
  if (fields.dueBy) where.push(`expires_at <= partner_now(partner_id, ${param(fields.dueBy, 'timestamptz')})`)
  return one(db, `UPDATE escrows SET ${sets.join(', ')} WHERE ${where.join(' AND ')} RETURNING ${COLUMNS}`, params)
}

/**
 * Adds a credit to an initiated escrow (locked by the caller) and makes it funded once the credits
 * reach the amount.
 */
export async function addFunding(db: Queryable, id: string, amountKobo: number, at: Date): Promise<Escrow> {
  const { rows } = await db.query<EscrowRow>(
    `UPDATE escrows
        SET funded_amount_kobo = funded_amount_kobo + $2,
            status = CASE WHEN funded_amount_kobo + $2 >= amount_kobo THEN 'funded' ELSE status END,
            funded_at = CASE WHEN funded_amount_kobo + $2 >= amount_kobo THEN $3 ELSE funded_at END
      WHERE id = $1 AND status = 'initiated'
      RETURNING ${COLUMNS}`,
    [id, amountKobo, at],
  )
  if (!rows[0]) throw new Error(`escrow ${id}: funding added to an escrow that is not initiated`)
  return toEscrow(rows[0])
}

/** Names the payment intent whose account funds the escrow (composed at create). */
export async function setFundingIntent(db: Queryable, id: string, paymentIntentId: string): Promise<Escrow> {
  const { rows } = await db.query<EscrowRow>(
    `UPDATE escrows SET funding_payment_intent_id = $2 WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, paymentIntentId],
  )
  return toEscrow(rows[0]!)
}

// ---- disbursement ---------------------------------------------------------------------------

/**
 * Starts a disbursement of a released escrow whose disbursement is in `from` (null: none yet, the
 * release itself; 'failed': a retry): pending, one more attempt, the destination replaced when
 * one is given. Undefined when the escrow is elsewhere (a racing release or retry won).
 */
export async function startDisbursement(
  db: Queryable,
  key: EscrowKey,
  from: DisbursementState | null,
  destination: Destination | undefined,
): Promise<Escrow | undefined> {
  const allowed = disbursementStates.from('pending')
  if (from !== null && !allowed.includes(from)) throw new Error(`escrow disbursement: pending does not follow ${from}`)
  const params: unknown[] = [
    from,
    destination?.accountNumber ?? null,
    destination?.bankCode ?? null,
    destination?.accountName ?? null,
    destination !== undefined,
  ]
  const where = keyCondition(key, params)
  return one(
    db,
    `UPDATE escrows
        SET disbursement_state = 'pending',
            disbursement_attempts = disbursement_attempts + 1,
            disbursement_outbound_transfer_id = NULL,
            disbursement_failure_reason = NULL,
            disbursement_account_number = CASE WHEN $5 THEN $2 ELSE disbursement_account_number END,
            disbursement_bank_code = CASE WHEN $5 THEN $3 ELSE disbursement_bank_code END,
            disbursement_account_name = CASE WHEN $5 THEN $4 ELSE disbursement_account_name END
      WHERE status = 'released' AND disbursement_state IS NOT DISTINCT FROM $1::text AND ${where}
      RETURNING ${COLUMNS}`,
    params,
  )
}

function keyCondition(key: EscrowKey, params: unknown[]): string {
  if ('id' in key) return `id = $${params.push(key.id)}::uuid`
  return `partner_id = $${params.push(key.partnerId)}::uuid AND ref = $${params.push(key.ref)}::text`
}

/** Names the payout of a pending bank disbursement. */
export async function setDisbursementPayout(db: Queryable, id: string, outboundTransferId: string): Promise<Escrow> {
  const { rows } = await db.query<EscrowRow>(
    `UPDATE escrows SET disbursement_outbound_transfer_id = $2 WHERE id = $1 AND disbursement_state = 'pending' RETURNING ${COLUMNS}`,
    [id, outboundTransferId],
  )
  if (!rows[0]) throw new Error(`escrow ${id}: a payout named for a disbursement that is not pending`)
  return toEscrow(rows[0])
}

/**
 * Ends a pending disbursement: paid or failed. With a payout, only the disbursement that payout is
 * for (a late answer about an earlier attempt changes nothing). Undefined when it ended already.
 */
export async function endDisbursement(
  db: Queryable,
  id: string,
  next: 'paid' | 'failed',
  outboundTransferId: string | null,
  failureReason: FailureReason | null,
): Promise<Escrow | undefined> {
  return one(
    db,
    `UPDATE escrows SET disbursement_state = $2, disbursement_failure_reason = $4
      WHERE id = $1 AND disbursement_state = ANY ($5::text[]) AND disbursement_outbound_transfer_id IS NOT DISTINCT FROM $3::uuid
      RETURNING ${COLUMNS}`,
    [
      id,
      next,
      outboundTransferId,
      failureReason === null ? null : JSON.stringify(failureReason),
      disbursementStates.from(next),
    ],
  )
}

// ---- funding credits and refunds --------------------------------------------------------------

/** Locks an escrow by id (whatever its partner), for a change of its refund. */
export async function lockById(db: Queryable, id: string): Promise<Escrow | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM escrows WHERE id = $1 FOR UPDATE`, [id])
}

/** Starts the escrow's refund (pending), once: undefined when it was started before. */
export async function beginRefund(db: Queryable, id: string): Promise<Escrow | undefined> {
  return one(
    db,
    `UPDATE escrows SET refund_state = 'pending' WHERE id = $1 AND refund_state IS NULL RETURNING ${COLUMNS}`,
    [id],
  )
}

/** Moves the escrow's refund state when the table allows it; undefined otherwise. */
export async function setRefundState(db: Queryable, id: string, next: EscrowRefundState): Promise<Escrow | undefined> {
  return one(
    db,
    `UPDATE escrows SET refund_state = $2 WHERE id = $1 AND refund_state = ANY ($3::text[]) RETURNING ${COLUMNS}`,
    [id, next, escrowRefundStates.from(next)],
  )
}

/**
 * Initiated escrows whose TTL has elapsed by `now`, oldest deadline first. `furthestOffsetS`: how far
 * the furthest sandbox clock is ahead (no partner's time is later than `now` plus it).
 */
export async function selectDueToExpire(
  db: Queryable,
  now: Date,
  furthestOffsetS: number,
  limit: number,
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM escrows
      WHERE status = 'initiated' AND expires_at <= partner_now(partner_id, $1)
        -- A constant bound (no partner's time is later), so the expiry index is scanned as a range.
        AND expires_at <= $1::timestamptz + make_interval(secs => $3::bigint)
      ORDER BY expires_at LIMIT $2`,
    [now, limit, furthestOffsetS],
  )
  return rows.map((row) => row.id)
}

/** What a statement line shows of the escrows behind it: each one's ref. */
export async function selectRefs(db: Queryable, ids: readonly string[]): Promise<{ id: string; ref: string }[]> {
  const { rows } = await db.query<{ id: string; ref: string }>(
    `SELECT id, ref FROM escrows WHERE id = ANY ($1::uuid[])`,
    [ids],
  )
  return rows
}

export interface ListFilter {
  partnerId: string
  status?: EscrowStatus
  beforeId?: string
  limit: number
}

/** Newest first. */
export async function selectEscrows(db: Queryable, filter: ListFilter): Promise<Escrow[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM escrows
      WHERE partner_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::uuid IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [filter.partnerId, filter.status ?? null, filter.beforeId ?? null, filter.limit],
  )
}
