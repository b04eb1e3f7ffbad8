// Background work of outbound transfers: the submit job, the requery jobs, and the sweep of stranded ones.
import type { Task } from 'graphile-worker'
import { processSubmit, requeryOutbound, REQUERY_TASK, SUBMIT_TASK, sweepPendingTransfers, SWEEP_PENDING_TASK, type OutboundDeps } from './service.ts'

export function outboundTasks(deps: OutboundDeps): Record<string, Task> {
  return {
    [SUBMIT_TASK]: async (payload) => {
      await processSubmit(deps, (payload as { id: string }).id)
    },
    [REQUERY_TASK]: async (payload) => {
      await requeryOutbound(deps, (payload as { id: string }).id)
    },
    [SWEEP_PENDING_TASK]: async (_payload, helpers) => {
      const scheduled = await sweepPendingTransfers(deps.pool)
      if (scheduled > 0) helpers.logger.info(`scheduled the requery of ${scheduled} outbound transfers left pending`)
    },
  }
}
