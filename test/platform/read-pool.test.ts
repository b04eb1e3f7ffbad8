// The read replica's fallbacks and the shared position statement, on the test database. (Reads
// served by a real streaming replica, and read-your-writes across processes: test/cluster/replica.test.ts.)
import { afterAll, beforeAll, expect, it } from 'vitest'
import { Registry } from 'prom-client'
import { createPool, type Pool } from '../../src/platform/db.ts'
import { findFreePort } from '../../src/platform/embedded-db.ts'
import { uuidv7 } from '../../src/platform/ids.ts'
import { openReadReplica, readPage, withReadConnection } from '../../src/platform/read-pool.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'

let db: TestDatabase
const closers: (() => Promise<void>)[] = []

beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  for (const close of closers) await close()
  await db?.drop()
})

/** A primary pool of its own, its "replica" at `replicaUrl`, and the counts of where reads went. */
function primaryWithReplica(replicaUrl: string): {
  primary: Pool
  counted(servedBy: string, reason: string): Promise<number>
  positions: () => number
} {
  const primary = createPool(db.url, 4)
  const registry = new Registry()
  const replica = openReadReplica(primary, { url: replicaUrl, poolMax: 2, maxWaitMs: 5 }, registry)
  closers.push(async () => {
    await replica.close()
    await primary.end()
  })
  // Counts the position statements the primary is sent (the only ones naming pg_current_wal_lsn).
  let positions = 0
  const query = primary.query.bind(primary) as (...args: unknown[]) => unknown
  primary.query = ((...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].includes('pg_current_wal_lsn')) positions++
    return query(...args)
  }) as Pool['query']
  return {
    primary,
    positions: () => positions,
    async counted(servedBy, reason) {
      const metric = await registry.getSingleMetric('rail_read_replica_reads_total')!.get()
      return (
        metric.values.find((value) => value.labels.served_by === servedBy && value.labels.reason === reason)?.value ?? 0
      )
    },
  }
}

it('a server that is not a standby is never read from: the primary answers, counted not_standby', async () => {
  const { primary, counted } = primaryWithReplica(db.url)
  const served = await withReadConnection(
    primary,
    async (reader) =>
      (await reader.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')).rows[0]!.standby,
  )
  expect(served).toBe(false)
  expect(await counted('primary', 'not_standby')).toBe(1)
  expect(await counted('replica', 'caught_up')).toBe(0)
})

it('a replica that cannot be reached fails no read: the primary answers, counted unavailable', async () => {
  const { primary, counted } = primaryWithReplica(`postgres://postgres@127.0.0.1:${await findFreePort()}/rail`)
  const before = uuidv7()
  const page = await readPage(
    primary,
    undefined,
    async (reader, beforeId) =>
      (await reader.query<{ ok: boolean }>('SELECT $1::uuid > $2::uuid AS ok', [beforeId, before])).rows[0]!.ok,
  )
  // The horizon, read on the primary, is past an id made before the read.
  expect(page).toBe(true)
  expect(await withReadConnection(primary, async (reader) => (await reader.query('SELECT 1 AS one')).rows[0])).toEqual({
    one: 1,
  })
  expect(await counted('primary', 'unavailable')).toBe(2)
})

it('reads begun together share one position statement, and those begun while it is in flight the next one', async () => {
  const { primary, positions } = primaryWithReplica(db.url)
  const reads = Array.from({ length: 20 }, () => readPage(primary, undefined, async (reader, beforeId) => beforeId))
  const horizons = await Promise.all(reads)
  // The first read sends one; the 19 begun while it was in flight share the next.
  expect(positions()).toBe(2)
  expect(new Set(horizons).size).toBeLessThanOrEqual(2)
})
