// Background work of collections: applying stored credits, the sweep that revives stranded
// ones, the expiry of payment intents, and telling the provider about archived accounts.
import type { Task } from 'graphile-worker'
import { expireIntents, EXPIRE_TASK } from '../payment-intents/service.ts'
import { archiveAtProvider, ARCHIVE_AT_PROVIDER_TASK } from '../virtual-accounts/service.ts'
import { applyCreditBatch } from './batch.ts'
import { APPLY_TASK, sweepStrandedCredits, SWEEP_TASK, type InboundDeps } from './service.ts'

export function collectionTasks(deps: InboundDeps): Record<string, Task> {
  return {
    [APPLY_TASK]: async (payload) => {
      await applyCreditBatch(deps, (payload as { creditId: string }).creditId)
    },
    [SWEEP_TASK]: async (_payload, helpers) => {
      const revived = await sweepStrandedCredits(deps.pool)
      if (revived > 0) helpers.logger.info(`re-enqueued ${revived} inbound credits left unapplied`)
    },
    [EXPIRE_TASK]: async (_payload, helpers) => {
      const expired = await expireIntents(deps.pool, deps.outbound.payments.clock)
      if (expired > 0) helpers.logger.info(`expired ${expired} payment intents`)
    },
    [ARCHIVE_AT_PROVIDER_TASK]: async (payload) => {
      await archiveAtProvider(deps, (payload as { virtualAccountId: string }).virtualAccountId)
    },
  }
}
