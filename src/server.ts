// Running Rail's roles in a process: `serve` (API + workers, embedded database by default),
// `api` and `worker` (production, on DATABASE_URL). Shutdown drains in order: stop accepting
// requests and finish in-flight ones, stop workers (running jobs finish), close the pool, stop
// the embedded database.
import cluster from 'node:cluster'
import { createServer } from 'node:net'
import path from 'node:path'
import type { Runner } from 'graphile-worker'
import { buildApi, startBackgroundWorkers, taskNames } from './app.ts'
import { VERIFY_TASK } from './ledger/jobs.ts'
import { addJob } from './platform/jobs.ts'
import { loadFailpoints } from './platform/failpoints.ts'
import { createMetricsRegistry } from './platform/metrics.ts'
import { createLogger, logDestination, type Logger } from './platform/observability/logger.ts'
import { startTracing } from './platform/observability/tracing.ts'
import { startWorkerHttpServer, workerHttpUrl, WORKER_HTTP_POOL_MAX } from './platform/worker-http.ts'
import type { ProviderSettings } from './banking/providers/registry.ts'
import type { DestinationStream } from 'pino'
import type { Registry } from 'prom-client'
import {
  countPartners,
  createPartner,
  getPartner,
  oldestSealedSigningSecret,
  readSandboxPartner,
  SANDBOX_PARTNER_FILE,
  writeSandboxPartner,
  type PartnerCredentials,
} from './partners/service.ts'
import type { Config } from './platform/config.ts'
import {
  checkConnectionBudget,
  checkPoolSizes,
  connectionBudget,
  describeBudget,
  workerPoolMax,
  WORKER_POOL_OVERHEAD,
  type ConnectionBudget,
} from './platform/connections.ts'
import { openDatabase, redactUrl, type OpenDatabase } from './platform/database-runtime.ts'
import { createPool, type Pool } from './platform/db.ts'
import { randomBase62 } from './platform/crypto.ts'
import { readOrCreateSecretFile, recordApiUrl, runningApiUrl } from './platform/embedded-db.ts'
import type { HttpServer } from './platform/http.ts'
import { assertMasterKeyOfDatabase, loadMasterKey } from './platform/master-key.ts'
import { migrateDatabase } from './platform/migrate.ts'
import { setListClockMarginMs } from './platform/pagination.ts'
import { openReadReplica } from './platform/read-pool.ts'
import { setPublicUrl } from './platform/public-url.ts'

/** A second Ctrl-C during shutdown exits at once; otherwise shutdown gets this long. */
const SHUTDOWN_TIMEOUT_MS = 30_000
/** Serialises first-start partner creation across processes sharing one database. */
const SANDBOX_PARTNER_LOCK = 7_340_001

export interface Roles {
  api: boolean
  worker: boolean
  /** Start embedded PostgreSQL when DATABASE_URL is unset (serve), and migrate on start. */
  ownDatabase: boolean
}

export async function runRoles(config: Config, roles: Roles): Promise<void> {
  assertRolesConfigured(config, roles)
  // Before anything starts: separate processes must share one master key.
  const masterKey = loadMasterKey(config, roles.ownDatabase ? 'own' : 'shared')
  loadFailpoints(config.failpoints)
  setListClockMarginMs(config.listClockMarginMs)
  checkPoolSizes(roles, config)
  if (roles.api) await assertPortFree(config, roles)
  const telemetry = await startTelemetry(config)
  // A worker alone uses this pool only for its endpoints (readyz, the scrape's gauges): a small one.
  const database = await openDatabase(config, 'own', roles.api ? config.databasePoolMax : WORKER_HTTP_POOL_MAX)
  // Only the API serves lists, statements and event reads.
  const readReplica =
    roles.api && config.readReplica ? openReadReplica(database.pool, config.readReplica, telemetry.metrics) : undefined
  let api: HttpServer | undefined
  let workers: WorkerRole | undefined
  const shutdown = installShutdown(async () => {
    await api?.close()
    await workers?.stop()
    await readReplica?.close()
    await database.close()
    await telemetry.stop()
  })
  let budget: ConnectionBudget
  try {
    if (roles.ownDatabase) await migrateDatabase(database.sessionPool)
    await assertMasterKeyOfDatabase(database.pool, masterKey, oldestSealedSigningSecret)
    const sandboxBank = sandboxBankSettings(config, roles)
    budget = connectionBudget(
      { ...roles, sandboxBank: sandboxBank !== undefined },
      config,
      config.databaseDirectUrl !== undefined,
    )
    const checked = await checkConnectionBudget(database.sessionPool, budget)
    if (checked.warning) console.error(`rail: warning: ${checked.warning}`)
    // The sandbox bank is reached over HTTP even when it is mounted here; its address is known once listening.
    let ownUrl = ''
    const providers = sandboxBank && {
      sandboxBankUrl: () => config.sandboxBankUrl ?? ownUrl,
      sandboxBankSecret: sandboxBank.secret,
      requestValidityS: config.sandboxBankRequestValidityS,
      sandboxBankCode: config.sandboxBankCode,
    }
    if (roles.api) {
      api = await startApi(config, {
        database,
        masterKey,
        telemetry,
        sandboxBank,
        providers,
        workersHere: roles.worker,
        ownDatabase: roles.ownDatabase,
      })
      await listen(api, config)
      ownUrl = baseUrl(api, config)
    }
    // Callback payloads built by workers carry page URLs too: a worker alone takes the configured address.
    if (!roles.api)
      setPublicUrl(
        config.publicUrl ??
          `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${config.port}`,
      )
    if (roles.worker)
      workers = await startWorkerRole(config, { database, masterKey, providers, telemetry, endpoints: !roles.api })
  } catch (error) {
    await shutdown.run().catch(() => {})
    throw error
  }
  const sandbox =
    roles.ownDatabase && !config.production ? await ensureSandboxPartner(config, database, masterKey) : undefined
  printBanner(config, database, roles, api, sandbox, budget, workers?.http)
}

