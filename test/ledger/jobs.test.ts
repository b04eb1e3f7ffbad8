// The timeout sweep runs as a real graphile-worker job, and `rail ledger verify` reports on the
// real database (and fails on a tampered one).
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startBackgroundWorkers } from '../../src/app.ts'
import { VOID_TIMED_OUT_TASK } from '../../src/ledger/jobs.ts'
import { createTransfers, getBalance } from '../../src/ledger/service.ts'
import { withTransaction, type Pool } from '../../src/platform/db.ts'
import { addJob } from '../../src/platform/jobs.ts'
import { runRail } from '../support/cli.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { expectLedgerVerified, forgeBalancedTotals, fund, newAccount } from '../support/ledger.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => db?.drop())

it('a worker voids reservations past their timeout, once, even with two sweeps', async () => {
  const source = await newAccount(db.pool)
  const wallet = await newAccount(db.pool, { kind: 'wallet', debitsMustNotExceedCredits: true })
  await fund(db.pool, source, wallet, 1_000)
  const pendingIds = [randomUUID(), randomUUID()]
  const results = await createTransfers(
    db.pool,
    pendingIds.map((id) => ({
      id,
      phase: 'pending' as const,
      debitAccountId: wallet,
      creditAccountId: source,
      amountKobo: 300,
      currency: 'NGN',
      code: 'test_hold',
      timeoutS: 60,
    })),
  )
  expect(results.map((r) => r.result)).toEqual(['ok', 'ok'])
  expect((await getBalance(db.pool, wallet))!.availableKobo).toBe(400)
  await db.pool.query(
    `UPDATE ledger_pending_transfers SET timeout_at = now() - interval '1 second' WHERE transfer_id = $1`,
    [pendingIds[0]],
  )

  await addJob(db.pool, VOID_TIMED_OUT_TASK, {})
  await addJob(db.pool, VOID_TIMED_OUT_TASK, {})
  const runner = await startBackgroundWorkers({ pool: db.pool, masterKey: randomBytes(32), concurrency: 2 })
  try {
    const deadline = Date.now() + 15_000
    while (
      (await db.pool.query(`SELECT count(*)::int AS n FROM graphile_worker.jobs`)).rows[0].n > 0 &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } finally {
    await runner.stop()
  }
  const states = await db.pool.query(
    `SELECT transfer_id, status FROM ledger_pending_transfers WHERE transfer_id = ANY ($1::uuid[]) ORDER BY status`,
    [pendingIds],
  )
  expect(states.rows.map((row) => [row.transfer_id, row.status])).toEqual([
    [pendingIds[0], 'expired'],
    [pendingIds[1], 'pending'],
  ])
  const voids = await db.pool.query(`SELECT count(*)::int AS n FROM ledger_transfers WHERE pending_id = $1`, [
    pendingIds[0],
  ])
  expect(voids.rows[0].n).toBe(1)
  expect((await getBalance(db.pool, wallet))!.availableKobo).toBe(700)
  await expectLedgerVerified(db.pool)
})

it('`rail ledger verify` passes on a sound ledger and fails on a tampered one', async () => {
  const sound = await runRail(['ledger', 'verify', '--json'], { DATABASE_URL: db.url })
  expect(sound.code, sound.stderr).toBe(0)
  expect(JSON.parse(sound.stdout)).toMatchObject({ ok: true, problems: [] })

  const [account, other] = [await newAccount(db.pool), await newAccount(db.pool)]
  // Bypassing the write path with a balanced change: totals with no transfer behind them.
  await forgeBalancedTotals(db.pool, { debitAccountId: other, creditAccountId: account, amountKobo: 5 })
  const tampered = await runRail(['ledger', 'verify'], { DATABASE_URL: db.url })
  expect(tampered.code).toBe(1)
  expect(tampered.stdout).toContain(`account ${account}`)
  expect(tampered.stdout).toContain(`account ${other}`)
  await forgeBalancedTotals(db.pool, { debitAccountId: other, creditAccountId: account, amountKobo: -5 })

  // A one-sided change is refused by the database; with its guard switched off, verify finds the sums apart.
  await withoutBalanceGuard(db.pool, `UPDATE ledger_accounts SET credits_posted = credits_posted + 5 WHERE id = $1`, [
    account,
  ])
  const unbalanced = await runRail(['ledger', 'verify'], { DATABASE_URL: db.url })
  expect(unbalanced.code).toBe(1)
  expect(unbalanced.stdout).toContain('NGN: Σ debits posted')
  await withoutBalanceGuard(db.pool, `UPDATE ledger_accounts SET credits_posted = credits_posted - 5 WHERE id = $1`, [
    account,
  ])
})

async function withoutBalanceGuard(pool: Pool, sql: string, params: unknown[]): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query('ALTER TABLE ledger_accounts DISABLE TRIGGER ledger_accounts_stay_balanced')
    await tx.query(sql, params)
    await tx.query('ALTER TABLE ledger_accounts ENABLE TRIGGER ledger_accounts_stay_balanced')
  })
}
