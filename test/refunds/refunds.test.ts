// Refunds of confirmed credits over HTTP, with the sandbox bank and a real webhook receiver: full
// and partial refunds paid back to the sender as payouts of the pipeline (origin refund), a failed
// payout giving the money back, over-refunds refused, two refunds of one credit at once never
// exceeding it, and refunds by payment intent and by invoice (a cancelled invoice's partial payments).
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import { startCollections, waitForCallback, type CollectionsHarness } from '../collections/support.ts'
import {
  confirmedCredit,
  creditTo,
  heldKobo,
  movedFor,
  newPartner,
  PAYER,
  refund,
  refundOne,
  settleRefund,
  type RefundJson,
} from './support.ts'

let harness: CollectionsHarness

beforeAll(async () => {
  harness = await startCollections()
})
afterEach(async () => {
  await expectLedgerVerified(harness.app.db.pool)
})
afterAll(async () => {
  await harness?.close()
  await harness?.app.close()
})

describe('a refund of a confirmed credit', () => {
  it('pays part, then the rest, back to the sender through the pipeline; then nothing is left to refund', async () => {
    const partner = await newPartner(harness)
    const { client, credentials } = partner
    const creditId = await confirmedCredit(harness, partner, 50_000)
    expect(await heldKobo(harness, credentials.partnerId)).toBe(50_000)

    const partial = await refundOne(client, {
      reference: randomUUID(),
      creditId,
      amountKobo: 20_000,
      reason: 'Returned goods',
    })
    expect(partial).toMatchObject({
      creditId,
      amountKobo: 20_000,
      currency: 'NGN',
      state: 'pending',
      origin: { type: 'partner', id: null },
      reason: 'Returned goods',
      completedAt: null,
    })
    // The payout is an ordinary outbound transfer to the sender, its origin the refund.
    const payout = (await client.get<Record<string, unknown>>(`/api/v1/rail/outbound/${partial.outboundTransferId}`))
      .body
    expect(payout).toMatchObject({
      origin: { type: 'refund', id: partial.id, reference: partial.reference },
      beneficiaryAccountNumber: PAYER.payerAccountNumber,
      beneficiaryBankCode: PAYER.payerBankCode,
      amountKobo: 20_000,
    })
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await client.get<{ data: unknown[] }>('/api/v1/rail/outbound?limit=100')).body.data.length === 1,
      20_000,
      'the payout listed',
    )
    const listed = (await client.get<{ data: { id: string }[] }>('/api/v1/rail/outbound?origin=refund')).body.data
    expect(listed.map((transfer) => transfer.id)).toEqual([partial.outboundTransferId])

    const succeeded = await settleRefund(client, partial.id, 'confirmed')
    expect(succeeded).toMatchObject({ state: 'succeeded', failureReason: null })
    expect(succeeded.completedAt).not.toBeNull()
    const [callback] = await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'refund.succeeded' && body.data.id === partial.id,
    )
    expect(callback!.data).toMatchObject({ id: partial.id, state: 'succeeded', amountKobo: 20_000, creditId })
    expect(await heldKobo(harness, credentials.partnerId)).toBe(30_000)

    // No amount: all that is left.
    const rest = await refundOne(client, { reference: randomUUID(), creditId })
    expect(rest.amountKobo).toBe(30_000)
    await settleRefund(client, rest.id, 'confirmed')
    expect(await heldKobo(harness, credentials.partnerId)).toBe(0)

    const more = await refund(client, { reference: randomUUID(), creditId, amountKobo: 1 })
    expect(more.status).toBe(422)
    expect(more.body).toMatchObject({ error: 'refund_exceeds_refundable', details: { refundableKobo: 0 } })
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await client.get<{ data: RefundJson[] }>('/api/v1/rail/refunds?limit=100')).body.data.length === 2,
      20_000,
      'both refunds listed',
    )
    const list = (await client.get<{ data: RefundJson[] }>(`/api/v1/rail/refunds?creditId=${creditId}`)).body.data
    expect(list.map((entry) => entry.id)).toEqual([rest.id, partial.id])
    expect(
      (await client.get<{ data: RefundJson[] }>('/api/v1/rail/refunds?state=succeeded&limit=1')).body.data,
    ).toHaveLength(1)
  })

  it('whose payout fails is failed, its money back where it was held; a new refund can be made', async () => {
    const partner = await newPartner(harness)
    const { client, credentials } = partner
    const creditId = await confirmedCredit(harness, partner, 40_000)
    const first = await refundOne(client, { reference: randomUUID(), creditId, amountKobo: 40_000 })
    const failed = await settleRefund(client, first.id, 'failed')
    expect(failed.state).toBe('failed')
    expect(failed.failureReason).toMatchObject({ code: expect.any(String) })
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'refund.failed' && body.data.id === first.id,
    )
    expect(await heldKobo(harness, credentials.partnerId)).toBe(40_000)

    const second = await refundOne(client, { reference: randomUUID(), creditId })
    expect(second.amountKobo).toBe(40_000)
    expect((await settleRefund(client, second.id, 'confirmed')).state).toBe('succeeded')
    expect(await heldKobo(harness, credentials.partnerId)).toBe(0)
  })

  it('above what is left to refund is refused with the refundable amount, and nothing moves', async () => {
    const partner = await newPartner(harness)
    const creditId = await confirmedCredit(harness, partner, 30_000)
    const before = await movedFor(harness, partner.credentials.partnerId)
    const over = await refund(partner.client, { reference: randomUUID(), creditId, amountKobo: 30_001 })
    expect(over.status).toBe(422)
    expect(over.body).toMatchObject({
      error: 'refund_exceeds_refundable',
      details: { refundableKobo: 30_000, amountKobo: 30_001 },
    })
    expect(await movedFor(harness, partner.credentials.partnerId)).toEqual(before)
    expect(await heldKobo(harness, partner.credentials.partnerId)).toBe(30_000)
  })

  it('made many times at once never refunds more than the credit brought', async () => {
    const partner = await newPartner(harness)
    const creditId = await confirmedCredit(harness, partner, 50_000)
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        refund(partner.client, { reference: randomUUID(), creditId, amountKobo: 20_000 }),
      ),
    )
    const made = answers.filter((answer) => answer.status === 201)
    expect(made).toHaveLength(2)
    for (const answer of answers.filter((entry) => entry.status !== 201)) {
      expect(answer.status).toBe(422)
      expect(answer.body.error).toBe('refund_exceeds_refundable')
    }
    const stored = await harness.app.db.pool.query<{ total: string }>(
      `SELECT sum(amount_kobo) AS total FROM refunds WHERE credit_id = $1 AND state <> 'failed'`,
      [creditId],
    )
    expect(Number(stored.rows[0]!.total)).toBe(40_000)
    // And the last 10,000 twice at once: one of them.
    const last = await Promise.all([0, 1].map(() => refund(partner.client, { reference: randomUUID(), creditId })))
    expect(last.map((answer) => answer.status).sort()).toEqual([201, 422])
    for (const answer of [...made, ...last.filter((entry) => entry.status === 201)])
      await settleRefund(partner.client, answer.body.refunds[0]!.id, 'confirmed')
    expect(await heldKobo(harness, partner.credentials.partnerId)).toBe(0)
  })
})

