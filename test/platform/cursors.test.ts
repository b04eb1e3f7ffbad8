// Newest-first pages cannot skip a row committed late. Two connections write for one partner: the
// first makes its row (the older id) and holds its transaction open while the second makes a newer
// one and commits. A partner syncing by paging from the top until it reaches the newest row it
// already has must, over its syncs, see every row exactly once — the late row included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as counterparties from '../../src/counterparties/repo.ts'
import { recordEvent } from '../../src/events/service.ts'
import { createPool, type Tx } from '../../src/platform/db.ts'
import { uuidv7 } from '../../src/platform/ids.ts'
import type { RailClient } from '../../src/client/index.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { waitFor } from '../support/wait.ts'

let app: TestApp

beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => {
  await app?.close()
})

interface Lister {
  path: string
  /** Writes one row for the partner on this connection; returns its id. */
  write(db: Tx, partnerId: string, n: number): Promise<string>
}

let serial = 0
const LISTS: Record<string, Lister> = {
  events: {
    path: '/api/v1/rail/events',
    async write(db: Tx, partnerId: string, n: number) {
      return (await recordEvent(db, { partnerId, type: 'test.cursor', objectType: 'test', objectId: `o${n}`, data: { n }, recordOnly: true })).id
    },
  },
  counterparties: {
    path: '/api/v1/rail/counterparties',
    async write(db: Tx, partnerId: string, n: number) {
      const account = { bankCode: '058', accountNumber: String(1_000_000_000 + ++serial * 10 + n).slice(0, 10), accountName: `Account ${n}` }
      return (await counterparties.upsertCounterparty(db, { id: uuidv7(), partnerId, ...account, name: account.accountName }, false)).counterparty.id
    },
  },
}

/** Pages newest first, `limit` a page, until the end or the id already known; returns the ids read, in order. */
async function syncFromTop(client: RailClient, path: string, limit: number, knownNewestId: string | undefined): Promise<string[]> {
  const seen: string[] = []
  let cursor: string | null = null
  do {
    const page: { status: number; body: { data: { id: string }[]; nextCursor: string | null } } = await client.get<{ data: { id: string }[]; nextCursor: string | null }>(`${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
    expect(page.status).toBe(200)
    for (const row of page.body.data) {
      if (row.id === knownNewestId) return seen
      seen.push(row.id)
    }
    cursor = page.body.nextCursor
  } while (cursor !== null)
  return seen
}

/**
 * A connection of a pool of its own, as another process would have. `close` releases it and ends
 * its pool (not `end`: the pool ends its clients by calling their own `end`).
 */
async function connect(): Promise<Tx & { close(): Promise<void> }> {
  const pool = createPool(app.db.url, 1)
  const client = await pool.connect()
  return Object.assign(client, {
    close: async () => {
      client.release()
      await pool.end()
    },
  })
}

describe.each(Object.keys(LISTS))('%s: pages across connections', (name) => {
  const list = LISTS[name]!

  it('a row committed after a newer one is still served, once', async () => {
    const { credentials, client } = await app.newPartner()
    const [first, second] = [await connect(), await connect()]
    try {
      const written: string[] = []
      for (let n = 0; n < 5; n++) written.push(await list.write(first, credentials.partnerId, n))
      // Rows made in the current millisecond are past the horizon: wait until these are served.
      await waitFor(async () => (await syncFromTop(client, list.path, 2, undefined)).length === written.length, 20_000, 'the committed rows listed')

      await first.query('BEGIN')
      const late = await list.write(first, credentials.partnerId, 100) // the older id, not yet committed
      await second.query('BEGIN')
      const early = await list.write(second, credentials.partnerId, 101)
      await second.query('COMMIT')
      expect(late < early).toBe(true)

      // Synced while the older row is still uncommitted: the newer one must wait with it.
      const firstSync = await syncFromTop(client, list.path, 2, undefined)
      expect(firstSync).toEqual([...written].reverse())

      await first.query('COMMIT')
      const secondSync = await syncFromTop(client, list.path, 2, firstSync[0])
      expect(secondSync).toEqual([early, late])

      const everything = [...secondSync, ...firstSync]
      expect(new Set(everything).size).toBe(everything.length)
      expect(everything.sort()).toEqual([...written, late, early].sort())
    } finally {
      await first.query('ROLLBACK').catch(() => {})
      await Promise.all([first.close(), second.close()])
    }
  })

  it('while no transaction is open, a page serves every committed row at once, and cursors walk them all once', async () => {
    const { credentials, client } = await app.newPartner()
    const db = await connect()
    try {
      const written: string[] = []
      for (let n = 0; n < 7; n++) written.push(await list.write(db, credentials.partnerId, n))
      // Rows made in the current millisecond are past the horizon: wait for the state, not the clock.
      let all: string[] = []
      await waitFor(async () => (all = await syncFromTop(client, list.path, 3, undefined)).length >= written.length, 20_000, 'every row listed')
      expect(all).toEqual([...written].reverse())
    } finally {
      await db.close()
    }
  })
})
