// A clock a test moves by hand instead of sleeping: real time plus what it was moved by.
import type { RailClient } from '../../src/client/index.ts'
import { systemClock, type Clock } from '../../src/platform/clock.ts'

export interface TestClock extends Clock {
  /** Moves the clock forward (never backwards). */
  advance(ms: number): void
}

export function testClock(base: Clock = systemClock): TestClock {
  let aheadMs = 0
  return {
    now: () => new Date(base.now().getTime() + aheadMs),
    advance(ms: number) {
      if (!(ms >= 0)) throw new Error(`a clock moves forward only (asked to move ${ms} ms)`)
      aheadMs += ms
    },
  }
}

/**
 * Moves a sandbox partner's test clock forward by the route partners use (POST /api/v1/rail/sandbox/clock/advance).
 * Sent without an Idempotency-Key: each call moves the clock again.
 */
export async function advanceSandboxClock(client: RailClient, seconds: number): Promise<void> {
  const moved = await client.post<{ offsetSeconds: number }>('/api/v1/rail/sandbox/clock/advance', { seconds })
  if (moved.status !== 200)
    throw new Error(`the sandbox clock did not move: ${moved.status} ${JSON.stringify(moved.body)}`)
}
