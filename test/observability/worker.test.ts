// A real `rail worker` process: its own /healthz, /readyz and /metrics on WORKER_HTTP_PORT, a
// structured log line on stdout for each job it runs, its spans exported to a real OTLP/HTTP
// receiver when OTEL_EXPORTER_OTLP_ENDPOINT is set, and /readyz failing once its database is gone.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findFreePort } from '../../src/platform/embedded-db.ts'
import { PROJECT_ROOT, RAIL_BIN, runRail } from '../support/cli.ts'
import { waitFor } from '../support/wait.ts'
import { attribute, bareDatabase, parseMetrics, startOtlpReceiver, valueOf } from './support.ts'

let database: Awaited<ReturnType<typeof bareDatabase>>
let pool: pg.Pool
let poolEnded = false
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>
let worker: ChildProcess
let output = ''
let workerUrl = ''
let workerEnv: NodeJS.ProcessEnv

beforeAll(async () => {
  database = await bareDatabase()
  pool = new pg.Pool({ connectionString: database.url, max: 2 })
  otlp = await startOtlpReceiver()
  const port = await findFreePort()
  workerUrl = `http://127.0.0.1:${port}`
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    RAIL_MASTER_KEY: randomBytes(32).toString('hex'),
    HOST: '127.0.0.1',
    WORKER_HTTP_PORT: String(port),
    WORKER_CONCURRENCY: '2',
    LOG_LEVEL: 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_SERVICE_NAME: 'rail-worker-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '100', // spans leave promptly rather than every 5 s
  }
  workerEnv = env
  worker = spawn(process.execPath, [RAIL_BIN, 'worker'], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  worker.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  worker.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  await waitFor(() => output.includes('Stop with Ctrl-C.') || worker.exitCode !== null, 60_000, 'rail worker started')
  expect(worker.exitCode, output).toBeNull()
})
afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    worker.kill('SIGTERM')
    await exited
  }
  if (!poolEnded) await pool?.end()
  await otlp?.close()
  await database?.drop()
})

