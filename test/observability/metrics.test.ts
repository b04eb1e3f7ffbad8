// /metrics before and after real flows: a payout settled, credits received (one applied, one to
// triage), callbacks delivered and one refused, a ledger verification — the API and the workers
// of one process counting in one registry, as `rail serve` does. Each background step leaves one
// structured log line.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { createPartner } from '../../src/partners/service.ts'
import { addJob } from '../../src/platform/jobs.ts'
import { createPool } from '../../src/platform/db.ts'
import { createMetricsRegistry } from '../../src/platform/metrics.ts'
import { watchPool } from '../../src/platform/observability/pools.ts'
import { createLogger } from '../../src/platform/observability/logger.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import type { TestDatabase } from '../support/database.ts'
import { fundFloat } from '../support/float.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'
import { record } from '../support/events.ts'
import { hasSeries, logLines, parseMetrics, scrape, valueOf, type Sample } from './support.ts'

const SECRET = 'observability-test-secret'
const SCHEDULE = { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 } }
const WORKER_CONCURRENCY = 4
let rail: Rail
let db: TestDatabase
let baseUrl = ''
let hook: Receiver
const logs = logLines()

beforeAll(async () => {
  // The API and the workers count in one registry, as `rail serve`'s do.
  const metrics = createMetricsRegistry()
  rail = await startRail({
    sandboxBankSecret: SECRET,
    payments: SCHEDULE,
    observe: { metrics, databaseGauges: true },
    workers: {
      concurrency: WORKER_CONCURRENCY,
      events: { retryDelaysMs: [60_000] },
      observe: { registry: metrics, logger: createLogger('info', logs.stream) },
    },
    receiver: true,
  })
  db = rail.db
  baseUrl = rail.baseUrl
  hook = rail.receiver
  partner = await createPartner(db.pool, rail.masterKey, {
    name: 'Observed',
    customerClass: 'fintech',
    environment: 'sandbox',
    callbackUrl: hook.url,
  })
  client = new RailClient(baseUrl, partner)
})
afterAll(() => rail?.close())

let partner: Awaited<ReturnType<typeof createPartner>>
let client: RailClient

const BENEFICIARY = {
  beneficiaryAccountNumber: nuban('058', '123456789'),
  beneficiaryBankCode: '058',
  beneficiaryAccountName: syntheticAccountName('058', nuban('058', '123456789')),
  currency: 'NGN',
}

/** The payout's state, as the partner reads it. */
const stateOf = async (id: string) => (await client.get<{ state: string }>(`/api/v1/rail/outbound/${id}`)).body.state

async function settledPayout(): Promise<string> {
  expect((await fundFloat(client, 1_000_000)).status).toBe(200)
  const submitted = await client.post<{ id: string }>('/api/v1/rail/outbound', {
    clientReference: randomUUID(),
    amountKobo: 100_000,
    ...BENEFICIARY,
  })
  expect(submitted.status).toBe(202)
  const id = submitted.body.id
  await waitFor(async () => (await stateOf(id)) === 'submitted', 15_000, 'payout submitted')
  expect(
    (await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', { transferId: id, outcome: 'confirmed' }))
      .status,
  ).toBe(200)
  await waitFor(async () => (await stateOf(id)) === 'confirmed', 15_000, 'payout confirmed')
  return id
}

async function creditsReceived(): Promise<void> {
  const open = await client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', {
    reference: randomUUID(),
  })
  const archived = await client.post<{ virtualAccount: string; trackingId: string }>('/api/v1/rail/virtual-account', {
    reference: randomUUID(),
  })
  expect([open.status, archived.status]).toEqual([200, 200])
  expect((await client.post(`/api/v1/rail/virtual-account/${archived.body.trackingId}/archive`)).status).toBe(200)
  for (const [account, amountKobo] of [
    [open.body.virtualAccount, 30_000],
    [archived.body.virtualAccount, 7_000],
  ] as const) {
    expect(
      (await client.post('/api/v1/rail/sandbox/simulate-inbound-credit', { virtualAccount: account, amountKobo }))
        .status,
    ).toBe(200)
  }
  await waitFor(
    async () =>
      (await db.pool.query(`SELECT 1 FROM inbound_credits WHERE status IN ('applied', 'unmatched')`)).rowCount === 2,
    30_000,
    'both credits applied or in triage',
  )
}

const steps = () => logs.lines.filter((line) => line.msg === 'background step')

