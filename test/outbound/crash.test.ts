// A real `rail worker` is killed (SIGKILL) after the bank accepted its payout and before the
// worker recorded the answer. After the restart the sweep requeries the stranded transfer: one
// payout at the bank, the right final state, the hold posted once.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { SWEEP_TASK } from '../../src/money-out/pipeline/service.ts'
import { addJob } from '../../src/platform/jobs.ts'
import { PROJECT_ROOT, RAIL_BIN } from '../support/cli.ts'
import { SMALL_PROCESS_ENV } from '../support/rail-process.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { startRail, type Rail } from '../support/rail.ts'
import { waitFor } from '../support/wait.ts'
import { fundFloat } from '../support/float.ts'

const SECRET = 'outbound-crash-secret'
let app: Rail

// The workers start in the test, after the `rail worker` it kills.
beforeAll(async () => {
  app = await startRail({ sandboxBankSecret: SECRET })
})
afterAll(() => app?.close())

it(
  'a worker killed between the payout and recording its answer: exactly one payout, and the right final state',
  { timeout: 90_000 },
  async () => {
    const { client } = await app.newPartner()
    await fundFloat(client, 100_000)
    const submitted = await client.post<{ id: string }>('/api/v1/rail/outbound', {
      clientReference: randomUUID(),
      amountKobo: 40_000,
      beneficiaryAccountNumber: nuban('058', '321321321'),
      beneficiaryBankCode: '058',
      beneficiaryAccountName: syntheticAccountName('058', nuban('058', '321321321')), // the holder's name, as the bank answers it
      currency: 'NGN',
    })
    const id = submitted.body.id

    // Rail will wait on the transfer's row when it comes to record the bank's answer.
    const rowLock = await app.db.pool.connect()
    await rowLock.query('BEGIN')
    await rowLock.query(`SELECT 1 FROM outbound_transfers WHERE id = $1 FOR UPDATE`, [id])
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: app.db.url,
      RAIL_MASTER_KEY: app.masterKey.toString('hex'),
      SANDBOX_BANK_URL: app.baseUrl,
      SANDBOX_BANK_SECRET: SECRET,
      LOG_LEVEL: 'warn',
      ...SMALL_PROCESS_ENV,
    }
    const child = spawn(process.execPath, [RAIL_BIN, 'worker'], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise((resolve) => child.on('exit', resolve))
    try {
      await waitFor(
        async () =>
          (
            await app.db.pool.query(
              `SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1 AND response_code = '09'`,
              [id],
            )
          ).rowCount === 1,
        30_000,
      )
      await waitFor(
        async () =>
          (
            await app.db.pool.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE outbound_transfers%'`,
            )
          ).rowCount! >= 1,
      )
      child.kill('SIGKILL')
      await exited
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await rowLock.query('ROLLBACK')
      rowLock.release()
    }
    expect((await app.db.pool.query(`SELECT state FROM outbound_transfers WHERE id = $1`, [id])).rows[0].state).toBe(
      'pending',
    )

    // After the restart: the sweep (every minute) finds it once the dead worker's lease has run out
    // and its step is past its grace; both brought forward here.
    await app.db.pool.query(
      `UPDATE bank_instructions SET lease_expires_at = now() - interval '1 second', next_attempt_at = now() - interval '31 seconds' WHERE id = $1`,
      [id],
    )
    await app.startWorkers({ concurrency: 2, payments: { sandbox: { firstDelayMs: 200, deadlineMs: 60_000 } } })
    try {
      await addJob(app.db.pool, SWEEP_TASK, {})
      await waitFor(
        async () =>
          (await app.db.pool.query(`SELECT state FROM outbound_transfers WHERE id = $1`, [id])).rows[0].state ===
          'submitted',
      )
      expect(
        (
          await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
            transferId: id,
            outcome: 'confirmed',
          })
        ).status,
      ).toBe(200)
      await waitFor(
        async () =>
          (await app.db.pool.query(`SELECT state FROM outbound_transfers WHERE id = $1`, [id])).rows[0].state ===
          'confirmed',
      )
    } finally {
      await app.stopWorkers()
    }
    const payouts = await app.db.pool.query(`SELECT response_code FROM sandbox_bank.transfers WHERE reference = $1`, [
      id,
    ])
    expect(payouts.rows).toEqual([{ response_code: '00' }])
    const float = (await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>('/api/v1/rail/float'))
      .body
    expect(float).toEqual(expect.objectContaining({ availableBalanceKobo: 60_000, bookedBalanceKobo: 60_000 }))
    await expectLedgerVerified(app.db.pool)
  },
)
