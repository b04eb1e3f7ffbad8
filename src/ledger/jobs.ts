// Background work of the ledger: the sweep that voids pending transfers past their timeout, and
// the hourly verification (every balance recomputed from the transfers, as `rail ledger verify`).
import type { Task } from 'graphile-worker'
import type { Pool } from '../platform/db.ts'
import { annotateStep } from '../platform/observability/jobs.ts'
import { voidTimedOutPendingTransfers } from './service.ts'
import { verifyLedger } from './verify.ts'

export const VOID_TIMED_OUT_TASK = 'ledger_void_timed_out'
export const VERIFY_TASK = 'ledger_verify'

/**
 * Every minute: a reservation outliving its timeout is released within about a minute. Hourly:
 * the ledger verified, its result and duration in the metrics (it reads every transfer, so not
 * more often).
 */
export const LEDGER_CRONTAB = [`* * * * * ${VOID_TIMED_OUT_TASK}`, `17 * * * * ${VERIFY_TASK}`].join('\n')

/** Sweeps batch after batch until none is left, each batch in its own short transaction. */
function voidTimedOut(pool: Pool): Task {
  return async (_payload, helpers) => {
    let voided = 0
    for (;;) {
      const count = await voidTimedOutPendingTransfers(pool)
      voided += count
      if (count === 0) break
    }
    annotateStep({ voided })
    if (voided > 0) helpers.logger.info(`voided ${voided} timed-out pending transfers`)
  }
}

export interface LedgerVerified {
  ok: boolean
  problems: number
  accountsChecked: number
  transfersChecked: number
  durationMs: number
}

/** A verification that finds problems is reported, and logged with them; the job itself succeeds (running it again finds the same). */
function verify(pool: Pool, onVerified: ((verification: LedgerVerified) => void) | undefined): Task {
  return async (_payload, helpers) => {
    const started = performance.now()
    const verification = await verifyLedger(pool)
    const durationMs = performance.now() - started
    const { ok, accountsChecked, transfersChecked } = verification
    onVerified?.({ ok, problems: verification.problems.length, accountsChecked, transfersChecked, durationMs })
    if (!ok) helpers.logger.error(`the ledger does not verify: ${verification.problems.join('; ')}`)
  }
}

/** The tasks run on the jobs' pool, as every other task: graphile-worker's own connections only fetch and complete jobs. */
export function ledgerTasks(deps: {
  pool: Pool
  onVerified?: (verification: LedgerVerified) => void
}): Record<string, Task> {
  return { [VOID_TIMED_OUT_TASK]: voidTimedOut(deps.pool), [VERIFY_TASK]: verify(deps.pool, deps.onVerified) }
}
