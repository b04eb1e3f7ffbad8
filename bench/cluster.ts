// npm run bench:cluster — the same mixed load (wallet debits and external sends, outbound submits
// settled through the simulator, inbound credits, callbacks to a receiver) against `rail cluster`
// with 1 API + 1 worker and with 3 API + 2 workers, each on a fresh database, printed side by
// side with the CPU each operation cost: Rail's processes (every process of the cluster),
// PostgreSQL, and this load generator. On 2 cores throughput cannot grow with processes; what is
// measured is whether scaling out costs more per operation. Each cluster's idle CPU (its processes
// and PostgreSQL doing nothing but their timers: job polling, crons, liveness, metrics) is measured
// for IDLE_S before the load, and the CPU per operation is printed as measured and with that idle
// cost over the same wall time taken out: what an operation costs, apart from what N processes cost
// by existing.
// BENCH_CLUSTER_OPERATIONS=N sets the operations of each kind (default 30, as the recorded runs). BENCH_CLUSTER_PGBOUNCER=1
// measures 1 API + 1 worker straight to PostgreSQL against the same through PgBouncer in transaction
// mode (`rail cluster --pgbouncer`: unnamed statements; PgBouncer's CPU is counted with Rail's
// processes, under the cluster), into results/cluster-pgbouncer.json.
import { randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createPool, type Pool } from '../src/platform/db.ts'
import { findFreePort } from '../src/platform/embedded-db.ts'
import { startReceiver } from '../test/support/receiver.ts'
import {
  acknowledged,
  loadParty,
  runMixedLoad,
  startCluster,
  type LoadParty,
  type LoadResult,
} from '../test/cluster/load.ts'
import { benchDatabase } from './bench-database.ts'
import { postgresCpuMs, postmasterPid } from './statements.ts'
import { printSideBySide } from './table.ts'

const PER_KIND = Number(process.env.BENCH_CLUSTER_OPERATIONS ?? 30)
const LANES = 8
const WARM_UP_PER_KIND = 5
const CLOCK_TICKS_PER_S = 100 // USER_HZ on Linux
const BANK_SECRET = 'bench-cluster-secret'
const SETTLE_TIMEOUT_MS = 120_000
const IDLE_S = 10
const THROUGH_PGBOUNCER = process.env.BENCH_CLUSTER_PGBOUNCER === '1'
const SIZES: { api: number; worker: number; pgbouncer?: boolean }[] = THROUGH_PGBOUNCER
  ? [
      { api: 1, worker: 1 },
      { api: 1, worker: 1, pgbouncer: true },
    ]
  : [
      { api: 1, worker: 1 },
      { api: 3, worker: 2 },
    ]

interface Figures {
  processes: string
  operations: number
  wallSeconds: number
  operationsPerSecond: number
  railCpuMsPerOperation: number
  postgresCpuMsPerOperation: number
  loadGeneratorCpuMsPerOperation: number
  totalCpuMsPerOperation: number
  requestsSeconds: number
  railCpuMsPerOperationUntilLastAnswer: number
  /** CPU the cluster's processes and PostgreSQL spend each second doing nothing (their timers). */
  idleRailCpuMsPerSecond: number
  idlePostgresCpuMsPerSecond: number
  /** CPU per operation with the idle cost over the measured wall time taken out. */
  railCpuMsPerOperationLessIdle: number
  postgresCpuMsPerOperationLessIdle: number
  retries: number
}

