// Background work of wallets: resolving moves left pending (a process died mid-call) or unknown.
import type { Task } from 'graphile-worker'
import { resolveMove, RESOLVE_MOVE_TASK, sweepUnansweredMoves, SWEEP_UNANSWERED_TASK, type MovesDeps } from './moves.ts'

export function walletTasks(deps: MovesDeps): Record<string, Task> {
  return {
    [RESOLVE_MOVE_TASK]: async (payload) => {
      const { moveId } = payload as { moveId: string }
      await resolveMove(deps, moveId)
    },
    [SWEEP_UNANSWERED_TASK]: async (_payload, helpers) => {
      const scheduled = await sweepUnansweredMoves(deps.pool)
      if (scheduled > 0) helpers.logger.info(`scheduled the requery of ${scheduled} unanswered moves`)
    },
  }
}
