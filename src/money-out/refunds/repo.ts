// SQL of refunds: one row per refund of one inbound credit, and what the live refunds of a credit add up to.
import { camelColumns, rowReaders, type Queryable } from '../../platform/db.ts'
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

const COLUMNS =
  camelColumns(`id, partner_id, reference, request_hash, credit_id, amount_kobo, currency, state, origin_type, origin_id, source_account_id, outbound_transfer_id,
  reason, failure_reason, created_at, completed_at`)

const { one, all } = rowReaders((row: Refund) => row)

export type NewRefund = Omit<Refund, 'state' | 'outboundTransferId' | 'failureReason' | 'createdAt' | 'completedAt'>

/**
 * What the credit's pending and succeeded refunds add up to. The caller holds the credit's lock,
 * taken by an earlier statement, so this statement's snapshot sees every refund committed before
 * the lock was granted.
 */
export async function selectLiveRefundedKobo(db: Queryable, creditId: string): Promise<number> {
  const { rows } = await db.query<{ refunded_kobo: string }>(
    `SELECT COALESCE(sum(amount_kobo), 0) AS refunded_kobo FROM refunds WHERE credit_id = $1 AND state = ANY($2::text[])`,
    [creditId, LIVE_STATES],
  )
  return Number(rows[0]!.refunded_kobo)
}

/**
 * Records a refund if the credit still has its amount to refund — `amountLessExcessKobo` (the
 * credit's, from its owner) less its live refunds — checked in the same statement (the caller
 * holds the credit's lock). Answers undefined when it has not, or when the partner's reference was
 * taken for this credit (the caller tells the two apart).
 */
export async function insertWithinRefundable(
  db: Queryable,
  refund: NewRefund,
  amountLessExcessKobo: number,
): Promise<Refund | undefined> {
  return one(
    db,
    `INSERT INTO refunds (id, partner_id, reference, request_hash, credit_id, amount_kobo, currency, origin_type, origin_id, source_account_id, reason)
     SELECT $1::uuid, $2::uuid, $3::text, $4::text, $5::uuid, $6::bigint, $12::text, $7::text, $8::uuid, $9::uuid, $10::text
      WHERE $13::bigint
            - COALESCE((SELECT sum(r.amount_kobo) FROM refunds r WHERE r.credit_id = $5::uuid AND r.state = ANY($11::text[])), 0) >= $6::bigint
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
      refund.currency,
      amountLessExcessKobo,
    ],
  )
}

/** The refunds one origin asked for, oldest first (those made in one transaction share a created_at: then by id, a UUIDv7). */
export async function selectByOrigin(db: Queryable, originType: RefundOriginType, originId: string): Promise<Refund[]> {
  return all(db, `SELECT ${COLUMNS} FROM refunds WHERE origin_type = $1 AND origin_id = $2 ORDER BY created_at, id`, [
    originType,
    originId,
  ])
}

export async function setOutboundTransfer(db: Queryable, id: string, outboundTransferId: string): Promise<Refund> {
  const { rows } = await db.query<Refund>(
    `UPDATE refunds SET outbound_transfer_id = $2 WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, outboundTransferId],
  )
  return rows[0]!
}

/** A refund's payout ended: pending → succeeded or failed, once, at `at` (the caller's clock). Undefined when it had moved on. */
export async function complete(
  db: Queryable,
  id: string,
  next: 'succeeded' | 'failed',
  failureReason: Record<string, unknown> | null,
  at: Date,
): Promise<Refund | undefined> {
  return one(
    db,
    `UPDATE refunds SET state = $2, failure_reason = $3, completed_at = $5 WHERE id = $1 AND state = ANY($4) RETURNING ${COLUMNS}`,
    [id, next, failureReason === null ? null : JSON.stringify(failureReason), refundStates.from(next), at],
  )
}

export async function selectByReference(db: Queryable, partnerId: string, reference: string): Promise<Refund[]> {
  return all(db, `SELECT ${COLUMNS} FROM refunds WHERE partner_id = $1 AND reference = $2 ORDER BY id`, [
    partnerId,
    reference,
  ])
}

export async function selectByReferenceAndCredit(
  db: Queryable,
  partnerId: string,
  reference: string,
  creditId: string,
): Promise<Refund | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM refunds WHERE partner_id = $1 AND reference = $2 AND credit_id = $3`, [
    partnerId,
    reference,
    creditId,
  ])
}

export async function selectPartnerRefund(db: Queryable, partnerId: string, id: string): Promise<Refund | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM refunds WHERE partner_id = $1 AND id = $2`, [partnerId, id])
}

export interface ListFilter {
  partnerId: string
  creditId?: string
  state?: RefundState
  beforeId?: string
  limit: number
}

export async function selectRefunds(db: Queryable, filter: ListFilter): Promise<Refund[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM refunds
      WHERE partner_id = $1 AND ($2::uuid IS NULL OR credit_id = $2) AND ($3::text IS NULL OR state = $3) AND ($4::uuid IS NULL OR id < $4)
      ORDER BY id DESC LIMIT $5`,
    [filter.partnerId, filter.creditId ?? null, filter.state ?? null, filter.beforeId ?? null, filter.limit],
  )
}

/** A Refunds API request's claim on its reference: the hash, and its first refund (a conflict names it). */
export interface RefundRequest {
  reference: string
  requestHash: string
  firstRefundId: string | null
}

/** Claims the partner's reference for one Refunds API request; undefined when it is taken (ON CONFLICT waited for the taker). */
export async function insertRequest(
  db: Queryable,
  partnerId: string,
  reference: string,
  requestHash: string,
): Promise<RefundRequest | undefined> {
  const { rows } = await db.query<{ reference: string; request_hash: string }>(
    `INSERT INTO refund_requests (partner_id, reference, request_hash) VALUES ($1, $2, $3)
     ON CONFLICT (partner_id, reference) DO NOTHING
     RETURNING reference, request_hash`,
    [partnerId, reference, requestHash],
  )
  return rows[0] && { reference: rows[0].reference, requestHash: rows[0].request_hash, firstRefundId: null }
}

export async function selectRequest(
  db: Queryable,
  partnerId: string,
  reference: string,
): Promise<RefundRequest | undefined> {
  const { rows } = await db.query<{ reference: string; request_hash: string; first_refund_id: string | null }>(
    `SELECT q.reference, q.request_hash,
            (SELECT f.id FROM refunds f WHERE f.partner_id = q.partner_id AND f.reference = q.reference ORDER BY f.id LIMIT 1) AS first_refund_id
       FROM refund_requests q
      WHERE q.partner_id = $1 AND q.reference = $2`,
    [partnerId, reference],
  )
  return (
    rows[0] && {
      reference: rows[0].reference,
      requestHash: rows[0].request_hash,
      firstRefundId: rows[0].first_refund_id,
    }
  )
}
