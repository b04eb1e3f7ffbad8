// Background work of the ledger: the sweep that voids pending transfers past their timeout.
import type { Task } from 'graphile-worker'
import { voidTimedOutPendingTransfers } from './service.ts'

export const VOID_TIMED_OUT_TASK = 'ledger_void_timed_out'

/** Every minute: a reservation outliving its timeout is released within about a minute. */
export const LEDGER_CRONTAB = `* * * * * ${VOID_TIMED_OUT_TASK}`

/** Sweeps batch after batch until none is left, each batch in its own short transaction. */
const voidTimedOut: Task = async (_payload, helpers) => {
  let voided = 0
  for (;;) {
    const count = await helpers.withPgClient((client) => voidTimedOutPendingTransfers(client))
    voided += count
    if (count === 0) break
  }
  if (voided > 0) helpers.logger.info(`voided ${voided} timed-out pending transfers`)
}

export const ledgerTasks = { [VOID_TIMED_OUT_TASK]: voidTimedOut }