/** Refuses a set of roles that cannot run with this configuration, before anything starts. */
function assertRolesConfigured(config: Config, roles: Roles): void {
  if (!roles.ownDatabase && !config.databaseUrl) {
    throw new Error(
      'DATABASE_URL is required for `rail api` and `rail worker` (use `rail serve` for the embedded database)',
    )
  }
  // A worker alone mounts no sandbox bank: with the bank's secret it must be told where one is served.
  if (!roles.api && config.sandboxBankSecret !== undefined && config.sandboxBankUrl === undefined) {
    throw new Error(
      'SANDBOX_BANK_URL is required for `rail worker` when SANDBOX_BANK_SECRET is set: a worker serves no sandbox bank of its own (point it at an API process that has the same secret, e.g. SANDBOX_BANK_URL=http://api-host:8080)',
    )
  }
}

/** The API role's server over the process's database, with the sandbox bank when it is mounted here. */
function startApi(
  config: Config,
  parts: {
    database: OpenDatabase
    masterKey: Buffer
    telemetry: Telemetry
    sandboxBank: ReturnType<typeof sandboxBankSettings>
    providers: Parameters<typeof buildApi>[0]['providers']
    workersHere: boolean
    ownDatabase: boolean
  },
): Promise<HttpServer> {
  return buildApi({
    pool: parts.database.pool,
    sessionPool: parts.database.sessionPool,
    masterKey: parts.masterKey,
    logger: { level: config.logLevel, ...(parts.telemetry.logStream ? { stream: parts.telemetry.logStream } : {}) },
    sandboxBank: parts.sandboxBank,
    providers: parts.providers,
    allowLoopbackCallbacks: config.allowLoopbackCallbacks,
    payments: config.payments,
    maxAmountKobo: config.maxAmountKobo,
    rateLimits: config.rateLimits,
    publicUrl: config.publicUrl,
    sandboxPartnerDataDir: parts.ownDatabase && !config.production ? config.dataDir : undefined,
    metrics: parts.telemetry.metrics,
    // Read once per scrape by the processes that run workers, not again by every API process.
    databaseGauges: parts.workersHere,
  })
}

interface Telemetry {
  metrics: Registry
  logger: Logger
  /** Where the logger's and the API's lines go when LOG_FORMAT=text; undefined: pino's JSON on stdout. */
  logStream: DestinationStream | undefined
  stop(): Promise<void>
}

/** The process's metrics registry and logger, and traces when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
async function startTelemetry(config: Config): Promise<Telemetry> {
  const stopTracing = config.tracing ? await startTracing(config.tracing) : undefined
  const logStream = logDestination(config.logFormat)
  return {
    metrics: createMetricsRegistry(),
    logger: createLogger(config.logLevel, logStream),
    logStream,
    stop: async () => stopTracing?.(),
  }
}

interface WorkerRole {
  /** The worker's own endpoints (`rail worker` alone, unless WORKER_HTTP_PORT is 0). */
  http: HttpServer | undefined
  /** Stops serving, then the workers (running jobs finish), then closes their pool. */
  stop(): Promise<void>
}

/**
 * Workers have a pool of their own, one connection per concurrent job and graphile-worker's own:
 * a job never waits for a connection, and API requests never wait behind jobs. A worker alone
 * serves /healthz, /readyz and /metrics on WORKER_HTTP_PORT; beside the API, the API's port does.
 */
