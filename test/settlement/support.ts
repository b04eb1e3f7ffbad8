// Shared by the settlement tests: the settlement task's deps on a test app with a clock the test
// moves (the API keeps the real clock, which signatures are checked by), and the Lagos cut-off
// a given number of hours from now.
import { outboundDeps } from '../../src/money-out/outbound/service.ts'
import type { Clock } from '../../src/platform/clock.ts'
import type { SettlementDeps } from '../../src/settlement/service.ts'
import type { TestApp } from '../support/app.ts'

export interface MovableClock extends Clock {
  /** Moves the clock this many hours ahead of real time. */
  setAheadHours(hours: number): void
}

export function movableClock(): MovableClock {
  let aheadMs = 0
  return {
    now: () => new Date(Date.now() + aheadMs),
    setAheadHours(hours) {
      aheadMs = hours * 60 * 60 * 1000
    },
  }
}

/** What the worker's settlement task runs with, on the test app's database and bank. */
export function settlementDeps(app: TestApp, clock: Clock): SettlementDeps {
  return {
    pool: app.db.pool,
    outbound: outboundDeps({ pool: app.db.pool, allowLoopbackCallbacks: true, payments: app.payments() }),
    clock,
  }
}

/** The Africa/Lagos wall time (UTC+1) `hours` from now, as a cut-off 'HH:MM'. */
export function lagosCutoffIn(hours: number): string {
  const lagos = new Date(Date.now() + hours * 60 * 60 * 1000 + 60 * 60 * 1000)
  return lagos.toISOString().slice(11, 16)
}
