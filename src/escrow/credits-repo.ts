// SQL of an escrow's funding credits. The refunds made of them are the refunds module's (origin escrow).
import type { Queryable } from '../platform/db.ts'

/** Records a credit applied to an escrow (in the transaction that applies it). */
export async function insertFundingCredit(
  db: Queryable,
  escrowId: string,
  creditId: string,
  amountKobo: number,
  at: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO escrow_funding_credits (escrow_id, credit_id, amount_kobo, applied_at) VALUES ($1, $2, $3, $4)`,
    [escrowId, creditId, amountKobo, at],
  )
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
