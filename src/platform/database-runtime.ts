// Which database a command uses: DATABASE_URL when set; otherwise the embedded server — the one
// a running `rail serve` owns (found through the data directory), or one this process starts.
import type { Config } from './config.ts'
import { createPool, describeConnectionError, type Pool } from './db.ts'
import { findRunningEmbeddedDatabase, startEmbeddedDatabase, type EmbeddedDatabase } from './embedded-db.ts'

export interface OpenDatabase {
  pool: Pool
  /** The connection URL, for a process that needs a second pool (its workers', say). */
  url: string
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
export async function openDatabase(config: Config, mode: 'own' | 'share', poolMax = config.databasePoolMax): Promise<OpenDatabase> {
  if (config.databaseUrl) {
    const pool = createPool(config.databaseUrl, poolMax)
    await assertReachable(pool, config.databaseUrl)
    return { pool, url: config.databaseUrl, description: `PostgreSQL at ${redactUrl(config.databaseUrl)}`, embedded: undefined, close: () => pool.end() }
  }
  const running = mode === 'share' ? findRunningEmbeddedDatabase(config.dataDir) : undefined
  if (running) {
    const pool = createPool(running, poolMax)
    await assertReachable(pool, running)
    return { pool, url: running, description: `the embedded PostgreSQL of the running Rail (${config.dataDir})`, embedded: undefined, close: () => pool.end() }
  }
  const embedded = await startEmbeddedDatabase(config.dataDir, { persistent: true })
  const pool = createPool(embedded.databaseUrl, poolMax)
  return {
    pool,
    url: embedded.databaseUrl,
    description: `embedded PostgreSQL in ${config.dataDir}/pgdata`,
    embedded,
    async close() {
      await pool.end()
      await embedded.stop()
    },
  }
}

async function assertReachable(pool: Pool, url: string): Promise<void> {
  try {
    await pool.query('SELECT 1')
  } catch (error) {
    await pool.end().catch(() => {})
    throw new DatabaseUnreachableError(`cannot reach the database at ${redactUrl(url)}: ${describeConnectionError(error)}`)
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
