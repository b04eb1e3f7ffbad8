// A process moving money through the ledger is killed (SIGKILL) with batches in flight. Every
// transfer it was told was made is stored, a batch is stored whole or not at all, linked pairs
// whole or not at all, and the ledger verifies: nothing half-applied survives a crash.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { getBalances } from '../../src/ledger/service.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { expectLedgerVerified, fundedWallets } from '../support/ledger.ts'

const ACCOUNTS = 20
const OPENING_KOBO = 1_000_000
const ACKNOWLEDGED_BEFORE_KILL = 2_000

let db: TestDatabase
const accounts: string[] = []
beforeAll(async () => {
  db = await createTestDatabase()
  accounts.push(...(await fundedWallets(db.pool, ACCOUNTS, OPENING_KOBO)))
})
afterAll(async () => db?.drop())

it(
  'a process killed mid-batch leaves every acknowledged transfer stored and nothing half-applied',
  { timeout: 120_000 },
  async () => {
    const writer = path.join(path.dirname(new URL(import.meta.url).pathname), 'crash-writer.ts')
    const child = spawn(process.execPath, [writer, db.url, ...accounts], { stdio: ['ignore', 'pipe', 'pipe'] })
    const acknowledged: string[] = []
    let partial = ''
    let errors = ''
    child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()))
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString()).split('\n')
        partial = lines.pop()!
        acknowledged.push(...lines)
        if (acknowledged.length >= ACKNOWLEDGED_BEFORE_KILL) resolve()
      })
      child.on('exit', () => reject(new Error(`the writer exited before it was killed: ${errors}`)))
    })
    child.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')

    // PostgreSQL rolls back the killed process's open transactions when it notices the lost connections.
    await expect
      .poll(
        async () =>
          (
            await db.pool.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle' AND pid <> pg_backend_pid()`,
            )
          ).rows[0].n,
        { timeout: 10_000 },
      )
      .toBe(0)

    const stored = await db.pool.query<{ id: string }>(`SELECT id FROM ledger_transfers WHERE code = 'crash_move'`)
    const storedIds = new Set(stored.rows.map((row) => row.id))
    expect(acknowledged.filter((id) => !storedIds.has(id))).toEqual([])
    expect(storedIds.size).toBeGreaterThanOrEqual(acknowledged.length)
    const pairs = await db.pool.query<{ legs: number; pairs: number }>(
      `SELECT legs, count(*)::int AS pairs FROM (SELECT source_id, count(*)::int AS legs FROM ledger_transfers WHERE source_type = 'crash_pair' GROUP BY source_id) p GROUP BY legs`,
    )
    expect(pairs.rows.map((row) => row.legs)).toEqual([2]) // every linked pair whole: no pair with one leg
    const balances = await getBalances(db.pool, accounts)
    expect(balances.reduce((sum, balance) => sum + balance.bookedKobo, 0)).toBe(OPENING_KOBO * ACCOUNTS)
    await expectLedgerVerified(db.pool)
  },
)
