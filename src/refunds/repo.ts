// SQL of refunds: one row per refund of one inbound credit, and what a credit still has to refund.
import type { Queryable } from '../platform/db.ts'
import { LIVE_STATES, refundStates, type RefundState } from './states.ts'

export type RefundOriginType = 'partner' | 'escrow' | 'triage'

export interface Refund {
  id: string
  partnerId: string
  reference: string
  requestHash: string
  creditId: string
  amountKobo: number
  currency: string
  state: RefundState
  originType: RefundOriginType
  originId: string | null
  sourceAccountId: string
  outboundTransferId: string | null
  reason: string | null
  failureReason: Record<string, unknown> | null
  createdAt: Date
  completedAt: Date | null
}

interface Row {
  id: string
  partner_id: string
  reference: string
  request_hash: string
  credit_id: string
  amount_kobo: number
  currency: string
  state: RefundState
  origin_type: RefundOriginType
  origin_id: string | null
  source_account_id: string
  outbound_transfer_id: string | null
  reason: string | null
  failure_reason: Record<string, unknown> | null
  created_at: Date
  completed_at: Date | null
}

const COLUMNS = `id, partner_id, reference, request_hash, credit_id, amount_kobo, currency, state, origin_type, origin_id, source_account_id, outbound_transfer_id,
  reason, failure_reason, created_at, completed_at`

function toRefund(row: Row): Refund {
  return {
    id: row.id,
    partnerId: row.partner_id,
    reference: row.reference,
    requestHash: row.request_hash,
    creditId: row.credit_id,
    amountKobo: row.amount_kobo,
    currency: row.currency,
    state: row.state,
    originType: row.origin_type,
    originId: row.origin_id,
    sourceAccountId: row.source_account_id,
    outboundTransferId: row.outbound_transfer_id,
    reason: row.reason,
    failureReason: row.failure_reason,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  }
}

export type NewRefund = Omit<Refund, 'state' | 'outboundTransferId' | 'failureReason' | 'createdAt' | 'completedAt'>

/**
 * What a credit still has to refund: its amount, less the excess split off it (an overpayment,
 * which is a triage item of its own), less its pending and succeeded refunds. The caller holds
 * the credit's lock, taken by an earlier statement, so this statement's snapshot sees every
 * refund committed before the lock was granted.
 */
export async function selectRefundableKobo(db: Queryable, creditId: string): Promise<number> {
  const { rows } = await db.query<{ refundable_kobo: string }>(
    `SELECT c.amount_kobo
            - COALESCE((SELECT sum(e.amount_kobo) FROM inbound_credits e WHERE e.excess_of = c.id), 0)
            - COALESCE((SELECT sum(r.amount_kobo) FROM refunds r WHERE r.credit_id = c.id AND r.state = ANY($2::text[])), 0) AS refundable_kobo
       FROM inbound_credits c WHERE c.id = $1`,
    [creditId, LIVE_STATES],
  )
  return Number(rows[0]?.refundable_kobo ?? 0)
}

/**
 * Records a refund if the credit still has its amount to refund, checked in the same statement
 * (the caller holds the credit's lock). Answers undefined when it has not, or when the partner's
 * reference was taken for this credit (the caller tells the two apart).
 */
export async function insertWithinRefundable(db: Queryable, refund: NewRefund): Promise<Refund | undefined> {
  const { rows } = await db.query<Row>(
    `INSERT INTO refunds (id, partner_id, reference, request_hash, credit_id, amount_kobo, currency, origin_type, origin_id, source_account_id, reason)
     SELECT $1::uuid, $2::uuid, $3::text, $4::text, c.id, $6::bigint, c.currency, $7::text, $8::uuid, $9::uuid, $10::text
       FROM inbound_credits c
      WHERE c.id = $5::uuid
        AND c.amount_kobo
            - COALESCE((SELECT sum(e.amount_kobo) FROM inbound_credits e WHERE e.excess_of = c.id), 0)
            - COALESCE((SELECT sum(r.amount_kobo) FROM refunds r WHERE r.credit_id = c.id AND r.state = ANY($11::text[])), 0) >= $6::bigint
     ON CONFLICT ON CONSTRAINT refunds_once_per_reference DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      refund.id,
      refund.partnerId,
      refund.reference,
      refund.requestHash,
      refund.creditId,
      refund.amountKobo,
      refund.originType,
      refund.originId,
      refund.sourceAccountId,
      refund.reason,
      LIVE_STATES,
    ],
  )
  return rows[0] && toRefund(rows[0])
}

export async function setOutboundTransfer(db: Queryable, id: string, outboundTransferId: string): Promise<Refund> {
  const { rows } = await db.query<Row>(`UPDATE refunds SET outbound_transfer_id = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, outboundTransferId])
  return toRefund(rows[0]!)
}

