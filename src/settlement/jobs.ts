// Background work of settlement: the minute's run — bank cycles past their cut-off, and float-mode
// leftovers moved to the float.
import type { Task } from 'graphile-worker'
import { RUN_DUE_TASK, runDueSettlements, type SettlementDeps } from './service.ts'

export function settlementTasks(deps: SettlementDeps): Record<string, Task> {
  return {
    [RUN_DUE_TASK]: async (_payload, helpers) => {
      const { settlements, sweptKobo } = await runDueSettlements(deps)
      if (settlements > 0) helpers.logger.info(`submitted ${settlements} settlement payouts`)
      if (sweptKobo > 0) helpers.logger.info(`moved ${sweptKobo} kobo of collections leftovers to the float`)
    },
  }
}
