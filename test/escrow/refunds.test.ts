// Escrow refunds over HTTP, with real workers, the sandbox bank and a real webhook receiver: a
// cancelled funded escrow, an expired partially funded one and an overfunded one's excess pay each
// funding credit back to the account it came from, as payouts of the pipeline held on the escrow
// holding account; a failed refund keeps the money held until the partner retries it.
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { expireEscrow } from '../../src/escrow/service.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { bookedKobo, payIn, startCollections, type CollectionsHarness } from '../collections/support.ts'
import {
  createRequest,
  escrowClient,
  escrowIdOf,
  expiryDeps,
  moneyOf,
  reachExpiry,
  type EscrowClient,
} from '../support/escrow.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import type { RailWebhookEvent, Schemas } from '../../packages/sdk/src/index.ts'

let harness: CollectionsHarness
const SECRET = 'escrow-refunds-webhook-secret'

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  if (harness) await expectLedgerVerified(harness.app.db.pool)
  await harness?.app.close()
})

/** A payer's account at another bank, as the sandbox bank names it. */
function payer(serial: string) {
  const accountNumber = nuban('058', serial)
  return { accountNumber, bankCode: '058', accountName: syntheticAccountName('058', accountNumber) }
}
const ADA = payer('100200300')
const BAYO = payer('400500600')

type RefundJson = NonNullable<Schemas['Escrow']['refund']>
type EscrowJson = Schemas['Escrow']
type OutboundJson = Schemas['OutboundTransfer']
/** The escrow events Rail delivers, as the SDK types them. */
type EventJson = Extract<RailWebhookEvent, { event: `escrow.${string}` }>

async function escrowPartner() {
  const { client, credentials } = await harness.app.newPartner()
  const api = escrowClient(harness.app.baseUrl, credentials.escrowApiKey)
  expect((await api.webhook({ webhookUrl: harness.hook.url, webhookSecret: SECRET })).status).toBe(200)
  return { client, partnerId: credentials.partnerId, api }
}

const read = async (api: EscrowClient, ref: string) => (await api.get<{ escrow: EscrowJson }>(ref)).body.escrow

/** An escrow paid into by each payer in turn, through the sandbox bank; waits until every credit is applied. */
async function paidEscrow(
  client: RailClient,
  api: EscrowClient,
  amount: number,
  credits: [ReturnType<typeof payer> | null, number][],
  overrides: Record<string, unknown> = {},
) {
  const created = await api.create<{ ref: string; expiresAt: string; funding: { virtualAccount: string } }>(
    createRequest({ amount, ...overrides }),
  )
  expect(created.status).toBe(201)
  let fundedKobo = 0
  for (const [from, amountKobo] of credits) {
    await payIn(
      client,
      created.body.funding.virtualAccount,
      amountKobo,
      from ? { payerName: from.accountName, payerAccountNumber: from.accountNumber, payerBankCode: from.bankCode } : {},
    )
    fundedKobo += amountKobo
    await waitFor(
      async () => (await read(api, created.body.ref)).fundedAmount === fundedKobo,
      15_000,
      `funded ${fundedKobo}`,
    )
  }
  return created.body
}

function escrowEvents(ref: string): EventJson[] {
  return harness.hook.requests
    .filter((request) => request.rawBody.includes(ref) && request.rawBody.includes('"escrow.'))
    .map((request) => {
      expect(request.headers['x-rail-signature']).toBe(
        `sha256=${createHmac('sha256', SECRET).update(request.rawBody).digest('hex')}`,
      )
      return JSON.parse(request.rawBody) as EventJson
    })
}

async function eventArrives<Name extends EventJson['event']>(
  ref: string,
  type: Name,
): Promise<Extract<EventJson, { event: Name }>> {
  await waitFor(() => escrowEvents(ref).some((event) => event.event === type), 20_000, type)
  return escrowEvents(ref).find((event): event is Extract<EventJson, { event: Name }> => event.event === type)!
}

const outbound = async (client: RailClient, id: string) =>
  (await client.get<OutboundJson>(`/api/v1/rail/outbound/${id}`)).body

