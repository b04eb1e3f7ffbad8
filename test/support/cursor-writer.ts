// A writer process for the cursor tests: its own Node process, pool, connection and id generator,
// as another API process would have. It takes one command a line on stdin — `begin`, `commit`,
// `rollback`, or `write <list> <partnerId> <n>` — runs it on its one connection, and answers one
// JSON line on stdout: { ok: true, id? } or { ok: false, error }.
import { createInterface } from 'node:readline'
import { createPool } from '../../src/platform/db.ts'
import { LISTS } from './cursor-lists.ts'

const url = process.env.CURSOR_WRITER_DATABASE_URL
if (!url) throw new Error('CURSOR_WRITER_DATABASE_URL is required')
const pool = createPool(url, 1, 'rail-cursor-writer')
const client = await pool.connect()

async function run(line: string): Promise<{ ok: true; id?: string }> {
  const [command, list, partnerId, n] = line.trim().split(' ')
  if (command === 'begin' || command === 'commit' || command === 'rollback') {
    await client.query(command.toUpperCase())
    return { ok: true }
  }
  if (command === 'write' && list && partnerId && n)
    return { ok: true, id: await LISTS[list]!.write(client, partnerId, Number(n)) }
  throw new Error(`unknown command: ${line}`)
}

process.stdout.write(`${JSON.stringify({ ok: true, ready: true })}\n`)
for await (const line of createInterface({ input: process.stdin })) {
  const answer = await run(line).catch((error: unknown) => ({
    ok: false,
    error: error instanceof Error ? error.message : String(error),
  }))
  process.stdout.write(`${JSON.stringify(answer)}\n`)
}
client.release()
await pool.end()
