// A payout the provider reversed after it was confirmed (docs/decisions/0016-payout-reversals.md),
// end to end on the sandbox: real workers, the sandbox bank over HTTP, a real callback receiver.
// The sandbox bank answers a requery with SANDBOX_REVERSED_CODE for a payout this test marks as
// reversed on its books (SQL); the announcement (a provider's webhook) is requestReversalCheck, as
// the webhook route calls it. Only the provider's answer records a reversal, once.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { checkReversal } from '../../src/money-out/pipeline/reversals.ts'
import { requestReversalCheck } from '../../src/money-out/pipeline/service.ts'
import { SANDBOX_REVERSED_CODE } from '../../src/banking/providers/sandbox-adapter.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { BANK_SECRET } from '../collections/support.ts'
import { fundFloat } from '../support/float.ts'
import { paymentParty, settle, startPayment } from '../support/payments.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

// The bank's secret the support's notices are signed with (a refund starts from an unmatched credit's notice).
const SECRET = BANK_SECRET
const SCHEDULE = { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 } }
const FLOAT_KOBO = 1_000_000
const BENEFICIARY = {
  beneficiaryAccountNumber: nuban('058', '123456789'),
  beneficiaryBankCode: '058',
  beneficiaryAccountName: syntheticAccountName('058', nuban('058', '123456789')),
  currency: 'NGN',
}

let app: Rail
let hook: Receiver

beforeAll(async () => {
  app = await startRail({
    sandboxBankSecret: SECRET,
    payments: SCHEDULE,
    workers: { events: { retryDelaysMs: [200] } },
    receiver: true,
  })
  hook = app.receiver
})
afterAll(() => app?.close())

type OutboundJson = Schemas['OutboundTransfer']

const read = async (client: RailClient, id: string) =>
  (await client.get<OutboundJson>(`/api/v1/rail/outbound/${id}`)).body
const float = async (client: RailClient) =>
  (await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>('/api/v1/rail/float')).body

/** A partner's payout of `amountKobo`, confirmed through the settlement simulator and the real requery. */
async function confirmedPayout(amountKobo: number): Promise<{ client: RailClient; partnerId: string; id: string }> {
  const { client, credentials } = await app.newPartner({ callbackUrl: hook.url })
  expect((await fundFloat(client, FLOAT_KOBO)).status).toBe(200)
  const submitted = await client.post<{ id: string }>('/api/v1/rail/outbound', {
    clientReference: randomUUID(),
    amountKobo,
    ...BENEFICIARY,
  })
  expect(submitted.status).toBe(202)
  const id = submitted.body.id
  let registered = false
  await waitFor(
    async () => {
      const transfer = await read(client, id)
      if (!registered && transfer.state === 'submitted') {
        registered =
          (
            await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
              transferId: id,
              outcome: 'confirmed',
            })
          ).status === 200
      }
      return transfer.state === 'confirmed'
    },
    30_000,
    `payout ${id} confirmed`,
  )
  return { client, partnerId: credentials.partnerId, id }
}

/** The sandbox bank's books say the payout was reversed: its requery answers so from now on. */
async function reverseAtBank(id: string): Promise<void> {
  const { rowCount } = await app.db.pool.query(
    `UPDATE sandbox_bank.transfers SET response_code = $2 WHERE reference = $1 AND kind = 'payout' AND response_code = '00'`,
    [id, SANDBOX_REVERSED_CODE],
  )
  expect(rowCount).toBe(1)
}

async function setBankErrors(errorRate: number): Promise<void> {
  await app.db.pool.query(`UPDATE sandbox_bank.faults SET error_rate = $1 WHERE id = 1`, [errorRate])
}

