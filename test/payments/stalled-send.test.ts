// A committed send that stalls never pays what Rail called failed (the fault campaign's F1). Worker
// A commits attempt 1 and stands still before its call; its lease lapses; B and C ask the bank (no
// record), commit resends 2 and 3 and die before calling; the bank still has no record. Rail fails
// the payment as never received only once no send of it can still be acted on: each send is signed
// with the time its attempt was committed, and the sandbox bank refuses a request signed longer
// ago than its validity window. Then A wakes. Whatever Rail reported, the bank agrees.
//
// Driven by hand (no graphile-worker): each worker is one workInstruction, the app's clock moves
// past the window instead of waiting it out (the bank checks signatures by the same clock).
import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { TIMESTAMP_TOLERANCE_S } from '../../src/client/signing.ts'
import { PROVIDER_CLOCK_SKEW_MS_DEFAULT } from '../../src/money-out/pipeline/decisions.ts'
import { workInstruction, type PaymentsDeps } from '../../src/money-out/pipeline/service.ts'
import { clearFailpoint, setFailpoint } from '../../src/platform/failpoints.ts'
import { BANK_SECRET } from '../collections/support.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { testClock, type TestClock } from '../support/clock.ts'
import {
  expectExactlyOnce,
  instructionState,
  paymentParty,
  startPayment,
  type PaymentKind,
} from '../support/payments.ts'
import { waitFor } from '../support/wait.ts'

/** A short lease, so that A's lapses while it stands still; requeries at once; a deadline far off. */
const SETTINGS = { sandbox: { firstDelayMs: 1, deadlineMs: 3_600_000 }, leaseMs: 1_000 }
const PAST_THE_WINDOW_MS = TIMESTAMP_TOLERANCE_S * 1000 + PROVIDER_CLOCK_SKEW_MS_DEFAULT + 1_000
const FAILPOINTS = ['payments.before_send', 'payments.in_flight'] as const
type Stall = (typeof FAILPOINTS)[number]

let app: TestApp | undefined
afterEach(async () => {
  for (const name of FAILPOINTS) clearFailpoint(name)
  await app?.close()
  app = undefined
})

/** Starts the payment; worker A takes it and stands still at `stall` until `wake` is called. */
async function stalledPayment(clock: TestClock, kind: PaymentKind, stall: Stall) {
  app = await startTestApp({ sandboxBankSecret: BANK_SECRET, clock, payments: SETTINGS })
  const party = await paymentParty(app, 'http://127.0.0.1:9/unused')
  let wake = () => {}
  const woken = new Promise<void>((resolve) => (wake = resolve))
  const target = { id: '' }
  // A stands still at `stall`; every other worker that reaches a send dies before its call.
  const hits: string[] = []
  // The first payment to reach a send after this point is the one (a wallet debit's id is known only once the API made it).
  setFailpoint('payments.before_send', async ({ id }) => {
    if (target.id === '') target.id = id
    if (id !== target.id) return
    hits.push('before_send')
    if (hits.length > 1) throw new Error('the worker died before its call')
    if (stall === 'payments.before_send') await woken
  })
  setFailpoint('payments.in_flight', async ({ id }) => {
    if (id === target.id && stall === 'payments.in_flight' && hits.length === 1) await woken
  })
  let workerA: Promise<unknown>
  if (kind === 'wallet debit') {
    // The API's own process is worker A: it sends a wallet debit at once, born `sending`.
    const reference = randomUUID()
    workerA = party.client.post('/wallet/debit', {
      walletId: party.walletId,
      reference,
      amountKobo: 130_000,
      currency: 'NGN',
    })
  } else {
    target.id = await startPayment(app, party, kind, 130_000)
    workerA = workInstruction(app.payments(SETTINGS), target.id)
  }
  const answered = workerA.then((answer) => ({ answer }))
  await waitFor(
    async () => {
      const early = await Promise.race([answered, Promise.resolve(undefined)])
      if (early) throw new Error(`worker A ended before its call: ${JSON.stringify(early.answer)}`)
      return hits.length === 1
    },
    10_000,
    'worker A at its call',
  )
  return { id: target.id, hits, wake, workerA }
}

/** One worker's turn: waits until it can take the instruction (A's lease lapsed), then lets it die or finish. */
async function turn(payments: PaymentsDeps, id: string, hits: string[]): Promise<void> {
  const before = hits.length
  await waitFor(
    async () => {
      const worked = await workInstruction(payments, id).then(
        (instruction) => instruction !== undefined,
        () => true, // died before its call, the send committed
      )
      return worked || hits.length > before
    },
    10_000,
    'a worker to take the payment',
  )
}

async function bankRecord(id: string) {
  return (
    await app!.db.pool.query<{ response_code: string }>(
      `SELECT response_code FROM sandbox_bank.transfers WHERE reference = $1`,
      [id],
    )
  ).rows
}

describe.each(['outbound transfer', 'wallet debit'] as const)('%s', (kind) => {
  it.each(FAILPOINTS)(
    'a worker standing still at %s never pays what Rail failed as not received',
    { timeout: 90_000 },
    async (stall) => {
      const clock = testClock()
      const { id, hits, wake, workerA } = await stalledPayment(clock, kind, stall)
      const payments = app!.payments(SETTINGS)
      await turn(payments, id, hits) // B: no record, commits attempt 2, dies
      await turn(payments, id, hits) // C: no record, commits attempt 3, dies
      expect(hits).toHaveLength(3)
      expect(
        (await app!.db.pool.query(`SELECT send_attempts FROM bank_instructions WHERE id = $1`, [id])).rows[0]
          .send_attempts,
      ).toBe(3)

      // Sends spent and still no record — but A's attempt (and B's, C's) may yet reach the bank: not failed.
      await turn(payments, id, hits)
      expect(await instructionState(app!, id)).toBe('sending')
      expect(
        (await app!.db.pool.query(`SELECT response_code FROM bank_instructions WHERE id = $1`, [id])).rows[0]
          .response_code,
      ).toBe('25')

      // Once the window of the latest send has passed, a requery that finds no record fails it.
      clock.advance(PAST_THE_WINDOW_MS)
      await turn(payments, id, hits)
      expect(await instructionState(app!, id)).toBe('failed')
      expect(
        (await app!.db.pool.query(`SELECT failure_code FROM bank_instructions WHERE id = $1`, [id])).rows[0]
          .failure_code,
      ).toBe('not_received')

      // A wakes: it either sees its lease gone and does not call, or its call (signed with attempt
      // 1's time) is refused by the bank. Nothing is paid, and Rail's answer stands.
      wake()
      await workerA
      expect(await bankRecord(id)).toEqual([])
      await expectExactlyOnce(app!, kind, id, 'failed')
      const calls = await app!.db.pool.query<{ http_status: number | null }>(
        `SELECT http_status FROM provider_calls WHERE reference = $1 AND operation IN ('debit', 'payout') ORDER BY created_at`,
        [id],
      )
      // B and C died before calling; A called only when it got past its lease check (then it was refused).
      expect(calls.rows.map((call) => call.http_status)).toEqual(stall === 'payments.in_flight' ? [401] : [])
    },
  )
})
