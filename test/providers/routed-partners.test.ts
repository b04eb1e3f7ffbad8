// A sandbox partner routed through the sandbox's Paystack and Monnify dialects runs the README's
// first flows through Rail's real adapters, over real HTTP: a payout confirmed by the settlement
// simulator (`transfer.confirmed`), one through a provider answering 500 that still ends once, a
// payment intent paid by an inbound credit (`credit.confirmed`, announced by the provider's own
// signed webhook), and the ledger verified. Every instruction stays with the provider it was given
// to, and no secret reaches provider_calls. (routed-flows, routed-faults and routed-wallets go on.)
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { sandboxMonnifyCredentials, sandboxPaystackSecretKey } from '../../src/sandbox/public.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import {
  accountProvider,
  eventsOf,
  expectOnceThrough,
  outboundState,
  payOut,
  ROUTED_PROVIDERS,
  routedPartner,
  settlePayout,
  startRouted,
  withFaults,
  type RoutedHarness,
} from './routed-support.ts'

const SECRET = 'routed-partners-secret'
let harness: RoutedHarness

beforeAll(async () => {
  harness = await startRouted(SECRET, { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 } })
})
afterAll(async () => harness?.close())

describe.each(ROUTED_PROVIDERS)('a partner routed through %s', (provider) => {
  let client: RailClient

  beforeAll(async () => {
    ;({ client } = await routedPartner(harness.app, harness.hook, { payouts: [provider], collections: [provider] }))
  })

  it("pays out through the real adapter: the instruction is the provider's, confirmed once, transfer.confirmed delivered", async () => {
    const id = await payOut(client, 250_000)
    await settlePayout(client, id)
    await expectOnceThrough(harness.app, id, provider, 'succeeded')
    await waitFor(() => eventsOf(harness.hook, 'transfer.confirmed', id).length === 1, 20_000, 'transfer.confirmed')
    const view = await client.get<{ rail: { provider?: string } | null }>(`/api/v1/rail/outbound/${id}`)
    expect(view.body.rail?.provider).toBe(provider)
  })

  it('through a provider answering 500 to every call, the payout waits and ends once the provider answers again', async () => {
    const id = await withFaults(harness.app, { errorRate: 1 }, async () => {
      const since = new Date()
      const paid = await payOut(client, 260_000)
      // Its name enquiry or its send: a call of this provider, made for it, that got no answer.
      const unanswered = `SELECT 1 FROM provider_calls WHERE provider = $1 AND outcome = 'unknown' AND created_at >= $2`
      await waitFor(
        async () => (await harness.app.db.pool.query(unanswered, [provider, since])).rowCount! > 0,
        30_000,
        'an unanswered call',
      )
      expect(['pending', 'submitted']).toContain(await outboundState(client, paid))
      return paid
    })
    await settlePayout(client, id)
    await expectOnceThrough(harness.app, id, provider, 'succeeded')
  })

  it("collects: an intent's account is the provider's, and a payer's credit announced by its signed webhook confirms it", async () => {
    const intent = await client.post<{ id: string; virtualAccount: string }>('/api/v1/rail/payment/intent', {
      reference: randomUUID(),
      amountKobo: 150_000,
    })
    expect(intent.status, JSON.stringify(intent.body)).toBe(200)
    expect(await accountProvider(harness.app, intent.body.virtualAccount)).toBe(provider)
    const paid = await client.post('/api/v1/rail/sandbox/simulate-inbound-credit', {
      virtualAccount: intent.body.virtualAccount,
      amountKobo: 150_000,
      payerName: 'ADA OBI',
    })
    expect(paid.status, JSON.stringify(paid.body)).toBe(200)
    const applied = `SELECT 1 FROM inbound_credits WHERE provider = $1 AND account_number = $2 AND status = 'applied'`
    await waitFor(
      async () => (await harness.app.db.pool.query(applied, [provider, intent.body.virtualAccount])).rowCount === 1,
      30_000,
      'the credit applied',
    )
    await waitFor(
      () => eventsOf(harness.hook, 'credit.confirmed', intent.body.virtualAccount).length >= 1,
      20_000,
      'credit.confirmed',
    )
  })

  it('keeps the books balanced and no secret in what it recorded', async () => {
    await expectLedgerVerified(harness.app.db.pool)
    const secrets =
      provider === 'sandbox-paystack'
        ? [sandboxPaystackSecretKey(SECRET)]
        : Object.values(sandboxMonnifyCredentials(SECRET)).filter((value) => value.length > 12)
    const recorded = await harness.app.db.pool.query<{ row: string }>(
      `SELECT row_to_json(c)::text AS row FROM provider_calls c WHERE provider = $1`,
      [provider],
    )
    expect(recorded.rowCount).toBeGreaterThan(0)
    for (const { row } of recorded.rows) for (const secret of secrets) expect(row).not.toContain(secret)
  })
})
