// The times owners stamp on their state changes come from the injected clock, not from the
// database's now(): here the app's clock runs a day ahead of real time. Invoices (published,
// cancelled), virtual accounts (archived), and a payout the float cannot cover (failed at once:
// the transfer and its bank instruction).
//
// One clock per column: a time that schedules work is written by the clock that judges it due.
// A callback delivery's next attempt (its first, a retry, a redelivery; delivered_at) and the due
// work read from it (the workers' claim, the stalled sweep, the due gauge), and a payout's next
// step (the stranded sweep), all go by the injected clock: the wall clock finds nothing due.
import { randomUUID } from 'node:crypto'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { selectStalledDeliveries } from '../../src/events/deliveries-repo.ts'
import { Deliverer } from '../../src/events/delivery.ts'
import { sweepStranded } from '../../src/money-out/pipeline/service.ts'
import { systemClock, type Clock } from '../../src/platform/clock.ts'
import { registerDatabaseGauges } from '../../src/platform/observability/database-gauges.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { testClock } from '../support/clock.ts'
import { deliveryOf, record } from '../support/events.ts'
import { PAYEE } from '../support/payments.ts'
import { startReceiver } from '../support/receiver.ts'

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

/** Requests are signed by the clock the app judges their timestamps by. */
const signedNow = () => ({ timestampS: Math.floor(clock.now().getTime() / 1000) })

it('stamps an invoice published and cancelled by the injected clock', async () => {
  const { client } = await app.newPartner()
  const before = clock.now().getTime()
  const created = await client.post<{ reference: string; publishedAt: string | null }>(
    '/api/v1/rail/invoice',
    { reference: randomUUID(), title: 'Rent', amountKobo: 100_000, publishOnCreate: true },
    signedNow(),
  )
  expect(created.status).toBe(200)
  expect(byTheClock(created.body.publishedAt, before)).toBe(true)
  const cancelled = await client.post<{ cancelledAt: string | null; status: string }>(
    `/api/v1/rail/invoice/${created.body.reference}/cancel`,
    undefined,
    signedNow(),
  )
  expect([cancelled.status, cancelled.body.status]).toEqual([200, 'cancelled'])
  expect(byTheClock(cancelled.body.cancelledAt, before)).toBe(true)
  const stored = await app.db.pool.query<{ published_at: Date; cancelled_at: Date; status_changed_at: Date }>(
    `SELECT published_at, cancelled_at, status_changed_at FROM invoices WHERE reference = $1`,
    [created.body.reference],
  )
  expect(stored.rows[0]!.status_changed_at.getTime()).toBe(stored.rows[0]!.cancelled_at.getTime())
  expect(stored.rows[0]!.published_at.getTime() - Date.now()).toBeGreaterThan(DAY_MS / 2)
})

it('stamps a virtual account archived by the injected clock', async () => {
  const { client } = await app.newPartner()
  const before = clock.now().getTime()
  const account = await client.post<{ trackingId: string }>(
    '/api/v1/rail/virtual-account',
    { reference: randomUUID() },
    signedNow(),
  )
  expect(account.status).toBe(200)
  expect(
    (await client.post(`/api/v1/rail/virtual-account/${account.body.trackingId}/archive`, undefined, signedNow()))
      .status,
  ).toBe(200)
  const { rows } = await app.db.pool.query<{ archived_at: Date }>(
    `SELECT archived_at FROM virtual_accounts WHERE tracking_id = $1`,
    [account.body.trackingId],
  )
  expect(byTheClock(rows[0]!.archived_at.toISOString(), before)).toBe(true)
})

it('stamps a payout the float cannot cover, and its unsent bank instruction, failed by the injected clock', async () => {
  const { client } = await app.newPartner()
  const before = clock.now().getTime()
  const payout = await client.post<{ id: string; state: string; stateChangedAt: string; terminalAt: string | null }>(
    '/api/v1/rail/outbound',
    {
      clientReference: randomUUID(),
      amountKobo: 10_000,
      beneficiaryAccountNumber: PAYEE.accountNumber,
      beneficiaryBankCode: PAYEE.bankCode,
      beneficiaryAccountName: PAYEE.accountName,
      currency: 'NGN',
    },
    signedNow(),
  )
  expect([payout.status, payout.body.state]).toEqual([202, 'failed'])
  expect(byTheClock(payout.body.stateChangedAt, before)).toBe(true)
  expect(payout.body.terminalAt).toBe(payout.body.stateChangedAt)
  const { rows } = await app.db.pool.query<{ state: string; terminal_at: Date }>(
    `SELECT state, terminal_at FROM bank_instructions WHERE id = $1`,
    [payout.body.id],
  )
  expect(rows[0]!.state).toBe('failed')
  expect(byTheClock(rows[0]!.terminal_at.toISOString(), before)).toBe(true)
})

/** A delivery's schedule and ending, as stored. */
async function deliveryTimes(
  deliveryId: string,
): Promise<{ next_attempt_at: Date; delivered_at: Date | null; attempts_made: number; status: string }> {
  const { rows } = await app.db.pool.query(
    `SELECT next_attempt_at, delivered_at, attempts_made, status FROM event_deliveries WHERE id = $1`,
    [deliveryId],
  )
  return rows[0]
}

/** What the due-deliveries gauge reads at a scrape when the app runs on `at`. */
async function dueDeliveriesGauge(at: Clock): Promise<number> {
  const registry = new Registry()
  registerDatabaseGauges(registry, app.db.pool, { clock: at })
  return (await registry.getSingleMetric('rail_deliveries_due')!.get()).values[0]!.value
}

