// db/schema.sql must describe exactly what the migrations produce.
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { dumpSchema } from '../../src/platform/schema-dump.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase(2)
})
afterAll(async () => db?.drop())

it('db/schema.sql matches the migrated schema (run `npm run schema:dump` after adding a migration)', async () => {
  const committed = readFileSync(new URL('../../db/schema.sql', import.meta.url), 'utf8')
  expect(await dumpSchema(db.pool)).toBe(committed)
})
