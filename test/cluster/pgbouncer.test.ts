// `rail cluster --api 2 --worker 1` through Debian's PgBouncer (1.18: no protocol-level prepared
// statements) in transaction mode, under a bounded mixed load with callbacks to a real receiver.
// DATABASE_URL is PgBouncer and DATABASE_DIRECT_URL PostgreSQL itself. Then: every acknowledged
// request stored once, every event delivered, `rail ledger verify` passes through the pooler;
// PgBouncer carried the traffic (its own statistics), Rail's connections straight to PostgreSQL
// are only the session ones, a worker's scrape reads its gauges through it, and no server
// connection behind PgBouncer holds a named statement or another statement_timeout than the role's.
// Then `rail cluster --pgbouncer`, which starts PgBouncer itself, under a smaller load. Skipped,
// saying so, where pgbouncer is not installed.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { findPgbouncer, startPgbouncer, type RunningPgbouncer } from '../../src/ops/pgbouncer.ts'
import { runRail } from '../support/cli.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { startReceiver, type Receiver } from '../support/receiver.ts'
import { checkEventsDelivered, checkStoredOnce, settleEverything } from './checks.ts'
import { loadParty, runMixedLoad, startCluster, testClusterEnv, type RunningCluster } from './load.ts'

const PGBOUNCER = findPgbouncer()
const PER_KIND = 8
/** PgBouncer's server connections: fewer than the cluster's pools ask for, so that they are shared. */
const POOL_SIZE = 8
/** Connections Rail's processes open straight to PostgreSQL, by application name: the only ones allowed around PgBouncer. */
const DIRECT_APPLICATION_NAMES = ['rail-session', 'rail-worker-queue', 'rail-cluster']
const masterKey = randomBytes(32)
let db: TestDatabase
let bouncer: RunningPgbouncer
let hook: Receiver
let cluster: RunningCluster | undefined

if (!PGBOUNCER)
  console.log(
    'PgBouncer test skipped: pgbouncer is not installed (Debian: apt-get install pgbouncer); docs/scaling.md describes the set-up it would check',
  )

beforeAll(async () => {
  if (!PGBOUNCER) return
  db = await createTestDatabase(4)
  // Through a pooler Rail sends no statement_timeout at connection start: it is set on the database (or role), as docs/operations.md says.
  await db.pool.query(
    `ALTER DATABASE ${pg.escapeIdentifier(new URL(db.url).pathname.slice(1))} SET statement_timeout = '30s'`,
  )
  bouncer = await startPgbouncer({ directUrl: db.url, poolSize: POOL_SIZE })
  hook = await startReceiver()
})
afterAll(async () => {
  await cluster?.stop()
  await hook?.close()
  await bouncer?.stop()
  await db?.drop()
})