async function measure(size: (typeof SIZES)[number]): Promise<Figures> {
  const database = await benchDatabase(
    `rail_bench_cluster_${size.api}_${size.worker}_${randomBytes(3).toString('hex')}`,
  )
  const receiver = await startReceiver()
  const masterKey = randomBytes(32)
  const cluster = await startCluster(
    size,
    {
      ...process.env,
      DATABASE_URL: database.url,
      RAIL_MASTER_KEY: masterKey.toString('hex'),
      SANDBOX_BANK_SECRET: BANK_SECRET,
      PORT: String(await findFreePort()),
      LOG_LEVEL: 'warn',
      RAIL_ALLOW_LOOPBACK_CALLBACKS: '1',
      RAIL_REQUERY_FIRST_DELAY_MS: '200',
      RAIL_RATE_LIMIT_RPS: '0',
      RAIL_RATE_LIMIT_UNAUTHENTICATED_RPS: '0',
    },
    size.pgbouncer ? ['--pgbouncer'] : [],
  )
  const pool = createPool(database.url, 2)
  try {
    console.log(`  started (${cluster.output.filter((line) => line.startsWith('rail cluster:')).length} processes)`)
    const party = await loadParty(pool, masterKey, cluster.url, receiver.url)
    await settle(pool, party, await runMixedLoad(party, { perKind: WARM_UP_PER_KIND, lanes: LANES }))
    const postmaster = await postmasterPid(pool)
    console.log(`  warmed up; ${IDLE_S} s idle…`)
    const idleFrom = {
      rail: treeCpuMs(cluster.launcher.pid!),
      postgres: postgresCpuMs(postmaster),
      at: performance.now(),
    }
    await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000))
    const idleSeconds = (performance.now() - idleFrom.at) / 1000
    const idlePostgres = postgresCpuMs(postmaster)
    const idle = {
      railMsPerS: (treeCpuMs(cluster.launcher.pid!) - idleFrom.rail) / idleSeconds,
      postgresMsPerS:
        (idlePostgres.backends + idlePostgres.others - idleFrom.postgres.backends - idleFrom.postgres.others) /
        idleSeconds,
    }
    console.log('  measuring…')
    const before = {
      rail: treeCpuMs(cluster.launcher.pid!),
      postgres: postgresCpuMs(postmaster),
      load: process.cpuUsage(),
      at: performance.now(),
    }
    const load = await runMixedLoad(party, { perKind: PER_KIND, lanes: LANES })
    // The requests alone (until the last answer), apart from the background work that follows them.
    const requestsPhase = {
      seconds: (performance.now() - before.at) / 1000,
      railMs: treeCpuMs(cluster.launcher.pid!) - before.rail,
    }
    await settle(pool, party, load)
    const wallSeconds = (performance.now() - before.at) / 1000
    const railMs = treeCpuMs(cluster.launcher.pid!) - before.rail
    const postgresAfter = postgresCpuMs(postmaster)
    const postgresMs = postgresAfter.backends + postgresAfter.others - before.postgres.backends - before.postgres.others
    const loadCpu = process.cpuUsage(before.load)
    const loadMs = (loadCpu.user + loadCpu.system) / 1000
    const operations = load.acknowledged.length
    const per = (ms: number) => Math.round((ms / operations) * 100) / 100
    return {
      processes: `${size.api} API + ${size.worker} worker${size.pgbouncer ? ' + PgBouncer' : ''}`,
      operations,
      wallSeconds: Math.round(wallSeconds * 10) / 10,
      operationsPerSecond: Math.round((operations / wallSeconds) * 10) / 10,
      railCpuMsPerOperation: per(railMs),
      postgresCpuMsPerOperation: per(postgresMs),
      loadGeneratorCpuMsPerOperation: per(loadMs),
      totalCpuMsPerOperation: per(railMs + postgresMs + loadMs),
      requestsSeconds: Math.round(requestsPhase.seconds * 10) / 10,
      railCpuMsPerOperationUntilLastAnswer: per(requestsPhase.railMs),
      idleRailCpuMsPerSecond: Math.round(idle.railMsPerS * 10) / 10,
      idlePostgresCpuMsPerSecond: Math.round(idle.postgresMsPerS * 10) / 10,
      railCpuMsPerOperationLessIdle: per(Math.max(0, railMs - idle.railMsPerS * wallSeconds)),
      postgresCpuMsPerOperationLessIdle: per(Math.max(0, postgresMs - idle.postgresMsPerS * wallSeconds)),
      retries: load.retries,
    }
  } finally {
    await pool.end()
    await cluster.stop()
    await receiver.close()
    await database.stop()
  }
}

