// npm run bench:read-replica — the same list reads (GET /wallet, a page of 20 wallets with their
// balances) against `rail cluster --api 2` on one PostgreSQL 15 primary, first without and then
// with DATABASE_READ_URL naming a streaming replica of it (made by pg_basebackup,
// test/cluster/replica-pair.ts), printed side by side with the CPU each list cost the primary and
// the replica. What moves to the replica is the page; what stays is the position statement.
// Needs Debian's PostgreSQL 15 binaries (says so and exits otherwise).
// BENCH_READ_REPLICA_LISTS=N sets the lists of each run (default 2000).
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { RailClient } from '../src/client/index.ts'
import { createPartner } from '../src/partners/service.ts'
import { createPool } from '../src/platform/db.ts'
import { findFreePort } from '../src/platform/embedded-db.ts'
import { startCluster } from '../test/cluster/load.ts'
import { replicaPairUnavailable, startReplicaPair, type PostgresServer } from '../test/cluster/replica-pair.ts'
import { postgresCpuMs, postmasterPid } from './statements.ts'
import { printSideBySide } from './table.ts'

const LISTS = Number(process.env.BENCH_READ_REPLICA_LISTS ?? 2000)
const LANES = 8
const WALLETS = 40
const WARM_UP_LISTS = 100
const DATABASE = 'rail'
const IDLE_MEASURE_MS = 5_000

interface Figures {
  reads: string
  lists: number
  listsPerSecond: number
  primaryCpuMsPerList: number
  replicaCpuMsPerList: number
  /** The same, less what each server spends idle over as long (walsender, checkpointer, the processes' idle sessions). */
  primaryCpuMsPerListLessIdle: number
  replicaCpuMsPerListLessIdle: number
  listsServedByReplica: number
}

const unavailable = replicaPairUnavailable()
if (unavailable) {
  console.log(`bench:read-replica needs a replica pair: ${unavailable}`)
  process.exit(0)
}

const pair = await startReplicaPair()
// One key for both runs: the database remembers the key its secrets were sealed with.
const masterKey = randomBytes(32)
const results: Figures[] = []
try {
  await pair.primary.query('postgres', `CREATE DATABASE ${DATABASE}`)
  for (const withReplica of [false, true]) {
    console.log(
      `measuring ${LISTS} lists, ${LANES} at a time, ${withReplica ? 'with the replica' : 'on the primary alone'}…`,
    )
    results.push(await measure(withReplica))
  }
} finally {
  await pair.stop()
}

async function measure(withReplica: boolean): Promise<Figures> {
  const cluster = await startCluster(
    { api: 2, worker: 0 },
    {
      ...process.env,
      DATABASE_URL: pair.primary.url(DATABASE),
      ...(withReplica ? { DATABASE_READ_URL: pair.replica.url(DATABASE) } : {}),
      RAIL_MASTER_KEY: masterKey.toString('hex'),
      SANDBOX_BANK_SECRET: 'bench-read-replica-secret',
      PORT: String(await findFreePort()),
      LOG_LEVEL: 'warn',
      RAIL_RATE_LIMIT_RPS: '0',
      RAIL_RATE_LIMIT_UNAUTHENTICATED_RPS: '0',
    },
  )
  const pool = createPool(pair.primary.url(DATABASE), 2)
  try {
    const credentials = await createPartner(pool, masterKey, {
      name: 'Bench Reader',
      customerClass: 'fintech',
      environment: 'sandbox',
    })
    const client = new RailClient(cluster.url, credentials)
    for (let n = 0; n < WALLETS; n++)
      await client.post('/wallet', { customerReference: `bench-${randomUUID()}`, name: `Reader ${n}` })
    await lists(client, WARM_UP_LISTS)
    const postmasters = { primary: await postmasterPid(pool), replica: await replicaPostmaster(pair.replica) }
    const before = {
      primary: cpuMs(postmasters.primary),
      replica: cpuMs(postmasters.replica),
      scans: await walletScans(pair.replica),
      at: performance.now(),
    }
    await lists(client, LISTS)
    const seconds = (performance.now() - before.at) / 1000
    const used = {
      primary: cpuMs(postmasters.primary) - before.primary,
      replica: cpuMs(postmasters.replica) - before.replica,
    }
    const idle = await idleCpuMsPerSecond(postmasters)
    const per = (ms: number) => Math.round((ms / LISTS) * 1000) / 1000
    return {
      reads: withReplica ? 'with the replica' : 'primary alone',
      lists: LISTS,
      listsPerSecond: Math.round(LISTS / seconds),
      primaryCpuMsPerList: per(used.primary),
      replicaCpuMsPerList: per(used.replica),
      primaryCpuMsPerListLessIdle: per(used.primary - idle.primary * seconds),
      replicaCpuMsPerListLessIdle: per(used.replica - idle.replica * seconds),
      // The replica's statistics reach its views within seconds of each backend's last statement.
      listsServedByReplica: await settledScans(pair.replica, before.scans),
    }
  } finally {
    await pool.end()
    await cluster.stop()
  }
}

