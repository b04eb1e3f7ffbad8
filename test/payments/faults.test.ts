// The fault-injection matrix of the payment pipeline: each kind of payment (wallet debit, wallet
// external send, outbound transfer, triage refund) crosses each boundary with a fault — before the
// send; after the bank accepted, before Rail recorded it; after recording, before the ledger write;
// a lost answer; a 5xx; a timeout; "no record" (25); a late duplicate answer — over real HTTP to the
// sandbox bank and real PostgreSQL, with real workers. Each ends with exactly one payment at the
// bank per reference, one final state, one terminal callback, its hold posted or voided once, and
// a ledger that verifies. (The worker killed with SIGKILL at a boundary: kill.test.ts.)
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { requeryNow, workInstruction } from '../../src/money-out/pipeline/service.ts'
import * as paymentsRepo from '../../src/money-out/pipeline/repo.ts'
import { clearFailpoint } from '../../src/platform/failpoints.ts'
import { writeFaults } from '../../src/sandbox/faults.ts'
import { BANK_SECRET } from '../collections/support.ts'
import {
  expectExactlyOnce,
  failNext,
  instructionState,
  onceAt,
  paymentParty,
  PAYMENT_KINDS,
  PAYMENT_WORKERS,
  settle,
  startPayment,
  type PaymentParty,
} from '../support/payments.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'

/** The sandbox bank acts on a request this long after it was signed: short, so that "never received" is seen in seconds. */
const REQUEST_VALIDITY_S = 3
/** The bank shares the app's clock: no margin for skew. */
const SETTINGS = { sandbox: { firstDelayMs: 200, deadlineMs: 60_000 }, leaseMs: 5_000, providerClockSkewMs: 0 }
const PROVIDER_TIMEOUT_MS = 1_000
const NO_FAULTS = { noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 }
/** Whole naira: no magic amount of the sandbox bank. */
const PLAIN_KOBO = 120_000

let app: Rail
let hook: Receiver
let party: PaymentParty

// The workers take the app's provider timeout, request validity and payment settings.
beforeAll(async () => {
  app = await startRail({
    sandboxBankSecret: BANK_SECRET,
    providerTimeoutMs: PROVIDER_TIMEOUT_MS,
    payments: SETTINGS,
    sandboxBankRequestValidityS: REQUEST_VALIDITY_S,
    workers: PAYMENT_WORKERS,
    receiver: true,
  })
  hook = app.receiver
  party = await paymentParty(app, hook.url)
})
afterEach(async () => {
  for (const name of ['payments.before_send', 'payments.after_send', 'payments.before_owner']) clearFailpoint(name)
  await writeFaults(app.db.pool, NO_FAULTS)
})
afterAll(() => app?.close())

/** One boundary: how to cross it with a fault, the amount that goes with it, and how the payment ends. */
interface Boundary {
  arm?: () => void
  amountKobo: number
  outcome: 'succeeded' | 'failed'
  /** Checks made once the payment ended. */
  after?: (id: string) => Promise<void>
}

