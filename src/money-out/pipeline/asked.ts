// A requery someone asked for (the settlement simulator, a provider's webhook, an owner), worked
// like a scheduled step but never dropped while another worker holds the instruction
// (docs/decisions/0008-payment-pipeline.md, rule 2).
import * as repo from './repo.ts'
import { workInstruction, type PaymentsDeps } from './service.ts'
import { instructionStates } from './states.ts'

/** Thrown by workAsked: the job is tried again shortly, by graphile-worker's retry. */
export class HeldElsewhere extends Error {
  constructor(id: string) {
    super(`payment ${id}: another worker holds it; the requery asked for is tried again shortly`)
  }
}

/**
 * A requery someone asked for (the simulator, a provider's webhook, an owner): a step like a
 * scheduled one, but when another worker holds the instruction it is not dropped: that worker's
 * step may have asked the bank before the news that made someone ask, and its next poll may be far
 * off. Held: HeldElsewhere, and the job is tried again shortly.
 */
export async function workAsked(deps: PaymentsDeps, id: string): Promise<repo.Instruction | undefined> {
  const worked = await workInstruction(deps, id)
  if (worked) return worked
  const current = await repo.selectInstruction(deps.pool, id)
  if (current && !instructionStates.isTerminal(current.state) && current.leaseToken !== null)
    throw new HeldElsewhere(id)
  return current
}