/** A refund's payout ended: pending → succeeded or failed, once. Undefined when it had moved on. */
export async function complete(db: Queryable, id: string, next: 'succeeded' | 'failed', failureReason: Record<string, unknown> | null): Promise<Refund | undefined> {
  const { rows } = await db.query<Row>(
    `UPDATE refunds SET state = $2, failure_reason = $3, completed_at = now() WHERE id = $1 AND state = ANY($4) RETURNING ${COLUMNS}`,
    [id, next, failureReason === null ? null : JSON.stringify(failureReason), refundStates.from(next)],
  )
  return rows[0] && toRefund(rows[0])
}

export async function selectByReference(db: Queryable, partnerId: string, reference: string): Promise<Refund[]> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM refunds WHERE partner_id = $1 AND reference = $2 ORDER BY id`, [partnerId, reference])
  return rows.map(toRefund)
}

export async function selectByReferenceAndCredit(db: Queryable, partnerId: string, reference: string, creditId: string): Promise<Refund | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM refunds WHERE partner_id = $1 AND reference = $2 AND credit_id = $3`, [partnerId, reference, creditId])
  return rows[0] && toRefund(rows[0])
}

export async function selectPartnerRefund(db: Queryable, partnerId: string, id: string): Promise<Refund | undefined> {
  const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM refunds WHERE partner_id = $1 AND id = $2`, [partnerId, id])
  return rows[0] && toRefund(rows[0])
}

export interface ListFilter {
  partnerId: string
  creditId?: string
  state?: RefundState
  beforeId?: string
  limit: number
}

export async function selectRefunds(db: Queryable, filter: ListFilter): Promise<Refund[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM refunds
      WHERE partner_id = $1 AND ($2::uuid IS NULL OR credit_id = $2) AND ($3::text IS NULL OR state = $3) AND ($4::uuid IS NULL OR id < $4)
      ORDER BY id DESC LIMIT $5`,
    [filter.partnerId, filter.creditId ?? null, filter.state ?? null, filter.beforeId ?? null, filter.limit],
  )
  return rows.map(toRefund)
}

// ---- the credits a refund is of ------------------------------------------------------------------

/** A credit as a refund needs it, with the intent (and its owner) it was confirmed to, if any. */
export interface RefundableCredit {
  id: string
  partnerId: string | null
  status: string
  amountKobo: number
  currency: string
  sessionId: string
  payerName: string | null
  payerAccountNumber: string | null
  payerBankCode: string | null
  /** Set once it fell to triage (whatever happened to it since). */
  unmatchedReason: string | null
  /** The virtual account it was confirmed to; null when it was paid elsewhere (into a wallet) or never confirmed. */
  confirmedAccountId: string | null
  intentOwnerType: string | null
}

interface CreditRow {
  id: string
  partner_id: string | null
  status: string
  amount_kobo: number
  currency: string
  session_id: string
  payer_name: string | null
  payer_account_number: string | null
  payer_bank_code: string | null
  unmatched_reason: string | null
  confirmed_account_id: string | null
  intent_owner_type: string | null
}

function toRefundableCredit(row: CreditRow): RefundableCredit {
  return {
    id: row.id,
    partnerId: row.partner_id,
    status: row.status,
    amountKobo: row.amount_kobo,
    currency: row.currency,
    sessionId: row.session_id,
    payerName: row.payer_name,
    payerAccountNumber: row.payer_account_number,
    payerBankCode: row.payer_bank_code,
    unmatchedReason: row.unmatched_reason,
    confirmedAccountId: row.confirmed_account_id,
    intentOwnerType: row.intent_owner_type,
  }
}

/**
 * The account a credit was confirmed to: where it was paid, or for an assigned credit the account
 * triage assigned it to (its tracking id in the resolution).
 */
const CONFIRMED_ACCOUNT = `va.id = CASE WHEN c.status = 'assigned'
    THEN (SELECT t.id FROM virtual_accounts t WHERE t.partner_id = c.partner_id AND t.tracking_id = c.resolution->>'trackingId')
    ELSE c.virtual_account_id END`

const CREDIT_COLUMNS = `c.id, c.partner_id, c.status, c.amount_kobo, c.currency, c.session_id, c.payer_name, c.payer_account_number, c.payer_bank_code, c.unmatched_reason,
  va.id AS confirmed_account_id, pi.owner_type AS intent_owner_type`