/** Until every payment ended (payouts' outcomes registered with the simulator), every credit was recorded and every callback delivered. */
async function settle(pool: Pool, party: LoadParty, load: LoadResult): Promise<void> {
  const sessions = load.acknowledged.filter((done) => done.kind === 'inbound credit').map((done) => done.reference)
  const registered = new Set<string>()
  const deadline = Date.now() + SETTLE_TIMEOUT_MS
  for (;;) {
    const sent = await pool.query<{ id: string }>(
      `SELECT id FROM bank_instructions WHERE owner_type = 'outbound_transfer' AND state = 'sent'`,
    )
    for (const { id } of sent.rows.filter((row) => !registered.has(row.id))) {
      await acknowledged(
        () =>
          party.client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
            transferId: id,
            outcome: 'confirmed',
          }),
        [200],
      )
      registered.add(id)
    }
    // A credit notice Rail refused while busy (503) is retried with graphile-worker's backoff (seconds, then minutes): its
    // retry is brought forward, since the wait is not the cost measured here; the refusals are counted.
    const retried = await pool.query(
      `UPDATE graphile_worker._private_jobs SET run_at = now() WHERE locked_at IS NULL AND attempts > 0 AND run_at > now() RETURNING id`,
    )
    load.retries += retried.rowCount ?? 0
    const open = await pool.query(`SELECT 1 FROM bank_instructions WHERE state NOT IN ('succeeded', 'failed')`)
    const credits = await pool.query(`SELECT 1 FROM inbound_credits WHERE session_id = ANY($1)`, [sessions])
    const undelivered = await pool.query(`SELECT 1 FROM event_deliveries WHERE status = 'pending'`)
    if (open.rowCount === 0 && credits.rowCount === sessions.length && undelivered.rowCount === 0) return
    if (Date.now() > deadline) {
      const errors = await pool.query<{ task_identifier: string; last_error: string }>(
        `SELECT task_identifier, last_error FROM graphile_worker.jobs WHERE last_error IS NOT NULL LIMIT 3`,
      )
      const why = errors.rows.map((row) => `${row.task_identifier}: ${row.last_error}`).join('; ')
      throw new Error(
        `not settled within ${SETTLE_TIMEOUT_MS} ms: ${open.rowCount} payments open, ${credits.rowCount} of ${sessions.length} credits recorded, ${undelivered.rowCount} callbacks pending; ${why}`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** CPU time (user + system, ms) of a process and every process under it. */
function treeCpuMs(root: number): number {
  const stats = new Map<number, { ppid: number; ticks: number }>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ').pop()!.split(' ')
      stats.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) })
    } catch {
      // the process ended meanwhile
    }
  }
  let ticks = 0
  const pending = [root]
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    ticks += stats.get(pid)?.ticks ?? 0
    for (const [child, stat] of stats) if (stat.ppid === pid) pending.push(child)
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_S
}

const results: Figures[] = []
for (const size of SIZES) {
  console.log(
    `measuring ${size.api} API + ${size.worker} worker${size.pgbouncer ? ' through PgBouncer' : ''}: ${PER_KIND} operations of each of 4 kinds, ${LANES} at a time…`,
  )
  results.push(await measure(size))
}
const rows: [string, (figures: Figures) => string][] = [
  ['operations acknowledged', (f) => String(f.operations)],
  ['wall time, to the last callback (s)', (f) => String(f.wallSeconds)],
  ['operations per second', (f) => String(f.operationsPerSecond)],
  ['wall time, to the last answer (s)', (f) => String(f.requestsSeconds)],
  ['Rail CPU ms per operation, to the last answer', (f) => f.railCpuMsPerOperationUntilLastAnswer.toFixed(2)],
  ['CPU ms per operation: Rail processes', (f) => f.railCpuMsPerOperation.toFixed(2)],
  ['CPU ms per operation: PostgreSQL', (f) => f.postgresCpuMsPerOperation.toFixed(2)],
  ['CPU ms per operation: load generator', (f) => f.loadGeneratorCpuMsPerOperation.toFixed(2)],
  ['CPU ms per operation: total', (f) => f.totalCpuMsPerOperation.toFixed(2)],
  ['idle CPU ms per second: Rail processes', (f) => f.idleRailCpuMsPerSecond.toFixed(1)],
  ['idle CPU ms per second: PostgreSQL', (f) => f.idlePostgresCpuMsPerSecond.toFixed(1)],
  ['CPU ms per operation less idle: Rail', (f) => f.railCpuMsPerOperationLessIdle.toFixed(2)],
  ['CPU ms per operation less idle: PostgreSQL', (f) => f.postgresCpuMsPerOperationLessIdle.toFixed(2)],
  ['requests and jobs tried again', (f) => String(f.retries)],
]
printSideBySide(results, (f) => f.processes, rows, 28)
const file = path.join(
  path.dirname(new URL(import.meta.url).pathname),
  'results',
  THROUGH_PGBOUNCER ? 'cluster-pgbouncer.json' : 'cluster.json',
)
mkdirSync(path.dirname(file), { recursive: true })
writeFileSync(
  file,
  `${JSON.stringify({ results, operationsPerKind: PER_KIND, lanes: LANES, measuredAt: new Date().toISOString(), machine: `${os.cpus().length} cores, node ${process.version}` }, null, 2)}\n`,
)
console.log(`wrote ${path.relative(process.cwd(), file)}`)
