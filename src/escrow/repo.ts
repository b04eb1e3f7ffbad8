// SQL of escrows and the registered escrow webhook. The camelCase ↔ snake_case mapping lives here.
import type { Queryable } from '../platform/db.ts'
import { allowedFrom, type EscrowStatus } from './states.ts'

export type EscrowType = 'goods' | 'services' | 'property' | 'conditional'

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
  recipientPayableAccountId: string | null
  payerRefundAccountId: string | null
  releaseReason: string | null
  cancelReason: string | null
  createdAt: Date
  expiresAt: Date
  fundedAt: Date | null
  releasedAt: Date | null
  cancelledAt: Date | null
  expiredAt: Date | null
}

interface Row {
  id: string
  partner_id: string
  ref: string
  reference: string | null
  request_hash: string
  type: EscrowType
  status: EscrowStatus
  amount_kobo: number
  funded_amount_kobo: number
  currency: string
  description: string
  payer_email: string
  recipient_email: string
  metadata: Record<string, unknown>
  webhook_url: string | null
  funding_payment_intent_id: string | null
  recipient_payable_account_id: string | null
  payer_refund_account_id: string | null
  release_reason: string | null
  cancel_reason: string | null
  created_at: Date
  expires_at: Date
  funded_at: Date | null
  released_at: Date | null
  cancelled_at: Date | null
  expired_at: Date | null
}

const COLUMNS = `id, partner_id, ref, reference, request_hash, type, status, amount_kobo, funded_amount_kobo, currency, description, payer_email,
  recipient_email, metadata, webhook_url, funding_payment_intent_id, recipient_payable_account_id, payer_refund_account_id, release_reason,
  cancel_reason, created_at, expires_at, funded_at, released_at, cancelled_at, expired_at`

function toEscrow(row: Row): Escrow {
  return {
    id: row.id,
    partnerId: row.partner_id,
    ref: row.ref,
    reference: row.reference,
    requestHash: row.request_hash,
    type: row.type,
    status: row.status,
    amountKobo: row.amount_kobo,
    fundedAmountKobo: row.funded_amount_kobo,
    currency: row.currency,
    description: row.description,
    payerEmail: row.payer_email,
    recipientEmail: row.recipient_email,
    metadata: row.metadata,
    webhookUrl: row.webhook_url,
    fundingPaymentIntentId: row.funding_payment_intent_id,
    recipientPayableAccountId: row.recipient_payable_account_id,
    payerRefundAccountId: row.payer_refund_account_id,
    releaseReason: row.release_reason,
    cancelReason: row.cancel_reason,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    fundedAt: row.funded_at,
    releasedAt: row.released_at,
    cancelledAt: row.cancelled_at,
    expiredAt: row.expired_at,
  }
}

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
  | 'createdAt'
  | 'expiresAt'
>

/** Inserts the escrow unless its reference is taken (then undefined: read the existing one). */
export async function insertEscrow(db: Queryable, escrow: NewEscrow): Promise<Escrow | undefined> {
  const { rows } = await db.query<Row>(
    `INSERT INTO escrows (id, partner_id, ref, reference, request_hash, type, status, amount_kobo, currency, description, payer_email,
                          recipient_email, metadata, webhook_url, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'initiated', $7, $8, $9, $10, $11, $12, $13, $14, $15)
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
    ],
  )
  return rows[0] && toEscrow(rows[0])
}

export async function selectByRef(db: Queryable, partnerId: string, ref: string): Promise<Escrow | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM escrows WHERE partner_id = $1 AND ref = $2`, [partnerId, ref])
  return rows[0] && toEscrow(rows[0])
}

export async function selectByReference(db: Queryable, partnerId: string, reference: string): Promise<Escrow | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM escrows WHERE partner_id = $1 AND reference = $2`, [partnerId, reference])
  return rows[0] && toEscrow(rows[0])
}

/** Locks the escrow for a change of funding; undefined when it does not exist or is another partner's. */
export async function selectForUpdate(db: Queryable, id: string, partnerId: string): Promise<Escrow | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM escrows WHERE id = $1 AND partner_id = $2 FOR UPDATE`, [id, partnerId])
  return rows[0] && toEscrow(rows[0])
}

/** Which escrow a transition names: by the partner's ref (API), or by id (jobs). */
export type EscrowKey = { partnerId: string; ref: string } | { id: string }

export interface TransitionFields {
  at: Date
  reason?: string | null
  /** Expiry only: the TTL must have elapsed by `at` (checked in the same statement). */
  dueBy?: Date
}

const STAMP_COLUMN: Partial<Record<EscrowStatus, string>> = { released: 'released_at', cancelled: 'cancelled_at', expired: 'expired_at' }
const REASON_COLUMN: Partial<Record<EscrowStatus, string>> = { released: 'release_reason', cancelled: 'cancel_reason' }

