// One PostgreSQL for the whole run: embedded (a throw-away cluster with durability off, for
// speed) unless DATABASE_URL names a server. Migrations run once into a template database;
// each test file clones it (CREATE DATABASE … TEMPLATE), as graphile-worker's own tests do.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { createPool } from '../../src/platform/db.ts'
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../src/platform/embedded-db.ts'
import { migrateDatabase } from '../../src/platform/migrate.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseAdminUrl: string
    templateDatabase: string
    testDatabasePrefix: string
  }
}

let embedded: EmbeddedDatabase | undefined
let dataDir: string | undefined

export async function setup(project: TestProject): Promise<() => Promise<void>> {
  let adminUrl = process.env.DATABASE_URL
  if (!adminUrl) {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'rail-test-'))
    chmodSync(dataDir, 0o755) // as root, PostgreSQL runs as the postgres user and must enter it
    embedded = await startEmbeddedDatabase(dataDir, {
      persistent: false,
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
    })
    adminUrl = embedded.databaseUrl
  }
  const prefix = `rail_t${process.pid}_`
  const template = `${prefix}template`
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${template}`)
  await adminQuery(adminUrl, `CREATE DATABASE ${template}`)
  const pool = createPool(withDatabase(adminUrl, template), 2)
  try {
    await migrateDatabase(pool)
  } finally {
    await pool.end()
  }
  project.provide('databaseAdminUrl', adminUrl)
  project.provide('templateDatabase', template)
  project.provide('testDatabasePrefix', prefix)

  return async () => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    const { rows } = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [
      `${prefix}%`,
    ])
    for (const row of rows)
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(row.datname)} WITH (FORCE)`)
    await client.end()
    await embedded?.stop()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
  }
}

/** One statement on the admin connection (CREATE or DROP DATABASE), on a client of its own. */
export async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}