describe('/metrics moves with real flows', () => {
  let before: Sample[]
  let after: Sample[]
  let payoutId: string

  it('on a quiet system, every task and credit status is a series at 0, not a missing one', async () => {
    const quiet = await scrape(baseUrl)
    for (const task of ['payment_work', 'event_deliver', 'inbound_credit_apply', 'ledger_verify']) {
      expect(hasSeries(quiet, 'rail_jobs_queued', { task }), task).toBe(true)
      expect(hasSeries(quiet, 'rail_jobs_failed', { task }), task).toBe(true)
    }
    for (const status of ['received', 'applied', 'unmatched', 'refunded']) {
      expect([
        status,
        hasSeries(quiet, 'rail_inbound_credits', { status }),
        valueOf(quiet, 'rail_inbound_credits', { status }),
      ]).toEqual([status, true, 0])
    }
    expect(valueOf(quiet, 'rail_metrics_query_failures_total')).toBe(0)
  })

  it(
    'counts a settled payout, received credits, deliveries and a ledger verification',
    { timeout: 120_000 },
    async () => {
      before = await scrape(baseUrl)
      payoutId = await settledPayout()
      await creditsReceived()
      // Every callback so far delivered: none pending.
      await waitFor(
        async () => (await db.pool.query(`SELECT 1 FROM event_deliveries WHERE status = 'pending'`)).rowCount === 0,
        30_000,
        'callbacks delivered',
      )
      await addJob(db.pool, 'ledger_verify', {})
      await waitFor(
        async () => valueOf(await scrape(baseUrl), 'rail_ledger_verify_runs_total', { result: 'ok' }) === 1,
        30_000,
        'ledger verified',
      )
      after = await scrape(baseUrl)

      const moved = (name: string, labels: Record<string, string> = {}) =>
        valueOf(after, name, labels) - valueOf(before, name, labels)
      // Instructions to the bank by operation and state (read from the database at the scrape).
      expect(valueOf(before, 'rail_bank_instructions', { operation: 'payout', state: 'succeeded' })).toBe(0)
      expect(valueOf(after, 'rail_bank_instructions', { operation: 'payout', state: 'succeeded' })).toBe(1)
      // Inbound credits by status, and the unmatched one waiting in triage.
      expect(moved('rail_inbound_credits', { status: 'applied' })).toBe(1)
      expect(moved('rail_inbound_credits', { status: 'unmatched' })).toBe(1)
      expect(valueOf(after, 'rail_unmatched_credits')).toBe(1)
      expect(valueOf(after, 'rail_unmatched_credits_amount_kobo')).toBe(7_000)
      expect(valueOf(after, 'rail_unmatched_credits_oldest_seconds')).toBeGreaterThanOrEqual(0)
      // Deliveries: attempts by status class, none pending now.
      const delivered = moved('rail_delivery_attempts_total', { status_class: '2xx', result: 'delivered' })
      expect(delivered).toBe(hook.requests.length)
      expect(delivered).toBeGreaterThanOrEqual(3) // transfer.confirmed, credit.confirmed, credit.unmatched at least
      expect(valueOf(after, 'rail_deliveries_pending')).toBe(0)
      expect(valueOf(after, 'rail_deliveries_oldest_pending_seconds')).toBe(0)
      // Jobs: runs and latency by task, as counted by the workers of this process.
      for (const task of [
        'payment_work',
        'event_deliver',
        'inbound_credit_apply',
        'sandbox_bank_notify',
        'ledger_verify',
      ]) {
        expect(moved('rail_job_runs_total', { task, outcome: 'done' }), task).toBeGreaterThanOrEqual(1)
        expect(moved('rail_job_duration_seconds_count', { task, outcome: 'done' }), task).toBeGreaterThanOrEqual(1)
        expect(hasSeries(after, 'rail_job_start_delay_seconds_bucket', { task, le: '+Inf' }), task).toBe(true)
      }
      // The ledger verification: ok, when, how long.
      expect(valueOf(after, 'rail_ledger_verify_problems')).toBe(0)
      expect(valueOf(after, 'rail_ledger_verify_last_ok_timestamp_seconds')).toBe(
        valueOf(after, 'rail_ledger_verify_last_run_timestamp_seconds'),
      )
      expect(valueOf(after, 'rail_ledger_verify_duration_seconds_count')).toBe(1)
      // Pools: the API's, the sandbox bank's (mounted here) and the workers' (here the same pool as the API's).
      expect(valueOf(after, 'rail_db_pool_max_connections', { pool: 'rail' })).toBe(db.pool.options.max)
      expect(valueOf(after, 'rail_db_pool_connections', { pool: 'rail' })).toBeGreaterThanOrEqual(1)
      expect(hasSeries(after, 'rail_db_pool_waiting_clients', { pool: 'rail-sandbox-bank' })).toBe(true)
      expect(moved('rail_db_pool_wait_seconds_count', { pool: 'rail' })).toBeGreaterThan(0)
      expect(valueOf(after, 'rail_db_pool_checkout_failures_total')).toBe(0)
      // HTTP, as before.
      expect(
        moved('rail_http_requests_total', { route: '/api/v1/rail/outbound', method: 'POST', status_code: '202' }),
      ).toBe(1)
      expect(valueOf(after, 'rail_metrics_query_failures_total')).toBe(0)
    },
  )

  it('logs one line per background step: job id, task, object id, outcome, duration', () => {
    const payoutSteps = steps().filter((line) => line.task === 'payment_work' && line.objectId === payoutId)
    expect(payoutSteps.length).toBeGreaterThanOrEqual(2) // sent, then the requery that found it succeeded
    expect(payoutSteps.find((line) => line.outcome === 'succeeded')).toEqual(
      expect.objectContaining({ level: 30, jobId: expect.any(String), attempt: 1, durationMs: expect.any(Number) }),
    )
    const deliveries = steps().filter((line) => line.task === 'event_deliver')
    expect(deliveries.length).toBe(hook.requests.length)
    for (const line of deliveries)
      expect(line).toEqual(
        expect.objectContaining({ outcome: 'delivered', statusCode: 200, objectId: expect.any(String) }),
      )
    const jobIds = steps().map((line) => line.jobId)
    expect(new Set(jobIds).size).toBe(jobIds.length) // one line per job run
    expect(steps().find((line) => line.task === 'ledger_verify')).toEqual(
      expect.objectContaining({ outcome: 'verified', problems: 0 }),
    )
  })

  it('counts a refused delivery as a retry, pending and ageing', { timeout: 60_000 }, async () => {
    const beforeRefusal = await scrape(baseUrl)
    hook.answer = () => ({ status: 503, body: 'down' })
    const count = hook.requests.length
    await record(db.pool, { partnerId: partner.partnerId }) // its callback is refused
    await waitFor(() => hook.requests.length > count, 15_000, 'refused attempt')
    await waitFor(
      async () =>
        valueOf(await scrape(baseUrl), 'rail_delivery_attempts_total', { status_class: '5xx', result: 'retrying' }) ===
        1,
      15_000,
      'retry counted',
    )
    const refused = await scrape(baseUrl)
    expect(valueOf(refused, 'rail_deliveries_pending')).toBe(1)
    expect(valueOf(refused, 'rail_deliveries_due')).toBe(0) // its retry is a minute away
    expect(valueOf(refused, 'rail_deliveries_oldest_pending_seconds')).toBeGreaterThan(0)
    expect(valueOf(refused, 'rail_jobs_scheduled', { task: 'event_deliver' })).toBe(1)
    expect(valueOf(refused, 'rail_delivery_attempts_total', { status_class: '2xx' })).toBe(
      valueOf(beforeRefusal, 'rail_delivery_attempts_total', { status_class: '2xx' }),
    )
    const line = steps().findLast((entry) => entry.task === 'event_deliver')
    expect(line).toEqual(expect.objectContaining({ outcome: 'retrying', statusCode: 503 }))
  })

  it('serves every metric the Grafana dashboard queries, and docs/operations.md names every one it serves', async () => {
    const text = await (await fetch(`${baseUrl}/metrics`)).text()
    const served = new Set([...text.matchAll(/^# TYPE (rail_\w+) (\w+)$/gm)].map((match) => match[1]!))
    expect(served.size).toBeGreaterThan(30)
    const dashboard = readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8')
    const queried = new Set(
      [...dashboard.matchAll(/rail_\w+/g)].map((match) => match[0].replace(/_(bucket|sum|count)$/, '')),
    )
    for (const name of queried) expect(served, name).toContain(name)
    const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8')
    for (const name of served) expect(operations, name).toContain(name)
  })

  it('shows callers waiting for a pool that is all in use, and times every checkout', async () => {
    const registry = createMetricsRegistry()
    const small = createPool(db.url, 1, 'rail-small')
    watchPool(registry, 'small', small)
    const read = async () => parseMetrics(await registry.metrics())
    const held = await small.connect()
    const waiting = small.query('SELECT 1 AS one') // queued behind the held connection
    await waitFor(
      async () => valueOf(await read(), 'rail_db_pool_waiting_clients', { pool: 'small' }) === 1,
      10_000,
      'a caller waiting',
    )
    const busy = await read()
    expect([
      valueOf(busy, 'rail_db_pool_connections', { pool: 'small' }),
      valueOf(busy, 'rail_db_pool_idle_connections', { pool: 'small' }),
    ]).toEqual([1, 0])
    expect(valueOf(busy, 'rail_db_pool_wait_seconds_count', { pool: 'small' })).toBe(1) // the held one's checkout
    held.release()
    expect((await waiting).rows).toEqual([{ one: 1 }])
    const idle = await read()
    expect(valueOf(idle, 'rail_db_pool_waiting_clients', { pool: 'small' })).toBe(0)
    expect(valueOf(idle, 'rail_db_pool_wait_seconds_count', { pool: 'small' })).toBe(2)
    expect(valueOf(idle, 'rail_db_pool_checkout_failures_total', { pool: 'small' })).toBe(0)
    await small.end()
    await expect(small.query('SELECT 1')).rejects.toThrow(/after calling end/)
    expect(valueOf(await read(), 'rail_db_pool_checkout_failures_total', { pool: 'small' })).toBe(1)
  })
})
