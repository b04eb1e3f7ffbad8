// Background work of collections: applying stored credits, the sweep that revives stranded
// ones, the sweep of every account for credits whose notice never came, the expiry of payment
// intents, and telling the provider about archived accounts.
import type { Task } from 'graphile-worker'
import { systemClock } from '../../platform/clock.ts'
import { expireIntents, EXPIRE_TASK } from '../intents/service.ts'
import { archiveAtProvider, ARCHIVE_AT_PROVIDER_TASK } from '../virtual-accounts/service.ts'
import {
  ACCOUNT_SWEEP_TASK,
  accountSweepSettings,
  sweepAccounts,
  type AccountSweepRun,
  type AccountSweepSettings,
} from './account-sweep.ts'
import { applyCreditBatch } from './batch.ts'
import { APPLY_TASK, sweepStrandedCredits, SWEEP_TASK, type InboundDeps } from './service.ts'

export interface CollectionTaskOptions {
  /** The sweep of every account for credits whose notice never came (tests shorten its grace and batch). */
  accountSweep?: Partial<AccountSweepSettings>
  /** Told of each sweep run (the worker's metrics count what it found). */
  onAccountSweep?: (run: AccountSweepRun) => void
}

export function collectionTasks(deps: InboundDeps, options: CollectionTaskOptions = {}): Record<string, Task> {
  const sweepSettings = accountSweepSettings(options.accountSweep)
  return {
    [ACCOUNT_SWEEP_TASK]: async (_payload, helpers) => {
      // The time Rail and the provider share, which the provider stamps credits by.
      const run = await sweepAccounts(deps, sweepSettings, systemClock)
      options.onAccountSweep?.(run)
      if (run.creditsFound > 0)
        helpers.logger.warn(`the account sweep found ${run.creditsFound} inbound credits whose notice never came`)
      if (run.accountsFailed > 0)
        helpers.logger.warn(
          `the account sweep had no answer for ${run.accountsFailed} of ${run.accountsAsked} accounts`,
        )
    },
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
