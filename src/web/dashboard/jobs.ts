// Background work of the dashboard: the hourly sweep of spent sign-in links and lapsed sessions.
import type { Task } from 'graphile-worker'
import type { Clock } from '../../platform/clock.ts'
import type { Pool } from '../../platform/db.ts'
import { sweepLapsed } from './service.ts'

export const SWEEP_SESSIONS_TASK = 'dashboard_sweep_sessions'

/** At minute 17 of every hour: nothing waits on it, so off the top of the hour when other sweeps run. */
export const DASHBOARD_CRONTAB = `17 * * * * ${SWEEP_SESSIONS_TASK}`

export function dashboardTasks(deps: { pool: Pool; clock: Clock }): Record<string, Task> {
  return {
    [SWEEP_SESSIONS_TASK]: async (_payload, helpers) => {
      const swept = await sweepLapsed(deps.pool, deps.clock)
      if (swept.links + swept.sessions > 0)
        helpers.logger.info(`swept ${swept.links} sign-in links and ${swept.sessions} sessions`)
    },
  }
}
