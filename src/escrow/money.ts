// The escrow's ledger moves: its holding account and the linked transfers of one change.
import { createTransfers, derivedId, ensurePartnerAccount, type TransferInput } from '../ledger/service.ts'
import type { Queryable } from '../platform/db.ts'
import type * as repo from './repo.ts'

export async function holdingOf(tx: Queryable, escrow: repo.Escrow): Promise<string> {
  return ensurePartnerAccount(tx, escrow.partnerId, escrow.currency, 'escrow_holding')
}

// ---- refunds ----------------------------------------------------------------------------------

export function transfer(
  escrow: repo.Escrow,
  purpose: 'disbursement',
  debitAccountId: string,
  creditAccountId: string,
  amountKobo: number,
): TransferInput {
  return {
    id: derivedId(escrow.id, `escrow_${purpose}`),
    debitAccountId,
    creditAccountId,
    amountKobo,
    currency: escrow.currency,
    code: `escrow_${purpose}`,
    sourceType: 'escrow',
    sourceId: escrow.id,
  }
}

/** The transfers of one change, all or none; the holding account must hold them (else a bug). */
export async function move(tx: Queryable, escrow: repo.Escrow, transfers: TransferInput[]): Promise<void> {
  const results = await createTransfers(tx, transfers, { linked: true })
  const refused = results.find((outcome) => outcome.result !== 'ok')
  if (refused) throw new Error(`escrow ${escrow.id} ${escrow.status}: transfer ${refused.id} ${refused.result}`)
}
