// Which database a command uses: DATABASE_URL when set; otherwise the embedded server — the one
// a running `rail serve` owns (found through the data directory), or one this process starts.
import type { Config } from './config.ts'
import { SESSION_POOL_MAX } from './connections.ts'
import { createPool, describeConnectionError, type Pool } from './db.ts'
import { findRunningEmbeddedDatabase, startEmbeddedDatabase, type EmbeddedDatabase } from './embedded-db.ts'

export interface OpenDatabase {
  pool: Pool
  /** The connection URL, for a process that needs a second pool (its workers', say). */
  url: string
  /** PostgreSQL itself when `url` is a pooler in transaction mode (DATABASE_DIRECT_URL); undefined otherwise. */
  directUrl: string | undefined
  /**
   * Where work that needs a session of its own goes: LISTEN, session advisory locks, migrations,
   * the connection budget's look at pg_stat_activity. `pool` itself, or beside a pooler a small
   * pool of SESSION_POOL_MAX on directUrl.
   */
  sessionPool: Pool
  /** Where the data lives, for humans. */
  description: string
  /** Set when this process started the embedded server and must stop it. */
  embedded: EmbeddedDatabase | undefined
  close(): Promise<void>
}

export class DatabaseUnreachableError extends Error {}

/** How CLI commands reach the database (see `withDatabase` in main.ts). */
export type WithDatabase = <T>(work: (database: OpenDatabase) => Promise<T>) => Promise<T>

/**
 * Opens the database for a command. `mode: 'own'` (rail serve) always starts the embedded server
 * when DATABASE_URL is unset; `mode: 'share'` (every other command) joins a running one first.
 * Migrating is the caller's decision.
 */
export async function openDatabase(
  config: Config,
  mode: 'own' | 'share',
  poolMax = config.databasePoolMax,
): Promise<OpenDatabase> {
  if (config.databaseUrl && config.databaseDirectUrl)
    return openThroughPooler(config.databaseUrl, config.databaseDirectUrl, poolMax)
  if (config.databaseUrl) {
    const pool = createPool(config.databaseUrl, poolMax)
    await assertReachable(pool, config.databaseUrl)
    return {
      pool,
      url: config.databaseUrl,
      directUrl: undefined,
      sessionPool: pool,
      description: `PostgreSQL at ${redactUrl(config.databaseUrl)}`,
      embedded: undefined,
      close: () => pool.end(),
    }
  }
  const running = mode === 'share' ? findRunningEmbeddedDatabase(config.dataDir) : undefined
  if (running) {
    const pool = createPool(running, poolMax)
    await assertReachable(pool, running)
    return {
      pool,
      url: running,
      directUrl: undefined,
      sessionPool: pool,
      description: `the embedded PostgreSQL of the running Rail (${config.dataDir})`,
      embedded: undefined,
      close: () => pool.end(),
    }
  }
  const embedded = await startEmbeddedDatabase(config.dataDir, { persistent: true })
  const pool = createPool(embedded.databaseUrl, poolMax)
  return {
    pool,
    url: embedded.databaseUrl,
    directUrl: undefined,
    sessionPool: pool,
    description: `embedded PostgreSQL in ${config.dataDir}/pgdata`,
    embedded,
    async close() {
      await pool.end()
      await embedded.stop()
    },
  }
}

/** DATABASE_URL through a pooler in transaction mode, and a small pool straight to PostgreSQL for session work. */
async function openThroughPooler(url: string, directUrl: string, poolMax: number): Promise<OpenDatabase> {
  const pool = createPool(url, poolMax, 'rail', 'pooler')
  const sessionPool = createPool(directUrl, SESSION_POOL_MAX, 'rail-session')
  const close = async () => {
    await Promise.all([pool.end(), sessionPool.end()])
  }
  try {
    await assertReachable(pool, url)
    await assertReachable(sessionPool, directUrl)
    await warnWithoutStatementTimeout(pool)
  } catch (error) {
    await close().catch(() => {})
    throw error
  }
  return {
    pool,
    url,
    directUrl,
    sessionPool,
    description: `PostgreSQL at ${redactUrl(directUrl)} through the pooler at ${redactUrl(url)}`,
    embedded: undefined,
    close,
  }
}

/**
 * Through a pooler Rail sends no statement_timeout (PgBouncer refuses it at connection start), so a
 * role without one runs statements unbounded: said once at start, not refused (the operator may mean it).
 */
async function warnWithoutStatementTimeout(pool: Pool): Promise<void> {
  const { rows } = await pool.query<{ timeout: string }>(`SELECT current_setting('statement_timeout') AS timeout`)
  if (rows[0]?.timeout === '0') {
    console.error(
      "rail: warning: statement_timeout is 0 through the pooler (DATABASE_URL); set it on the role, e.g. ALTER ROLE … SET statement_timeout = '30s'",
    )
  }
}

async function assertReachable(pool: Pool, url: string): Promise<void> {
  try {
    await pool.query('SELECT 1')
  } catch (error) {
    await pool.end().catch(() => {})
    throw new DatabaseUnreachableError(
      `cannot reach the database at ${redactUrl(url)}: ${describeConnectionError(error)}`,
    )
  }
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(unparseable DATABASE_URL)'
  }
}
