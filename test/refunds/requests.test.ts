// The Refunds API's requests: replays on the partner's reference, other partners' objects (404),
// credits it does not refund (triage items, escrow funding, no sender account), too little money,
// and bad input — each a clear error in the one shape, with nothing moved.
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createTransfer } from '../../src/ledger/service.ts'
import { MAX_AMOUNT_KOBO_DEFAULT } from '../../src/platform/amounts.ts'
import { payIn, startCollections, type CollectionsHarness } from '../collections/support.ts'
import { createRequest, escrowClient } from '../support/escrow.ts'
import { expectLedgerVerified, newAccount } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import {
  confirmedCredit,
  heldKobo,
  movedFor,
  newPartner,
  PAYER,
  refund,
  settleRefund,
  type Partner,
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

/** Waits for a credit (by the bank's session id) to reach a status; answers its id. */
async function creditOfSession(sessionId: string, status: string): Promise<string> {
  let id = ''
  await waitFor(
    async () => {
      const found = await harness.app.db.pool.query<{ id: string }>(
        `SELECT id FROM inbound_credits WHERE session_id = $1 AND status = $2`,
        [sessionId, status],
      )
      id = found.rows[0]?.id ?? ''
      return id !== ''
    },
    15_000,
    `credit ${sessionId} ${status}`,
  )
  return id
}

async function expectRefused(partner: Partner, body: Record<string, unknown>, status: number, error: string) {
  const before = await movedFor(harness, partner.credentials.partnerId)
  const answer = await refund(partner.client, body)
  expect(answer.status, JSON.stringify(body)).toBe(status)
  expect(answer.body.error, JSON.stringify(answer.body)).toBe(error)
  expect(await movedFor(harness, partner.credentials.partnerId)).toEqual(before)
  return answer.body
}

describe('replays', () => {
  it('answer the same refunds with Idempotent-Replayed; another body with the reference is 409; concurrent duplicates make one', async () => {
    const partner = await newPartner(harness)
    const creditId = await confirmedCredit(harness, partner, 60_000)
    const body = { reference: randomUUID(), creditId, amountKobo: 10_000 }
    const first = await refund(partner.client, body)
    expect(first.status).toBe(201)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const again = await refund(partner.client, body)
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(first.body)
    await expectRefused(partner, { ...body, amountKobo: 10_001 }, 409, 'idempotency_conflict')

    const racing = { reference: randomUUID(), creditId, amountKobo: 5_000 }
    const answers = await Promise.all(Array.from({ length: 6 }, () => refund(partner.client, racing)))
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201, 201])
    expect(answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true')).toHaveLength(5)
    expect(new Set(answers.map((answer) => answer.body.refunds[0]!.id)).size).toBe(1)
    const stored = await harness.app.db.pool.query(`SELECT id FROM refunds WHERE partner_id = $1 AND reference = $2`, [
      partner.credentials.partnerId,
      racing.reference,
    ])
    expect(stored.rows).toHaveLength(1)
    for (const made of [first.body.refunds[0]!, answers[0]!.body.refunds[0]!])
      await settleRefund(partner.client, made.id, 'confirmed')
    expect(await heldKobo(harness, partner.credentials.partnerId)).toBe(45_000)
  })

  it('a replay after the payout failed answers the failed refund and starts nothing; a new reference starts a new refund', async () => {
    const partner = await newPartner(harness)
    const creditId = await confirmedCredit(harness, partner, 30_000)
    const body = { reference: randomUUID(), creditId, amountKobo: 10_000 }
    const first = await refund(partner.client, body)
    expect(first.status, JSON.stringify(first.body)).toBe(201)
    const made = first.body.refunds[0]!
    const failed = await settleRefund(partner.client, made.id, 'failed')
    expect(failed.state).toBe('failed')
    const before = await movedFor(harness, partner.credentials.partnerId)

    const again = await refund(partner.client, body)
    expect(again.status, JSON.stringify(again.body)).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body.refunds.map((one) => [one.id, one.state, one.outboundTransferId])).toEqual([
      [made.id, 'failed', made.outboundTransferId],
    ])
    expect(again.body.refunds[0]!.failureReason).toEqual(failed.failureReason)
    expect(await movedFor(harness, partner.credentials.partnerId)).toEqual(before)

    const anew = await refund(partner.client, { ...body, reference: randomUUID() })
    expect(anew.status, JSON.stringify(anew.body)).toBe(201)
    expect(anew.body.refunds[0]!.id).not.toBe(made.id)
    expect(await movedFor(harness, partner.credentials.partnerId)).toEqual({
      refunds: before.refunds + 1,
      payouts: before.payouts + 1,
    })
    await settleRefund(partner.client, anew.body.refunds[0]!.id, 'confirmed')
  })
})