/** What the reversal left behind: the instruction's mark, the ledger transfers and events behind the transfer. */
async function recorded(id: string) {
  const { pool } = app.db
  const mark = await pool.query<{ state: string; reversed_at: Date | null; reversal_response_code: string | null }>(
    `SELECT state, reversed_at, reversal_response_code FROM bank_instructions WHERE id = $1`,
    [id],
  )
  const ledger = await pool.query<{ code: string; amount_kobo: string }>(
    `SELECT code, amount_kobo::text FROM ledger_transfers WHERE source_type = 'outbound_transfer' AND source_id = $1 AND code = 'outbound_transfer_reversal'`,
    [id],
  )
  const events = await pool.query<{ id: string; delivery_status: string }>(
    `SELECT id, delivery_status FROM events WHERE object_id = $1 AND type = 'transfer.reversed'`,
    [id],
  )
  return { instruction: mark.rows[0]!, reversals: ledger.rows, events: events.rows }
}

async function reversalJobs(id: string) {
  const { rows } = await app.db.pool.query<{ attempts: number; last_error: string | null; locked_at: Date | null }>(
    `SELECT attempts, last_error, locked_at FROM graphile_worker.jobs WHERE key = $1`,
    [`payment-reversal:${id}`],
  )
  return rows
}

it(
  'a reversal the provider confirms gives the amount back to the float, once, and tells the partner',
  { timeout: 120_000 },
  async () => {
    const { client, id } = await confirmedPayout(250_000)
    expect(await float(client)).toMatchObject({
      availableBalanceKobo: FLOAT_KOBO - 250_000,
      bookedBalanceKobo: FLOAT_KOBO - 250_000,
    })

    // The webhook alone decides nothing: the provider still says paid, so the check changes nothing.
    expect(await checkReversal(app.payments(), id)).toBe('not_reversed')
    expect((await read(client, id)).state).toBe('confirmed')

    await reverseAtBank(id)
    // Announced twice (a provider resends its webhook): the two requests collapse into one job.
    await requestReversalCheck(app.db.pool, id)
    await requestReversalCheck(app.db.pool, id)
    await waitFor(async () => (await read(client, id)).state === 'reversed', 30_000, `payout ${id} reversed`)

    const transfer = await read(client, id)
    expect(transfer.terminalAt).not.toBeNull()
    expect(transfer.providerResponseCode).toBe('05')
    expect(transfer.failureReason?.code).toBe('payout_reversed')
    expect(await float(client)).toMatchObject({ availableBalanceKobo: FLOAT_KOBO, bookedBalanceKobo: FLOAT_KOBO })
    const timeline = await app.db.pool.query<{ state: string }>(
      `SELECT state FROM outbound_transfer_states WHERE transfer_id = $1 ORDER BY seq`,
      [id],
    )
    expect(timeline.rows.map((row) => row.state)).toEqual(['pending', 'submitted', 'confirmed', 'reversed'])

    // Delivered to the partner, as transfer.confirmed was.
    await waitFor(
      async () => (await recorded(id)).events.every((event) => event.delivery_status === 'delivered'),
      20_000,
      'transfer.reversed delivered',
    )
    const delivered = hook.requests.filter(
      (request) => request.headers['x-rail-event-type'] === 'transfer.reversed' && request.rawBody.includes(id),
    )
    expect(delivered.length).toBeGreaterThan(0)
    expect(JSON.parse(delivered[0]!.rawBody)).toMatchObject({
      event: 'transfer.reversed',
      data: { id, state: 'reversed' },
    })

    // Asked again (another webhook, a check run by hand): nothing changes a second time.
    await requestReversalCheck(app.db.pool, id)
    await waitFor(async () => (await reversalJobs(id)).length === 0, 20_000, 'the third check done')
    expect(await checkReversal(app.payments(), id)).toBe('already_reversed')
    const after = await recorded(id)
    expect(after.instruction).toMatchObject({ state: 'succeeded', reversal_response_code: '05' })
    expect(after.instruction.reversed_at).not.toBeNull()
    expect(after.reversals).toEqual([{ code: 'outbound_transfer_reversal', amount_kobo: '250000' }])
    expect(after.events).toHaveLength(1)
    expect(await float(client)).toMatchObject({ availableBalanceKobo: FLOAT_KOBO, bookedBalanceKobo: FLOAT_KOBO })
    await expectLedgerVerified(app.db.pool)
  },
)

