// Retry-After from a real local HTTP receiver, through real graphile-worker jobs: a receiver may
// slow its retries down within the schedule's bounds, never hurry them nor park them past it
// (docs/webhooks.md). The retries it slows are brought on by the partner's sandbox clock, not waited out.
import { beforeAll, describe, expect, it } from 'vitest'
import type { DeliverySettings } from '../../src/events/delivery.ts'
import type { TestApp } from '../support/app.ts'
import { advanceSandboxClock } from '../support/clock.ts'
import { deliveryHarness } from '../support/delivery-harness.ts'
import { attemptsOf, eventStatus, record } from '../support/events.ts'
import { waitFor } from '../support/wait.ts'

const harness = deliveryHarness()
const { receiver, partnerWithCallback } = harness
let app: TestApp
beforeAll(() => {
  app = harness.app
})

/** How long after attempt `attemptNumber` began the delivery's next attempt is due (ms). */
async function waitedAfterAttempt(eventId: string, attemptNumber: number): Promise<number> {
  const { rows } = await app.db.pool.query<{ waited_ms: number }>(
    `SELECT extract(epoch FROM d.next_attempt_at - a.started_at) * 1000 AS waited_ms
       FROM event_deliveries d JOIN event_delivery_attempts a ON a.delivery_id = d.id AND a.attempt_number = $2
      WHERE d.event_id = $1`,
    [eventId, attemptNumber],
  )
  return Number(rows[0]!.waited_ms)
}

describe("Retry-After, within the schedule's bounds", () => {
  // Retries after 0.3 s, 0.3 s and 4 s (±10 %): the longest delay, 4 s, bounds any Retry-After.
  const SCHEDULE: DeliverySettings = {
    allowLoopbackCallbacks: true,
    timeoutMs: 2_000,
    retryDelaysMs: [300, 300, 4_000],
  }
  beforeAll(async () => {
    await harness.startWorkers(SCHEDULE)
  })

  it('waits as long as a receiver asks when that is longer than the schedule (429, seconds)', async () => {
    const hook = await receiver()
    hook.answer = (_request, index) =>
      index === 0 ? { status: 429, headers: { 'retry-after': '3' } } : { status: 200 }
    const { credentials, client } = await partnerWithCallback(hook.url)
    const eventId = await record(app.db.pool, { partnerId: credentials.partnerId })
    await waitFor(async () => (await attemptsOf(app.db.pool, eventId)).length === 1, 20_000, 'the first attempt')
    // The schedule would retry after 0.3 s; the receiver asked for 3 s, and the retry is due no sooner.
    expect(await waitedAfterAttempt(eventId, 1)).toBeGreaterThanOrEqual(2_900)
    expect(hook.requests).toHaveLength(1)
    // The partner's sandbox clock moves the 3 s on rather than the test waiting them out.
    await advanceSandboxClock(client, 3)
    await waitFor(async () => (await eventStatus(app.db.pool, eventId)) === 'delivered')
    expect(hook.requests).toHaveLength(2)
  })

  it('never retries sooner than the schedule because a receiver asked (503, Retry-After: 1)', async () => {
    const hook = await receiver()
    hook.answer = () => ({ status: 503, headers: { 'retry-after': '1' } })
    const { credentials, client } = await partnerWithCallback(hook.url)
    const eventId = await record(app.db.pool, { partnerId: credentials.partnerId })
    // The first two retries wait the 1 s asked for (longer than the schedule's 0.3 s): the partner's
    // sandbox clock moves it on after each attempt rather than the test waiting it out.
    for (const made of [1, 2]) {
      await waitFor(async () => (await attemptsOf(app.db.pool, eventId)).length === made, 20_000, `${made} attempts`)
      await advanceSandboxClock(client, 1)
    }
    await waitFor(async () => (await attemptsOf(app.db.pool, eventId)).length === 3, 20_000, 'three attempts')
    // After the third attempt the schedule says 4 s (3.6 s at the least); the receiver's 1 s must not shorten it.
    expect(await waitedAfterAttempt(eventId, 3)).toBeGreaterThanOrEqual(3_600)
  })

  it("asks no longer than the schedule's longest delay: a receiver asking for an hour (HTTP date) still gets every attempt", async () => {
    const hook = await receiver()
    hook.answer = () => ({ status: 503, headers: { 'retry-after': new Date(Date.now() + 3_600_000).toUTCString() } })
    const { credentials, client } = await partnerWithCallback(hook.url)
    const eventId = await record(app.db.pool, { partnerId: credentials.partnerId })
    // Each retry is due within the longest delay (4 s, 4.4 s with jitter), not the hour asked for:
    // after each attempt the partner's sandbox clock moves 5 s on rather than the test waiting.
    for (const made of [1, 2, 3]) {
      await waitFor(async () => (await attemptsOf(app.db.pool, eventId)).length === made, 20_000, `${made} attempts`)
      await advanceSandboxClock(client, 5)
    }
    await waitFor(async () => (await eventStatus(app.db.pool, eventId)) === 'failed', 30_000, 'all four attempts made')
    expect(hook.requests).toHaveLength(4)
    expect((await attemptsOf(app.db.pool, eventId)).map((attempt) => attempt.status_code)).toEqual([503, 503, 503, 503])
  })
})
