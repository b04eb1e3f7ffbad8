// Background work of the payment pipeline: working an instruction (send, requery), the sweep
// that gives instructions a dead process left behind a job again, and unknown ones their slow requery,
// and the check of a reversal a provider announced (reversals.ts).
import type { Task } from 'graphile-worker'
import { annotateStep } from '../../platform/observability/jobs.ts'
import { checkReversal, REVERSAL_TASK } from './reversals.ts'
import { workAsked } from './asked.ts'
import { sweepStranded, sweepUnknown, SWEEP_TASK, workInstruction, WORK_TASK, type PaymentsDeps } from './service.ts'

export function paymentTasks(deps: PaymentsDeps): Record<string, Task> {
  return {
    [WORK_TASK]: async (payload) => {
      const { id, asked } = payload as { id: string; asked?: boolean }
      const instruction = asked ? await workAsked(deps, id) : await workInstruction(deps, id)
      // The step's outcome is the state the instruction was left in (not claimed: final, or another worker holds it).
      annotateStep({ outcome: instruction?.state ?? 'not_claimed' })
    },
    [REVERSAL_TASK]: async (payload) => {
      annotateStep({ outcome: await checkReversal(deps, (payload as { id: string }).id) })
    },
    [SWEEP_TASK]: async (_payload, helpers) => {
      const revived = await sweepStranded(deps.pool, deps.clock)
      if (revived > 0) helpers.logger.info(`gave ${revived} payments left in flight a job again`)
      const polled = await sweepUnknown(deps)
      if (polled > 0) helpers.logger.info(`asking the bank again about ${polled} unknown payments`)
    },
  }
}