it(
  'a check with no readable answer changes nothing, and its job is tried again until the provider answers',
  { timeout: 120_000 },
  async () => {
    const { client, id } = await confirmedPayout(100_000)
    await reverseAtBank(id)
    await setBankErrors(1)
    try {
      // Every answer is a 500: no reversal is decided from it, by hand or by the job.
      await expect(checkReversal(app.payments(), id)).rejects.toThrow(/no readable answer/)
      await requestReversalCheck(app.db.pool, id)
      await waitFor(
        async () =>
          (await reversalJobs(id)).some(
            (job) => job.attempts >= 1 && job.last_error !== null && job.locked_at === null,
          ),
        20_000,
        'the check failed once',
      )
      const untouched = await recorded(id)
      expect(untouched.instruction.reversed_at).toBeNull()
      expect(untouched.reversals).toEqual([])
      expect(untouched.events).toEqual([])
      expect((await read(client, id)).state).toBe('confirmed')
      expect(await float(client)).toMatchObject({ availableBalanceKobo: FLOAT_KOBO - 100_000 })
    } finally {
      await setBankErrors(0)
    }
    // The bank answers again: the retried job (brought forward from its backoff) records the reversal.
    await app.db.pool.query(
      `SELECT graphile_worker.reschedule_jobs(ARRAY(SELECT id FROM graphile_worker.jobs WHERE key = $1), run_at => now())`,
      [`payment-reversal:${id}`],
    )
    await waitFor(
      async () => (await read(client, id)).state === 'reversed',
      30_000,
      `payout ${id} reversed after the retry`,
    )
    expect(await float(client)).toMatchObject({ availableBalanceKobo: FLOAT_KOBO, bookedBalanceKobo: FLOAT_KOBO })
    expect((await recorded(id)).reversals).toHaveLength(1)
    await expectLedgerVerified(app.db.pool)
  },
)

it(
  "a refund's payout reversed: the amount goes to the float, the refund keeps its record, and the event names it",
  { timeout: 120_000 },
  async () => {
    const party = await paymentParty(app, hook.url)
    const id = await startPayment(app, party, 'triage refund', 40_000)
    expect(await settle(app, party, 'triage refund', id)).toBe('succeeded')
    const before = await float(party.client)
    await reverseAtBank(id)
    await requestReversalCheck(app.db.pool, id)
    await waitFor(
      async () => (await read(party.client, id)).state === 'reversed',
      30_000,
      `refund payout ${id} reversed`,
    )
    // Decision 0016: back on the float (not in suspense), the refund still succeeded, the partner told.
    expect(await float(party.client)).toMatchObject({
      availableBalanceKobo: before.availableBalanceKobo + 40_000,
      bookedBalanceKobo: before.bookedBalanceKobo + 40_000,
    })
    const refund = await app.db.pool.query<{ state: string }>(
      `SELECT state FROM refunds WHERE outbound_transfer_id = $1`,
      [id],
    )
    expect(refund.rows.map((row) => row.state)).toEqual(['succeeded'])
    const events = await app.db.pool.query<{ body: string }>(
      `SELECT body FROM events WHERE object_id = $1 AND type = 'transfer.reversed'`,
      [id],
    )
    expect(events.rows).toHaveLength(1)
    expect(JSON.parse(events.rows[0]!.body)).toMatchObject({
      data: { id, state: 'reversed', origin: { type: 'refund' } },
    })
    await expectLedgerVerified(app.db.pool)
  },
)

it('an instruction that never succeeded is not reversed by a check', async () => {
  const { client } = await app.newPartner({ callbackUrl: hook.url })
  expect((await fundFloat(client, FLOAT_KOBO)).status).toBe(200)
  const submitted = await client.post<{ id: string }>('/api/v1/rail/outbound', {
    clientReference: randomUUID(),
    amountKobo: 10_000,
    ...BENEFICIARY,
  })
  expect(submitted.status).toBe(202)
  expect(await checkReversal(app.payments(), submitted.body.id)).toBe('not_succeeded')
  expect(await checkReversal(app.payments(), randomUUID())).toBe('not_succeeded')
})
