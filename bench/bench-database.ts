// The database a benchmark runs on: a fresh database on DATABASE_URL's server when it is set
// (dropped afterwards), else a throw-away embedded PostgreSQL with default (durable) settings —
// plus, for experiments, the server settings BENCH_PG_EXTRA=name=value,… names
// (e.g. BENCH_PG_EXTRA=plan_cache_mode=force_generic_plan).
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { startEmbeddedDatabase } from '../src/platform/embedded-db.ts'

export interface BenchDatabase {
  url: string
  stop(): Promise<void>
}

/**
 * BENCH_STATEMENTS=1 loads pg_stat_statements (tracking statements inside functions too) into
 * the embedded server, for bench/statements.ts to read per request.
 */
export const STATEMENT_STATS = process.env.BENCH_STATEMENTS === '1'

export async function benchDatabase(name: string): Promise<BenchDatabase> {
  const serverUrl = process.env.DATABASE_URL
  if (serverUrl) {
    await adminQuery(serverUrl, `CREATE DATABASE ${pg.escapeIdentifier(name)}`)
    const url = new URL(serverUrl)
    url.pathname = `/${name}`
    return {
      url: url.toString(),
      stop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
    }
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'rail-bench-'))
  chmodSync(dataDir, 0o755) // as root, PostgreSQL runs as the postgres user and must enter it
  const embedded = await startEmbeddedDatabase(dataDir, {
    persistent: false,
    settings: {
      max_connections: '300',
      ...extraSettings(),
      ...(STATEMENT_STATS ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } : {}),
    },
  })
  return {
    url: embedded.databaseUrl,
    async stop() {
      await embedded.stop()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

function extraSettings(): Record<string, string> {
  const given = process.env.BENCH_PG_EXTRA
  if (!given) return {}
  return Object.fromEntries(
    given
      .split(',')
      .map((setting) => [setting.slice(0, setting.indexOf('=')), setting.slice(setting.indexOf('=') + 1)]),
  )
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** Starts `api` on a free loopback port and answers its base URL (the benches' app and sandbox bank). */
export async function listenOnLoopback(api: {
  listen(options: { host: string; port: number }): Promise<unknown>
  server: { address(): unknown }
}): Promise<string> {
  await api.listen({ host: '127.0.0.1', port: 0 })
  const address = api.server.address() as { port?: number } | null
  return `http://127.0.0.1:${address?.port ?? 0}`
}
