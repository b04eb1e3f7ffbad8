// Newest-first pages cannot skip a row committed late. Two writer processes (each its own Node
// process, pool and id generator, as two API processes are) write for one partner: the first makes
// its row (the older id) and holds its transaction open while the second makes a newer one and
// commits. A partner syncing by paging from the top until it reaches the newest row it already has
// must, over its syncs, see every row exactly once — the late row included.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { PROJECT_ROOT } from '../support/cli.ts'
import { LISTS } from '../support/cursor-lists.ts'
import { waitFor } from '../support/wait.ts'

let app: TestApp

beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => {
  await app?.close()
})

/** Pages newest first, `limit` a page, until the end or the id already known; returns the ids read, in order. */
async function syncFromTop(
  client: RailClient,
  path: string,
  limit: number,
  knownNewestId: string | undefined,
): Promise<string[]> {
  const seen: string[] = []
  let cursor: string | null = null
  do {
    const page: { status: number; body: { data: { id: string }[]; nextCursor: string | null } } = await client.get<{
      data: { id: string }[]
      nextCursor: string | null
    }>(`${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
    expect(page.status).toBe(200)
    for (const row of page.body.data) {
      if (row.id === knownNewestId) return seen
      seen.push(row.id)
    }
    cursor = page.body.nextCursor
  } while (cursor !== null)
  return seen
}

const WRITER = fileURLToPath(new URL('../support/cursor-writer.ts', import.meta.url))

/** A writer process (test/support/cursor-writer.ts) with one connection of its own. */
interface Writer {
  query(command: 'BEGIN' | 'COMMIT' | 'ROLLBACK'): Promise<void>
  write(list: string, partnerId: string, n: number): Promise<string>
  close(): Promise<void>
}

async function startWriter(): Promise<Writer> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [WRITER], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, CURSOR_WRITER_DATABASE_URL: app.db.url },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const answer = async (): Promise<{ ok: boolean; id?: string; error?: string }> => {
    const next = await lines.next()
    if (next.done) throw new Error(`the writer process ended: ${stderr}`)
    return JSON.parse(next.value) as { ok: boolean; id?: string; error?: string }
  }
  const send = async (line: string) => {
    child.stdin.write(`${line}\n`)
    const answered = await answer()
    if (!answered.ok) throw new Error(`writer: ${answered.error}`)
    return answered
  }
  await answer() // ready
  const exited = new Promise((resolve) => child.once('exit', resolve))
  return {
    query: async (command) => void (await send(command.toLowerCase())),
    write: async (list, partnerId, n) => (await send(`write ${list} ${partnerId} ${n}`)).id!,
    async close() {
      child.stdin.end()
      await exited
    },
  }
}

describe.each(Object.keys(LISTS))('%s: pages across processes', (name) => {
  const list = LISTS[name]!

  it('a row committed after a newer one is still served, once', async () => {
    const { credentials, client } = await app.newPartner()
    const [first, second] = await Promise.all([startWriter(), startWriter()])
    try {
      const written: string[] = []
      for (let n = 0; n < 5; n++) written.push(await first.write(name, credentials.partnerId, n))
      // Rows made in the current millisecond are past the horizon: wait until these are served.
      await waitFor(
        async () => (await syncFromTop(client, list.path, 2, undefined)).length === written.length,
        20_000,
        'the committed rows listed',
      )

      await first.query('BEGIN')
      const late = await first.write(name, credentials.partnerId, 100) // the older id, not yet committed
      await new Promise((resolve) => setTimeout(resolve, 5)) // ids are made from each process's clock, by the millisecond
      await second.query('BEGIN')
      const early = await second.write(name, credentials.partnerId, 101)
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
    const db = await startWriter()
    try {
      const written: string[] = []
      for (let n = 0; n < 7; n++) written.push(await db.write(name, credentials.partnerId, n))
      // Rows made in the current millisecond are past the horizon: wait for the state, not the clock.
      let all: string[] = []
      await waitFor(
        async () => (all = await syncFromTop(client, list.path, 3, undefined)).length >= written.length,
        20_000,
        'every row listed',
      )
      expect(all).toEqual([...written].reverse())
    } finally {
      await db.close()
    }
  })
})
