// `rail cluster`'s primary: one PostgreSQL (embedded unless DATABASE_URL is set, migrated here),
// one master key and one sandbox bank secret given to every process, N `rail api` behind one port
// and M `rail worker`, started again when one dies, all stopped on Ctrl-C.
import path from 'node:path'
import type { Config } from '../platform/config.ts'
import { connectionBudget } from '../platform/connections.ts'
import { randomBase62 } from '../platform/crypto.ts'
import { redactUrl } from '../platform/database-runtime.ts'
import { createPool, describeConnectionError, STATEMENT_TIMEOUT_MS, type Pool } from '../platform/db.ts'
import {
  EMBEDDED_DATABASE_NAME,
  findFreePort,
  readOrCreateSecretFile,
  recordApiUrl,
  startEmbeddedDatabase,
  type EmbeddedDatabase,
} from '../platform/embedded-db.ts'
import { assertMasterKeyOfDatabase, loadMasterKey } from '../platform/master-key.ts'
import { oldestSealedSigningSecret } from '../partners/service.ts'
import { migrateDatabase } from '../platform/migrate.ts'
import { findPgbouncer, startPgbouncer, type RunningPgbouncer } from './pgbouncer.ts'
import { ClusterProcesses } from './processes.ts'

/** The primary's own connections: migrating, the budget check. */
const SUPERVISOR_POOL_MAX = 2
/** Connections the embedded server keeps beyond the cluster's budget: `rail` commands, psql, a dashboard. */
const EMBEDDED_HEADROOM = 20
/** A process that does not drain within this is killed (each process's own shutdown bound is 30 s). */
const STOP_TIMEOUT_MS = 35_000

export interface ClusterSize {
  api: number
  worker: number
}

/**
 * Where the processes' pools go: PostgreSQL itself; a pooler run elsewhere (DATABASE_DIRECT_URL
 * set), whose server connections the cluster cannot count; or PgBouncer started by the cluster
 * (`--pgbouncer`), whose are known.
 */
export type ClusterPooler = { kind: 'none' } | { kind: 'external' } | { kind: 'pgbouncer'; poolSize: number }

export interface ClusterBudget {
  perApi: number
  perWorker: number
  /** Connections to PostgreSQL itself: every pool, or beside a pooler the direct ones and the server connections of a PgBouncer started here. */
  total: number
  pooler: ClusterPooler
}

/** The connections the whole cluster may open: each process's pools, as each process states them. */
export function clusterBudget(
  size: ClusterSize,
  config: Pick<Config, 'databasePoolMax' | 'workerConcurrency'>,
  sandboxBank: boolean,
  pooler: ClusterPooler = { kind: 'none' },
): ClusterBudget {
  const pooled = pooler.kind !== 'none'
  const perApi = connectionBudget({ api: true, worker: false, sandboxBank }, config, pooled).total
  // A worker alone's budget counts the small pool of its endpoints (readyz, the scrape's gauges).
  const perWorker = connectionBudget({ api: false, worker: true, sandboxBank: false }, config, pooled).total
  const poolerServers = pooler.kind === 'pgbouncer' ? pooler.poolSize : 0
  return {
    perApi,
    perWorker,
    total: size.api * perApi + size.worker * perWorker + SUPERVISOR_POOL_MAX + poolerServers,
    pooler,
  }
}

export function describeBudget(size: ClusterSize, budget: ClusterBudget): string {
  const parts = `${size.api} API × ${budget.perApi}, ${size.worker} worker × ${budget.perWorker}, ${SUPERVISOR_POOL_MAX} for the cluster itself`
  if (budget.pooler.kind === 'pgbouncer')
    return `${budget.total} connections (${parts}, ${budget.pooler.poolSize} of PgBouncer's)`
  if (budget.pooler.kind === 'external')
    return `${budget.total} connections (${parts}) straight to PostgreSQL, and the pooler's own server connections`
  return `${budget.total} connections (${parts})`
}

interface ClusterDatabase {
  url: string
  pool: Pool
  description: string
  embedded: EmbeddedDatabase | undefined
}

export interface ClusterOptions {
  /** Start PgBouncer (transaction mode) in front of the database, and point every process at it. */
  pgbouncer?: boolean
  onParentGone?: (stop: () => void) => void
}