const BOUNDARIES: Record<string, Boundary> = {
  'before the send (the process fails with the send committed, nothing sent)': {
    arm: () => failNext('payments.before_send'),
    amountKobo: PLAIN_KOBO,
    outcome: 'succeeded',
    // Asked first, the bank had no record: sent again under the same reference (the first never left).
    after: async (id) => {
      expect(await sends(id)).toBe(1)
      expect((await paymentsRepo.selectInstruction(app.db.pool, id))!.sendAttempts).toBe(2)
    },
  },
  'after the bank accepted, before Rail recorded it': {
    arm: () => failNext('payments.after_send'),
    amountKobo: PLAIN_KOBO,
    outcome: 'succeeded',
    // Asked first, the bank had it: never sent again, and no check before the send repeated.
    after: async (id) => {
      expect(await sends(id)).toBe(1)
      expect(await calls(id, 'name_enquiry')).toBeLessThanOrEqual(1)
    },
  },
  'after recording, before the ledger write (the whole step rolls back)': {
    // Twice: the shared write and its one-by-one retry both fail, so the step is lost whole.
    arm: () => failNext('payments.before_owner', 2),
    amountKobo: PLAIN_KOBO,
    outcome: 'succeeded',
  },
  'a lost answer (the bank did it; its answer never came)': {
    amountKobo: 119_098, // the sandbox bank's magic amount: processed, answer lost
    outcome: 'succeeded',
    after: async (id) => expect(await sends(id)).toBe(1),
  },
  'a 5xx on every send (nothing happens at the bank)': {
    amountKobo: 119_096, // the sandbox bank's magic amount: 500 before anything is done
    outcome: 'failed',
    // Sent the bounded number of times, then — once the last send's validity window had passed
    // before a requery that found no record — failed as never received: nothing was paid.
    after: async (id) => {
      expect(await sends(id)).toBe(3)
      const instruction = (await paymentsRepo.selectInstruction(app.db.pool, id))!
      expect(instruction.failureCode).toBe('not_received')
      expect(instruction.terminalAt!.getTime() - instruction.lastSignedAt!.getTime()).toBeGreaterThan(
        REQUEST_VALIDITY_S * 1000,
      )
    },
  },
  'a timeout (the bank is slower than Rail waits, and does it late)': {
    arm: () => {
      onceAt('payments.before_send', () =>
        writeFaults(app.db.pool, { ...NO_FAULTS, delayMs: PROVIDER_TIMEOUT_MS + 500 }).then(() => undefined),
      )
      onceAt('payments.after_send', () => writeFaults(app.db.pool, NO_FAULTS).then(() => undefined))
    },
    amountKobo: PLAIN_KOBO,
    outcome: 'succeeded',
  },
  '"no record" (25): the bank dropped the first submission': {
    amountKobo: 119_097, // the sandbox bank's magic amount: the first submission of a reference is dropped
    outcome: 'succeeded',
    after: async (id) => expect(await sends(id)).toBe(2),
  },
  'a late duplicate answer after the final state': {
    amountKobo: PLAIN_KOBO,
    outcome: 'succeeded',
    after: async (id) => {
      const payments = app.payments(SETTINGS)
      // Requeries and jobs after the end, at once; and a write of the opposite answer by a stale worker.
      await Promise.all([
        requeryNow(payments, id),
        requeryNow(payments, id),
        workInstruction(payments, id),
        workInstruction(payments, id),
      ])
      expect(
        await paymentsRepo.writeStep(
          app.db.pool,
          id,
          '00000000-0000-4000-8000-000000000000',
          'failed',
          { failureCode: 'provider_declined' },
          true,
          new Date(),
        ),
      ).toBeUndefined()
      expect(await instructionState(app, id)).toBe('succeeded')
    },
  },
}

/** Sends of this reference Rail made (every call is recorded). */
async function sends(id: string): Promise<number> {
  const sent = await app.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM provider_calls WHERE reference = $1 AND operation IN ('credit', 'debit', 'wallet_transfer', 'send_to_bank', 'payout')`,
    [id],
  )
  return sent.rows[0]!.n
}

async function calls(id: string, operation: string): Promise<number> {
  const payee = await app.db.pool.query<{ reference: string }>(
    `SELECT destination_bank_code || ':' || destination_account_number AS reference FROM bank_instructions WHERE id = $1`,
    [id],
  )
  const made = await app.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM provider_calls WHERE operation = $1 AND reference = $2 AND created_at >= (SELECT created_at FROM bank_instructions WHERE id = $3)`,
    [operation, payee.rows[0]!.reference, id],
  )
  return made.rows[0]!.n
}

describe.each(PAYMENT_KINDS)('%s', (kind) => {
  it.each(Object.keys(BOUNDARIES))('fault: %s', { timeout: 90_000 }, async (name) => {
    const boundary = BOUNDARIES[name]!
    boundary.arm?.()
    const id = await startPayment(app, party, kind, boundary.amountKobo)
    expect(await settle(app, party, kind, id)).toBe(boundary.outcome)
    await expectExactlyOnce(app, kind, id, boundary.outcome)
    await boundary.after?.(id)
  })
})