describe('other partners', () => {
  it("cannot refund, read or list another partner's credits, intents, invoices and refunds (404)", async () => {
    const owner = await newPartner(harness)
    const other = await newPartner(harness)
    const creditId = await confirmedCredit(harness, owner, 20_000)
    const intent = (
      await owner.client.post<{ id: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 5_000,
      })
    ).body
    const invoiceReference = randomUUID()
    expect(
      (
        await owner.client.post('/api/v1/rail/invoice', {
          reference: invoiceReference,
          title: 'Rent',
          amountKobo: 5_000,
          publishOnCreate: true,
        })
      ).status,
    ).toBe(200)
    const made = (await refund(owner.client, { reference: randomUUID(), creditId, amountKobo: 1_000 })).body.refunds[0]!

    await expectRefused(other, { reference: randomUUID(), creditId }, 404, 'not_found')
    await expectRefused(other, { reference: randomUUID(), paymentIntentId: intent.id }, 404, 'not_found')
    await expectRefused(other, { reference: randomUUID(), invoiceReference }, 404, 'not_found')
    await expectRefused(owner, { reference: randomUUID(), creditId: randomUUID() }, 404, 'not_found')
    expect((await other.client.get(`/api/v1/rail/refunds/${made.id}`)).status).toBe(404)
    expect((await other.client.get<{ data: RefundJson[] }>('/api/v1/rail/refunds')).body.data).toEqual([])
    expect((await owner.client.get<RefundJson>(`/api/v1/rail/refunds/${made.id}`)).body.id).toBe(made.id)
    await settleRefund(owner.client, made.id, 'confirmed')
  })
})

describe('credits the Refunds API does not refund', () => {
  it('an unmatched credit is triage’s (409); one without a valid sender account is 422 refund_destination_unknown', async () => {
    const partner = await newPartner(harness)
    const account = (
      await partner.client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    expect((await partner.client.post(`/api/v1/rail/virtual-account/${account.trackingId}/archive`)).status).toBe(200)
    const { sessionId } = await payIn(partner.client, account.virtualAccount, 8_000, PAYER)
    const unmatched = await creditOfSession(sessionId, 'unmatched')
    const refused = await expectRefused(partner, { reference: randomUUID(), creditId: unmatched }, 409, 'invalid_state')
    expect(refused).toMatchObject({ details: { creditId: unmatched, status: 'unmatched', currentState: 'unmatched' } })
    // Triage refunds it through the same refunds: listed with origin triage, ended by its payout.
    const resolved = await partner.client.post<{ status: string; resolution: { refundId: string } }>(
      `/api/v1/rail/unmatched/${unmatched}/resolve`,
      { action: 'refund' },
    )
    expect(resolved.body.status).toBe('refund_pending')
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () =>
        (await partner.client.get<{ data: RefundJson[] }>('/api/v1/rail/refunds?limit=100')).body.data.length === 1,
      20_000,
      'the refund listed',
    )
    const [viaTriage] = (await partner.client.get<{ data: RefundJson[] }>(`/api/v1/rail/refunds?creditId=${unmatched}`))
      .body.data
    expect(viaTriage).toMatchObject({
      id: resolved.body.resolution.refundId,
      origin: { type: 'triage', id: null },
      amountKobo: 8_000,
      state: 'pending',
    })
    expect((await settleRefund(partner.client, viaTriage!.id, 'confirmed')).state).toBe('succeeded')
    await waitFor(
      async () =>
        (await partner.client.get<{ status: string }>(`/api/v1/rail/unmatched/${unmatched}`)).body.status ===
        'refunded',
      10_000,
      'triage item refunded',
    )

    const anonymous = await confirmedCredit(harness, partner, 9_000, {})
    await expectRefused(partner, { reference: randomUUID(), creditId: anonymous }, 422, 'refund_destination_unknown')
  })

  it('a credit that funded an escrow is refunded by cancelling the escrow (409)', async () => {
    const partner = await newPartner(harness)
    const escrows = escrowClient(harness.app.baseUrl, partner.credentials.escrowApiKey)
    const created = await escrows.create<{ ref?: string }>(createRequest({ amount: 12_000, reference: randomUUID() }))
    expect(created.status).toBeLessThan(300)
    const { rows } = await harness.app.db.pool.query<{ id: string; account_number: string }>(
      `SELECT pi.id, va.account_number FROM escrows e JOIN payment_intents pi ON pi.id = e.funding_payment_intent_id JOIN virtual_accounts va ON va.id = pi.virtual_account_id
        WHERE e.partner_id = $1`,
      [partner.credentials.partnerId],
    )
    const { sessionId } = await payIn(partner.client, rows[0]!.account_number, 12_000, PAYER)
    const creditId = await creditOfSession(sessionId, 'applied')
    await expectRefused(partner, { reference: randomUUID(), creditId }, 409, 'invalid_state')
    await expectRefused(partner, { reference: randomUUID(), paymentIntentId: rows[0]!.id }, 409, 'invalid_state')
  })

  it('a refund neither the collections account nor the float can cover is 422 insufficient_funds', async () => {
    const partner = await newPartner(harness)
    const creditId = await confirmedCredit(harness, partner, 15_000)
    // The collected money is spent elsewhere (moved out of collections and float by hand).
    const { pool } = harness.app.db
    const elsewhere = await newAccount(pool)
    const accounts = await pool.query<{ id: string; available: string }>(
      `SELECT id, credits_posted - debits_posted - debits_pending AS available FROM ledger_accounts WHERE partner_id = $1 AND kind IN ('collections', 'float')`,
      [partner.credentials.partnerId],
    )
    for (const account of accounts.rows.filter((row) => Number(row.available) > 0)) {
      await createTransfer(pool, {
        id: randomUUID(),
        debitAccountId: account.id,
        creditAccountId: elsewhere,
        amountKobo: Number(account.available),
        currency: 'NGN',
        code: 'test_spend',
      })
    }
    await expectRefused(partner, { reference: randomUUID(), creditId }, 422, 'insufficient_funds')
  })
})