describe('where a refund is held', () => {
  async function heldOn(outboundTransferId: string | null): Promise<string> {
    const { rows } = await harness.app.db.pool.query<{ kind: string }>(
      `SELECT a.kind FROM outbound_transfers t JOIN ledger_accounts a ON a.id = t.source_account_id WHERE t.id = $1`,
      [outboundTransferId],
    )
    return rows[0]!.kind
  }

  it('is the collections account while the money waits there for a bank settlement, else the float', async () => {
    const floatPartner = await newPartner(harness)
    const toFloat = await refundOne(floatPartner.client, {
      reference: randomUUID(),
      creditId: await confirmedCredit(harness, floatPartner, 10_000),
    })
    expect(await heldOn(toFloat.outboundTransferId)).toBe('float')

    const bankPartner = await newPartner(harness)
    const settlementAccount = { accountNumber: nuban('057', '000246810'), bankCode: '057' }
    const put = await bankPartner.client.request('PUT', '/api/v1/rail/settlement', {
      mode: 'bank',
      bankAccount: {
        ...settlementAccount,
        accountName: syntheticAccountName(settlementAccount.bankCode, settlementAccount.accountNumber),
      },
      cutoffTime: new Date(Date.now() + 13 * 60 * 60 * 1000).toISOString().slice(11, 16),
    })
    expect(put.status).toBe(200)
    const fromCollections = await refundOne(bankPartner.client, {
      reference: randomUUID(),
      creditId: await confirmedCredit(harness, bankPartner, 10_000),
      amountKobo: 4_000,
    })
    expect(await heldOn(fromCollections.outboundTransferId)).toBe('collections')

    await settleRefund(floatPartner.client, toFloat.id, 'confirmed')
    await settleRefund(bankPartner.client, fromCollections.id, 'confirmed')
    expect(await heldKobo(harness, floatPartner.credentials.partnerId)).toBe(0)
    expect(await heldKobo(harness, bankPartner.credentials.partnerId)).toBe(6_000)
  })
})

