// Migrations whose comments were reworded after they shipped: a database that applied the earlier
// text still starts (its recorded hash is moved to the present one), and any other change to a
// migration is still refused.
import { readdirSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateDatabase, migrationFileHash, MIGRATIONS_DIR } from '../../src/platform/migrate.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase(2)
})
afterAll(async () => db?.drop())

const recordedHash = async (id: number) =>
  (await db.pool.query<{ hash: string }>('SELECT hash FROM migrations WHERE id = $1', [id])).rows[0]!.hash

describe('reworded migrations', () => {
  it('records for every file the hash this module computes (the library computes the same)', async () => {
    for (const fileName of readdirSync(MIGRATIONS_DIR).filter((name) => name.endsWith('.sql'))) {
      expect(await recordedHash(Number.parseInt(fileName, 10)), fileName).toBe(migrationFileHash(fileName))
    }
  })

  it('starts a database that applied the earlier wording, and records the present hash', async () => {
    await db.pool.query(`UPDATE migrations SET hash = '1e459cdb8a1efd9386152e11e0ecbc7f2321a169' WHERE id = 7`)
    await migrateDatabase(db.pool)
    expect(await recordedHash(7)).toBe(migrationFileHash('0007_wallets.sql'))
  })

  it('still refuses a migration changed in any other way', async () => {
    await db.pool.query(`UPDATE migrations SET hash = repeat('0', 40) WHERE id = 7`)
    await expect(migrateDatabase(db.pool)).rejects.toThrow(/Hashes don't match|0007_wallets/)
    await db.pool.query('UPDATE migrations SET hash = $1 WHERE id = 7', [migrationFileHash('0007_wallets.sql')])
  })
})
