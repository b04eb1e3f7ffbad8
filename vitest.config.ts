import os, { availableParallelism } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { defineConfig } from 'vitest/config'

// Most test files spend their time waiting (on PostgreSQL, on HTTP between the app, the sandbox
// bank and receivers, on workers), not computing. Vitest's default on a 2-core machine is one
// file at a time, which leaves the CPU mostly idle: run one more file than there are cores. That
// is on the embedded cluster the global setup starts with connections for it; on a server named
// by DATABASE_URL, as many files as its free connections hold (serverWorkers). `--maxWorkers=N`
// on the command line overrides both.
const CORES_WORKERS = availableParallelism() + 1
/**
 * The most connections one test file holds at once, with room to spare: its app's pool (10) and
 * sandbox bank's (8), its workers (on the app's pool), a concurrency test's bigger pool
 * (test/wallets/creation: 20 + 8), a kill test's `rail` processes (small pools:
 * test/support/rail-process.ts), and the global setup's connection that creates and drops its
 * database. Measured as the peak of each file's database in pg_stat_activity, sampled every 50 ms,
 * over the suite one file at a time on PostgreSQL 15.
 */
const CONNECTIONS_PER_FILE = 30

/**
 * How many files a server can hold at once: its max_connections, less the superusers' reserve and
 * the connections open now (other clients of a shared server), over CONNECTIONS_PER_FILE; at
 * least one, at most one more than there are cores.
 */
async function serverWorkers(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
  await client.connect()
  try {
    const { rows } = await client.query<{ max: number; reserved: number; open: number }>(
      `SELECT current_setting('max_connections')::int AS max, current_setting('superuser_reserved_connections')::int AS reserved,
              (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS open`,
    )
    const { max, reserved, open } = rows[0]!
    const workers = Math.max(1, Math.min(CORES_WORKERS, Math.floor((max - reserved - open) / CONNECTIONS_PER_FILE)))
    console.log(
      `PostgreSQL at DATABASE_URL: max_connections ${max}, ${reserved} reserved, ${open} open: ${workers} test files at once (${CONNECTIONS_PER_FILE} connections each)`,
    )
    return workers
  } finally {
    await client.end()
  }
}
// Every test process and every `rail` process a test starts loads the same sources and packages:
// Node's compile cache (kept between runs) spares them compiling it all again each time.
const COMPILE_CACHE = process.env.NODE_COMPILE_CACHE ?? path.join(os.tmpdir(), 'rail-test-compile-cache')
// Load tests keep every core busy on purpose (thousands of transfers, racing trials, a burst past
// the admission limits). Beside them, tests that wait on a provider or a callback would be judged
// by how starved the machine is, so they run after the others, one at a time.
const LOAD_TESTS = [
  'test/ledger/concurrency.test.ts',
  'test/escrow/race.test.ts',
  'test/escrow/money-race.test.ts',
  'test/platform/burst.test.ts',
  'test/cluster/failover.test.ts',
  'test/cluster/pgbouncer.test.ts',
  'test/cluster/replica.test.ts',
]

const shared = {
  pool: 'forks' as const,
  // A test process runs file after file without loading every module again for each: each file
  // has its own database, app, workers and receivers, and closes them in its afterAll.
  isolate: false,
  // Limits, not waits: a passing test never waits for them. They are generous because files run
  // side by side and the machine may be busy; a test that needs longer says so itself.
  testTimeout: 180_000,
  hookTimeout: 120_000,
}

export default defineConfig(async () => ({
  test: {
    // One embedded PostgreSQL for the whole run, whichever project a file belongs to.
    globalSetup: ['test/support/global-setup.ts'],
    maxWorkers: process.env.DATABASE_URL ? await serverWorkers(process.env.DATABASE_URL) : CORES_WORKERS,
    env: { NODE_COMPILE_CACHE: COMPILE_CACHE },
    reporters: ['default'],
    projects: [
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: LOAD_TESTS,
          sequence: { groupOrder: 0 },
        },
      },
      { test: { ...shared, name: 'load', include: LOAD_TESTS, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
}))