describe('a refund by payment intent or invoice', () => {
  it('refunds a paid payment intent', async () => {
    const partner = await newPartner(harness)
    const intent = (
      await partner.client.post<{ id: string; virtualAccount: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 25_000,
      })
    ).body
    const creditId = await creditTo(harness, partner, intent.virtualAccount, 25_000)
    const made = await refundOne(partner.client, { reference: randomUUID(), paymentIntentId: intent.id })
    expect(made).toMatchObject({ creditId, amountKobo: 25_000 })
    await settleRefund(partner.client, made.id, 'confirmed')
    expect(await heldKobo(harness, partner.credentials.partnerId)).toBe(0)
  })

  it("refunds a cancelled invoice's partial payments, newest first, one refund per credit", async () => {
    const partner = await newPartner(harness)
    const { client } = partner
    const reference = randomUUID()
    const invoice = (
      await client.post<{ virtualAccount: string }>('/api/v1/rail/invoice', {
        reference,
        title: 'School fees',
        amountKobo: 100_000,
        publishOnCreate: true,
      })
    ).body
    const older = await creditTo(harness, partner, invoice.virtualAccount, 20_000)
    const newer = await creditTo(harness, partner, invoice.virtualAccount, 30_000)
    expect((await client.post<{ status: string }>(`/api/v1/rail/invoice/${reference}/cancel`)).body.status).toBe(
      'cancelled',
    )

    const answer = await refund(client, { reference: randomUUID(), invoiceReference: reference, amountKobo: 40_000 })
    expect(answer.status).toBe(201)
    expect(answer.body.amountKobo).toBe(40_000)
    expect(answer.body.refunds.map((entry) => [entry.creditId, entry.amountKobo])).toEqual([
      [newer, 30_000],
      [older, 10_000],
    ])
    const over = await refund(client, { reference: randomUUID(), invoiceReference: reference, amountKobo: 10_001 })
    expect(over.status).toBe(422)
    expect(over.body).toMatchObject({ error: 'refund_exceeds_refundable', details: { refundableKobo: 10_000 } })
    const rest = await refundOne(client, { reference: randomUUID(), invoiceReference: reference })
    expect(rest).toMatchObject({ creditId: older, amountKobo: 10_000 })
    for (const made of [...answer.body.refunds, rest]) await settleRefund(client, made.id, 'confirmed')
    expect(await heldKobo(harness, partner.credentials.partnerId)).toBe(0)
  })
})
