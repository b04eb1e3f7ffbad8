// The coalescer: concurrent operations of one kind are written together, set-based, in one
// transaction; a batch that fails is written again operation by operation, each in its own
// savepoint of one shared transaction, so one bad operation fails no other.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import { Coalescer } from '../../src/platform/coalescer.ts'
import type { Tx } from '../../src/platform/db.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
  await db.pool.query('CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL CHECK (body <> $$refused$$))')
})
afterAll(async () => db?.drop())
beforeEach(async () => {
  await db.pool.query('TRUNCATE notes')
})

interface Note {
  id: number
  body: string
}

/** One INSERT for the whole batch; each note's answer is the id of the transaction that wrote it. */
async function writeNotes(tx: Tx, notes: readonly Note[]): Promise<string[]> {
  await tx.query('INSERT INTO notes (id, body) SELECT * FROM unnest($1::int[], $2::text[])', [
    notes.map((note) => note.id),
    notes.map((note) => note.body),
  ])
  const { rows } = await tx.query<{ txid: string }>('SELECT txid_current()::text AS txid')
  return notes.map(() => rows[0]!.txid)
}

it('writes concurrent operations in few shared transactions, each caller getting its own answer after the commit', async () => {
  const coalescer = new Coalescer(db.pool, writeNotes, { lanes: 1, batchMax: 50 })
  const answers = await Promise.all(
    Array.from({ length: 120 }, (_unused, i) => coalescer.run({ id: i, body: `note ${i}` })),
  )
  const stored = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM notes')
  expect(stored.rows[0]!.n).toBe(120)
  const transactions = new Set(answers)
  expect(transactions.size).toBeGreaterThanOrEqual(3) // at most 50 a batch
  expect(transactions.size).toBeLessThanOrEqual(6)
})

it('a batch that fails is written operation by operation, each in its own savepoint: only the bad ones fail', async () => {
  const coalescer = new Coalescer(db.pool, writeNotes, { lanes: 1, batchMax: 100 })
  const outcomes = await Promise.allSettled(
    Array.from({ length: 40 }, (_unused, i) => coalescer.run({ id: i, body: i % 10 === 7 ? 'refused' : `note ${i}` })),
  )
  const rejected = outcomes.flatMap((outcome, i) => (outcome.status === 'rejected' ? [i] : []))
  expect(rejected).toEqual([7, 17, 27, 37])
  for (const i of rejected) expect(String((outcomes[i] as PromiseRejectedResult).reason)).toMatch(/check constraint/)
  // The survivors were written one by one, each in its own savepoint, yet still share one commit.
  const transactions = new Set(outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : [])))
  expect(transactions.size).toBeLessThanOrEqual(2) // the first call runs at once, alone; the other 39 wait for it and form one batch
  const stored = await db.pool.query<{ id: number }>('SELECT id FROM notes ORDER BY id')
  expect(stored.rows.map((row) => row.id)).toEqual(
    Array.from({ length: 40 }, (_unused, i) => i).filter((i) => i % 10 !== 7),
  )
})

it('a write that answers the wrong number of results fails its callers and leaves nothing', async () => {
  const coalescer = new Coalescer(db.pool, async (tx: Tx, notes: readonly Note[]) => {
    await writeNotes(tx, notes)
    return [] as string[]
  })
  await expect(coalescer.run({ id: 1, body: 'one' })).rejects.toThrow(/answered 0 results for 1/)
  const stored = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM notes')
  expect(stored.rows[0]!.n).toBe(0)
})

it('refuses a configuration without lanes or batch room', () => {
  expect(() => new Coalescer(db.pool, writeNotes, { lanes: 0 })).toThrow(/lanes/)
  expect(() => new Coalescer(db.pool, writeNotes, { batchMax: 0 })).toThrow(/batchMax/)
})