async function lists(client: RailClient, count: number): Promise<void> {
  let next = 0
  const lane = async () => {
    while (next < count) {
      next++
      const page = await client.get('/wallet?limit=20')
      if (page.status !== 200) throw new Error(`GET /wallet answered ${page.status}`)
    }
  }
  await Promise.all(Array.from({ length: LANES }, lane))
}

/** What each server spends with the cluster running and no request: CPU ms per second over a few seconds. */
async function idleCpuMsPerSecond(postmasters: {
  primary: number | undefined
  replica: number | undefined
}): Promise<{ primary: number; replica: number }> {
  const before = { primary: cpuMs(postmasters.primary), replica: cpuMs(postmasters.replica), at: performance.now() }
  await new Promise((resolve) => setTimeout(resolve, IDLE_MEASURE_MS))
  const seconds = (performance.now() - before.at) / 1000
  return {
    primary: (cpuMs(postmasters.primary) - before.primary) / seconds,
    replica: (cpuMs(postmasters.replica) - before.replica) / seconds,
  }
}

function cpuMs(postmaster: number | undefined): number {
  const cpu = postgresCpuMs(postmaster)
  return cpu.backends + cpu.others
}

async function replicaPostmaster(replica: PostgresServer): Promise<number | undefined> {
  const replicaPool = createPool(replica.url(DATABASE), 1)
  try {
    return await postmasterPid(replicaPool)
  } finally {
    await replicaPool.end()
  }
}

async function walletScans(server: PostgresServer): Promise<number> {
  const rows = await server.query<{ scans: number }>(
    DATABASE,
    `SELECT (coalesce(idx_scan, 0) + coalesce(seq_scan, 0))::int AS scans FROM pg_stat_user_tables WHERE relname = 'wallets'`,
  )
  return rows[0]?.scans ?? 0
}

/** Scans counted on the replica since `before`, once the count has stopped moving (backends flush their statistics within seconds). */
async function settledScans(replica: PostgresServer, before: number): Promise<number> {
  let last = -1
  for (let quiet = 0; quiet < 3;) {
    await new Promise((resolve) => setTimeout(resolve, 4_000))
    const now = (await walletScans(replica)) - before
    quiet = now === last ? quiet + 1 : 0
    last = now
  }
  return last
}

const rows: [string, (figures: Figures) => string][] = [
  ['lists', (f) => String(f.lists)],
  ['lists per second', (f) => String(f.listsPerSecond)],
  ['primary CPU ms per list', (f) => f.primaryCpuMsPerList.toFixed(3)],
  ['replica CPU ms per list', (f) => f.replicaCpuMsPerList.toFixed(3)],
  ['primary CPU ms per list, less idle', (f) => f.primaryCpuMsPerListLessIdle.toFixed(3)],
  ['replica CPU ms per list, less idle', (f) => f.replicaCpuMsPerListLessIdle.toFixed(3)],
  ['lists served by the replica', (f) => String(f.listsServedByReplica)],
]
printSideBySide(results, (f) => f.reads, rows, 18)
const directory = path.join(import.meta.dirname, 'results')
mkdirSync(directory, { recursive: true })
const file = path.join(directory, 'read-replica.json')
writeFileSync(
  file,
  `${JSON.stringify({ results, lanes: LANES, walletsPerPartner: WALLETS, measuredAt: new Date().toISOString(), machine: `${os.cpus().length} cores, node ${process.version}`, postgres: 'Debian PostgreSQL 15, primary and pg_basebackup replica, fsync off' }, null, 2)}\n`,
)
console.log(`\nwritten to ${path.relative(process.cwd(), file)}`)
