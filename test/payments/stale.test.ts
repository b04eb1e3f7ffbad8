// A stale worker's answer changes nothing. A worker holds a payment and stops with the bank's
// answer in hand ("no record": send it again); its lease runs out; a second worker takes the
// payment, sends it again itself and finishes it; then the first wakes and acts on its answer — a
// resend of a payment that succeeded. Nothing changes (the instruction, its owner, the ledger, the
// callbacks, the bank), and the pipeline's log says the answer was dropped. Both workers are
// driven by hand over real HTTP to the sandbox bank and real PostgreSQL; no background worker runs.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { workInstruction, type PaymentsDeps } from '../../src/money-out/pipeline/service.ts'
import { clearFailpoint, setFailpoint } from '../../src/platform/failpoints.ts'
import { BANK_SECRET } from '../collections/support.ts'
import {
  expectExactlyOnce,
  instructionState,
  paymentParty,
  startPayment,
  type PaymentKind,
  type PaymentParty,
} from '../support/payments.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'

const SETTINGS = { sandbox: { firstDelayMs: 200, deadlineMs: 60_000 }, leaseMs: 5_000 }
/** The stale worker's lease: short, so that it runs out while the worker stands still. */
const STALE_LEASE_MS = 300
/** The sandbox bank drops the first submission of a reference (requery answers 25 until it is sent again). */
const FIRST_SUBMISSION_LOST_KOBO = 149_097

let app: Rail
let hook: Receiver
let party: PaymentParty

// No workers: the test drives both by hand.
beforeAll(async () => {
  app = await startRail({ sandboxBankSecret: BANK_SECRET, payments: SETTINGS, receiver: true })
  hook = app.receiver
  party = await paymentParty(app, hook.url)
})
afterEach(() => clearFailpoint('payments.after_requery'))
afterAll(() => app?.close())

/** Everything a stale answer could change: the instruction, its owner, the ledger, the callbacks, the bank. */
async function snapshot(id: string): Promise<unknown> {
  const one = async (sql: string) => (await app.db.pool.query(sql, [id])).rows
  return {
    instruction: await one(`SELECT row_to_json(b)::text AS row FROM bank_instructions b WHERE id = $1`),
    move: await one(`SELECT row_to_json(m)::text AS row FROM wallet_moves m WHERE id = $1`),
    transfer: await one(`SELECT row_to_json(o)::text AS row FROM outbound_transfers o WHERE id = $1`),
    ledger: await one(
      `SELECT id, phase, amount_kobo FROM ledger_transfers WHERE source_id = $1::text ORDER BY sequence`,
    ),
    events: await one(`SELECT id, type FROM events WHERE object_id = $1::text ORDER BY id`),
    bank: await one(`SELECT session_id, response_code FROM sandbox_bank.transfers WHERE reference = $1::text`),
    calls: await one(`SELECT count(*)::int AS n FROM provider_calls WHERE reference = $1::text`),
  }
}

/** The pipeline with its log kept, for one worker. */
function worker(leaseMs: number): { deps: PaymentsDeps; logged: [string, string][] } {
  const logged: [string, string][] = []
  return {
    deps: { ...app.payments({ ...SETTINGS, leaseMs }), log: (level, message) => logged.push([level, message]) },
    logged,
  }
}

/** The second worker works the payment until it ends; a payout the bank has in progress is settled confirmed. */
async function finish(deps: PaymentsDeps, kind: PaymentKind, id: string): Promise<void> {
  let registered = false
  await waitFor(
    async () => {
      await workInstruction(deps, id)
      const state = await instructionState(app, id)
      if (state === 'sent' && kind === 'outbound transfer' && !registered) {
        registered =
          (
            await party.client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
              transferId: id,
              outcome: 'confirmed',
            })
          ).status === 200
      }
      return state === 'succeeded'
    },
    30_000,
    `payment ${id} finished by the second worker`,
  )
}

describe.each<PaymentKind>(['wallet debit', 'wallet external send', 'outbound transfer'])('%s', (kind) => {
  it(
    'a stale worker’s contradicting answer, after another finished the payment, changes nothing and is logged',
    { timeout: 60_000 },
    async () => {
      const id = await startPayment(app, party, kind, FIRST_SUBMISSION_LOST_KOBO)
      // A payout is sent by a worker (a wallet move by its request): its first submission is lost.
      if (kind === 'outbound transfer') await workInstruction(worker(SETTINGS.leaseMs).deps, id)
      expect(await instructionState(app, id)).toBe('sending')
      expect(
        (await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount,
      ).toBe(0)

      // The first worker asks the bank ("no record") and stands still with that answer in hand.
      let reached!: () => void
      let wake!: () => void
      const standing = new Promise<void>((resolve) => (reached = resolve))
      const woken = new Promise<void>((resolve) => (wake = resolve))
      let hits = 0
      setFailpoint('payments.after_requery', async (context) => {
        if (context.id !== id || ++hits > 1) return
        reached()
        await woken
      })
      const first = worker(STALE_LEASE_MS)
      const stale = workInstruction(first.deps, id)
      await standing
      await waitFor(
        async () =>
          (await app.db.pool.query(`SELECT 1 FROM bank_instructions WHERE id = $1 AND lease_expires_at < now()`, [id]))
            .rowCount === 1,
        10_000,
        'the first lease ran out',
      )

      // The second worker takes it, finds no record, sends it again itself and finishes it.
      await finish(worker(SETTINGS.leaseMs).deps, kind, id)
      await expectExactlyOnce(app, kind, id, 'succeeded')
      const finished = await snapshot(id)

      // The first wakes and acts on its answer: send again. Refused; nothing changes; it is logged.
      wake()
      expect(await stale).toBeUndefined()
      expect(await snapshot(id)).toEqual(finished)
      await expectExactlyOnce(app, kind, id, 'succeeded')
      expect(first.logged).toContainEqual(['warn', `payment ${id}: sending not applied; it is succeeded`])
    },
  )
})