/** Adds a job as any process would, and answers its id. */
async function addJob(task: string, payload: object, maxAttempts = 25): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id::text FROM graphile_worker.add_job(identifier => $1, payload => $2::json, max_attempts => $3)`,
    [task, JSON.stringify(payload), maxAttempts],
  )
  return rows[0]!.id
}

/** The worker's structured lines on stdout (the banner and anything else skipped). */
function logLines(): Record<string, unknown>[] {
  return output.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return []
    return [JSON.parse(line) as Record<string, unknown>]
  })
}

describe('rail worker', () => {
  it('names its endpoints in the banner, and answers /healthz and /readyz', async () => {
    expect(output).toContain(`Worker endpoints  ${workerUrl}/healthz, /readyz, /metrics`)
    const health = await fetch(`${workerUrl}/healthz`)
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }])
    const ready = await fetch(`${workerUrl}/readyz`)
    expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }])
    expect((await fetch(`${workerUrl}/api/v1/rail/settings`)).status).toBe(404) // the API is not served here
  })

  it('verifies the ledger once as it starts: its metrics hold a result before the first hourly run', async () => {
    const scrape = async () => parseMetrics(await (await fetch(`${workerUrl}/metrics`)).text())
    await waitFor(
      async () => valueOf(await scrape(), 'rail_ledger_verify_runs_total', { result: 'ok' }) === 1,
      30_000,
      'the start-up verification',
    )
    const metrics = await scrape()
    expect(valueOf(metrics, 'rail_ledger_verify_last_ok_timestamp_seconds')).toBeGreaterThan(Date.now() / 1000 - 600)
    expect(valueOf(metrics, 'rail_ledger_verify_problems')).toBe(0)
  })

  it('logs a line per job, counts it on its /metrics, and exports its span', { timeout: 60_000 }, async () => {
    const verifyJob = await addJob('ledger_verify', {})
    const failingJob = await addJob('inbound_credit_apply', { creditId: 'not-a-uuid' }, 1)
    await waitFor(
      () => logLines().some((line) => line.jobId === verifyJob) && logLines().some((line) => line.jobId === failingJob),
      30_000,
      'both jobs logged',
    )

    const verified = logLines().filter((line) => line.jobId === verifyJob)
    expect(verified).toEqual([
      expect.objectContaining({
        msg: 'background step',
        level: 30,
        task: 'ledger_verify',
        outcome: 'verified',
        problems: 0,
        attempt: 1,
        durationMs: expect.any(Number),
      }),
    ])
    const failed = logLines().filter((line) => line.jobId === failingJob)
    expect(failed).toEqual([
      expect.objectContaining({
        msg: 'background step',
        level: 40,
        task: 'inbound_credit_apply',
        objectId: 'not-a-uuid',
        outcome: 'failed',
        error: expect.stringContaining('uuid'),
      }),
    ])

    // From the database: out of attempts and kept (graphile-worker records the failure just after the step's line).
    await waitFor(
      async () =>
        valueOf(parseMetrics(await (await fetch(`${workerUrl}/metrics`)).text()), 'rail_jobs_failed', {
          task: 'inbound_credit_apply',
        }) === 1,
      10_000,
      'failed job',
    )
    const response = await fetch(`${workerUrl}/metrics`)
    expect(response.headers.get('content-type')).toContain('text/plain')
    const metrics = parseMetrics(await response.text())
    // The start-up verification and this one.
    expect(valueOf(metrics, 'rail_job_runs_total', { task: 'ledger_verify', outcome: 'done' })).toBe(2)
    expect(valueOf(metrics, 'rail_job_runs_total', { task: 'inbound_credit_apply', outcome: 'failed' })).toBe(1)
    expect(valueOf(metrics, 'rail_ledger_verify_runs_total', { result: 'ok' })).toBe(2)
    expect(valueOf(metrics, 'rail_db_pool_max_connections', { pool: 'rail-worker' })).toBe(4) // WORKER_CONCURRENCY + 2
    expect(valueOf(metrics, 'rail_db_pool_max_connections', { pool: 'rail' })).toBe(2) // its endpoints' own
    expect(valueOf(metrics, 'rail_deliveries_pending')).toBe(0)
    expect(valueOf(metrics, 'rail_metrics_query_failures_total')).toBe(0)
    expect(valueOf(metrics, 'process_resident_memory_bytes')).toBeGreaterThan(0)

    const exported = (jobId: string) =>
      otlp.spans().some(({ span }) => attribute(span.attributes, 'rail.job.id') === jobId)
    await waitFor(() => exported(verifyJob) && exported(failingJob), 30_000, 'spans exported')
    const verifySpan = otlp.spans().find(({ span }) => attribute(span.attributes, 'rail.job.id') === verifyJob)!
    expect(verifySpan.span.name).toBe('job ledger_verify')
    expect(attribute(verifySpan.span.attributes, 'rail.outcome')).toBe('verified')
    expect(attribute(verifySpan.resource.attributes, 'service.name')).toBe('rail-worker-under-test')
    const failedSpan = otlp.spans().find(({ span }) => attribute(span.attributes, 'rail.job.id') === failingJob)!
    expect(failedSpan.span.status).toEqual(
      expect.objectContaining({ code: 2, message: expect.stringContaining('uuid') }),
    ) // ERROR
    expect(otlp.posts[0]!.contentType).toContain('application/json')
  })

  it('refuses a WORKER_HTTP_PORT that is not a port, or one in use, in one line', { timeout: 60_000 }, async () => {
    const env = {
      DATABASE_URL: database.url,
      RAIL_MASTER_KEY: workerEnv.RAIL_MASTER_KEY,
      HOST: '127.0.0.1',
      WORKER_CONCURRENCY: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
    }
    const malformed = await runRail(['worker'], { ...env, WORKER_HTTP_PORT: '80a' })
    expect([malformed.code, malformed.stderr.trim()]).toEqual([
      1,
      'rail: WORKER_HTTP_PORT must be an integer 0..65535, got "80a"',
    ])
    const taken = await runRail(['worker'], { ...env, WORKER_HTTP_PORT: workerEnv.WORKER_HTTP_PORT })
    expect(taken.code).toBe(1)
    expect(taken.stderr).toContain(`rail: WORKER_HTTP_PORT ${workerEnv.WORKER_HTTP_PORT} on 127.0.0.1 is in use`)
  })

  it('is not ready once its database is gone, and still alive', { timeout: 60_000 }, async () => {
    poolEnded = true
    await pool.end()
    await database.drop()
    const ready = await fetch(`${workerUrl}/readyz`)
    expect(ready.status).toBe(503)
    expect(await ready.json()).toEqual(
      expect.objectContaining({
        statusCode: 503,
        error: 'service_unavailable',
        message: 'Not ready: database unreachable',
      }),
    )
    expect((await fetch(`${workerUrl}/healthz`)).status).toBe(200)
    // The scrape still answers: the database gauges are left out and their failures counted.
    const metrics = parseMetrics(await (await fetch(`${workerUrl}/metrics`)).text())
    expect(valueOf(metrics, 'rail_metrics_query_failures_total')).toBeGreaterThan(0)
    expect(valueOf(metrics, 'rail_job_runs_total', { task: 'ledger_verify' })).toBe(2) // the start-up one and the test's
  })
})
