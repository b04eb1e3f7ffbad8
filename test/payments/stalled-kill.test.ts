// The fault campaign's stalled send with real processes and SIGKILL (docs/decisions/0008-payment-pipeline.md
// §Never received). A `rail worker` (A) commits a payout's send, passes its lease check and is
// frozen (SIGSTOP, as a paused VM) before its call. Two more `rail worker`s (B, C) each take the
// payout once the lease before theirs has lapsed, find no record at the bank, commit a resend and
// are killed with SIGKILL before calling. The test's own worker then finds no record either, and
// fails the payout only once the sandbox bank's request validity window of the latest send has
// passed. A is woken (SIGCONT) and makes its call, signed with attempt 1's time: the bank refuses
// it. Then A is killed too. The campaign's invariants hold: the bank moved nothing, Rail's final
// state is the bank's, the hold is voided once, one terminal callback, the ledger verifies.
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { workInstruction, WORK_TASK } from '../../src/money-out/pipeline/service.ts'
import { addJob } from '../../src/platform/jobs.ts'
import { BANK_SECRET } from '../collections/support.ts'
import type { TestApp } from '../support/app.ts'
import { expectExactlyOnce, instructionState, startPayment, type PaymentParty } from '../support/payments.ts'
import { killRail, startKillBench, type KillBench, type RailProcess } from '../support/rail-process.ts'
import { waitFor } from '../support/wait.ts'

/** The sandbox bank acts on a request this long after it was signed (short: the test waits it out). */
const REQUEST_VALIDITY_S = 3
/** A short lease, so that each frozen or killed worker's lapses in seconds. */
const LEASE_MS = 1_500
const SETTINGS = { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 }, leaseMs: LEASE_MS, providerClockSkewMs: 0 }
const CHILD_ENV = {
  RAIL_PAYMENT_LEASE_MS: String(LEASE_MS),
  SANDBOX_BANK_REQUEST_VALIDITY_S: String(REQUEST_VALIDITY_S),
}

let bench: KillBench
let app: TestApp
let party: PaymentParty
const started: RailProcess[] = []

beforeAll(async () => {
  bench = await startKillBench({
    sandboxBankSecret: BANK_SECRET,
    payments: SETTINGS,
    sandboxBankRequestValidityS: REQUEST_VALIDITY_S,
  })
  ;({ app, party } = bench)
})
afterAll(async () => {
  for (const rail of started) {
    rail.child.kill('SIGCONT')
    await killRail(rail)
  }
  await bench?.close()
})

function worker(failpoints: string): RailProcess {
  const rail = bench.rail('worker', { ...CHILD_ENV, RAIL_FAILPOINTS: failpoints })
  started.push(rail)
  return rail
}

/** The process's state letter in /proc (T: stopped). */
function processState(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0]!
}

const sendAttempts = async (id: string) =>
  (await app.db.pool.query<{ n: number }>(`SELECT send_attempts AS n FROM bank_instructions WHERE id = $1`, [id]))
    .rows[0]!.n

/** Gives the payout work jobs until `rail` (once the lease before it lapsed) commits send number `attempt`. */
async function resendCommitted(id: string, attempt: number, rail: RailProcess): Promise<void> {
  try {
    await waitFor(
      async () => {
        if ((await sendAttempts(id)) >= attempt) return true
        // One job waiting at a time (this file makes one payout): a worker takes it, finds the lease held (or takes the payout), and the next is added.
        const waiting = await app.db.pool.query(
          `SELECT 1 FROM graphile_worker.jobs WHERE task_identifier = $1 AND locked_at IS NULL AND attempts < max_attempts`,
          [WORK_TASK],
        )
        if (waiting.rowCount === 0) await addJob(app.db.pool, WORK_TASK, { id })
        return false
      },
      30_000,
      `send ${attempt} committed`,
    )
  } catch (error) {
    const instruction = (
      await app.db.pool.query(
        `SELECT state, send_attempts, lease_expires_at, now() AS db_now, response_code FROM bank_instructions WHERE id = $1`,
        [id],
      )
    ).rows[0]
    const calls = (
      await app.db.pool.query(
        `SELECT operation, http_status, outcome, error FROM provider_calls WHERE reference = $1 ORDER BY created_at`,
        [id],
      )
    ).rows
    throw new Error(
      `${String(error)}\ninstruction: ${JSON.stringify(instruction)}\ncalls: ${JSON.stringify(calls)}\nexited: ${rail.child.exitCode ?? rail.child.signalCode}\noutput: ${rail.output()}`,
    )
  }
}

it(
  'a payout whose sender stood still is failed only once no send can be acted on; the sender, woken, moves nothing',
  { timeout: 180_000 },
  async () => {
    const a = worker('payments.in_flight=stop')
    const id = await startPayment(app, party, 'outbound transfer', 130_000)
    await waitFor(
      async () => (await sendAttempts(id)) === 1 && processState(a.child.pid!) === 'T',
      60_000,
      'A frozen before its call',
    )

    const b = worker('payments.before_send=hang')
    await resendCommitted(id, 2, b)
    await killRail(b)
    const c = worker('payments.before_send=hang')
    await resendCommitted(id, 3, c)
    await killRail(c)

    // The test's own worker: no record, sends spent; failed once the latest send's window has passed.
    const payments = app.payments(SETTINGS)
    await waitFor(
      async () => {
        await workInstruction(payments, id)
        return (await instructionState(app, id)) === 'failed'
      },
      30_000,
      'failed as not received',
    )
    const failed = (
      await app.db.pool.query<{ failure_code: string; at: Date; signed: Date }>(
        `SELECT failure_code, terminal_at AS at, last_signed_at AS signed FROM bank_instructions WHERE id = $1`,
        [id],
      )
    ).rows[0]!
    expect(failed.failure_code).toBe('not_received')
    expect(failed.at.getTime() - failed.signed.getTime()).toBeGreaterThan(REQUEST_VALIDITY_S * 1000)

    // A wakes and makes its call, signed with attempt 1's time: the bank refuses it.
    const payoutCalls = async () =>
      (
        await app.db.pool.query<{ http_status: number | null }>(
          `SELECT http_status FROM provider_calls WHERE reference = $1 AND operation = 'payout' ORDER BY created_at`,
          [id],
        )
      ).rows
    a.child.kill('SIGCONT')
    await waitFor(async () => (await payoutCalls()).length === 1, 30_000, "A's call recorded")
    expect(await payoutCalls()).toEqual([{ http_status: 401 }])
    await killRail(a)

    expect((await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount).toBe(
      0,
    )
    await expectExactlyOnce(app, 'outbound transfer', id, 'failed')
  },
)
