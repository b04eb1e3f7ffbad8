// The README's flows for a partner routed through each real adapter (issue 32), over real HTTP to
// the sandbox's Paystack and Monnify dialects: an invoice paid into an account the routed provider
// allocated (invoice.paid); an escrow (docs/contracts/escrow.md) funded into the provider's account and disbursed by
// a payout of that provider (escrow.funded, escrow.released, escrow.disbursed); an unmatched credit
// refunded by triage through it; and a bank settlement of collected money paid through it. Every
// payout is the routed provider's alone, paid once at the bank, and the ledger verifies.
import { createHmac, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { setPartnerRoutes } from '../../src/banking/providers/service.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { createRequest, escrowClient, type EscrowClient } from '../support/escrow.ts'
import { waitFor } from '../support/wait.ts'
import {
  accountProvider,
  eventsOf,
  expectOnceThrough,
  ROUTED_PROVIDERS,
  settlePayout,
  startRouted,
  type RoutedHarness,
} from './routed-support.ts'

const SECRET = 'routed-flows-secret'
const ESCROW_WEBHOOK_SECRET = 'routed-flows-escrow-webhook'
const PAYER = { payerName: 'Ifeoma Nwosu', payerAccountNumber: nuban('044', '000765432'), payerBankCode: '044' }

/** An account at another bank, as the sandbox bank names it. */
function bankAccount(bankCode: string, serial: string) {
  const accountNumber = nuban(bankCode, serial)
  return { accountNumber, bankCode, accountName: syntheticAccountName(bankCode, accountNumber) }
}
const RECIPIENT = bankAccount('058', '111222333')
const SETTLEMENT_ACCOUNT = bankAccount('057', '000246810')

let harness: RoutedHarness

beforeAll(async () => {
  harness = await startRouted(SECRET, { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 } })
})
afterAll(async () => {
  await harness?.close()
})

async function payIn(client: RailClient, virtualAccount: string, amountKobo: number): Promise<void> {
  const paid = await client.post('/api/v1/rail/sandbox/simulate-inbound-credit', {
    virtualAccount,
    amountKobo,
    ...PAYER,
  })
  expect(paid.status, JSON.stringify(paid.body)).toBe(200)
}