/** The job key of the ledger verification a worker process queues as it starts. */
const STARTUP_VERIFY_JOB_KEY = 'ledger_verify:startup'

async function startWorkerRole(
  config: Config,
  on: {
    database: OpenDatabase
    masterKey: Buffer
    providers: ProviderSettings | undefined
    telemetry: Telemetry
    endpoints: boolean
  },
): Promise<WorkerRole> {
  const { pool, queuePool } = workerPools(on.database, config.workerConcurrency)
  let runner: Runner | undefined
  let http: HttpServer | undefined
  const stop = async () => {
    await http?.close()
    await runner?.stop()
    await Promise.all([pool.end(), queuePool?.end()])
  }
  try {
    runner = await startBackgroundWorkers({
      pool,
      queuePool,
      masterKey: on.masterKey,
      concurrency: config.workerConcurrency,
      providers: on.providers,
      events: { allowLoopbackCallbacks: config.allowLoopbackCallbacks },
      payments: config.payments,
      creditSweep: config.creditSweep,
      maxAmountKobo: config.maxAmountKobo,
      log: workerLog(on.telemetry.logger),
      observe: { registry: on.telemetry.metrics, logger: on.telemetry.logger },
    })
    if (on.endpoints && config.workerHttpPort !== 0) {
      const tasks = taskNames({ pool, masterKey: on.masterKey, providers: on.providers })
      http = await startWorkerHttpServer({
        pool: on.database.pool,
        registry: on.telemetry.metrics,
        host: config.host,
        port: config.workerHttpPort,
        tasks,
      })
    }
    // Started: the ledger is verified once now, not only at the next hourly run, so the metrics
    // report a result (rail_ledger_verify_*) soon after a deploy. Workers starting together share one job.
    await addJob(pool, VERIFY_TASK, {}, { jobKey: STARTUP_VERIFY_JOB_KEY })
  } catch (error) {
    await stop().catch(() => {})
    throw error
  }
  return { http, stop }
}

/**
 * The jobs' pool, and beside a pooler graphile-worker's own pool straight to PostgreSQL: its LISTEN
 * needs a session, and its fetching and completing of jobs use named statements.
 */
function workerPools(database: OpenDatabase, concurrency: number): { pool: Pool; queuePool: Pool | undefined } {
  if (database.directUrl === undefined)
    return { pool: createPool(database.url, workerPoolMax(concurrency), 'rail-worker'), queuePool: undefined }
  return {
    pool: createPool(database.url, concurrency, 'rail-worker', 'pooler'),
    queuePool: createPool(database.directUrl, WORKER_POOL_OVERHEAD, 'rail-worker-queue'),
  }
}

/** graphile-worker's and the pipeline's warnings and errors (a late bank answer, a lost connection), through the process's logger. */
function workerLog(logger: Logger): (level: string, message: string) => void {
  return (level, message) => {
    if (level === 'error') logger.error(message)
    else if (level === 'warn' || level === 'warning') logger.warn(message)
  }
}

/**
 * `rail serve` mounts the sandbox bank, with a secret generated once into the data directory
 * unless SANDBOX_BANK_SECRET is set; `rail api` mounts it only when SANDBOX_BANK_SECRET is set.
 */
function sandboxBankSettings(
  config: Config,
  roles: Roles,
): { secret: string; bankCode?: string; requestValidityS?: number } | undefined {
  const secret =
    config.sandboxBankSecret ??
    (roles.ownDatabase
      ? readOrCreateSecretFile(path.join(config.dataDir, 'sandbox-bank.secret'), () => randomBase62(40))
      : undefined)
  return secret === undefined
    ? undefined
    : { secret, bankCode: config.sandboxBankCode, requestValidityS: config.sandboxBankRequestValidityS }
}

/**
 * Refuses a taken port before any database is opened: an embedded PostgreSQL's first start
 * (initdb, migrations) takes seconds, and the newcomer should not wait them out to hear it. The
 * listen itself still answers the same if the port is taken in between. A data directory another
 * live `rail serve` owns is left to its own, more telling refusal. An API process of `rail cluster`
 * shares the port its siblings already listen on (the cluster's primary holds it): no probe there.
 */
async function assertPortFree(config: Config, roles: Roles): Promise<void> {
  if (config.port === 0 || cluster.isWorker) return
  if (roles.ownDatabase && !config.databaseUrl && runningApiUrl(config.dataDir) !== undefined) return
  const probe = createServer()
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject)
      probe.listen({ host: config.host, port: config.port, exclusive: true }, resolve)
    })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw portInUse(config)
    throw error
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()))
}

function portInUse(config: Config): Error {
  return new Error(`port ${config.port} on ${config.host} is in use (is Rail already running? set PORT to use another)`)
}

