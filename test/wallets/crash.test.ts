// A real `rail serve` process is killed (SIGKILL) after the bank has moved the money and before
// Rail has recorded the outcome. After the restart, the requery resolves the move: the money is
// posted exactly once and the bank and the ledger agree.
import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { RailClient } from '../../src/client/index.ts'
import { findFreePort } from '../../src/platform/embedded-db.ts'
import { sweepStranded } from '../../src/money-out/pipeline/service.ts'
import { PROJECT_ROOT, RAIL_BIN } from '../support/cli.ts'
import { SMALL_PROCESS_ENV } from '../support/rail-process.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { startRail, type Rail } from '../support/rail.ts'

const SECRET = 'crash-test-secret'
let app: Rail
let dataDir: string

// The workers start in the test, after the `rail serve` it kills.
beforeAll(async () => {
  app = await startRail({ sandboxBankSecret: SECRET })
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'rail-crash-'))
  chmodSync(dataDir, 0o755)
})
afterAll(async () => {
  await app?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

it(
  'a process killed between the provider call and the commit loses nothing and doubles nothing',
  { timeout: 90_000 },
  async () => {
    const { credentials, client: viaTestApp } = await app.newPartner()
    const wallet = (
      await viaTestApp.post<{ walletId: string; accountNumber: string }>('/wallet', {
        customerReference: 'crash',
        name: 'Crash Test',
      })
    ).body
    expect(
      (
        await viaTestApp.post('/wallet/credit', {
          walletId: wallet.walletId,
          reference: randomUUID(),
          amountKobo: 10_000,
          currency: 'NGN',
        })
      ).status,
    ).toBe(200)

    // A second Rail process on the same database: the one that will die.
    const port = await findFreePort()
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: app.db.url,
      RAIL_MASTER_KEY: app.masterKey.toString('hex'),
      SANDBOX_BANK_SECRET: SECRET,
      RAIL_DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ...SMALL_PROCESS_ENV,
    }
    const child = spawn(process.execPath, [RAIL_BIN, 'serve'], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const exited = new Promise((resolve) => child.on('exit', resolve))
    try {
      await waitFor(async () => output.includes('Stop with Ctrl-C.'), 30_000)
      const viaChild = new RailClient(`http://127.0.0.1:${port}`, credentials)

      // 1. The bank will wait on its account row, so that Rail's move is claimed and in flight.
      const bankLock = await app.db.pool.connect()
      await bankLock.query('BEGIN')
      await bankLock.query(`SELECT 1 FROM sandbox_bank.accounts WHERE account_number = $1 FOR UPDATE`, [
        wallet.accountNumber,
      ])
      const reference = randomUUID()
      const inFlight = viaChild
        .post('/wallet/debit', { walletId: wallet.walletId, reference, amountKobo: 4_000, currency: 'NGN' })
        .catch((error: unknown) => error)
      await waitFor(
        async () =>
          (await app.db.pool.query(`SELECT 1 FROM wallet_moves WHERE reference = $1`, [reference])).rowCount === 1,
      )

      // 2. Rail will wait on its move's row when it comes to record the bank's answer.
      const moveLock = await app.db.pool.connect()
      await moveLock.query('BEGIN')
      const { rows } = await moveLock.query<{ id: string }>(
        `SELECT id FROM wallet_moves WHERE reference = $1 FOR UPDATE`,
        [reference],
      )
      const moveId = rows[0]!.id
      await bankLock.query('COMMIT')
      bankLock.release()

      // 3. The bank moves the money and answers; Rail blocks on recording it; then Rail dies.
      await waitFor(
        async () =>
          (
            await app.db.pool.query(
              `SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1 AND response_code = '00'`,
              [moveId],
            )
          ).rowCount === 1,
      )
      await waitFor(
        async () =>
          (
            await app.db.pool.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE wallet_moves%'`,
            )
          ).rowCount! >= 1,
      )
      child.kill('SIGKILL')
      await exited
      // Rail records the answer and posts the ledger in one transaction: once its commit is sent, it
      // would still commit after the process died. The crash that leaves a move unanswered is the
      // one before that, so its backend is ended too.
      await app.db.pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE wallet_moves%'`,
      )
      await moveLock.query('ROLLBACK')
      moveLock.release()
      expect(await inFlight).toBeInstanceOf(Error) // the caller never got an answer

      const stuck = await app.db.pool.query(`SELECT status FROM wallet_moves WHERE id = $1`, [moveId])
      expect(stuck.rows[0].status).toBe('pending')
      const held = (
        await viaTestApp.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
          `/wallet/customer?customerId=${wallet.walletId}`,
        )
      ).body
      expect(held).toEqual(expect.objectContaining({ availableBalanceKobo: 6_000, bookedBalanceKobo: 10_000 }))

      // 4. After the restart, the sweep finds the payment in flight, its lease run out and its step
      // overdue, and gives it a job, which asks the bank first. Not yet: the dead process's lease
      // still holds it (the process asking may still answer).
      expect(await sweepStranded(app.db.pool)).toBe(0)
      await app.db.pool.query(
        `UPDATE bank_instructions SET lease_expires_at = now() - interval '1 second', next_attempt_at = next_attempt_at - interval '31 seconds' WHERE id = $1`,
        [moveId],
      )
      expect(await sweepStranded(app.db.pool)).toBe(1)
      await app.startWorkers({ concurrency: 2 })
      try {
        await waitFor(
          async () =>
            (await app.db.pool.query(`SELECT status FROM wallet_moves WHERE id = $1`, [moveId])).rows[0].status ===
            'successful',
        )
      } finally {
        await app.stopWorkers()
      }
      const after = (
        await viaTestApp.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
          `/wallet/customer?customerId=${wallet.walletId}`,
        )
      ).body
      expect(after).toEqual(expect.objectContaining({ availableBalanceKobo: 6_000, bookedBalanceKobo: 6_000 }))
      const bank = await app.db.pool.query(`SELECT balance_kobo FROM sandbox_bank.accounts WHERE account_number = $1`, [
        wallet.accountNumber,
      ])
      expect(bank.rows[0].balance_kobo).toBe(6_000)
      const bankTransfers = await app.db.pool.query(
        `SELECT count(*)::int AS n FROM sandbox_bank.transfers WHERE reference = $1`,
        [moveId],
      )
      expect(bankTransfers.rows[0].n).toBe(1)
      const replay = await viaTestApp.post<{ status: string }>('/wallet/debit', {
        walletId: wallet.walletId,
        reference,
        amountKobo: 4_000,
        currency: 'NGN',
      })
      expect(replay.body.status).toBe('successful')
      expect(await sweepStranded(app.db.pool)).toBe(0) // final now: nothing more to schedule
      await expectLedgerVerified(app.db.pool)
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  },
)
