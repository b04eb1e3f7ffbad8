// Running Rail's roles in a process: `serve` (API + workers, embedded database by default),
// `api` and `worker` (production, on DATABASE_URL). Shutdown drains in order: stop accepting
// requests and finish in-flight ones, stop workers (running jobs finish), close the pool, stop
// the embedded database.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Runner } from 'graphile-worker'
import { buildApi, startBackgroundWorkers } from './app.ts'
import { loadFailpoints } from './platform/failpoints.ts'
import { createPartner, getPartner, type PartnerCredentials } from './partners/service.ts'
import type { Config } from './platform/config.ts'
import { checkConnectionBudget, connectionBudget, workerPoolMax, type ConnectionBudget } from './platform/connections.ts'
import { openDatabase, type OpenDatabase } from './platform/database-runtime.ts'
import { createPool, type Pool } from './platform/db.ts'
import { randomBase62 } from './platform/crypto.ts'
import { readOrCreateSecretFile, recordApiUrl } from './platform/embedded-db.ts'
import type { HttpServer } from './platform/http.ts'
import { loadMasterKey } from './platform/master-key.ts'
import { migrateDatabase } from './platform/migrate.ts'

/** A second Ctrl-C during shutdown exits at once; otherwise shutdown gets this long. */
const SHUTDOWN_TIMEOUT_MS = 30_000
const SANDBOX_PARTNER_FILE = 'sandbox-partner.json'
/** Serialises first-start partner creation across processes sharing one database. */
const SANDBOX_PARTNER_LOCK = 7_340_001

export interface Roles {
  api: boolean
  worker: boolean
  /** Start embedded PostgreSQL when DATABASE_URL is unset (serve), and migrate on start. */
  ownDatabase: boolean
}

export async function runRoles(config: Config, roles: Roles): Promise<void> {
  if (!roles.ownDatabase && !config.databaseUrl) {
    throw new Error('DATABASE_URL is required for `rail api` and `rail worker` (use `rail serve` for the embedded database)')
  }
  loadFailpoints(config.failpoints)
  const masterKey = loadMasterKey(config)
  const database = await openDatabase(config, 'own')
  let api: HttpServer | undefined
  let workers: Runner | undefined
  let workerPool: Pool | undefined
  const shutdown = installShutdown(async () => {
    await api?.close()
    await workers?.stop()
    await workerPool?.end()
    await database.close()
  })
  let budget: ConnectionBudget
  try {
    if (roles.ownDatabase) await migrateDatabase(database.pool)
    const sandboxBank = sandboxBankSettings(config, roles)
    budget = connectionBudget({ ...roles, sandboxBank: sandboxBank !== undefined }, config)
    const checked = await checkConnectionBudget(database.pool, budget)
    if (checked.warning) console.error(`rail: warning: ${checked.warning}`)
    // The sandbox bank is reached over HTTP even when it is mounted here; its address is known once listening.
    let ownUrl = ''
    const providers = sandboxBank && { sandboxBankUrl: () => config.sandboxBankUrl ?? ownUrl, sandboxBankSecret: sandboxBank.secret }
    if (roles.api) {
      api = await buildApi({
        pool: database.pool,
        masterKey,
        logger: { level: config.logLevel },
        sandboxBank,
        providers,
        allowLoopbackCallbacks: config.allowLoopbackCallbacks,
        payments: config.payments,
        maxAmountKobo: config.maxAmountKobo,
        rateLimits: config.rateLimits,
      })
      await listen(api, config)
      ownUrl = baseUrl(api, config)
    }
    if (roles.worker) {
      // Workers have a pool of their own, one connection per concurrent job and graphile-worker's
      // own: a job never waits for a connection, and API requests never wait behind jobs.
      workerPool = createPool(database.url, workerPoolMax(config.workerConcurrency), 'rail-worker')
      workers = await startBackgroundWorkers({
        pool: workerPool,
        masterKey,
        concurrency: config.workerConcurrency,
        providers,
        events: { allowLoopbackCallbacks: config.allowLoopbackCallbacks },
        payments: config.payments,
        maxAmountKobo: config.maxAmountKobo,
        log: workerLog,
      })
    }
  } catch (error) {
    await shutdown.run().catch(() => {})
    throw error
  }
  const sandbox = roles.ownDatabase && !config.production ? await ensureSandboxPartner(config, database.pool, masterKey) : undefined
  printBanner(config, database, roles, api, sandbox, budget)
}

/** The workers' warnings and errors (a late bank answer, a failed step), one JSON line each on stderr. */
function workerLog(level: string, message: string): void {
  if (level === 'warn' || level === 'warning' || level === 'error') console.error(JSON.stringify({ level, time: Date.now(), msg: message }))
}

/**
 * `rail serve` mounts the sandbox bank, with a secret generated once into the data directory
 * unless SANDBOX_BANK_SECRET is set; `rail api` mounts it only when SANDBOX_BANK_SECRET is set.
 */
function sandboxBankSettings(config: Config, roles: Roles): { secret: string; bankCode?: string } | undefined {
  const secret = config.sandboxBankSecret ?? (roles.ownDatabase ? readOrCreateSecretFile(path.join(config.dataDir, 'sandbox-bank.secret'), () => randomBase62(40)) : undefined)
  return secret === undefined ? undefined : { secret, bankCode: config.sandboxBankCode }
}

async function listen(api: HttpServer, config: Config): Promise<void> {
  try {
    await api.listen({ host: config.host, port: config.port })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`port ${config.port} on ${config.host} is in use (is Rail already running? set PORT to use another)`)
    }
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
async function ensureSandboxPartner(config: Config, pool: Pool, masterKey: Buffer): Promise<PartnerCredentials | undefined> {
  const file = path.join(config.dataDir, SANDBOX_PARTNER_FILE)
  const client = await pool.connect()
  try {
    await client.query('SELECT pg_advisory_lock($1)', [SANDBOX_PARTNER_LOCK])
    if (existsSync(file)) {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as PartnerCredentials
      if (await getPartner(pool, saved.partnerId)) return saved
    }
    const { rows } = await client.query<{ count: number }>('SELECT count(*)::int AS count FROM partners')
    if (rows[0]!.count > 0) return undefined
    const created = await createPartner(pool, masterKey, { name: 'Sandbox Partner', customerClass: 'fintech', environment: 'sandbox' })
    writeFileSync(file, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 })
    return created
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [SANDBOX_PARTNER_LOCK]).catch(() => {})
    client.release()
  }
}

function printBanner(config: Config, database: OpenDatabase, roles: Roles, api: HttpServer | undefined, sandbox: PartnerCredentials | undefined, budget: ConnectionBudget): void {
  const lines = ['', 'Rail is running']
  if (api) {
    const url = baseUrl(api, config)
    lines.push(`  API       ${url}`, `  Docs      ${url}/docs`, `  OpenAPI   ${url}/openapi.json`)
  }
  lines.push(`  Database  ${database.description}`)
  if (roles.worker) lines.push(`  Workers   ${config.workerConcurrency} concurrent jobs`)
  lines.push(`  Connections  ${budget.total} to PostgreSQL (API ${budget.api}, sandbox bank ${budget.sandboxBank}, workers ${budget.workers})`)
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
      'First call:  scripts/rail-curl.sh GET /api/v1/rail/settings   (reads .rail/sandbox-partner.json)',
    )
  }
  lines.push('Stop with Ctrl-C.', '')
  console.log(lines.join('\n'))
}