async function listen(api: HttpServer, config: Config): Promise<void> {
  try {
    await api.listen({ host: config.host, port: config.port })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw portInUse(config)
    throw error
  }
  if (!config.databaseUrl) recordApiUrl(config.dataDir, baseUrl(api, config))
}

function baseUrl(api: HttpServer, config: Config): string {
  const address = api.server.address()
  const port = typeof address === 'object' && address ? address.port : config.port
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host
  return `http://${host}:${port}`
}

function installShutdown(stop: () => Promise<void>): { run(): Promise<void> } {
  let running: Promise<void> | undefined
  const run = () => (running ??= stop())
  const onSignal = (signal: NodeJS.Signals) => {
    if (running) {
      console.error(`rail: ${signal} again, exiting now`)
      process.exit(1)
    }
    console.log(`rail: ${signal} received, draining…`)
    const timer = setTimeout(() => {
      console.error('rail: shutdown timed out')
      process.exit(1)
    }, SHUTDOWN_TIMEOUT_MS)
    timer.unref()
    run().then(
      () => {
        console.log('rail: stopped cleanly')
        process.exit(0)
      },
      (error: unknown) => {
        console.error(`rail: shutdown failed: ${String(error)}`)
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  return { run }
}

/**
 * On first start of a development install, a sandbox partner is created so that a newcomer can
 * make a signed call at once. Its credentials are kept in <dataDir>/sandbox-partner.json (0600,
 * beside the master key) and printed at every start while that partner exists.
 */
async function ensureSandboxPartner(
  config: Config,
  database: OpenDatabase,
  masterKey: Buffer,
): Promise<PartnerCredentials | undefined> {
  const pool = database.pool
  // A session lock: on a connection of its own, never through a pooler.
  const client = await database.sessionPool.connect()
  try {
    await client.query('SELECT pg_advisory_lock($1)', [SANDBOX_PARTNER_LOCK])
    const saved = readSandboxPartner(config.dataDir)
    if (saved && (await getPartner(pool, saved.partnerId))) return saved
    if ((await countPartners(client)) > 0) return undefined
    const created = await createPartner(pool, masterKey, {
      name: 'Sandbox Partner',
      customerClass: 'fintech',
      environment: 'sandbox',
    })
    writeSandboxPartner(config.dataDir, created)
    return created
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [SANDBOX_PARTNER_LOCK]).catch(() => {})
    client.release()
  }
}

function printBanner(
  config: Config,
  database: OpenDatabase,
  roles: Roles,
  api: HttpServer | undefined,
  sandbox: PartnerCredentials | undefined,
  budget: ConnectionBudget,
  workerHttp?: HttpServer,
): void {
  const lines = ['', 'Rail is running']
  if (api) {
    const url = baseUrl(api, config)
    lines.push(`  API       ${url}`, `  Docs      ${url}/docs`, `  OpenAPI   ${url}/openapi.json`)
  }
  lines.push(`  Database  ${database.description}`)
  if (api && config.readReplica)
    lines.push(
      `  Reads     lists, statements and events from the replica at ${redactUrl(config.readReplica.url)} once it has caught up`,
    )
  if (roles.worker) lines.push(`  Workers   ${config.workerConcurrency} concurrent jobs`)
  if (workerHttp) lines.push(`  Worker endpoints  ${workerHttpUrl(workerHttp)}/healthz, /readyz, /metrics`)
  lines.push(`  Connections  ${describeBudget(budget)}`)
  if (sandbox) {
    lines.push(
      '',
      'Sandbox partner (fintech, sandbox)',
      `  partnerId              ${sandbox.partnerId}`,
      `  keyId                  ${sandbox.keyId}`,
      `  signingSecret          ${sandbox.signingSecret}`,
      `  escrowApiKey           ${sandbox.escrowApiKey}`,
      `  callbackSigningSecret  ${sandbox.callbackSigningSecret}`,
      '',
      `First call:  ${firstCall(config.dataDir)}`,
    )
  }
  lines.push('Stop with Ctrl-C.', '')
  console.log(lines.join('\n'))
}

/** The signed first call a newcomer can paste: rail-curl.sh finds the server and the credentials through the data directory. */
function firstCall(dataDir: string): string {
  const relative = path.relative(process.cwd(), dataDir)
  const shown = relative === '' ? '.' : relative.startsWith('..') || path.isAbsolute(relative) ? dataDir : relative
  const prefix =
    path.resolve('.rail') === dataDir ? '' : `RAIL_DATA_DIR=${shown.includes(' ') ? JSON.stringify(shown) : shown} `
  return `${prefix}scripts/rail-curl.sh GET /api/v1/rail/settings   (reads ${path.join(shown, SANDBOX_PARTNER_FILE)})`
}
