// withTransaction: commit or roll back, and a bounded number of fresh attempts after a lock
// conflict (deadlock or serialization failure) — never endless, never for other errors.
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  camelColumns,
  createPool,
  createSiblingPool,
  rowReaders,
  withTransaction,
  type Pool,
} from '../../src/platform/db.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
  await db.pool.query('CREATE TABLE attempts (attempt int NOT NULL, label text NOT NULL)')
  await db.pool.query(`CREATE TABLE pair (id int PRIMARY KEY, v int NOT NULL); INSERT INTO pair VALUES (1, 0), (2, 0)`)
})
afterAll(async () => db?.drop())

const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' })

it('a lock conflict runs the work again from scratch; the failed attempt leaves nothing', async () => {
  let calls = 0
  const result = await withTransaction(db.pool, async (tx) => {
    calls++
    await tx.query(`INSERT INTO attempts VALUES ($1, 'retried')`, [calls])
    if (calls === 1) throw deadlock
    return 'done'
  })
  expect(result).toBe('done')
  expect(calls).toBe(2)
  const { rows } = await db.pool.query(`SELECT attempt FROM attempts WHERE label = 'retried'`)
  expect(rows).toEqual([{ attempt: 2 }])
})

it('gives up after five attempts and surfaces the conflict', async () => {
  let calls = 0
  await expect(
    withTransaction(db.pool, async (tx) => {
      calls++
      await tx.query(`INSERT INTO attempts VALUES ($1, 'always')`, [calls])
      throw Object.assign(new Error('could not serialize access'), { code: '40001' })
    }),
  ).rejects.toMatchObject({ code: '40001' })
  expect(calls).toBe(5)
  expect((await db.pool.query(`SELECT count(*)::int AS n FROM attempts WHERE label = 'always'`)).rows[0].n).toBe(0)
})

it('any other error surfaces at once', async () => {
  let calls = 0
  await expect(
    withTransaction(db.pool, async () => {
      calls++
      throw Object.assign(new Error('unique violation'), { code: '23505' })
    }),
  ).rejects.toMatchObject({ code: '23505' })
  expect(calls).toBe(1)
})

it('a real deadlock between two transactions: PostgreSQL breaks it, the loser runs again, both commit', async () => {
  // Each transaction locks one row, waits until the other has its row too, then asks for the other's.
  let holding = 0
  const bothHolding = async () => {
    holding++
    while (holding < 2) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const attempts = { first: 0, second: 0 }
  const run = (label: 'first' | 'second', order: [number, number]) =>
    withTransaction(db.pool, async (tx) => {
      attempts[label]++
      await tx.query('UPDATE pair SET v = v + 1 WHERE id = $1', [order[0]])
      if (attempts[label] === 1) await bothHolding()
      await tx.query('UPDATE pair SET v = v + 1 WHERE id = $1', [order[1]])
    })
  await Promise.all([run('first', [1, 2]), run('second', [2, 1])])
  // One of them lost the deadlock and ran again. The loser's retry may take its first row back
  // before the winner, woken, takes it, and deadlock once more (seen on a busy machine): at least 3.
  expect(attempts.first + attempts.second).toBeGreaterThanOrEqual(3)
  const { rows } = await db.pool.query('SELECT id, v FROM pair ORDER BY id')
  expect(rows).toEqual([
    { id: 1, v: 2 },
    { id: 2, v: 2 },
  ])
})

/** The named statements the connection `pool` hands out has prepared so far (a pool of one: always the same connection). */
async function preparedOnConnection(pool: Pool): Promise<string[]> {
  await pool.query('SELECT $1::int AS n', [1])
  await withTransaction(pool, (tx) => tx.query('SELECT $1::text AS t', ['x']))
  const { rows } = await pool.query<{ name: string }>(
    `SELECT name FROM pg_prepared_statements WHERE name LIKE 'rail\\_%' ORDER BY name`,
  )
  return rows.map((row) => row.name)
}

it('directly, statements with parameters are prepared once per connection; through a pooler, every statement is unnamed and no statement_timeout is sent', async () => {
  const direct = createPool(db.url, 1)
  const pooled = createPool(db.url, 1, 'rail', 'pooler')
  const sibling = createSiblingPool(pooled, 1, 'rail-sibling')
  try {
    expect(await preparedOnConnection(direct)).toHaveLength(2)
    expect((await direct.query(`SELECT current_setting('statement_timeout') AS t`)).rows[0].t).toBe('30s')
    for (const pool of [pooled, sibling]) {
      expect(await preparedOnConnection(pool)).toEqual([])
      // The server's default (0) or the role's: nothing sent at connection start.
      expect((await pool.query(`SELECT current_setting('statement_timeout') AS t`)).rows[0].t).toBe('0')
    }
  } finally {
    await Promise.all([direct.end(), pooled.end(), sibling.end()])
  }
})

it('camelColumns names each snake_case column by its camelCase field, qualified when asked; rowReaders reads one row or all', async () => {
  expect(camelColumns('id, partner_id,\n  amount_kobo')).toBe(
    'id, partner_id AS "partnerId", amount_kobo AS "amountKobo"',
  )
  expect(camelColumns('id, partner_id', 'c')).toBe('c.id, c.partner_id AS "partnerId"')
  await db.pool.query(`CREATE TABLE camel (id int PRIMARY KEY, partner_id text NOT NULL, amount_kobo bigint NOT NULL)`)
  await db.pool.query(`INSERT INTO camel VALUES (1, 'a', 100), (2, 'b', 250)`)
  const columns = camelColumns('id, partner_id, amount_kobo')
  const { one, all } = rowReaders((row: { id: number; partnerId: string; amountKobo: number }) => row)
  expect(await one(db.pool, `SELECT ${columns} FROM camel WHERE id = $1`, [2])).toEqual({
    id: 2,
    partnerId: 'b',
    amountKobo: 250,
  })
  expect(await one(db.pool, `SELECT ${columns} FROM camel WHERE id = $1`, [3])).toBeUndefined()
  const qualified = camelColumns('id, partner_id, amount_kobo', 'c')
  expect(await all(db.pool, `UPDATE camel c SET amount_kobo = amount_kobo + 1 RETURNING ${qualified}`)).toEqual(
    expect.arrayContaining([
      { id: 1, partnerId: 'a', amountKobo: 101 },
      { id: 2, partnerId: 'b', amountKobo: 251 },
    ]),
  )
})
