// The process working a payment is killed with SIGKILL at a boundary — with its send committed and
// nothing sent, after the bank accepted and before Rail recorded it, or with the bank's answer
// written and the ledger not yet (one transaction, left open) — for each kind of payment:
// a real `rail api` (wallet moves are sent by the request) or `rail worker` (payouts), stopped
// there by a failpoint (RAIL_FAILPOINTS). After it, a new worker takes the payment once the dead
// one's lease has run out, asks the bank first, and it ends exactly once. Then several worker
// processes work the same payments at once: still one payment at the bank per reference.
import { spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Runner } from 'graphile-worker'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RailClient } from '../../src/client/index.ts'
import { SWEEP_TASK } from '../../src/payments/service.ts'
import { findFreePort } from '../../src/platform/embedded-db.ts'
import { addJob } from '../../src/platform/jobs.ts'
import { BANK_SECRET } from '../collections/support.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { PROJECT_ROOT, RAIL_BIN } from '../support/cli.ts'
import { expectExactlyOnce, instructionState, paymentParty, PAYMENT_KINDS, settle, startPayment, startPaymentWorkers, type PaymentKind, type PaymentParty } from '../support/payments.ts'
import { startReceiver, type Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'

const SETTINGS = { sandbox: { firstDelayMs: 200, deadlineMs: 60_000 }, leaseMs: 5_000 }
let app: TestApp
let hook: Receiver
let party: PaymentParty
let dataDir: string

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: BANK_SECRET, payments: SETTINGS })
  hook = await startReceiver()
  party = await paymentParty(app, hook.url)
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'rail-kill-'))
  chmodSync(dataDir, 0o755)
})
afterAll(async () => {
  await hook?.close()
  await app?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/** A real `rail api` or `rail worker` on the test database, reaching the test app's sandbox bank. */
function rail(role: 'api' | 'worker', env: Record<string, string> = {}): { child: ChildProcess; exited: Promise<unknown> } {
  const child = spawn(process.execPath, [RAIL_BIN, role], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: app.db.url,
      RAIL_MASTER_KEY: app.masterKey.toString('hex'),
      SANDBOX_BANK_URL: app.baseUrl,
      SANDBOX_BANK_SECRET: BANK_SECRET,
      RAIL_DATA_DIR: dataDir,
      RAIL_REQUERY_FIRST_DELAY_MS: '200',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  })
  return { child, exited: new Promise((resolve) => child.on('exit', resolve)) }
}

async function kill(process: { child: ChildProcess; exited: Promise<unknown> }): Promise<void> {
  if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill('SIGKILL')
  await process.exited
}

/** Starts the payment in a process that stops at `failpoint`; answers its id once it stands there. */
async function stoppedAt(kind: PaymentKind, failpoint: string): Promise<{ id: string; process: ReturnType<typeof rail> }> {
  const viaApi = kind === 'wallet debit' || kind === 'wallet external send'
  const port = await findFreePort()
  const process = rail(viaApi ? 'api' : 'worker', { RAIL_FAILPOINTS: `${failpoint}=hang`, PORT: String(port) })
  let id: string
  if (viaApi) {
    const childUrl = `http://127.0.0.1:${port}`
    await waitFor(async () => (await fetch(`${childUrl}/healthz`).catch(() => undefined))?.ok === true, 30_000, 'rail api listening')
    const client = new RailClient(childUrl, party.credentials)
    // The request never answers: its process stops at the failpoint, and is killed there.
    const before = await app.db.pool.query<{ id: string }>(`SELECT id FROM wallet_moves WHERE partner_id = $1`, [party.partnerId])
    void startPayment(app, { ...party, client }, kind, 130_000).catch(() => undefined)
    let found: string | undefined
    await waitFor(async () => {
      const rows = await app.db.pool.query<{ id: string }>(`SELECT id FROM wallet_moves WHERE partner_id = $1`, [party.partnerId])
      found = rows.rows.map((row) => row.id).find((candidate) => !before.rows.some((row) => row.id === candidate))
      return found !== undefined
    }, 30_000, 'the move claimed')
    id = found!
  } else {
    id = await startPayment(app, party, kind, 130_000)
  }
  // Standing at the failpoint: the send committed (and, after the send, the bank has it).
  await waitFor(async () => (await instructionState(app, id)) === 'sending', 30_000, 'sending')
  if (failpoint === 'payments.after_send') {
    await waitFor(async () => (await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount === 1, 30_000, 'the bank has it')
  } else if (failpoint === 'payments.before_owner') {
    // The bank's answer written, in a transaction left open before the owner's ledger write.
    await waitFor(async () => (await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount === 1, 30_000, 'the bank has it')
    await waitFor(
      async () => (await app.db.pool.query(`SELECT 1 FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE '%UPDATE bank_instructions%'`)).rowCount! >= 1,
      30_000,
      'the answer written, uncommitted',
    )
  } else {
    await new Promise((resolve) => setTimeout(resolve, 300)) // time to send, were it not stopped
    expect((await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount).toBe(0)
  }
  return { id, process }
}

function workers(): Promise<Runner> {
  return startPaymentWorkers(app, BANK_SECRET, SETTINGS, { concurrency: 4 })
}

describe.each(PAYMENT_KINDS)('%s', (kind) => {
  it.each(['payments.before_send', 'payments.after_send', 'payments.before_owner'])('its process killed at %s: it ends exactly once', { timeout: 120_000 }, async (failpoint) => {
    const { id, process } = await stoppedAt(kind, failpoint)
    await kill(process)
    expect(await instructionState(app, id)).toBe('sending')
    // The dead process's lease runs out and the sweep (every minute) finds it overdue: brought forward here.
    await app.db.pool.query(`UPDATE bank_instructions SET lease_expires_at = now() - interval '1 second', next_attempt_at = now() - interval '31 seconds' WHERE id = $1`, [id])
    const runner = await workers()
    try {
      await addJob(app.db.pool, SWEEP_TASK, {})
      expect(await settle(app, party, kind, id)).toBe('succeeded')
      await expectExactlyOnce(app, kind, id, 'succeeded')
    } finally {
      await runner.stop()
    }
  })
})

describe('several worker processes', () => {
  it('working the same payments at once: one payment at the bank per reference', { timeout: 180_000 }, async () => {
    const children = [rail('worker'), rail('worker')]
    const runner = await workers()
    try {
      // Plain amounts, first submissions lost (9097) and answers lost (9098), as payouts and refunds.
      const amounts = Array.from({ length: 18 }, (_unused, index) => [150_000, 159_097, 159_098][index % 3]!)
      const kinds: PaymentKind[] = ['outbound transfer', 'outbound transfer', 'triage refund']
      const started = await Promise.all(amounts.map(async (amountKobo, index) => ({ kind: kinds[index % 3]!, id: await startPayment(app, party, kinds[index % 3]!, amountKobo) })))
      // Every instruction gets extra jobs: all processes race for each.
      await app.db.pool.query(`SELECT graphile_worker.add_job('payment_work', json_build_object('id', id)) FROM unnest($1::uuid[]) AS id, generate_series(1, 3)`, [started.map((payment) => payment.id)])
      for (const payment of started) expect(await settle(app, party, payment.kind, payment.id, 90_000)).toBe('succeeded')
      for (const payment of started) await expectExactlyOnce(app, payment.kind, payment.id, 'succeeded')
    } finally {
      await runner.stop()
      await Promise.all(children.map(kill))
    }
  })
})
