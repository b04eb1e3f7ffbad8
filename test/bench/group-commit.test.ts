// Group commit: concurrent operations share a transaction and a commit, yet each fails alone.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { GroupCommitter } from '../../bench/group-commit.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
  await db.pool.query('CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)')
})
afterAll(async () => db?.drop())

it('runs operations in shared transactions; a failing one rolls back alone', async () => {
  const committer = new GroupCommitter(db.pool, { lanes: 1, batchMax: 50 })
  const outcomes = await Promise.allSettled(
    Array.from({ length: 100 }, (_unused, i) =>
      committer.run(async (tx) => {
        await tx.query('INSERT INTO notes (id, body) VALUES ($1, $2)', [i, `note ${i}`])
        if (i % 10 === 3) throw new Error(`operation ${i} refuses`) // after its write: must be undone
        const { rows } = await tx.query<{ txid: string }>('SELECT txid_current()::text AS txid')
        return rows[0]!.txid
      }),
    ),
  )
  const rejected = outcomes.flatMap((outcome, i) => (outcome.status === 'rejected' ? [i] : []))
  expect(rejected).toEqual([3, 13, 23, 33, 43, 53, 63, 73, 83, 93])
  const stored = await db.pool.query<{ id: number }>('SELECT id FROM notes ORDER BY id')
  expect(stored.rows.map((row) => row.id)).toEqual(
    Array.from({ length: 100 }, (_unused, i) => i).filter((i) => i % 10 !== 3),
  )
  // Far fewer transactions than operations: that is the point.
  const transactions = new Set(outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : [])))
  expect(transactions.size).toBeLessThanOrEqual(5)
  await committer.close()
})

it('a statement error inside an operation does not poison the shared transaction', async () => {
  const committer = new GroupCommitter(db.pool, { lanes: 1 })
  const [duplicate, fine] = await Promise.allSettled([
    committer.run((tx) => tx.query('INSERT INTO notes (id, body) VALUES (0, $1)', ['again'])), // primary key violation
    committer.run((tx) => tx.query('INSERT INTO notes (id, body) VALUES (1000, $1)', ['new'])),
  ])
  expect(duplicate.status).toBe('rejected')
  expect(fine.status).toBe('fulfilled')
  expect((await db.pool.query('SELECT body FROM notes WHERE id = 1000')).rows[0].body).toBe('new')
  await committer.close()
})

it('an operation that loses a deadlock is deferred to the next batch, not failed', async () => {
  await db.pool.query(`INSERT INTO notes (id, body) VALUES (2001, 'a'), (2002, 'b')`)
  const committer = new GroupCommitter(db.pool, { lanes: 2, batchMax: 1 })
  // Two operations lock the same two rows in opposite orders: one of them deadlocks, is rolled
  // back to its savepoint, and runs again after the other commits.
  const lockBoth = (first: number, second: number) =>
    committer.run(async (tx) => {
      await tx.query(`UPDATE notes SET body = body || '+' WHERE id = $1`, [first])
      await new Promise((resolve) => setTimeout(resolve, 200))
      await tx.query(`UPDATE notes SET body = body || '+' WHERE id = $1`, [second])
      return 'done'
    })
  const results = await Promise.all([lockBoth(2001, 2002), lockBoth(2002, 2001)])
  expect(results).toEqual(['done', 'done'])
  const rows = await db.pool.query(`SELECT body FROM notes WHERE id IN (2001, 2002) ORDER BY id`)
  expect(rows.rows.map((row) => row.body)).toEqual(['a++', 'b++'])
  await committer.close()
})

it('refuses work once closed', async () => {
  const committer = new GroupCommitter(db.pool)
  await committer.close()
  await expect(committer.run(async () => 1)).rejects.toThrow(/closed/)
})