it.skipIf(!PGBOUNCER)(
  '2 API + 1 worker through PgBouncer in transaction mode: each request stored once, each event delivered, the ledger verifies, no named statement through the pooler',
  { timeout: 110_000 },
  async () => {
    const beganAt = Date.now()
    cluster = await startCluster(
      { api: 2, worker: 1 },
      { ...(await clusterEnv()), DATABASE_URL: bouncer.url, DATABASE_DIRECT_URL: db.url },
    )
    const startedMs = Date.now() - beganAt
    expect(cluster.output.join('\n')).toMatch(
      /Connections {2}\d+ connections .* straight to PostgreSQL, and the pooler's own server connections/,
    )
    expect(cluster.output.join('\n')).not.toContain('statement_timeout is 0')
    const party = await loadParty(db.pool, masterKey, cluster.url, hook.url)
    const load = await runMixedLoad(party, { perKind: PER_KIND, lanes: 6 })
    const loadMs = Date.now() - beganAt - startedMs
    const direct = await directConnections()
    await settleEverything(db.pool, party, load).catch(async (error: unknown) => {
      const open = await db.pool.query(`SELECT state, count(*)::int AS n FROM bank_instructions GROUP BY 1`)
      const deliveries = await db.pool.query(`SELECT status, count(*)::int AS n FROM event_deliveries GROUP BY 1`)
      const jobs = await db.pool.query(
        `SELECT task_identifier, count(*)::int AS n, max(attempts) AS attempts, max(last_error) AS error FROM graphile_worker.jobs GROUP BY 1`,
      )
      console.log(
        `cluster pgbouncer: not settled. instructions ${JSON.stringify(open.rows)}; deliveries ${JSON.stringify(deliveries.rows)}; jobs ${JSON.stringify(jobs.rows)}\n${cluster!.output.slice(-40).join('\n')}`,
      )
      throw error
    })
    const figures = await checkStoredOnce(db.pool, party, load)
    const events = await checkEventsDelivered(db.pool, party, hook)
    const verify = await runRail(['ledger', 'verify'], { DATABASE_URL: bouncer.url, DATABASE_DIRECT_URL: db.url })
    expect(verify.stdout).toMatch(/^ok: /)
    expect(verify.code).toBe(0)

    // PgBouncer carried the traffic, over at most POOL_SIZE server connections.
    const stats = await adminConsole<{ database: string; total_xact_count: string; total_query_count: string }>(
      'SHOW STATS',
    )
    const carried = stats.find((row) => row.database === databaseName())!
    expect(Number(carried.total_xact_count)).toBeGreaterThan(load.acknowledged.length)
    const servers = await adminConsole<{ database: string }>('SHOW SERVERS')
    expect(servers.filter((row) => row.database === databaseName()).length).toBeLessThanOrEqual(POOL_SIZE)
    // Around PgBouncer, Rail's processes hold only their session connections; every pool of work goes through it.
    expect(direct.rail.filter((name) => !DIRECT_APPLICATION_NAMES.includes(name))).toEqual([])
    expect(direct.rail).toEqual(expect.arrayContaining(['rail-session', 'rail-worker-queue']))
    // The role's timeout reaches connections through PgBouncer.
    expect(
      await throughPgbouncer((client) => client.query<{ statement_timeout: string }>('SHOW statement_timeout')),
    ).toMatchObject({ rows: [{ statement_timeout: '30s' }] })
    // A worker's scrape reads the database gauges through PgBouncer, its timeout SET LOCAL in a transaction.
    const metrics = await fetch(`${workerEndpoints()}/metrics`)
    expect(metrics.status).toBe(200)
    const scraped = await metrics.text()
    expect(scraped).toMatch(/^rail_bank_instructions\{/m)
    expect(scraped).not.toMatch(/^rail_metrics_query_failures_total\{[^}]*\} [1-9]/m)
    const left = await leftBehindPgbouncer()
    expect(left.named).toEqual([])
    expect(left.timeouts).toEqual(Array(POOL_SIZE).fill('30s'))

    console.log(
      [
        `cluster pgbouncer: 2 API + 1 worker through PgBouncer (${bouncer.output.find((line) => line.includes('process up'))?.replace(/.*process up: /, '') ?? 'pgbouncer'}), transaction mode, ${POOL_SIZE} server connections at most`,
        `  started in ${startedMs} ms, load ${loadMs} ms; acknowledged ${load.acknowledged.length} requests (${figures.byKind}); ${load.retries} sent again; ${load.unacknowledgedCredits} credit(s) refused`,
        `  bank instructions: ${figures.instructions}, each at the sandbox bank once (${figures.bankRows} rows); provider calls: ${figures.providerCalls}`,
        `  events: ${events.events}, all delivered; ${events.attempts} delivery attempts recorded; ${events.received} callbacks received`,
        `  PgBouncer: ${carried.total_xact_count} transactions, ${carried.total_query_count} queries carried; ${servers.length} server connections open at the end; named statements on them: none`,
        `  straight to PostgreSQL while the cluster ran: ${direct.rail.length} of Rail's (${[...new Set(direct.rail)].sort().join(', ')}), beside PgBouncer's ${direct.throughPgbouncer}`,
        `  rail ledger verify through PgBouncer: ${verify.stdout.trim()}`,
      ].join('\n'),
    )
  },
)