export async function runCluster(config: Config, size: ClusterSize, options: ClusterOptions = {}): Promise<void> {
  const masterKey = loadMasterKey(config)
  const bankSecret =
    config.sandboxBankSecret ??
    (config.production
      ? undefined
      : readOrCreateSecretFile(path.join(config.dataDir, 'sandbox-bank.secret'), () => randomBase62(40)))
  const pooler = clusterPooler(config, options)
  const budget = clusterBudget(size, config, bankSecret !== undefined, pooler)
  const database = await openClusterDatabase(config, budget.total)
  let pgbouncer: RunningPgbouncer | undefined
  const closeDatabase = async () => {
    await pgbouncer?.stop()
    await database.pool.end()
    await database.embedded?.stop()
  }
  let processes: ClusterProcesses | undefined
  const stopCluster = stopperOf(() => processes!, closeDatabase)
  try {
    await migrateDatabase(database.pool)
    await assertMasterKeyOfDatabase(database.pool, masterKey, oldestSealedSigningSecret)
    await checkClusterBudget(database.pool, size, budget)
    const url = `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${config.port}`
    if (pooler.kind === 'pgbouncer') {
      // The embedded database is Rail's own: its statement timeout is set on it, as an operator sets it on the role.
      if (database.embedded)
        await database.pool.query(
          `ALTER DATABASE ${EMBEDDED_DATABASE_NAME} SET statement_timeout = ${STATEMENT_TIMEOUT_MS}`,
        )
      pgbouncer = await startPgbouncer({ directUrl: database.url, poolSize: pooler.poolSize })
    }
    const env = processEnv(config, { databaseUrl: database.url, pgbouncer, masterKey, bankSecret, url })
    processes = new ClusterProcesses({ output: (line) => console.log(line), fatal: (reason) => stopCluster(reason) })
    await startProcesses(processes, size, env)
    if (database.embedded) recordApiUrl(config.dataDir, url)
    printBanner(config, url, size, budget, database, processes, pgbouncer)
  } catch (error) {
    await processes?.stopAll('SIGKILL')
    await closeDatabase()
    throw error
  }

  process.on('SIGINT', () => stopCluster('SIGINT received'))
  process.on('SIGTERM', () => stopCluster('SIGTERM received'))
  options.onParentGone?.(() => stopCluster('SIGTERM: the launching process is gone'))
}

/** What every process of the cluster is started with: one database, one master key, one sandbox bank. */
function processEnv(
  config: Config,
  shared: {
    databaseUrl: string
    pgbouncer: RunningPgbouncer | undefined
    masterKey: Buffer
    bankSecret: string | undefined
    url: string
  },
): NodeJS.ProcessEnv {
  const { databaseUrl, pgbouncer, bankSecret } = shared
  return {
    ...process.env,
    DATABASE_URL: pgbouncer?.url ?? databaseUrl,
    ...(pgbouncer ? { DATABASE_DIRECT_URL: databaseUrl } : {}),
    RAIL_MASTER_KEY: shared.masterKey.toString('hex'),
    PORT: String(config.port),
    // Every API process mounts the sandbox bank (its state is in the database), so the one port reaches it.
    ...(bankSecret === undefined
      ? {}
      : { SANDBOX_BANK_SECRET: bankSecret, SANDBOX_BANK_URL: config.sandboxBankUrl ?? shared.url }),
  }
}

/** Starts the API processes and the workers (each worker with an HTTP port of its own), all at once. */
async function startProcesses(processes: ClusterProcesses, size: ClusterSize, env: NodeJS.ProcessEnv): Promise<void> {
  const started: Promise<void>[] = []
  for (let i = 0; i < size.api; i++) started.push(processes.start(processes.add('api', env)))
  for (let i = 0; i < size.worker; i++)
    started.push(processes.start(processes.add('worker', { ...env, WORKER_HTTP_PORT: String(await findFreePort()) })))
  await Promise.all(started)
}

/**
 * The cluster's stop: every process drained (killed past STOP_TIMEOUT_MS), then the database
 * closed and the primary gone. Asked again while stopping, it kills every process at once.
 */
function stopperOf(processesOf: () => ClusterProcesses, closeDatabase: () => Promise<void>): (reason: string) => void {
  let stopping: Promise<void> | undefined
  return (reason) => {
    const processes = processesOf()
    if (stopping) {
      console.error('rail cluster: stopping now')
      processes.killAll()
      return
    }
    console.log(`rail cluster: ${reason}; stopping every process…`)
    const timer = setTimeout(() => processes.killAll(), STOP_TIMEOUT_MS)
    timer.unref()
    stopping = processes
      .stopAll()
      .then(closeDatabase)
      .then(
        () => {
          console.log('rail cluster: stopped')
          process.exit(reason.startsWith('SIG') ? 0 : 1)
        },
        (error: unknown) => {
          console.error(`rail cluster: stopping failed: ${String(error)}`)
          process.exit(1)
        },
      )
  }
}

/** PgBouncer's server connections when the cluster starts it: a few per core of a development machine's PostgreSQL. */
const PGBOUNCER_POOL_SIZE = 20