it('schedules a callback delivery and its retry by the injected clock, and the workers, the sweep and the gauge judge it due by that clock', async () => {
  const receiver = await startReceiver()
  receiver.answer = (_request, index) => ({ status: index === 0 ? 500 : 200 })
  const settings = { allowLoopbackCallbacks: true, timeoutMs: 2_000, retryDelaysMs: [60_000] }
  const byClock = new Deliverer({ pool: app.db.pool, masterKey: app.masterKey, clock, settings })
  const byWall = new Deliverer({ pool: app.db.pool, masterKey: app.masterKey, clock: systemClock, settings })
  try {
    const { credentials } = await app.newPartner({ callbackUrl: receiver.url })
    const before = clock.now().getTime()
    const eventId = await record(app.db.pool, { partnerId: credentials.partnerId }, clock)
    const { id } = await deliveryOf(app.db.pool, eventId)
    // The first attempt is due at once by the clock that recorded the event, a day from the database's now().
    expect(byTheClock((await deliveryTimes(id)).next_attempt_at.toISOString(), before)).toBe(true)
    const stalledAt = (at: Date) =>
      selectStalledDeliveries(app.db.pool, 10_000, 1_000, at).then((rows) => rows.map((row) => row.id))
    expect(await stalledAt(new Date(Date.now() + 11_000))).not.toContain(id)
    expect(await stalledAt(new Date(clock.now().getTime() + 11_000))).toContain(id)
    expect(await dueDeliveriesGauge(systemClock)).toBe(0)
    expect(await dueDeliveriesGauge(clock)).toBeGreaterThanOrEqual(1)

    // A worker on the wall clock finds nothing due; one on the app's clock attempts it.
    await byWall.attempt(id)
    expect([receiver.requests.length, (await deliveryTimes(id)).attempts_made]).toEqual([0, 0])
    await byClock.attempt(id)
    expect(receiver.requests.length).toBe(1)
    // The 500 schedules the retry 60 s ± 10 % on from the app's clock.
    const retry = await deliveryTimes(id)
    expect(retry.status).toBe('pending')
    const retryInMs = retry.next_attempt_at.getTime() - clock.now().getTime()
    expect(retryInMs).toBeGreaterThan(50_000)
    expect(retryInMs).toBeLessThanOrEqual(66_000)
    // Its job waits as long by the database's clock, which graphile-worker runs jobs by.
    const job = await app.db.pool.query<{ run_at: Date }>(`SELECT run_at FROM graphile_worker.jobs WHERE key = $1`, [
      `event_delivery:${id}`,
    ])
    const jobInMs = job.rows[0]!.run_at.getTime() - Date.now()
    expect(jobInMs).toBeGreaterThan(50_000)
    expect(jobInMs).toBeLessThanOrEqual(66_000)
    await byClock.attempt(id)
    expect(receiver.requests.length).toBe(1) // not due yet by the app's clock

    clock.advance(70_000)
    const deliveredFrom = clock.now().getTime()
    await byClock.attempt(id)
    expect(receiver.requests.length).toBe(2)
    const delivered = await deliveryTimes(id)
    expect(delivered.status).toBe('delivered')
    expect(byTheClock(delivered.delivered_at!.toISOString(), deliveredFrom)).toBe(true)
  } finally {
    await Promise.all([byClock.close(), byWall.close()])
    await receiver.close()
  }
})

it('schedules a redelivery by the injected clock', async () => {
  const { client, credentials } = await app.newPartner({ callbackUrl: 'http://127.0.0.1:9/never-called' })
  const eventId = await record(app.db.pool, { partnerId: credentials.partnerId }, clock)
  const first = await deliveryOf(app.db.pool, eventId)
  // Put off, as a retry would be; asked for again, it is due at once by the app's clock.
  await app.db.pool.query(
    `UPDATE event_deliveries SET next_attempt_at = next_attempt_at + interval '1 hour' WHERE id = $1`,
    [first.id],
  )
  const before = clock.now().getTime()
  expect((await client.post(`/api/v1/rail/events/${eventId}/redeliver`, undefined, signedNow())).status).toBe(202)
  expect(byTheClock((await deliveryTimes(first.id)).next_attempt_at.toISOString(), before)).toBe(true)
})

it("schedules a payout's next step by the injected clock, and the stranded sweep judges it by that clock", async () => {
  const { client } = await app.newPartner()
  expect(
    (await client.post('/api/v1/rail/sandbox/fund-float', { amountKobo: 50_000, reference: randomUUID() }, signedNow()))
      .status,
  ).toBe(200)
  const payout = await client.post<{ id: string }>(
    '/api/v1/rail/outbound',
    {
      clientReference: randomUUID(),
      amountKobo: 10_000,
      beneficiaryAccountNumber: PAYEE.accountNumber,
      beneficiaryBankCode: PAYEE.bankCode,
      beneficiaryAccountName: PAYEE.accountName,
      currency: 'NGN',
    },
    signedNow(),
  )
  expect(payout.status).toBe(202)
  const { rows } = await app.db.pool.query<{ state: string; next_attempt_at: Date }>(
    `SELECT state, next_attempt_at FROM bank_instructions WHERE id = $1`,
    [payout.body.id],
  )
  expect(['ready', 'sending', 'sent']).toContain(rows[0]!.state)
  const nextStepAt = rows[0]!.next_attempt_at.getTime()
  expect(nextStepAt - Date.now()).toBeGreaterThan(DAY_MS / 2)
  // Nobody holds it and no worker runs: overdue (by the sweep's 30 s) only by the clock that scheduled it.
  expect(await sweepStranded(app.db.pool, systemClock)).toBe(0)
  expect(await sweepStranded(app.db.pool, { now: () => new Date(nextStepAt + 31_000) })).toBeGreaterThanOrEqual(1)
})
