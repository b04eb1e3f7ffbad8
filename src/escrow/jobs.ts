// Background work of escrows: the expiry of one escrow at its expiresAt, and the sweep that
// expires any initiated escrow past its TTL (a missed or early job, a clock moved on).
import type { Task } from 'graphile-worker'
import { expireDueEscrows, expireEscrow, EXPIRE_TASK, EXPIRY_SWEEP_TASK, type EscrowDeps } from './service.ts'

export function escrowTasks(deps: Pick<EscrowDeps, 'pool' | 'clock' | 'outbound'>): Record<string, Task> {
  return {
    [EXPIRE_TASK]: async (payload) => {
      await expireEscrow(deps, (payload as { id: string }).id)
    },
    [EXPIRY_SWEEP_TASK]: async (_payload, helpers) => {
      const expired = await expireDueEscrows(deps)
      if (expired > 0) helpers.logger.info(`expired ${expired} escrows past their TTL`)
    },
  }
}
