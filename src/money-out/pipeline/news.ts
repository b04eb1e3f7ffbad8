// A provider's news of a payout (its webhook: paid, failed, reversed) is a hint, never an answer:
// Rail acts on what the provider says when asked (a requery by the pipeline's own step), so a
// forged, late or out-of-order webhook can at most make Rail ask sooner.
import type { Queryable } from '../../platform/db.ts'
import { UUID_PATTERN } from '../../platform/ids.ts'
import type { TransferEvent } from '../../banking/providers/types.ts'
import { requestRequery } from './queue.ts'
import { requestReversalCheck } from './reversals.ts'
import { instructionStates, type InstructionState } from './states.ts'

const UUID = new RegExp(UUID_PATTERN)

/**
 * Asks the provider about the payout its webhook names, when it is one of this provider's
 * instructions: one not final is requeried now; a succeeded one said to be reversed has the
 * reversal checked with the provider (reversals.ts). Answers whether anything was asked.
 */
export async function payoutNews(
  db: Queryable,
  provider: string,
  reference: string,
  event: TransferEvent,
): Promise<boolean> {
  if (!UUID.test(reference)) return false
  const { rows } = await db.query<{ state: InstructionState }>(
    `SELECT state FROM bank_instructions WHERE id = $1 AND provider = $2`,
    [reference, provider],
  )
  const state = rows[0]?.state
  if (state === undefined) return false
  if (state === 'succeeded') {
    if (event !== 'reversed') return false
    await requestReversalCheck(db, reference)
    return true
  }
  if (instructionStates.isTerminal(state)) return false
  await requestRequery(db, reference)
  return true
}
