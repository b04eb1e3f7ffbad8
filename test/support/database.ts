// A fresh database per test file, cloned from the migrated template.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'
import { createPool, type Pool } from '../../src/platform/db.ts'
import { withDatabase } from './global-setup.ts'

export interface TestDatabase {
  url: string
  pool: Pool
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
      await pool.end()
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    },
  }
}