it.skipIf(!PGBOUNCER)(
  'rail cluster --pgbouncer starts PgBouncer itself in front of DATABASE_URL and runs every process through it',
  { timeout: 90_000 },
  async () => {
    await cluster?.stop()
    const before = hook.requests.length
    cluster = await startCluster({ api: 1, worker: 1 }, { ...(await clusterEnv()), DATABASE_URL: db.url }, [
      '--pgbouncer',
    ])
    const banner = cluster.output.join('\n')
    expect(banner).toMatch(
      /^ {2}Pooler {7}PgBouncer at postgres:\/\/\S+ \(transaction mode, \d+ server connections\); session work straight to PostgreSQL$/m,
    )
    expect(banner).toMatch(
      /^ {2}Connections {2}\d+ connections \(1 API × 2, 1 worker × 4, 2 for the cluster itself, \d+ of PgBouncer's\)$/m,
    )
    const party = await loadParty(db.pool, masterKey, cluster.url, hook.url)
    const load = await runMixedLoad(party, { perKind: 2, lanes: 2 })
    const { rows } = await db.pool.query<{ application_name: string }>(
      `SELECT DISTINCT application_name FROM pg_stat_activity WHERE datname = current_database()`,
    )
    const names = rows.map((row) => row.application_name)
    await settleEverything(db.pool, party, load)
    await checkStoredOnce(db.pool, party, load)
    await checkEventsDelivered(db.pool, party, hook)
    // The session pools exist only beside a pooler: every process was told DATABASE_DIRECT_URL.
    expect(names).toEqual(expect.arrayContaining(['rail-session', 'rail-worker-queue']))
    console.log(
      `cluster pgbouncer: rail cluster --pgbouncer (1 API + 1 worker): ${load.acknowledged.length} requests acknowledged, ${hook.requests.length - before} callbacks received`,
    )
  },
)

it.skipIf(!PGBOUNCER)(
  'a process through the pooler whose role has no statement_timeout says so at start, and runs',
  async () => {
    const bare = await createTestDatabase(2)
    const pooler = await startPgbouncer({ directUrl: bare.url, poolSize: 2 })
    try {
      const verify = await runRail(['ledger', 'verify'], { DATABASE_URL: pooler.url, DATABASE_DIRECT_URL: bare.url })
      expect(verify.stderr).toContain(
        'rail: warning: statement_timeout is 0 through the pooler (DATABASE_URL); set it on the role',
      )
      expect(verify.stdout).toMatch(/^ok: /)
    } finally {
      await pooler.stop()
      await bare.drop()
    }
  },
)

/** The cluster's settings but its database: small pools, one master key and sandbox bank, callbacks to loopback, no rate limits. */
function clusterEnv(): Promise<NodeJS.ProcessEnv> {
  return testClusterEnv({ masterKey, bankSecret: 'cluster-pgbouncer-secret' })
}

/** The worker's own endpoints, from its start banner. */
function workerEndpoints(): string {
  const line = cluster!.output.find((text) => /^\[worker 1\] {3}Worker endpoints {2}http/.test(text))!
  return /http:\/\/[\d.:]+/.exec(line)![0]
}

function databaseName(): string {
  return decodeURIComponent(new URL(db.url).pathname.slice(1))
}

/** One statement on PgBouncer's admin console (simple protocol, as it requires). */
async function adminConsole<T extends object>(command: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: bouncer.adminUrl })
  await client.connect()
  try {
    return (await client.query<T>(command)).rows
  } finally {
    await client.end()
  }
}

async function throughPgbouncer<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: bouncer.url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

/**
 * The backends of the test database now, split into PgBouncer's server connections (by their
 * ports, from SHOW SERVERS) and the rest: the application names of Rail's connections straight to
 * PostgreSQL (the test's own pool, whose name is 'rail', is left out by its process ids).
 */
async function directConnections(): Promise<{ rail: string[]; throughPgbouncer: number }> {
  const bouncerPorts = new Set(
    (await adminConsole<{ database: string; local_port: string }>('SHOW SERVERS')).map((row) => Number(row.local_port)),
  )
  const { rows } = await db.pool.query<{ application_name: string; client_port: number }>(
    `SELECT application_name, client_port FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND application_name LIKE 'rail-%'`,
  )
  const direct = rows.filter((row) => !bouncerPorts.has(row.client_port))
  return { rail: direct.map((row) => row.application_name), throughPgbouncer: rows.length - direct.length }
}

/**
 * What the server connections behind PgBouncer were left with: named statements, and their
 * statement_timeout (a session SET leaked through the pooler would show there). In transaction mode
 * nothing clears either. POOL_SIZE transactions held open at once each have a server connection of
 * their own: together, every one there is.
 */
async function leftBehindPgbouncer(): Promise<{ named: string[]; timeouts: string[] }> {
  const clients = Array.from({ length: POOL_SIZE }, () => new pg.Client({ connectionString: bouncer.url }))
  try {
    await Promise.all(clients.map((client) => client.connect()))
    await Promise.all(clients.map((client) => client.query('BEGIN')))
    const found = await Promise.all(
      clients.map((client) => client.query<{ name: string }>('SELECT name FROM pg_prepared_statements')),
    )
    const timeouts = await Promise.all(
      clients.map((client) =>
        client.query<{ timeout: string }>(`SELECT current_setting('statement_timeout') AS timeout`),
      ),
    )
    return {
      named: found.flatMap((result) => result.rows.map((row) => row.name)),
      timeouts: timeouts.map((result) => result.rows[0]!.timeout),
    }
  } finally {
    await Promise.all(clients.map((client) => client.query('ROLLBACK').catch(() => {})))
    await Promise.all(clients.map((client) => client.end().catch(() => {})))
  }
}