/**
 * Moves an escrow to a terminal status if its current status allows it (the transition table, in
 * SQL). Returns the changed escrow, or undefined when it is in another status (or absent): the
 * first of several racing changes wins, the others change nothing.
 */
export async function transition(db: Queryable, key: EscrowKey, next: 'released' | 'cancelled' | 'expired', fields: TransitionFields): Promise<Escrow | undefined> {
  const params: unknown[] = [next, allowedFrom(next), fields.at]
  const param = (value: unknown, type: string) => `$${params.push(value)}::${type}`
  const sets = [`status = $1`, `${STAMP_COLUMN[next]!} = $3`]
  const reasonColumn = REASON_COLUMN[next]
  if (reasonColumn) sets.push(`${reasonColumn} = ${param(fields.reason ?? null, 'text')}`)
  const where = ['status = ANY ($2::text[])']
  if ('id' in key) where.push(`id = ${param(key.id, 'uuid')}`)
  else where.push(`partner_id = ${param(key.partnerId, 'uuid')}`, `ref = ${param(key.ref, 'text')}`)
  if (fields.dueBy) where.push(`expires_at <= ${param(fields.dueBy, 'timestamptz')}`)
  const { rows } = await db.query<Row>(`UPDATE escrows SET ${sets.join(', ')} WHERE ${where.join(' AND ')} RETURNING ${COLUMNS}`, params)
  return rows[0] && toEscrow(rows[0])
}

/**
 * Adds a credit to an initiated escrow (locked by the caller) and makes it funded once the credits
 * reach the amount.
 */
export async function addFunding(db: Queryable, id: string, amountKobo: number, at: Date): Promise<Escrow> {
  const { rows } = await db.query<Row>(
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
  const { rows } = await db.query<Row>(`UPDATE escrows SET funding_payment_intent_id = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, paymentIntentId])
  return toEscrow(rows[0]!)
}

export async function setRecipientPayableAccount(db: Queryable, id: string, accountId: string): Promise<void> {
  await db.query(`UPDATE escrows SET recipient_payable_account_id = $2 WHERE id = $1`, [id, accountId])
}

export async function setPayerRefundAccount(db: Queryable, id: string, accountId: string): Promise<void> {
  await db.query(`UPDATE escrows SET payer_refund_account_id = $2 WHERE id = $1`, [id, accountId])
}

/** Initiated escrows whose TTL has elapsed by `now`, oldest deadline first. */
export async function selectDueToExpire(db: Queryable, now: Date, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM escrows WHERE status = 'initiated' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`,
    [now, limit],
  )
  return rows.map((row) => row.id)
}

export interface ListFilter {
  partnerId: string
  status?: EscrowStatus
  beforeId?: string
  limit: number
}

/** Newest first. */
export async function selectEscrows(db: Queryable, filter: ListFilter): Promise<Escrow[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM escrows
      WHERE partner_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::uuid IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [filter.partnerId, filter.status ?? null, filter.beforeId ?? null, filter.limit],
  )
  return rows.map(toEscrow)
}

export interface EscrowWebhook {
  partnerId: string
  url: string
  secretSealed: Buffer | null
}

/**
 * Registers or updates the partner's escrow webhook. `secretSealed` undefined keeps the stored
 * secret; null removes it.
 */
export async function upsertWebhook(db: Queryable, partnerId: string, url: string, secretSealed: Buffer | null | undefined): Promise<EscrowWebhook> {
  const { rows } = await db.query<{ partner_id: string; url: string; secret_sealed: Buffer | null }>(
    `INSERT INTO escrow_webhooks (partner_id, url, secret_sealed) VALUES ($1, $2, $3)
     ON CONFLICT (partner_id) DO UPDATE
       SET url = EXCLUDED.url,
           secret_sealed = CASE WHEN $4 THEN escrow_webhooks.secret_sealed ELSE EXCLUDED.secret_sealed END,
           updated_at = now()
     RETURNING partner_id, url, secret_sealed`,
    [partnerId, url, secretSealed ?? null, secretSealed === undefined],
  )
  const row = rows[0]!
  return { partnerId: row.partner_id, url: row.url, secretSealed: row.secret_sealed }
}

export async function selectWebhook(db: Queryable, partnerId: string): Promise<EscrowWebhook | undefined> {
  const { rows } = await db.query<{ partner_id: string; url: string; secret_sealed: Buffer | null }>(
    `SELECT partner_id, url, secret_sealed FROM escrow_webhooks WHERE partner_id = $1`,
    [partnerId],
  )
  const row = rows[0]
  return row && { partnerId: row.partner_id, url: row.url, secretSealed: row.secret_sealed }
}
