// Settlement to the float (the default mode): each confirmed credit whose money stays in
// collections moves on to the float in its own transaction — a ledger line per credit — so the
// float shows it at once and collections is back to 0. Escrow funding is not settled: the escrow
// takes its credit out of collections into its holding account.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { derivedId } from '../../src/ledger/service.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { createRequest, escrowClient } from '../support/escrow.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import {
  bookedKobo,
  payIn,
  startCollections,
  waitForCallback,
  type CollectionsHarness,
} from '../collections/support.ts'

let harness: CollectionsHarness

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  if (harness) await expectLedgerVerified(harness.app.db.pool)
  await harness?.app.close()
})

const PAYER = { payerName: 'Amina Bello', payerAccountNumber: nuban('044', '000765432'), payerBankCode: '044' }

async function partner() {
  return harness.app.newPartner({ callbackUrl: harness.hook.url })
}

async function floatKobo(
  client: Awaited<ReturnType<typeof partner>>['client'],
): Promise<{ availableBalanceKobo: number; bookedBalanceKobo: number }> {
  return (await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>('/api/v1/rail/float')).body
}

/** The ledger transfer that settled a credit to the float, as the ledger stores it. */
async function settlementLine(creditId: string) {
  const { rows } = await harness.app.db.pool.query<{
    amount_kobo: string
    code: string
    source_type: string
    source_id: string
  }>(`SELECT amount_kobo, code, source_type, source_id FROM ledger_transfers WHERE id = $1`, [
    derivedId(creditId, 'settlement_to_float'),
  ])
  return (
    rows[0] && {
      amountKobo: Number(rows[0].amount_kobo),
      code: rows[0].code,
      sourceType: rows[0].source_type,
      sourceId: rows[0].source_id,
    }
  )
}

describe('float settlement (the default)', () => {
  it('moves each credit to a persistent account and to a payment intent on to the float at once', async () => {
    const { client, credentials } = await partner()
    const settings = await client.get<{
      mode: string
      bankAccount: unknown
      cutoffTime: string
      nextCutoffAt: string | null
    }>('/api/v1/rail/settlement')
    expect(settings.status).toBe(200)
    expect(settings.body).toMatchObject({ mode: 'float', bankAccount: null, cutoffTime: '17:00', nextCutoffAt: null })

    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    const intent = (
      await client.post<{ id: string; trackingId: string; virtualAccount: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 70_000,
      })
    ).body
    await payIn(client, account.virtualAccount, 25_000, PAYER)
    await payIn(client, account.virtualAccount, 5_000, PAYER)
    await payIn(client, intent.virtualAccount, 70_000, PAYER)
    const callbacks = await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) =>
        body.event === 'credit.confirmed' &&
        [account.trackingId, intent.trackingId].includes(body.data.trackingId as string),
      3,
    )

    // The callback is sent in the credit's transaction, and so is the move: the float has it already.
    expect(await floatKobo(client)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 100_000, bookedBalanceKobo: 100_000 }),
    )
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    for (const callback of callbacks) {
      const creditId = callback.data.creditId as string
      expect(await settlementLine(creditId)).toEqual({
        amountKobo: callback.data.amountKobo,
        code: 'settlement_to_float',
        sourceType: 'inbound_credit',
        sourceId: creditId,
      })
    }
    // A float settlement is a ledger line, not a settlement object: nothing listed, no settlement event.
    expect((await client.get<{ data: unknown[] }>('/api/v1/rail/settlements')).body.data).toEqual([])
    expect(harness.hook.requests.some((request) => request.rawBody.includes('"settlement.'))).toBe(false)
  })

  it('settles an invoice payment, and a triage credit assigned to an account', async () => {
    const { client, credentials } = await partner()
    const invoice = (
      await client.post<{ id: string; virtualAccount: string }>('/api/v1/rail/invoice', {
        reference: randomUUID(),
        title: 'Dues',
        amountKobo: 30_000,
        publishOnCreate: true,
      })
    ).body
    await payIn(client, invoice.virtualAccount, 30_000, PAYER)
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'invoice.paid' && body.data.id === invoice.id,
    )
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect((await floatKobo(client)).bookedBalanceKobo).toBe(30_000)

    // Triage: a credit to an archived account, then assigned to a live one.
    const archived = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    const live = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    expect((await client.post(`/api/v1/rail/virtual-account/${archived.trackingId}/archive`)).status).toBe(200)
    await payIn(client, archived.virtualAccount, 12_000, PAYER)
    let itemId = ''
    await waitFor(
      async () => {
        const items = (await client.get<{ data: { id: string }[] }>('/api/v1/rail/unmatched?status=unmatched')).body
          .data
        itemId = items[0]?.id ?? ''
        return itemId !== ''
      },
      15_000,
      'unmatched credit',
    )
    expect(await bookedKobo(harness.app, credentials.partnerId, 'suspense')).toBe(12_000)
    expect(
      (await client.post(`/api/v1/rail/unmatched/${itemId}/resolve`, { action: 'assign', target: live.trackingId }))
        .status,
    ).toBe(200)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'suspense')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect((await floatKobo(client)).bookedBalanceKobo).toBe(42_000)
    expect(await settlementLine(itemId)).toMatchObject({ amountKobo: 12_000, sourceId: itemId })
  })

  it('leaves escrow funding alone: the escrow holds its money, collections and float see none of it', async () => {
    const { client, credentials } = await partner()
    const api = escrowClient(harness.app.baseUrl, credentials.escrowApiKey)
    const created = await api.create<{ ref: string; funding: { virtualAccount: string } }>(
      createRequest({ amount: 40_000 }),
    )
    expect(created.status).toBe(201)
    await payIn(client, created.body.funding.virtualAccount, 40_000, PAYER)
    await waitFor(
      async () => (await api.get<{ escrow: { status: string } }>(created.body.ref)).body.escrow.status === 'funded',
      15_000,
      'escrow funded',
    )
    expect(await bookedKobo(harness.app, credentials.partnerId, 'escrow_holding')).toBe(40_000)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(0)
  })
})