/** Locks a credit (every refund of it takes this lock first) and answers it with its intent's owner. */
export async function lockCredit(db: Queryable, id: string): Promise<RefundableCredit | undefined> {
  await db.query(`SELECT 1 FROM inbound_credits WHERE id = $1 FOR UPDATE`, [id])
  return selectCredit(db, id)
}

export async function selectCredit(db: Queryable, id: string): Promise<RefundableCredit | undefined> {
  const { rows } = await db.query<CreditRow>(
    `SELECT ${CREDIT_COLUMNS}
       FROM inbound_credits c
       LEFT JOIN virtual_accounts va ON ${CONFIRMED_ACCOUNT}
       LEFT JOIN payment_intents pi ON pi.virtual_account_id = va.id
      WHERE c.id = $1`,
    [id],
  )
  return rows[0] && toRefundableCredit(rows[0])
}

/** The ids of the credits confirmed to a virtual account (paid there, or assigned there), newest first. */
export async function selectConfirmedCreditIds(db: Queryable, partnerId: string, virtualAccountId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT c.id FROM inbound_credits c
       JOIN virtual_accounts va ON va.id = $2 AND va.partner_id = $1
      WHERE c.partner_id = $1
        AND ((c.status = 'applied' AND c.virtual_account_id = va.id) OR (c.status = 'assigned' AND c.resolution->>'trackingId' = va.tracking_id))
      ORDER BY c.credited_at DESC, c.id DESC`,
    [partnerId, virtualAccountId],
  )
  return rows.map((row) => row.id)
}

/** Who composed the payment intent of a virtual account (an invoice, an escrow), if anyone. */
export async function selectIntentOwnerType(db: Queryable, virtualAccountId: string): Promise<string | null> {
  const { rows } = await db.query<{ owner_type: string | null }>(`SELECT owner_type FROM payment_intents WHERE virtual_account_id = $1`, [virtualAccountId])
  return rows[0]?.owner_type ?? null
}

/** The virtual account of one of the partner's payment intents, or of an invoice's intent. */
export async function selectIntentAccount(db: Queryable, partnerId: string, paymentIntentId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ virtual_account_id: string }>(`SELECT virtual_account_id FROM payment_intents WHERE partner_id = $1 AND id = $2`, [partnerId, paymentIntentId])
  return rows[0]?.virtual_account_id
}

export async function selectInvoiceAccount(db: Queryable, partnerId: string, invoiceReference: string): Promise<{ found: boolean; virtualAccountId: string | null }> {
  const { rows } = await db.query<{ virtual_account_id: string | null }>(
    `SELECT pi.virtual_account_id FROM invoices i LEFT JOIN payment_intents pi ON pi.id = i.payment_intent_id WHERE i.partner_id = $1 AND i.reference = $2`,
    [partnerId, invoiceReference],
  )
  return rows[0] ? { found: true, virtualAccountId: rows[0].virtual_account_id } : { found: false, virtualAccountId: null }
}

/** A Refunds API request's claim on its reference: the hash, and its first refund (a conflict names it). */
export interface RefundRequest {
  reference: string
  requestHash: string
  firstRefundId: string | null
}

/** Claims the partner's reference for one Refunds API request; undefined when it is taken (ON CONFLICT waited for the taker). */
export async function insertRequest(db: Queryable, partnerId: string, reference: string, requestHash: string): Promise<RefundRequest | undefined> {
  const { rows } = await db.query<{ reference: string; request_hash: string }>(
    `INSERT INTO refund_requests (partner_id, reference, request_hash) VALUES ($1, $2, $3)
     ON CONFLICT (partner_id, reference) DO NOTHING
     RETURNING reference, request_hash`,
    [partnerId, reference, requestHash],
  )
  return rows[0] && { reference: rows[0].reference, requestHash: rows[0].request_hash, firstRefundId: null }
}

export async function selectRequest(db: Queryable, partnerId: string, reference: string): Promise<RefundRequest | undefined> {
  const { rows } = await db.query<{ reference: string; request_hash: string; first_refund_id: string | null }>(
    `SELECT q.reference, q.request_hash,
            (SELECT f.id FROM refunds f WHERE f.partner_id = q.partner_id AND f.reference = q.reference ORDER BY f.id LIMIT 1) AS first_refund_id
       FROM refund_requests q
      WHERE q.partner_id = $1 AND q.reference = $2`,
    [partnerId, reference],
  )
  return rows[0] && { reference: rows[0].reference, requestHash: rows[0].request_hash, firstRefundId: rows[0].first_refund_id }
}
