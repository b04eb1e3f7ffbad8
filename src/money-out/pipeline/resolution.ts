// An operator's decision on an instruction whose requery schedule ran out (`unknown`), from
// evidence: exactly once, in one transaction with its owner's change.
import { randomUUID } from 'node:crypto'
import { withTransaction } from '../../platform/db.ts'
import { fieldError, notFound, RailError } from '../../platform/errors.ts'
import * as repo from './repo.ts'
import type { PaymentsDeps } from './service.ts'

export const EVIDENCE_CHARS_MAX = 1_000

export interface Resolution {
  id: string
  outcome: 'successful' | 'failed'
  evidence: string
  /** Who decided: recorded with the decision. */
  operator: string
  /** When given, the instruction must be this partner's. */
  partnerId?: string
}

/**
 * An operator's decision on an unknown instruction, with evidence (a bank statement line, the
 * bank's letter): exactly once, in one transaction with its owner's change (the hold posted or
 * voided, the terminal callback). Refused in any other state.
 */
export async function resolveUnknown(deps: PaymentsDeps, resolution: Resolution): Promise<repo.Instruction> {
  const evidence = resolution.evidence.trim()
  if (evidence.length === 0)
    throw fieldError('evidence', 'is required: what shows the outcome (a statement line, the bank’s answer)')
  if (evidence.length > EVIDENCE_CHARS_MAX)
    throw fieldError('evidence', `must be at most ${EVIDENCE_CHARS_MAX} characters`)
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(evidence) || /[\u0000-\u001f\u007f]/.test(resolution.operator))
    throw fieldError('evidence', 'must not hold control characters')
  return withTransaction(deps.pool, async (tx) => {
    const found = await repo.lockInstruction(tx, resolution.id)
    if (!found || (resolution.partnerId !== undefined && found.partnerId !== resolution.partnerId))
      throw notFound('Payment')
    if (found.state !== 'unknown') {
      throw new RailError(
        'invalid_state',
        `Payment ${found.id} is ${found.state}; an operator resolves only an unknown payment`,
        { state: found.state, currentState: found.state },
      )
    }
    // The operator takes the instruction from any worker asking about it: that worker's write is then fenced off.
    const token = randomUUID()
    await tx.query(`UPDATE bank_instructions SET lease_token = $2 WHERE id = $1`, [found.id, token])
    const decided = {
      outcome: resolution.outcome,
      evidence,
      operator: resolution.operator,
      resolvedAt: deps.clock.now().toISOString(),
    }
    const next = resolution.outcome === 'successful' ? 'succeeded' : 'failed'
    const fields: repo.StepFields =
      next === 'failed'
        ? {
            resolution: decided,
            failureCode: 'operator',
            failureMessage: `Resolved as failed by ${resolution.operator}: ${evidence}`,
          }
        : { resolution: decided }
    const written = (await repo.writeStep(tx, found.id, token, next, fields, true, deps.clock.now()))!
    await deps.owners[written.ownerType].apply(tx, [{ instruction: written, progress: next }], deps.clock)
    return written
  })
}
