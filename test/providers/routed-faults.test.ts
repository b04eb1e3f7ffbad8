// The fault matrix of the payment pipeline (docs/decisions/0008-payment-pipeline.md) through each
// real adapter, over real HTTP to the sandbox's Paystack and Monnify dialects: a send that gets no
// answer, a send whose answer is lost, a send answered 500, a send the provider never received
// (its first submission dropped), and a refusal. Each payout stays with the routed provider, is
// paid at most once at the bank under its reference, ends once (or, never received by a provider
// that keeps no validity window, is sent again under the same reference and is never failed as
// not received), and the ledger verifies.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { clearFailpoint, setFailpoint } from '../../src/platform/failpoints.ts'
import { writeFaults, type Faults } from '../../src/sandbox/faults.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import {
  eventsOf,
  expectOnceThrough,
  NO_FAULTS,
  outboundState,
  payOut,
  ROUTED_PROVIDERS,
  routedPartner,
  settlePayout,
  startRouted,
  type RoutedHarness,
} from './routed-support.ts'

const SECRET = 'routed-faults-secret'
const FLOAT_KOBO = 50_000_000
let harness: RoutedHarness

beforeAll(async () => {
  harness = await startRouted(SECRET, { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 } })
})
afterEach(async () => {
  clearFailpoint('payments.in_flight')
  await writeFaults(harness.app.db.pool, NO_FAULTS)
})
afterAll(async () => {
  await harness?.close()
})

/**
 * Switches the bank's faults on just before the pipeline's next send reaches the provider (the
 * name enquiry before it answered as usual), once; answers the id of the payment it caught.
 */
function faultTheNextSend(faults: Partial<Faults>): { caught: () => string } {
  let caught = ''
  setFailpoint('payments.in_flight', async ({ id }) => {
    clearFailpoint('payments.in_flight')
    caught = id
    await writeFaults(harness.app.db.pool, { ...NO_FAULTS, ...faults })
  })
  return { caught: () => caught }
}

async function instruction(id: string) {
  const found = await harness.app.db.pool.query<{ state: string; send_attempts: number; failure_code: string | null }>(
    `SELECT state, send_attempts, failure_code FROM bank_instructions WHERE id = $1`,
    [id],
  )
  return found.rows[0]!
}

/** The calls made for a payment that got no readable answer from the provider. */
async function unansweredCalls(id: string): Promise<number> {
  return (
    await harness.app.db.pool.query(`SELECT 1 FROM provider_calls WHERE reference = $1 AND outcome = 'unknown'`, [id])
  ).rowCount!
}