function clusterPooler(config: Config, options: ClusterOptions): ClusterPooler {
  if (!options.pgbouncer) return config.databaseDirectUrl === undefined ? { kind: 'none' } : { kind: 'external' }
  if (config.databaseDirectUrl !== undefined) {
    throw new Error(
      '--pgbouncer starts its own PgBouncer in front of DATABASE_URL (or the embedded database): leave DATABASE_DIRECT_URL unset',
    )
  }
  if (!findPgbouncer()) throw new Error('--pgbouncer: pgbouncer is not installed (Debian: apt-get install pgbouncer)')
  return { kind: 'pgbouncer', poolSize: PGBOUNCER_POOL_SIZE }
}

/**
 * DATABASE_URL's server, or the data directory's embedded one, started with room for the cluster
 * (PostgreSQL's default of 100 connections is fewer than a few processes' pools).
 */
async function openClusterDatabase(config: Config, connectionsNeeded: number): Promise<ClusterDatabase> {
  if (config.databaseUrl) {
    // Migrating takes a session lock: beside a pooler, the cluster's own connections go around it.
    const ownUrl = config.databaseDirectUrl ?? config.databaseUrl
    const pool = createPool(ownUrl, SUPERVISOR_POOL_MAX, 'rail-cluster')
    try {
      await pool.query('SELECT 1')
    } catch (error) {
      await pool.end().catch(() => {})
      throw new Error(`cannot reach the database at ${redactUrl(ownUrl)}: ${describeConnectionError(error)}`)
    }
    const through = config.databaseDirectUrl ? ` through the pooler at ${redactUrl(config.databaseUrl)}` : ''
    return {
      url: config.databaseUrl,
      pool,
      description: `PostgreSQL at ${redactUrl(ownUrl)}${through}`,
      embedded: undefined,
    }
  }
  const maxConnections = Math.max(100, connectionsNeeded + EMBEDDED_HEADROOM)
  const embedded = await startEmbeddedDatabase(config.dataDir, {
    persistent: true,
    settings: { max_connections: String(maxConnections) },
  })
  const pool = createPool(embedded.databaseUrl, SUPERVISOR_POOL_MAX, 'rail-cluster')
  return {
    url: embedded.databaseUrl,
    pool,
    description: `embedded PostgreSQL in ${config.dataDir}/pgdata (max_connections ${maxConnections})`,
    embedded,
  }
}

export class ClusterBudgetError extends Error {}

/** Refuses a cluster whose processes could not all have their connections, even on an idle server. */
async function checkClusterBudget(pool: Pool, size: ClusterSize, budget: ClusterBudget): Promise<void> {
  const { rows } = await pool.query<{ max_connections: number; reserved: number }>(
    `SELECT current_setting('max_connections')::int AS max_connections, current_setting('superuser_reserved_connections')::int AS reserved`,
  )
  const usable = rows[0]!.max_connections - rows[0]!.reserved
  if (budget.total > usable) {
    throw new ClusterBudgetError(
      `the cluster needs ${describeBudget(size, budget)} but the server allows ${usable}; lower DATABASE_POOL_MAX or WORKER_CONCURRENCY, run fewer processes, or raise max_connections`,
    )
  }
}

function printBanner(
  config: Config,
  url: string,
  size: ClusterSize,
  budget: ClusterBudget,
  database: ClusterDatabase,
  processes: ClusterProcesses,
  pgbouncer: RunningPgbouncer | undefined,
): void {
  const pids = (role: string) =>
    processes.slots
      .filter((slot) => slot.role === role)
      .map((slot) => slot.worker?.process.pid)
      .join(', ')
  const lines = [
    '',
    'Rail cluster is running',
    `  API          ${url}   (${size.api} \`rail api\` process(es) behind one port: Node's cluster module, round-robin)`,
    `  Docs         ${url}/docs`,
    `  Workers      ${size.worker} \`rail worker\` process(es), ${config.workerConcurrency} concurrent jobs each`,
    `  Processes    api: ${pids('api')}; worker: ${pids('worker')} (primary ${process.pid}); one that dies is started again`,
    `  Database     ${database.description}`,
    ...(pgbouncer
      ? [
          `  Pooler       PgBouncer at ${redactUrl(pgbouncer.url)} (transaction mode, ${pgbouncer.poolSize} server connections); session work straight to PostgreSQL`,
        ]
      : []),
    `  Connections  ${describeBudget(size, budget)}`,
    `  Master key   one for every process: ${config.masterKeyHex ? 'RAIL_MASTER_KEY' : path.join(config.dataDir, 'master.key')}`,
    '',
    'Stop with Ctrl-C (every process drains, then stops).',
    '',
  ]
  console.log(lines.join('\n'))
}