describe('bad input', () => {
  it('is refused with 422 naming the field, and nothing moves', async () => {
    const partner = await newPartner(harness)
    const creditId = await confirmedCredit(harness, partner, 10_000)
    const reference = randomUUID()
    const cases: [Record<string, unknown>, string][] = [
      [{ reference, creditId, amountKobo: 100, extra: true }, 'validation_error'],
      [{ creditId, amountKobo: 100 }, 'validation_error'],
      [{ reference, creditId, amountKobo: '100' }, 'validation_error'],
      [{ reference, creditId: 42 }, 'validation_error'],
      [{ reference, creditId: 'not-a-uuid' }, 'validation_error'],
      [{ reference: 7, creditId }, 'validation_error'],
      [{ reference: 'bad\u0000ref', creditId }, 'validation_error'],
      [{ reference, creditId, reason: 'line\nbreak' }, 'validation_error'],
      [{ reference, invoiceReference: 'inv\u001b[31m' }, 'validation_error'],
      [{ reference, creditId, amountKobo: 0 }, 'validation_error'],
      [{ reference, creditId, amountKobo: -5 }, 'validation_error'],
      [{ reference, creditId, amountKobo: 1.5 }, 'validation_error'],
      [{ reference, creditId, amountKobo: MAX_AMOUNT_KOBO_DEFAULT + 1 }, 'amount_above_limit'],
      [{ reference: '', creditId }, 'validation_error'],
      [{ reference: 'x'.repeat(65), creditId }, 'validation_error'],
    ]
    for (const [body, error] of cases) await expectRefused(partner, body, 422, error)

    const none = await expectRefused(partner, { reference }, 422, 'validation_error')
    const fields = (none.details as { fields: { field: string }[] }).fields.map((entry) => entry.field)
    expect(fields).toEqual(['creditId', 'paymentIntentId', 'invoiceReference'])
    await expectRefused(partner, { reference, creditId, paymentIntentId: randomUUID() }, 422, 'validation_error')
    expect((await partner.client.get('/api/v1/rail/refunds?state=done')).status).toBe(422)
    expect((await partner.client.get('/api/v1/rail/refunds/not-a-uuid')).status).toBe(422)
    // The reference was never taken: it still makes a refund.
    const made = await refund(partner.client, { reference, creditId, amountKobo: 10_000 })
    expect(made.status).toBe(201)
    await settleRefund(partner.client, made.body.refunds[0]!.id, 'confirmed')
  })
})
