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

const lastAdvanceTimestampS = new WeakMap<RailClient, number>()

/**
 * Moves a sandbox partner's test clock forward by the route partners use (POST /api/v1/rail/sandbox/clock/advance).
 * The route has no reference: the same signed request again is a replay and moves nothing. Two
 * advances by the same amount within one second would sign alike, so each is signed a second
 * after the client's previous one (well inside the ±300 s window).
 */
export async function advanceSandboxClock(client: RailClient, seconds: number): Promise<void> {
  const timestampS = Math.max(Math.floor(Date.now() / 1000), (lastAdvanceTimestampS.get(client) ?? 0) + 1)
  lastAdvanceTimestampS.set(client, timestampS)
  const moved = await client.post<{ offsetSeconds: number }>('/api/v1/rail/sandbox/clock/advance', { seconds }, { timestampS })
  if (moved.status !== 200) throw new Error(`the sandbox clock did not move: ${moved.status} ${JSON.stringify(moved.body)}`)
}
