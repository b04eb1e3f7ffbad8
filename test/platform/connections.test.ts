// The connection budget: each process states the connections it will open, and refuses to start —
// one line, exit 1 — with a pool too small for its work or a total the server could never give.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import {
  API_POOL_MIN,
  checkConnectionBudget,
  connectionBudget,
  SANDBOX_BANK_POOL_MAX,
  SESSION_POOL_MAX,
  WORKER_POOL_OVERHEAD,
} from '../../src/platform/connections.ts'
import { WORKER_HTTP_POOL_MAX } from '../../src/platform/worker-http.ts'
import { runRail } from '../support/cli.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

let db: TestDatabase
const masterKeyHex = randomBytes(32).toString('hex')

beforeAll(async () => {
  db = await createTestDatabase(2)
})
afterAll(async () => {
  await db?.drop()
})

describe('connectionBudget', () => {
  const sizes = { databasePoolMax: 20, workerConcurrency: 32 }

  it('adds up each role a process runs', () => {
    expect(connectionBudget({ api: true, worker: false, sandboxBank: false }, sizes)).toEqual({
      api: 20,
      sandboxBank: 0,
      workers: 0,
      workerEndpoints: 0,
      total: 20,
    })
    expect(connectionBudget({ api: true, worker: false, sandboxBank: true }, sizes).total).toBe(
      20 + SANDBOX_BANK_POOL_MAX,
    )
    // A worker alone has its jobs' pool and its endpoints' own.
    expect(connectionBudget({ api: false, worker: true, sandboxBank: false }, sizes)).toEqual({
      api: 0,
      sandboxBank: 0,
      workers: 32 + WORKER_POOL_OVERHEAD,
      workerEndpoints: WORKER_HTTP_POOL_MAX,
      total: 32 + WORKER_POOL_OVERHEAD + WORKER_HTTP_POOL_MAX,
    })
    // `rail serve`: the API's port serves the worker's endpoints.
    expect(connectionBudget({ api: true, worker: true, sandboxBank: true }, sizes).total).toBe(
      20 + SANDBOX_BANK_POOL_MAX + 32 + WORKER_POOL_OVERHEAD,
    )
  })

  it('beside a pooler, counts against PostgreSQL only the connections that go around it', () => {
    // The API's pools go through the pooler; the credential cache's LISTEN and start-up work go straight to PostgreSQL.
    expect(connectionBudget({ api: true, worker: false, sandboxBank: true }, sizes, true)).toEqual({
      api: 20,
      sandboxBank: SANDBOX_BANK_POOL_MAX,
      workers: 0,
      workerEndpoints: 0,
      total: SESSION_POOL_MAX,
      pooler: { through: 20 + SANDBOX_BANK_POOL_MAX, direct: SESSION_POOL_MAX },
    })
    // A worker's jobs go through the pooler; graphile-worker's queue (its LISTEN, fetching and completing jobs) goes around it.
    expect(connectionBudget({ api: false, worker: true, sandboxBank: false }, sizes, true)).toEqual({
      api: 0,
      sandboxBank: 0,
      workers: 32,
      workerEndpoints: WORKER_HTTP_POOL_MAX,
      total: SESSION_POOL_MAX + WORKER_POOL_OVERHEAD,
      pooler: { through: 32 + WORKER_HTTP_POOL_MAX, direct: SESSION_POOL_MAX + WORKER_POOL_OVERHEAD },
    })
  })

  it('warns when the process fits the server but not beside the connections open now', async () => {
    const { rows } = await db.pool.query<{ usable: number; in_use: number }>(
      `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int AS usable,
              (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS in_use`,
    )
    const free = rows[0]!.usable - rows[0]!.in_use
    const fits = await checkConnectionBudget(db.pool, {
      api: 1,
      sandboxBank: 0,
      workers: 0,
      workerEndpoints: 0,
      total: 1,
    })
    expect(fits.warning).toBeUndefined()
    const crowded = await checkConnectionBudget(db.pool, {
      api: rows[0]!.usable,
      sandboxBank: 0,
      workers: 0,
      workerEndpoints: 0,
      total: rows[0]!.usable,
    })
    expect(free).toBeLessThan(rows[0]!.usable)
    expect(crowded.warning).toMatch(
      /^this process may open \d+ connections to PostgreSQL \(API \d+, sandbox bank 0, workers 0\); \d+ are free now$/,
    )
  })
})

describe('start-up refusals', () => {
  const env = (extra: Record<string, string>) => ({
    DATABASE_URL: db.url,
    RAIL_MASTER_KEY: masterKeyHex,
    PORT: '0',
    WORKER_HTTP_PORT: '0',
    ...extra,
  })

  it(`\`rail api\` with DATABASE_POOL_MAX below ${API_POOL_MIN} exits 1 naming the minimum`, async () => {
    const result = await runRail(['api'], env({ DATABASE_POOL_MAX: String(API_POOL_MIN - 1) }))
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr.trim()).toMatch(
      new RegExp(
        `^rail: DATABASE_POOL_MAX is ${API_POOL_MIN - 1} but an API process needs at least ${API_POOL_MIN} connections`,
      ),
    )
    expect(result.stdout).toBe('')
  })

  it('`rail worker` with DATABASE_DIRECT_URL but no DATABASE_URL exits 1: there is no pooler to go around', async () => {
    const result = await runRail(['worker'], env({ DATABASE_URL: '', DATABASE_DIRECT_URL: db.url }))
    expect(result.code).toBe(1)
    expect(result.stderr.trim()).toBe(
      'rail: DATABASE_DIRECT_URL is set without DATABASE_URL: it names PostgreSQL itself when DATABASE_URL is a pooler (PgBouncer)',
    )
  })

  it.each([
    [
      'api',
      { DATABASE_POOL_MAX: '100000' },
      /^rail: this process needs 100000 connections to PostgreSQL \(API 100000, sandbox bank 0, workers 0\) but the server allows \d+ \(max_connections \d+ less \d+ reserved\)/,
    ],
    [
      'worker',
      { WORKER_CONCURRENCY: '100000' },
      new RegExp(
        `^rail: this process needs ${100_000 + WORKER_POOL_OVERHEAD + WORKER_HTTP_POOL_MAX} connections to PostgreSQL \\(API 0, sandbox bank 0, workers ${100_000 + WORKER_POOL_OVERHEAD}, worker endpoints ${WORKER_HTTP_POOL_MAX}\\) but the server allows \\d+`,
      ),
    ],
  ])(
    '`rail %s` needing more connections than the server allows exits 1 with the total',
    async (command, sizes, message) => {
      const result = await runRail([command], env(sizes))
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split('\n')).toHaveLength(1)
      expect(result.stderr.trim()).toMatch(message)
    },
  )
})