describe.each(ROUTED_PROVIDERS)('the README flows through %s', (provider) => {
  let client: RailClient
  let partnerId: string
  let escrowApiKey: string

  beforeAll(async () => {
    const partner = await harness.app.newPartner({ callbackUrl: harness.hook.url })
    client = partner.client
    partnerId = partner.credentials.partnerId
    escrowApiKey = partner.credentials.escrowApiKey
    await setPartnerRoutes(harness.app.db.pool, partnerId, { payouts: [provider], collections: [provider] })
  })

  it('an invoice published with an account of the provider is paid by a transfer into it: invoice.paid delivered', async () => {
    const created = await client.post<{ id: string; reference: string; virtualAccount: string | null }>(
      '/api/v1/rail/invoice',
      { reference: randomUUID(), title: 'School fees', amountKobo: 120_000 },
    )
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const published = await client.post<{ status: string; virtualAccount: string }>(
      `/api/v1/rail/invoice/${created.body.reference}/publish`,
    )
    expect(published.status, JSON.stringify(published.body)).toBe(200)
    expect(published.body.status).toBe('published')
    expect(await accountProvider(harness.app, published.body.virtualAccount)).toBe(provider)

    await payIn(client, published.body.virtualAccount, 120_000)
    await waitFor(() => eventsOf(harness.hook, 'invoice.paid', created.body.id).length === 1, 30_000, 'invoice.paid')
    const invoice = await client.get<{ status: string; amountPaidKobo: number }>(
      `/api/v1/rail/invoice/${created.body.reference}`,
    )
    expect(invoice.body).toMatchObject({ status: 'paid', amountPaidKobo: 120_000 })
    const credits = await harness.app.db.pool.query(
      `SELECT provider, status FROM inbound_credits WHERE account_number = $1`,
      [published.body.virtualAccount],
    )
    expect(credits.rows).toEqual([{ provider, status: 'applied' }])
  })

  describe('an escrow', () => {
    let api: EscrowClient

    beforeAll(async () => {
      api = escrowClient(harness.app.baseUrl, escrowApiKey)
      expect((await api.webhook({ webhookUrl: harness.hook.url, webhookSecret: ESCROW_WEBHOOK_SECRET })).status).toBe(
        200,
      )
    })

    /** The escrow's events, each signed with the escrow webhook secret (docs/contracts/escrow.md). */
    function escrowEvents(
      ref: string,
    ): { event: string; data: Record<string, unknown>; metadata: Record<string, unknown> }[] {
      return harness.hook.requests
        .filter((request) => request.rawBody.includes(ref) && request.rawBody.includes('"escrow.'))
        .map((request) => {
          expect(request.headers['x-rail-signature']).toBe(
            `sha256=${createHmac('sha256', ESCROW_WEBHOOK_SECRET).update(request.rawBody).digest('hex')}`,
          )
          return JSON.parse(request.rawBody) as {
            event: string
            data: Record<string, unknown>
            metadata: Record<string, unknown>
          }
        })
    }

    it("is funded into the provider's account and disbursed by a payout of the provider: released, paid once, its events delivered", async () => {
      const created = await api.create<{ ref: string; status: string; funding: { virtualAccount: string } }>(
        createRequest({ amount: 70_000, metadata: { order: 'A-17' } }),
      )
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      const ref = created.body.ref
      expect(created.body.status).toBe('initiated')
      expect(await accountProvider(harness.app, created.body.funding.virtualAccount)).toBe(provider)

      await payIn(client, created.body.funding.virtualAccount, 70_000)
      await waitFor(
        async () => (await api.get<{ escrow: { status: string } }>(ref)).body.escrow.status === 'funded',
        30_000,
        'escrow funded',
      )

      const released = await api.release<{ status: string }>(ref, { reason: 'goods received', disbursement: RECIPIENT })
      expect(released.status, JSON.stringify(released.body)).toBe(200)
      expect(released.body.status).toBe('released')
      const escrow = async () =>
        (
          await api.get<{
            escrow: {
              status: string
              releasedAt: string | null
              disbursement: { state: string; outboundTransferId: string }
            }
          }>(ref)
        ).body.escrow
      const payoutId = (await escrow()).disbursement.outboundTransferId
      expect(payoutId).toEqual(expect.any(String))

      await settlePayout(client, payoutId)
      await waitFor(async () => (await escrow()).disbursement.state === 'paid', 30_000, 'disbursement paid')
      expect(await escrow()).toMatchObject({ status: 'released', releasedAt: expect.any(String) })
      await expectOnceThrough(harness.app, payoutId, provider, 'succeeded')
      await waitFor(
        () => escrowEvents(ref).some((event) => event.event === 'escrow.disbursed'),
        30_000,
        'escrow.disbursed',
      )
      const events = escrowEvents(ref)
      expect(events.map((event) => event.event)).toEqual(['escrow.funded', 'escrow.released', 'escrow.disbursed'])
      for (const event of events)
        expect(event).toMatchObject({ data: { ref, amount: 70_000, currency: 'NGN' }, metadata: { order: 'A-17' } })
      expect(events[1]!.data).toMatchObject({ status: 'released', releasedAt: expect.any(String) })
    })
  })

  it('refunds an unmatched credit (triage) through the provider', async () => {
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    expect(await accountProvider(harness.app, account.virtualAccount)).toBe(provider)
    expect((await client.post(`/api/v1/rail/virtual-account/${account.trackingId}/archive`)).status).toBe(200)
    await payIn(client, account.virtualAccount, 8_000)
    let creditId = ''
    await waitFor(
      async () => {
        // By its account: Monnify's id of a credit is its transaction reference, not the NIP session id the simulator answers.
        const found = await harness.app.db.pool.query<{ id: string }>(
          `SELECT id FROM inbound_credits WHERE account_number = $1 AND status = 'unmatched'`,
          [account.virtualAccount],
        )
        creditId = found.rows[0]?.id ?? ''
        return creditId !== ''
      },
      30_000,
      'the credit unmatched',
    )

    const resolved = await client.post<{
      status: string
      resolution: { refundId: string; outboundTransferId: string }
    }>(`/api/v1/rail/unmatched/${creditId}/resolve`, { action: 'refund' })
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200)
    expect(resolved.body.status).toBe('refund_pending')
    const payoutId = resolved.body.resolution.outboundTransferId
    await settlePayout(client, payoutId)
    await waitFor(
      async () =>
        (await client.get<{ state: string }>(`/api/v1/rail/refunds/${resolved.body.resolution.refundId}`)).body
          .state === 'succeeded',
      30_000,
      'refund succeeded',
    )
    await expectOnceThrough(harness.app, payoutId, provider, 'succeeded')
    const refunded = await harness.app.db.pool.query<{ beneficiary_account_number: string; status: string }>(
      `SELECT o.beneficiary_account_number, c.status FROM outbound_transfers o JOIN inbound_credits c ON c.id = $2 WHERE o.id = $1`,
      [payoutId, creditId],
    )
    expect(refunded.rows).toEqual([{ beneficiary_account_number: PAYER.payerAccountNumber, status: 'refunded' }])
  })

  it("settles collected money to the partner's bank account through the provider: settlement.paid delivered", async () => {
    const settings = await client.request<{ bankAccount: { verifiedAccountName: string | null } }>(
      'PUT',
      '/api/v1/rail/settlement',
      { mode: 'bank', bankAccount: SETTLEMENT_ACCOUNT, cutoffTime: '23:59' },
    )
    expect(settings.status, JSON.stringify(settings.body)).toBe(200)
    // The account's holder was asked of the provider the settlement is paid through.
    expect(settings.body.bankAccount.verifiedAccountName).toBe(SETTLEMENT_ACCOUNT.accountName)
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    await payIn(client, account.virtualAccount, 45_000)
    const applied = `SELECT 1 FROM inbound_credits WHERE account_number = $1 AND status = 'applied'`
    await waitFor(
      async () => (await harness.app.db.pool.query(applied, [account.virtualAccount])).rowCount === 1,
      30_000,
      'credit applied',
    )

    const run = await client.post<{
      settlement: { id: string; amountKobo: number; outboundTransferId: string } | null
    }>('/api/v1/rail/sandbox/run-settlement')
    expect(run.status, JSON.stringify(run.body)).toBe(200)
    const settlement = run.body.settlement!
    expect(settlement.amountKobo).toBe(45_000)
    await settlePayout(client, settlement.outboundTransferId)
    await waitFor(
      async () =>
        (await client.get<{ state: string }>(`/api/v1/rail/settlements/${settlement.id}`)).body.state === 'paid',
      30_000,
      'settlement paid',
    )
    await expectOnceThrough(harness.app, settlement.outboundTransferId, provider, 'succeeded')
    const payout = await client.get<{ beneficiaryAccountNumber: string; origin: { type: string } }>(
      `/api/v1/rail/outbound/${settlement.outboundTransferId}`,
    )
    expect(payout.body).toMatchObject({
      beneficiaryAccountNumber: SETTLEMENT_ACCOUNT.accountNumber,
      origin: { type: 'settlement' },
    })
    await waitFor(
      () => eventsOf(harness.hook, 'settlement.paid', settlement.id).length === 1,
      30_000,
      'settlement.paid',
    )
  })
})
