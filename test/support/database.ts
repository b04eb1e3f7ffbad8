// A fresh database per test file, cloned from the migrated template. Dropping it first verifies
// the ledger (every balance recomputed from the transfers): no test that moves money can forget to.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'
import { verifyLedger } from '../../src/ledger/verify.ts'
import { createPool, type Pool } from '../../src/platform/db.ts'
import { withDatabase } from './global-setup.ts'

export interface TestDatabase {
  url: string
  pool: Pool
  /** Verifies the ledger, then drops the database; throws (failing the file) when the ledger does not verify. */
  drop(): Promise<void>
}

export async function createTestDatabase(poolMax = 10): Promise<TestDatabase> {
  const adminUrl = inject('databaseAdminUrl')
  const name = `${inject('testDatabasePrefix')}${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`)
  } finally {
    await admin.end()
  }
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
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
      if (problems.length > 0) throw new Error(`the ledger of test database ${name} does not verify: ${problems.join('; ')}`)
    },
  }
}
