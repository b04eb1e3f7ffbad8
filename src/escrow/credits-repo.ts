// SQL of an escrow's funding credits and of the refunds made of them.
import type { Queryable } from '../platform/db.ts'
import type { CreditRefundState } from './states.ts'

/** Records a credit applied to an escrow (in the transaction that applies it). */
export async function insertFundingCredit(db: Queryable, escrowId: string, creditId: string, amountKobo: number, at: Date): Promise<void> {
  await db.query(`INSERT INTO escrow_funding_credits (escrow_id, credit_id, amount_kobo, applied_at) VALUES ($1, $2, $3, $4)`, [escrowId, creditId, amountKobo, at])
}

export interface FundingCredit {
  creditId: string
  amountKobo: number
}

/** The credits that funded an escrow, in the order they were applied. */
export async function selectFundingCredits(db: Queryable, escrowId: string): Promise<FundingCredit[]> {
  const { rows } = await db.query<{ credit_id: string; amount_kobo: number }>(
    `SELECT credit_id, amount_kobo FROM escrow_funding_credits WHERE escrow_id = $1 ORDER BY applied_order`,
    [escrowId],
  )
  return rows.map((row) => ({ creditId: row.credit_id, amountKobo: row.amount_kobo }))
}

export type RefundPurpose = 'refund' | 'excess_refund'

export type RefundRowState = CreditRefundState

export interface EscrowRefund {
  refundId: string
  escrowId: string
  creditId: string
  purpose: RefundPurpose
  amountKobo: number
  state: RefundRowState
  outboundTransferId: string | null
}

interface RefundRow {
  refund_id: string
  escrow_id: string
  credit_id: string
  purpose: RefundPurpose
  amount_kobo: number
  state: RefundRowState
  outbound_transfer_id: string | null
}

const REFUND_COLUMNS = `refund_id, escrow_id, credit_id, purpose, amount_kobo, state, outbound_transfer_id`

function toRefund(row: RefundRow): EscrowRefund {
  return {
    refundId: row.refund_id,
    escrowId: row.escrow_id,
    creditId: row.credit_id,
    purpose: row.purpose,
    amountKobo: row.amount_kobo,
    state: row.state,
    outboundTransferId: row.outbound_transfer_id,
  }
}

export async function insertRefund(db: Queryable, refund: Omit<EscrowRefund, 'state'>): Promise<void> {
  await db.query(
    `INSERT INTO escrow_refunds (refund_id, escrow_id, credit_id, purpose, amount_kobo, outbound_transfer_id) VALUES ($1, $2, $3, $4, $5, $6)`,
    [refund.refundId, refund.escrowId, refund.creditId, refund.purpose, refund.amountKobo, refund.outboundTransferId],
  )
}

/** The refunds of an escrow, oldest first (a retried refund follows the one that failed). */
export async function selectRefunds(db: Queryable, escrowId: string): Promise<EscrowRefund[]> {
  const { rows } = await db.query<RefundRow>(`SELECT ${REFUND_COLUMNS} FROM escrow_refunds WHERE escrow_id = $1 ORDER BY created_at, refund_id`, [escrowId])
  return rows.map(toRefund)
}

/** Ends pending refunds of escrows; answers those that changed (an ending reported twice changes nothing). */
export async function endRefunds(db: Queryable, endings: readonly { refundId: string; state: 'succeeded' | 'failed' }[]): Promise<EscrowRefund[]> {
  if (endings.length === 0) return []
  const { rows } = await db.query<RefundRow>(
    `UPDATE escrow_refunds r SET state = e.state
       FROM unnest($1::uuid[], $2::text[]) AS e(refund_id, state)
      WHERE r.refund_id = e.refund_id AND r.state = 'pending'
      RETURNING ${REFUND_COLUMNS.split(', ').map((column) => `r.${column}`).join(', ')}`,
    [endings.map((ending) => ending.refundId), endings.map((ending) => ending.state)],
  )
  return rows.map(toRefund)
}
