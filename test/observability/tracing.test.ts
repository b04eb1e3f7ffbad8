// `rail api` with OTEL_EXPORTER_OTLP_ENDPOINT set: each request is a server span at a real
// OTLP/HTTP receiver, named by its route template, continuing the caller's trace (traceparent),
// with its stages (src/platform/observability/stages.ts) as child spans.
// Its /metrics leaves the database gauges to the workers.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findFreePort } from '../../src/platform/embedded-db.ts'
import { PROJECT_ROOT, RAIL_BIN } from '../support/cli.ts'
import { waitFor } from '../support/wait.ts'
import { attribute, bareDatabase, startOtlpReceiver, type ExportedSpan } from './support.ts'

let database: Awaited<ReturnType<typeof bareDatabase>>
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>
let api: ChildProcess
let output = ''
let apiUrl = ''

beforeAll(async () => {
  database = await bareDatabase()
  otlp = await startOtlpReceiver()
  const port = await findFreePort()
  apiUrl = `http://127.0.0.1:${port}`
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    RAIL_MASTER_KEY: randomBytes(32).toString('hex'),
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_POOL_MAX: '4',
    LOG_LEVEL: 'warn',
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  }
  api = spawn(process.execPath, [RAIL_BIN, 'api'], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  api.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  api.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  await waitFor(() => output.includes('Stop with Ctrl-C.') || api.exitCode !== null, 60_000, 'rail api started')
  expect(api.exitCode, output).toBeNull()
})
afterAll(async () => {
  if (api && api.exitCode === null) {
    const exited = new Promise((resolve) => api.once('exit', resolve))
    api.kill('SIGTERM')
    await exited
  }
  await otlp?.close()
  await database?.drop()
})

describe('traces of the API', () => {
  it(
    "exports a server span per request, named by route template, in the caller's trace",
    { timeout: 60_000 },
    async () => {
      const traceId = randomBytes(16).toString('hex')
      const parentId = randomBytes(8).toString('hex')
      const traceparent = `00-${traceId}-${parentId}-01`
      expect(
        (await fetch(`${apiUrl}/readyz`, { headers: { traceparent, 'x-request-id': 'trace-test-1' } })).status,
      ).toBe(200)
      expect((await fetch(`${apiUrl}/api/v1/rail/outbound/${randomBytes(4).toString('hex')}`)).status).toBe(401)
      await waitFor(
        () =>
          otlp.spans().some(({ span }) => span.traceId === traceId && span.name === 'GET /readyz') &&
          otlp.spans().some(({ span }) => span.name === 'GET /api/v1/rail/outbound/:id'),
        30_000,
        'spans exported',
      )

      // The request's stages are spans of its trace too: its own is the one named by its route.
      const ready = otlp.spans().find(({ span }) => span.traceId === traceId && span.name === 'GET /readyz')!.span
      expect(ready.parentSpanId).toBe(parentId)
      expect(ready.kind).toBe(2) // SERVER
      expect(attribute(ready.attributes, 'http.route')).toBe('/readyz')
      expect(attribute(ready.attributes, 'http.response.status_code')).toBe('200')
      expect(attribute(ready.attributes, 'rail.request_id')).toBe('trace-test-1')
      const refused = otlp.spans().find(({ span }) => span.name === 'GET /api/v1/rail/outbound/:id')!
      expect(attribute(refused.span.attributes, 'http.response.status_code')).toBe('401')
      expect(refused.span.traceId).not.toBe(traceId) // a request without traceparent starts its own trace
      expect(attribute(refused.resource.attributes, 'service.name')).toBe('rail')
    },
  )

  it('gives a request its stages as child spans: admitted, refused by authentication, replied', async () => {
    const requestId = `trace-stages-${randomBytes(4).toString('hex')}`
    const refused = await fetch(`${apiUrl}/api/v1/rail/outbound/${randomBytes(4).toString('hex')}`, {
      headers: { 'x-request-id': requestId },
    })
    expect(refused.status).toBe(401)
    const request = () =>
      otlp.spans().find(({ span }) => attribute(span.attributes, 'rail.request_id') === requestId)?.span
    const stagesOf = (parent: ExportedSpan) =>
      otlp
        .spans()
        .filter(({ span }) => span.traceId === parent.traceId && span.parentSpanId === parent.spanId)
        .map(({ span }) => span)
    await waitFor(() => request() !== undefined && stagesOf(request()!).length >= 3, 30_000, 'stage spans exported')
    const stages = stagesOf(request()!)
    expect(stages.map((span) => span.name).sort()).toEqual(['admission', 'authentication', 'reply'])
    expect(stages.every((span) => span.kind === 1)).toBe(true) // INTERNAL
  })

  it('serves /metrics without the database gauges, which the workers serve', async () => {
    const text = await (await fetch(`${apiUrl}/metrics`)).text()
    expect(text).toContain('# TYPE rail_http_requests_total counter')
    expect(text).toContain('rail_db_pool_connections{pool="rail"}')
    expect(text).not.toContain('rail_bank_instructions')
    expect(text).not.toContain('rail_jobs_queued')
  })
})
