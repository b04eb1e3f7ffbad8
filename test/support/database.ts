// A fresh database per test file, cloned from the migrated template. Dropping it first verifies
// the ledger (every balance recomputed from the transfers): no test that moves money can forget to.
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { expect, inject } from 'vitest'
import { verifyLedger } from '../../src/ledger/verify.ts'
import { createPool, type Pool } from '../../src/platform/db.ts'
import { adminQuery, withDatabase } from './global-setup.ts'

export interface TestDatabase {
  url: string
  pool: Pool
  /** Verifies the ledger, then drops the database; throws (failing the file) when the ledger does not verify. */
  drop(): Promise<void>
}

/** PostgreSQL's limit on a database's name (NAMEDATALEN - 1). */
const NAME_CHARS_MAX = 63

/**
 * The test file's folder and name (`events_routes_`), so that pg_stat_activity says which file holds
 * a database's connections; cut so that the name stays within PostgreSQL's limit.
 */
function fileSlug(): string {
  const testPath = expect.getState().testPath
  if (!testPath) return ''
  const slug = `${path.basename(path.dirname(testPath))}_${path.basename(testPath).replace(/\.test\.ts$/, '')}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
  const room = NAME_CHARS_MAX - inject('testDatabasePrefix').length - 12 - 1
  return `${slug.slice(0, Math.max(room, 0))}_`
}

export async function createTestDatabase(poolMax = 10): Promise<TestDatabase> {
  const adminUrl = inject('databaseAdminUrl')
  const name = `${inject('testDatabasePrefix')}${fileSlug()}${randomBytes(6).toString('hex')}`
  await adminQuery(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`)
  const url = withDatabase(adminUrl, name)
  const pool = createPool(url, poolMax)
  return {
    url,
    pool,
    async drop() {
      let problems: string[] = []
      try {
        problems = (await verifyLedger(pool)).problems
      } finally {
        await pool.end()
      }
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      if (problems.length > 0)
        throw new Error(`the ledger of test database ${name} does not verify: ${problems.join('; ')}`)
    },
  }
}