async function settle(client: RailClient, transferId: string, outcome: 'confirmed' | 'failed'): Promise<void> {
  await waitFor(async () => (await outbound(client, transferId)).state === 'submitted', 15_000, 'submitted')
  expect((await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', { transferId, outcome })).status).toBe(
    200,
  )
}

async function refundReaches(api: EscrowClient, ref: string, state: string): Promise<RefundJson> {
  await waitFor(async () => (await read(api, ref)).refund?.state === state, 20_000, `refund ${state}`)
  return (await read(api, ref)).refund!
}

describe('escrow refunds', () => {
  it('a funded escrow cancelled: the payer is refunded to the account the money came from; escrow.refunded delivered', async () => {
    const { client, partnerId, api } = await escrowPartner()
    const { ref } = await paidEscrow(client, api, 40_000, [[ADA, 40_000]])
    expect((await read(api, ref)).status).toBe('funded')
    expect((await read(api, ref)).refund).toBeNull()

    expect((await api.cancel(ref, { reason: 'seller could not deliver' })).status).toBe(200)
    const pending = (await read(api, ref)).refund!
    expect(pending).toEqual({
      state: 'pending',
      amountKobo: 40_000,
      refunds: [
        {
          id: expect.any(String),
          creditId: expect.any(String),
          amountKobo: 40_000,
          state: 'pending',
          outboundTransferId: expect.any(String),
        },
      ],
    })
    const [refund] = pending.refunds
    // A payout of the pipeline to the credit's payer, its origin the refund; held on escrow holding (not the float).
    const payout = await outbound(client, refund!.outboundTransferId!)
    expect(payout).toEqual(
      expect.objectContaining({
        amountKobo: 40_000,
        beneficiaryAccountNumber: ADA.accountNumber,
        beneficiaryBankCode: ADA.bankCode,
        origin: { type: 'refund', id: refund!.id, reference: expect.any(String) },
      }),
    )
    const credit = await harness.app.db.pool.query(
      `SELECT payer_account_number, payer_bank_code FROM inbound_credits WHERE id = $1`,
      [refund!.creditId],
    )
    expect(credit.rows).toEqual([{ payer_account_number: ADA.accountNumber, payer_bank_code: ADA.bankCode }])
    expect(await moneyOf(harness.app.db.pool, partnerId)).toEqual(
      expect.objectContaining({ holdingKobo: 0, payingOutKobo: 40_000, floatKobo: 0 }),
    )
    const theRefund = (await client.get<{ origin: { type: string; id: string } }>(`/api/v1/rail/refunds/${refund!.id}`))
      .body
    expect(theRefund.origin).toEqual({ type: 'escrow', id: await escrowIdOf(harness.app.db.pool, ref) })

    await settle(client, refund!.outboundTransferId!, 'confirmed')
    const refunded = await refundReaches(api, ref, 'refunded')
    expect(refunded.refunds.map((r) => r.state)).toEqual(['succeeded'])
    const event = await eventArrives(ref, 'escrow.refunded')
    expect(event.data).toEqual(expect.objectContaining({ ref, status: 'cancelled', refund: refunded }))
    expect(escrowEvents(ref).map((e) => e.event)).toEqual(['escrow.funded', 'escrow.cancelled', 'escrow.refunded'])
    expect(await moneyOf(harness.app.db.pool, partnerId)).toEqual(
      expect.objectContaining({ holdingKobo: 0, payingOutKobo: 0 }),
    )
    // The bank paid the payer once.
    const paid = await harness.app.db.pool.query(
      `SELECT credit_account_number, amount_kobo FROM sandbox_bank.transfers WHERE reference = $1 AND kind = 'payout' AND response_code = '00'`,
      [refund!.outboundTransferId],
    )
    expect(paid.rows).toEqual([{ credit_account_number: ADA.accountNumber, amount_kobo: 40_000 }])
    await expectLedgerVerified(harness.app.db.pool)
  })

  it('a partially funded escrow expires: each credit is refunded to its own payer, by the escrow’s system caller', async () => {
    const { client, partnerId, api } = await escrowPartner()
    const { ref } = await paidEscrow(
      client,
      api,
      50_000,
      [
        [ADA, 10_000],
        [BAYO, 15_000],
      ],
      { ttlHours: 1 },
    )
    await reachExpiry(harness.app.db.pool, ref)
    const expired = await expireEscrow(expiryDeps(harness.app), await escrowIdOf(harness.app.db.pool, ref))
    expect(expired?.status).toBe('expired')
    const pending = (await read(api, ref)).refund!
    expect(pending.state).toBe('pending')
    expect(pending.amountKobo).toBe(25_000)
    const payouts = await Promise.all(pending.refunds.map((r) => outbound(client, r.outboundTransferId!)))
    expect(payouts.map((p) => [p.beneficiaryAccountNumber, p.amountKobo])).toEqual([
      [ADA.accountNumber, 10_000],
      [BAYO.accountNumber, 15_000],
    ])
    expect(payouts.every((p) => p.creatorMetadata.credentialId === 'rail:escrow-expiry')).toBe(true)
    for (const payout of payouts) await settle(client, payout.id, 'confirmed')
    await refundReaches(api, ref, 'refunded')
    await eventArrives(ref, 'escrow.refunded')
    expect(escrowEvents(ref).map((e) => e.event)).toEqual(['escrow.expired', 'escrow.refunded'])
    expect(await moneyOf(harness.app.db.pool, partnerId)).toEqual(
      expect.objectContaining({ holdingKobo: 0, payingOutKobo: 0 }),
    )
    await expectLedgerVerified(harness.app.db.pool)
  })

  it('an overfunded escrow released: the amount is disbursed and the excess refunded from the credit that overfunded it', async () => {
    const { client, partnerId, api } = await escrowPartner()
    const { ref } = await paidEscrow(client, api, 50_000, [
      [ADA, 30_000],
      [BAYO, 26_000],
    ])
    expect((await read(api, ref)).status).toBe('funded')
    expect((await api.release(ref, { reason: 'delivered' })).status).toBe(200)
    const escrow = await read(api, ref)
    expect(escrow.disbursement?.state).toBe('paid') // to the float
    expect(escrow.refund).toEqual({
      state: 'pending',
      amountKobo: 6_000,
      refunds: [expect.objectContaining({ amountKobo: 6_000, state: 'pending' })],
    })
    const payout = await outbound(client, escrow.refund!.refunds[0]!.outboundTransferId!)
    expect([payout.beneficiaryAccountNumber, payout.amountKobo]).toEqual([BAYO.accountNumber, 6_000])
    await settle(client, payout.id, 'confirmed')
    await refundReaches(api, ref, 'refunded')
    await eventArrives(ref, 'escrow.refunded')
    expect(await bookedKobo(harness.app, partnerId, 'float')).toBe(50_000)
    expect(await moneyOf(harness.app.db.pool, partnerId)).toEqual(
      expect.objectContaining({ holdingKobo: 0, payingOutKobo: 0 }),
    )
    await expectLedgerVerified(harness.app.db.pool)
  })

  it('a failed refund keeps the money held; the partner retries it and the payer is refunded', async () => {
    const { client, partnerId, api } = await escrowPartner()
    const { ref } = await paidEscrow(client, api, 20_000, [[ADA, 20_000]])
    expect((await api.patch(ref, 'refund')).body).toEqual(expect.objectContaining({ error: 'invalid_escrow_status' })) // nothing to retry
    expect((await api.cancel(ref, { reason: 'buyer cancelled' })).status).toBe(200)
    const first = (await read(api, ref)).refund!.refunds[0]!
    expect((await api.patch(ref, 'refund')).status).toBe(400) // pending: nothing to retry yet
    await settle(client, first.outboundTransferId!, 'failed')
    const failed = await refundReaches(api, ref, 'failed')
    expect(failed.refunds.map((r) => r.state)).toEqual(['failed'])
    const failedEvent = await eventArrives(ref, 'escrow.refund_failed')
    expect(failedEvent.data.refund?.state).toBe('failed')
    expect(await moneyOf(harness.app.db.pool, partnerId)).toEqual(
      expect.objectContaining({ holdingKobo: 20_000, payingOutKobo: 0 }),
    ) // held again

    const retried = await api.patch<{ refundState: string }>(ref, 'refund')
    expect(retried.status).toBe(200)
    expect(retried.body.refundState).toBe('pending')
    const again = (await read(api, ref)).refund!
    expect(again.refunds.map((r) => r.state)).toEqual(['failed', 'pending'])
    expect(again.amountKobo).toBe(20_000)
    await settle(client, again.refunds[1]!.outboundTransferId!, 'confirmed')
    await refundReaches(api, ref, 'refunded')
    await eventArrives(ref, 'escrow.refunded')
    expect(await moneyOf(harness.app.db.pool, partnerId)).toEqual(
      expect.objectContaining({ holdingKobo: 0, payingOutKobo: 0 }),
    )
    expect((await api.patch(ref, 'refund')).status).toBe(400) // refunded: nothing to retry
    await expectLedgerVerified(harness.app.db.pool)
  })

  it('a credit the bank gave no sender account for: the refund fails at once and the money stays held', async () => {
    const { client, partnerId, api } = await escrowPartner()
    const { ref } = await paidEscrow(client, api, 20_000, [[null, 20_000]])
    expect((await api.cancel(ref, { reason: 'buyer cancelled' })).status).toBe(200)
    expect((await read(api, ref)).refund).toEqual({ state: 'failed', amountKobo: 0, refunds: [] })
    await eventArrives(ref, 'escrow.refund_failed')
    expect(await moneyOf(harness.app.db.pool, partnerId)).toEqual(
      expect.objectContaining({ holdingKobo: 20_000, payingOutKobo: 0 }),
    )
    // A retry cannot do better: it answers the refund still failed, and nothing moves.
    const retried = await api.patch<{ refundState: string }>(ref, 'refund')
    expect([retried.status, retried.body.refundState]).toEqual([200, 'failed'])
    expect(await moneyOf(harness.app.db.pool, partnerId)).toEqual(
      expect.objectContaining({ holdingKobo: 20_000, payingOutKobo: 0 }),
    )
  })

  it('another partner’s escrow: 404 on the refund retry; unknown fields: 422', async () => {
    const owner = await escrowPartner()
    const other = await escrowPartner()
    const { ref } = await paidEscrow(owner.client, owner.api, 20_000, [[ADA, 20_000]])
    expect((await other.api.patch<{ error: string }>(ref, 'refund')).body.error).toBe('not_found')
    expect((await other.api.cancel<{ error: string }>(ref, { reason: 'x' })).body.error).toBe('not_found')
    expect((await owner.api.call('PATCH', `/${ref}/refund`, { force: true })).status).toBe(422)
    expect((await read(owner.api, ref)).status).toBe('funded')
  })
})
