// An invoice's stamps (publishedAt, cancelledAt) come from the injected clock, as every other
// owner's do, not from the database's now(): here the app's clock runs a day ahead of real time.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../support/app.ts'
import { testClock } from '../support/clock.ts'

const DAY_MS = 86_400_000
const clock = testClock()
let app: TestApp

beforeAll(async () => {
  clock.advance(DAY_MS)
  app = await startTestApp({ clock })
})
afterAll(async () => {
  await app?.close()
})

/** Whether an ISO time is the clock's, read between `before` and now (a day from the database's). */
function byTheClock(iso: string | null, before: number): boolean {
  const ms = Date.parse(iso ?? '')
  return ms >= before && ms <= clock.now().getTime()
}

it('stamps publishing and cancelling by the injected clock', async () => {
  const { client } = await app.newPartner()
  const before = clock.now().getTime()
  // Requests are signed by the clock the app judges their timestamps by.
  const signedNow = () => ({ timestampS: Math.floor(clock.now().getTime() / 1000) })
  const created = await client.post<{ reference: string; publishedAt: string | null }>('/api/v1/rail/invoice', { reference: randomUUID(), title: 'Rent', amountKobo: 100_000, publishOnCreate: true }, signedNow())
  expect(created.status).toBe(200)
  expect(byTheClock(created.body.publishedAt, before)).toBe(true)
  const cancelled = await client.post<{ cancelledAt: string | null; status: string }>(`/api/v1/rail/invoice/${created.body.reference}/cancel`, undefined, signedNow())
  expect([cancelled.status, cancelled.body.status]).toEqual([200, 'cancelled'])
  expect(byTheClock(cancelled.body.cancelledAt, before)).toBe(true)
  const stored = await app.db.pool.query<{ published_at: Date; cancelled_at: Date; status_changed_at: Date }>(
    `SELECT published_at, cancelled_at, status_changed_at FROM invoices WHERE reference = $1`,
    [created.body.reference],
  )
  expect(stored.rows[0]!.status_changed_at.getTime()).toBe(stored.rows[0]!.cancelled_at.getTime())
  expect(stored.rows[0]!.published_at.getTime() - Date.now()).toBeGreaterThan(DAY_MS / 2)
})
