// Background work of outbound transfers: the submit job and the requery jobs.
import type { Task } from 'graphile-worker'
import { processSubmit, requeryOutbound, REQUERY_TASK, SUBMIT_TASK, type OutboundDeps } from './service.ts'

export function outboundTasks(deps: OutboundDeps): Record<string, Task> {
  return {
    [SUBMIT_TASK]: async (payload) => {
      await processSubmit(deps, (payload as { id: string }).id)
    },
    [REQUERY_TASK]: async (payload) => {
      await requeryOutbound(deps, (payload as { id: string }).id)
    },
  }
}