describe.each(ROUTED_PROVIDERS)('the fault matrix through %s', (provider) => {
  let client: RailClient
  let partnerId: string

  beforeAll(async () => {
    ;({ client, partnerId } = await routedPartner(
      harness.app,
      harness.hook,
      { payouts: [provider], collections: [provider] },
      FLOAT_KOBO,
    ))
  })

  /** The float's posted balance and what is held on it for payouts on their way. */
  async function float(): Promise<{ bookedKobo: number; heldKobo: number }> {
    const found = await harness.app.db.pool.query<{ booked: string; held: string }>(
      `SELECT credits_posted - debits_posted AS booked, debits_pending AS held FROM ledger_accounts WHERE partner_id = $1 AND kind = 'float'`,
      [partnerId],
    )
    return { bookedKobo: Number(found.rows[0]!.booked), heldKobo: Number(found.rows[0]!.held) }
  }

  /** Ends a payment that reached the provider: confirmed once, one transfer.confirmed, one payment at the bank. */
  async function expectConfirmedOnce(id: string): Promise<void> {
    await settlePayout(client, id)
    await expectOnceThrough(harness.app, id, provider, 'succeeded')
    await waitFor(() => eventsOf(harness.hook, 'transfer.confirmed', id).length === 1, 20_000, 'transfer.confirmed')
    expect(eventsOf(harness.hook, 'transfer.failed', id)).toEqual([])
    await expectLedgerVerified(harness.app.db.pool)
  }

  it('(a) a send that gets no answer is asked about, sent again under its reference once the faults stop, and confirmed once', async () => {
    const fault = faultTheNextSend({ noAnswerRate: 1 })
    const id = await payOut(client, 310_000)
    await waitFor(async () => fault.caught() === id && (await unansweredCalls(id)) > 0, 30_000, 'the send unanswered')
    expect(['pending', 'submitted']).toContain(await outboundState(client, id))
    await writeFaults(harness.app.db.pool, NO_FAULTS)
    await expectConfirmedOnce(id)
    expect((await instruction(id)).send_attempts).toBe(2) // the dropped send had no record: sent again once the provider answered
  })

  it('(b) a send whose answer is lost (magic 9098) is found by requery and confirmed once, never sent again', async () => {
    const id = await payOut(client, 329_098)
    await expectConfirmedOnce(id)
    expect(await unansweredCalls(id)).toBeGreaterThan(0)
    expect((await instruction(id)).send_attempts).toBe(1) // the requery found it: nothing to send again
  })

  it('(c) a send answered 500 is asked about, sent again under its reference, and confirmed once', async () => {
    const fault = faultTheNextSend({ errorRate: 1 })
    const id = await payOut(client, 330_000)
    await waitFor(async () => fault.caught() === id && (await unansweredCalls(id)) > 0, 30_000, 'the send answered 500')
    await writeFaults(harness.app.db.pool, NO_FAULTS)
    await expectConfirmedOnce(id)
    expect((await instruction(id)).send_attempts).toBe(2)
  })

  it('(c2) a payout every send of which is answered 500 (magic 9096) is sent at most three times and, with no validity window, never failed: it waits for the deadline', async () => {
    const id = await payOut(client, 369_096)
    // Its third send, then two requeries after it, answered (no record): nothing more is sent.
    const answeredAfterLastSend = `SELECT 1 FROM provider_calls c WHERE c.reference = $1 AND c.outcome <> 'unknown'
        AND c.created_at > (SELECT max(s.created_at) FROM provider_calls s WHERE s.reference = $1 AND s.outcome = 'unknown')`
    await waitFor(
      async () =>
        (await instruction(id)).send_attempts === 3 &&
        (await harness.app.db.pool.query(answeredAfterLastSend, [id])).rowCount! >= 2,
      30_000,
      'three sends, then no record',
    )
    const found = await instruction(id)
    expect(found.failure_code).toBeNull()
    expect(['sending', 'unknown']).toContain(found.state)
    expect(['pending', 'submitted']).toContain(await outboundState(client, id))
    expect(eventsOf(harness.hook, 'transfer.failed', id)).toEqual([])
    await expectOnceThrough(harness.app, id, provider)
    expect(
      (await harness.app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount,
    ).toBe(0)
    expect((await float()).heldKobo).toBeGreaterThanOrEqual(369_096) // still held: the money may yet move
    await expectLedgerVerified(harness.app.db.pool)
  })

  it('(d) a send the provider never received (magic 9097) reads no record (25) and, with no validity window, is sent again under the same reference: confirmed once, never failed as not received', async () => {
    const id = await payOut(client, 349_097)
    await expectConfirmedOnce(id)
    const found = await instruction(id)
    expect(found.send_attempts).toBe(2) // dropped, then sent again (the provider de-duplicates references)
    expect(found.failure_code).toBeNull()
    const sends = await harness.app.db.pool.query<{ operation: string }>(
      `SELECT operation FROM provider_calls WHERE reference = $1 ORDER BY created_at`,
      [id],
    )
    expect(sends.rows.length).toBeGreaterThanOrEqual(3) // the dropped send, a requery answering no record, the resend
  })

  it('(e) a refusal (magic 9051, insufficient funds) fails the payout with its reason and releases the float', async () => {
    const before = await float()
    const id = await payOut(client, 359_051)
    await waitFor(async () => (await outboundState(client, id)) === 'failed', 30_000, 'payout failed')
    const failed = await client.get<{
      failureReason: { code: string; message: string; providerResponseCode?: string }
    }>(`/api/v1/rail/outbound/${id}`)
    expect(failed.body.failureReason).toMatchObject({ code: 'provider_declined', providerResponseCode: '51' })
    expect(failed.body.failureReason.message.length).toBeGreaterThan(0)
    await expectOnceThrough(harness.app, id, provider, 'failed')
    expect(
      (
        await harness.app.db.pool.query(
          `SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1 AND response_code = '00'`,
          [id],
        )
      ).rowCount,
    ).toBe(0)
    expect(await float()).toEqual(before) // the hold voided: nothing held, nothing spent
    await waitFor(() => eventsOf(harness.hook, 'transfer.failed', id).length === 1, 20_000, 'transfer.failed')
    await expectLedgerVerified(harness.app.db.pool)
  })
})
