import os, { availableParallelism } from 'node:os'
import path from 'node:path'
import { defineConfig } from 'vitest/config'

// Most test files spend their time waiting (on PostgreSQL, on HTTP between the app, the sandbox
// bank and receivers, on workers), not computing. Vitest's default on a 2-core machine is one
// file at a time, which leaves the CPU mostly idle: run one more file than there are cores. That
// is on the embedded cluster the global setup starts with connections for it; a server named by
// DATABASE_URL keeps its own limit (PostgreSQL's default of 100 is too few for files side by
// side), so there files run one at a time. `--maxWorkers=N` on the command line overrides both.
const WORKERS = process.env.DATABASE_URL ? 1 : availableParallelism() + 1
// Every test process and every `rail` process a test starts loads the same sources and packages:
// Node's compile cache (kept between runs) spares them compiling it all again each time.
const COMPILE_CACHE = process.env.NODE_COMPILE_CACHE ?? path.join(os.tmpdir(), 'rail-test-compile-cache')
// Load tests keep every core busy on purpose (thousands of transfers, racing trials, a burst past
// the admission limits). Beside them, tests that wait on a provider or a callback would be judged
// by how starved the machine is, so they run after the others, one at a time.
const LOAD_TESTS = ['test/ledger/concurrency.test.ts', 'test/escrow/race.test.ts', 'test/escrow/money-race.test.ts', 'test/platform/burst.test.ts', 'test/cluster/failover.test.ts', 'test/cluster/pgbouncer.test.ts', 'test/cluster/replica.test.ts']

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

export default defineConfig({
  test: {
    // One embedded PostgreSQL for the whole run, whichever project a file belongs to.
    globalSetup: ['test/support/global-setup.ts'],
    maxWorkers: WORKERS,
    env: { NODE_COMPILE_CACHE: COMPILE_CACHE },
    reporters: ['default'],
    projects: [
      { test: { ...shared, name: 'suite', include: ['test/**/*.test.ts', 'src/**/*.test.ts'], exclude: LOAD_TESTS, sequence: { groupOrder: 0 } } },
      { test: { ...shared, name: 'load', include: LOAD_TESTS, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
})
