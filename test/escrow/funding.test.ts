// Escrow funding through the real collections path: create allocates a funding account (a
// composed payment intent); the sandbox bank receives the payer's credits and announces them to
// Rail; the apply job moves them into escrow holding; the escrow is funded once credits reach its
// amount, and credits after that (or after cancel) go to unmatched triage.
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setCapability } from '../../src/banking/providers/service.ts'
import { bookedKobo, payIn, startCollections, type CollectionsHarness } from '../collections/support.ts'
import { createRequest, escrowClient, TEST_PAYER } from '../support/escrow.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

let harness: CollectionsHarness
const SECRET = 'escrow-funding-webhook-secret'

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  if (harness) await expectLedgerVerified(harness.app.db.pool)
  await harness?.app.close()
})

type Funding = NonNullable<Schemas['EscrowCreated']['funding']>

async function escrowPartner() {
  const { client, credentials } = await harness.app.newPartner()
  const api = escrowClient(harness.app.baseUrl, credentials.escrowApiKey)
  expect((await api.webhook({ webhookUrl: harness.hook.url, webhookSecret: SECRET })).status).toBe(200)
  return { client, credentials, api }
}

function escrowEvents(ref: string): { event: string; data: { status: string; amount: number } }[] {
  return harness.hook.requests
    .filter((request) => request.rawBody.includes(ref) && request.rawBody.includes('"escrow.'))
    .map((request) => {
      const expected = `sha256=${createHmac('sha256', SECRET).update(request.rawBody).digest('hex')}`
      expect(request.headers['x-rail-signature']).toBe(expected)
      return JSON.parse(request.rawBody) as { event: string; data: { status: string; amount: number } }
    })
}

describe('escrow funding', () => {
  it('is funded by credits to its funding account, released, and a later credit goes to triage', async () => {
    const { client, credentials, api } = await escrowPartner()
    const created = await api.create<{ ref: string; funding: Funding }>(createRequest({ amount: 50_000 }))
    expect(created.status).toBe(201)
    const { ref, funding } = created.body
    expect(funding.virtualAccount).toMatch(/^[0-9]{10}$/)

    await payIn(client, funding.virtualAccount, 20_000)
    await waitFor(
      async () => (await api.get<{ escrow: { fundedAmount: number } }>(ref)).body.escrow.fundedAmount === 20_000,
      10_000,
      'partly funded',
    )
    expect((await api.get<{ escrow: { status: string } }>(ref)).body.escrow.status).toBe('initiated')
    expect((await api.release<{ error: string }>(ref, {})).status).toBe(400)

    await payIn(client, funding.virtualAccount, 30_000)
    await waitFor(
      async () => (await api.get<{ escrow: { status: string } }>(ref)).body.escrow.status === 'funded',
      10_000,
      'funded',
    )
    await waitFor(() => escrowEvents(ref).some((event) => event.event === 'escrow.funded'), 10_000, 'escrow.funded')
    expect(await bookedKobo(harness.app, credentials.partnerId, 'escrow_holding')).toBe(50_000)

    const released = await api.release<{ status: string }>(ref, { reason: 'goods received' })
    expect(released.status).toBe(200)
    await waitFor(() => escrowEvents(ref).some((event) => event.event === 'escrow.released'), 10_000, 'escrow.released')
    expect(await bookedKobo(harness.app, credentials.partnerId, 'escrow_holding')).toBe(0)

    await payIn(client, funding.virtualAccount, 5_000)
    let items: { reason: string; amountKobo: number; trackingId: string }[] = []
    await waitFor(
      async () => {
        items = (await client.get<{ data: typeof items }>('/api/v1/rail/unmatched')).body.data
        return items.length === 1
      },
      10_000,
      'triage',
    )
    expect(items[0]).toMatchObject({ reason: 'escrow_closed', amountKobo: 5_000, trackingId: funding.trackingId })
    expect(await bookedKobo(harness.app, credentials.partnerId, 'suspense')).toBe(5_000)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'escrow_holding')).toBe(0)
  })

  it('refunds partial funding on cancel, and sends later credits to triage', async () => {
    const { client, credentials, api } = await escrowPartner()
    const { ref, funding } = (await api.create<{ ref: string; funding: Funding }>(createRequest({ amount: 40_000 })))
      .body
    await payIn(client, funding.virtualAccount, 15_000, {
      payerName: TEST_PAYER.accountName,
      payerAccountNumber: TEST_PAYER.accountNumber,
      payerBankCode: TEST_PAYER.bankCode,
    })
    await waitFor(
      async () => (await api.get<{ escrow: { fundedAmount: number } }>(ref)).body.escrow.fundedAmount === 15_000,
      10_000,
      'partly funded',
    )
    expect((await api.cancel(ref, { reason: 'buyer changed their mind' })).status).toBe(200)
    // Held for the refund's payout until the bank answers (test/escrow/refunds.test.ts settles refunds).
    expect(await bookedKobo(harness.app, credentials.partnerId, 'escrow_holding')).toBe(15_000)
    expect(
      (await api.get<{ escrow: { refund: { state: string; amountKobo: number } } }>(ref)).body.escrow.refund,
    ).toEqual(expect.objectContaining({ state: 'pending', amountKobo: 15_000 }))
    await payIn(client, funding.virtualAccount, 25_000)
    await waitFor(
      async () => (await client.get<{ data: unknown[] }>('/api/v1/rail/unmatched')).body.data.length === 1,
      10_000,
      'triage',
    )
    expect((await api.get<{ escrow: { status: string; fundedAmount: number } }>(ref)).body.escrow).toMatchObject({
      status: 'cancelled',
      fundedAmount: 15_000,
    })
  })

  it('creates no escrow when the funding account cannot be allocated', async () => {
    const { api } = await escrowPartner()
    const before = (await harness.app.db.pool.query(`SELECT count(*)::int AS n FROM escrows`)).rows[0].n
    await setCapability(harness.app.db.pool, 'sandbox', 'virtualAccounts', false)
    try {
      const refused = await api.create<{ statusCode: number; error: string }>(
        createRequest({ reference: 'no-account' }),
      )
      expect(refused.status).toBe(403)
      expect(refused.body.error).toBe('capability_disabled')
    } finally {
      await setCapability(harness.app.db.pool, 'sandbox', 'virtualAccounts', true)
    }
    await harness.app.db.pool.query(`UPDATE sandbox_bank.faults SET error_rate = 1 WHERE id = 1`)
    try {
      expect((await api.create(createRequest({ reference: 'no-account' }))).status).toBe(502)
    } finally {
      await harness.app.db.pool.query(`UPDATE sandbox_bank.faults SET error_rate = 0 WHERE id = 1`)
    }
    expect((await harness.app.db.pool.query(`SELECT count(*)::int AS n FROM escrows`)).rows[0].n).toBe(before)
    expect((await api.create(createRequest({ reference: 'no-account' }))).status).toBe(201)
  })
})
