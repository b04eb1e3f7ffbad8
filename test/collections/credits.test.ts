// Inbound credits end to end: the sandbox bank receives money into a virtual account, announces
// it to Rail by its signed webhook, a worker applies it and the partner's callback arrives signed.
// Payment intents (paid, partially paid, overpaid), persistent accounts with BRRs, FBO funding,
// duplicate and forged notices, the status by BRR across partners.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isValidBrr } from '../../src/banking/nip/brr.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import {
  bookedKobo,
  payIn,
  postBankNotice,
  startCollections,
  waitForCallback,
  type CollectionsHarness,
} from './support.ts'

let harness: CollectionsHarness

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  if (harness) await expectLedgerVerified(harness.app.db.pool)
  // Every credit the bank received reached Rail once and was settled: Rail's books agree with the
  // bank's (notices the tests forged by hand have no bank record and are left out).
  const bank = await harness.app.db.pool.query<{ total: string }>(
    `SELECT coalesce(sum(amount_kobo), 0) AS total FROM sandbox_bank.transfers WHERE kind = 'inbound'`,
  )
  const rail = await harness.app.db.pool.query<{ total: string }>(
    `SELECT coalesce(sum(amount_kobo), 0) AS total FROM inbound_credits
      WHERE status IN ('applied', 'unmatched', 'refunded', 'assigned') AND session_id IN (SELECT session_id FROM sandbox_bank.transfers WHERE kind = 'inbound')`,
  )
  expect(rail.rows[0]!.total).toBe(bank.rows[0]!.total)
  await harness?.app.close()
})

const PAYER = { payerName: 'Emeka Obi', payerAccountNumber: nuban('058', '000123456'), payerBankCode: '058' }

async function partner(customerClass: 'government' | 'corporate' | 'fintech' | 'citizen' = 'fintech') {
  return harness.app.newPartner({ customerClass, callbackUrl: harness.hook.url })
}

describe('payment intents', () => {
  it('is paid by a credit of the expected amount: credit.confirmed arrives signed, the money is in collections', async () => {
    const { client, credentials } = await partner()
    const intent = (
      await client.post<{ id: string; trackingId: string; virtualAccount: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 150_000,
      })
    ).body
    const paid = await payIn(client, intent.virtualAccount, 150_000, PAYER)
    expect(paid.notified).toBe(true)
    const [callback] = await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.data.trackingId === intent.trackingId,
    )
    expect(callback!.event).toBe('credit.confirmed')
    expect(callback!.data).toMatchObject({
      trackingId: intent.trackingId,
      objectType: 'payment_intent',
      amountKobo: 150_000,
      currency: 'NGN',
      virtualAccount: intent.virtualAccount,
      sessionId: paid.sessionId,
      brr: null,
      payer: { name: 'Emeka Obi', accountNumber: PAYER.payerAccountNumber, bankCode: '058' },
      paymentIntent: { id: intent.id, status: 'paid', amountKobo: 150_000, amountReceivedKobo: 150_000 },
    })
    expect((await client.get<{ status: string }>(`/api/v1/rail/payment/intent/${intent.id}`)).body.status).toBe('paid')
    // Settled at once from collections to the float (float mode, the default: docs/settlement.md).
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(150_000)
  })

  it('is partially paid, then paid, then overpaid as credits add up', async () => {
    const { client, credentials } = await partner()
    const intent = (
      await client.post<{ id: string; trackingId: string; virtualAccount: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 100_000,
      })
    ).body
    const statusAfter = async (amountKobo: number, count: number) => {
      await payIn(client, intent.virtualAccount, amountKobo)
      const callbacks = await waitForCallback(
        harness.hook,
        credentials.callbackSigningSecret,
        (body) => body.data.trackingId === intent.trackingId,
        count,
      )
      return (callbacks[count - 1]!.data.paymentIntent as { status: string }).status
    }
    expect(await statusAfter(40_000, 1)).toBe('partially_paid')
    expect(await statusAfter(60_000, 2)).toBe('paid')
    expect(await statusAfter(5_000, 3)).toBe('overpaid')
    // Settled at once from collections to the float (float mode, the default: docs/settlement.md).
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(105_000)
  })
})

describe('persistent virtual accounts and BRR', () => {
  it('gives each credit to a BRR-bearing account its own BRR, readable by its owner only', async () => {
    const gov = await partner('government')
    const account = (
      await gov.client.post<{ trackingId: string; virtualAccount: string; brr: string }>(
        '/api/v1/rail/virtual-account',
        { reference: randomUUID() },
      )
    ).body
    await payIn(gov.client, account.virtualAccount, 70_000, PAYER)
    const [callback] = await waitForCallback(
      harness.hook,
      gov.credentials.callbackSigningSecret,
      (body) => body.data.trackingId === account.trackingId,
    )
    expect(callback!.event).toBe('credit.confirmed')
    expect(callback!.data).toMatchObject({ objectType: 'virtual_account', amountKobo: 70_000, paymentIntent: null })
    const transactionBrr = callback!.data.brr as string
    expect(isValidBrr(transactionBrr)).toBe(true)
    expect(transactionBrr).not.toBe(account.brr)

    const byTransaction = await gov.client.get<Record<string, unknown>>(
      `/api/v1/rail/collections/brr/${transactionBrr}`,
    )
    expect(byTransaction.status).toBe(200)
    expect(byTransaction.body).toMatchObject({
      brr: transactionBrr,
      kind: 'transaction',
      status: 'confirmed',
      transaction: { amountKobo: 70_000 },
      account: { trackingId: account.trackingId },
    })
    const byAccount = await gov.client.get<{ kind: string; status: string; transactions: { brr: string }[] }>(
      `/api/v1/rail/collections/brr/${account.brr}`,
    )
    expect(byAccount.status).toBe(200)
    expect(byAccount.body.kind).toBe('account')
    expect(byAccount.body.status).toBe('active')
    expect(byAccount.body.transactions.map((transaction) => transaction.brr)).toEqual([transactionBrr])

    // Another partner, and a BRR nobody holds: the same 404.
    const other = await partner('corporate')
    const theirs = await other.client.get(`/api/v1/rail/collections/brr/${transactionBrr}`)
    const nobody = await other.client.get(`/api/v1/rail/collections/brr/BRR00000000000000000`)
    const accountOfOther = await other.client.get(`/api/v1/rail/collections/brr/${account.brr}`)
    expect(theirs.status).toBe(404)
    expect(accountOfOther.status).toBe(404)
    expect(nobody.status).toBe(404)
    expect(theirs.body).toEqual(nobody.body)
    expect(accountOfOther.body).toEqual(nobody.body)
  })

  it('gives credits to a reference-only account no BRR', async () => {
    const { client, credentials } = await partner('citizen')
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string; brr: string | null }>(
        '/api/v1/rail/virtual-account',
        { reference: randomUUID() },
      )
    ).body
    expect(account.brr).toBeNull()
    await payIn(client, account.virtualAccount, 12_345)
    const [callback] = await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.data.trackingId === account.trackingId,
    )
    expect(callback!.data.brr).toBeNull()
  })

  it("sends a credit's callback to the account's own callbackUrl when it has one", async () => {
    const { client, credentials } = await partner()
    const own = `${harness.hook.url}/own-account-hook`
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
        callbackUrl: own,
      })
    ).body
    await payIn(client, account.virtualAccount, 9_000)
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.data.trackingId === account.trackingId,
    )
    const request = harness.hook.requests.find((received) => received.rawBody.includes(account.trackingId))!
    expect(request.path.endsWith('/own-account-hook')).toBe(true)
  })
})

describe('FBO pool accounts', () => {
  it('emits fbo.funding with the holderRef and no balance for each credit', async () => {
    const { client, credentials } = await partner()
    const fbo = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/fbo/provision', {
        holderRef: `h-${randomUUID()}`,
      })
    ).body
    await payIn(client, fbo.virtualAccount, 30_000)
    await payIn(client, fbo.virtualAccount, 20_000)
    const callbacks = await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.data.trackingId === fbo.trackingId,
      2,
    )
    for (const callback of callbacks) {
      expect(callback.event).toBe('fbo.funding')
      expect(callback.eventKind).toBe('fbo.funding')
      expect(callback.data.holderRef).toMatch(/^h-/)
      expect(JSON.stringify(callback.data)).not.toMatch(/balance/i)
    }
    expect(callbacks.map((callback) => callback.data.amountKobo).sort()).toEqual([20_000, 30_000])
    // Settled at once from collections to the float (float mode, the default: docs/settlement.md).
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(50_000)
  })
})

describe('the provider webhook', () => {
  it('applies a duplicate notice once', async () => {
    const { client, credentials } = await partner()
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    const notice = JSON.stringify({
      type: 'credit.received',
      sessionId: `999${Date.now()}${Math.floor(Math.random() * 1e6)}`.slice(0, 30),
      accountNumber: account.virtualAccount,
      bankCode: '101',
      amountKobo: 44_000,
      currency: 'NGN',
      payerName: null,
      payerAccountNumber: null,
      payerBankCode: null,
      narration: null,
      creditedAt: new Date().toISOString(),
    })
    const answers = await Promise.all([
      postBankNotice(harness.app.baseUrl, notice),
      postBankNotice(harness.app.baseUrl, notice),
      postBankNotice(harness.app.baseUrl, notice),
    ])
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200])
    const bodies = (await Promise.all(answers.map((answer) => answer.json()))) as {
      creditId: string
      duplicate: boolean
    }[]
    expect(new Set(bodies.map((body) => body.creditId)).size).toBe(1)
    expect(bodies.filter((body) => !body.duplicate)).toHaveLength(1)
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.data.trackingId === account.trackingId,
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    // Settled at once from collections to the float (float mode, the default: docs/settlement.md).
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(44_000)
    const stored = await harness.app.db.pool.query(
      `SELECT count(*)::int AS n FROM inbound_credits WHERE account_number = $1`,
      [account.virtualAccount],
    )
    expect(stored.rows[0].n).toBe(1)
  })

  it('refuses unsigned, badly signed and stale notices with 401 and stores nothing', async () => {
    const { client } = await partner()
    const account = (
      await client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', { reference: randomUUID() })
    ).body
    const notice = JSON.stringify({
      type: 'credit.received',
      sessionId: '1234567890',
      accountNumber: account.virtualAccount,
      amountKobo: 1_000,
      currency: 'NGN',
      creditedAt: new Date().toISOString(),
    })
    const unsigned = await postBankNotice(harness.app.baseUrl, notice, { unsigned: true })
    const forged = await postBankNotice(harness.app.baseUrl, notice, { secret: 'not-the-secret' })
    expect(unsigned.status).toBe(401)
    expect(forged.status).toBe(401)
    expect(((await forged.json()) as { error: string }).error).toBe('unauthorized')
    // Tampered: signed for another body.
    const path = '/providers/sandbox/webhooks'
    const { signRequest } = await import('../../src/client/signing.ts')
    const signed = signRequest({
      keyId: 'bank',
      signingSecret: 'collections-test-secret',
      method: 'POST',
      pathWithQuery: path,
      body: notice,
    })
    const tampered = await fetch(`${harness.app.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Sandbox-Timestamp': signed['X-Rail-Timestamp']!,
        'X-Sandbox-Signature': signed['X-Rail-Signature']!,
      },
      body: notice.replace('1000', '9000'),
    })
    expect(tampered.status).toBe(401)
    const stored = await harness.app.db.pool.query(
      `SELECT count(*)::int AS n FROM inbound_credits WHERE account_number = $1`,
      [account.virtualAccount],
    )
    expect(stored.rows[0].n).toBe(0)
    // An unknown provider is not found; a signed notice that is not a credit is a bad request.
    expect((await postBankNotice(harness.app.baseUrl, notice, { provider: 'nobody' })).status).toBe(404)
    expect((await postBankNotice(harness.app.baseUrl, JSON.stringify({ type: 'something.else' }))).status).toBe(400)
  })

  it('keeps a credit to an account Rail does not know as unattributed, moving no money', async () => {
    const notice = JSON.stringify({
      type: 'credit.received',
      sessionId: '55501234',
      accountNumber: nuban('101', '999999991'),
      amountKobo: 5_000,
      currency: 'NGN',
      creditedAt: new Date().toISOString(),
    })
    const answer = await postBankNotice(harness.app.baseUrl, notice)
    expect(answer.status).toBe(200)
    const { creditId } = (await answer.json()) as { creditId: string }
    await waitFor(
      async () =>
        (await harness.app.db.pool.query(`SELECT status FROM inbound_credits WHERE id = $1`, [creditId])).rows[0]
          .status === 'unattributed',
      10_000,
      'unattributed',
    )
    const transfers = await harness.app.db.pool.query(`SELECT 1 FROM ledger_transfers WHERE source_id = $1`, [creditId])
    expect(transfers.rowCount).toBe(0)
  })
})

describe('the sandbox simulator', () => {
  it("refuses another partner's account (404), a live partner (404) and bad input (422)", async () => {
    const owner = await partner()
    const other = await partner()
    const account = (
      await owner.client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', { reference: randomUUID() })
    ).body
    expect(
      (
        await other.client.post('/api/v1/rail/sandbox/simulate-inbound-credit', {
          virtualAccount: account.virtualAccount,
          amountKobo: 100,
        })
      ).status,
    ).toBe(404)
    const live = await harness.app.newPartner({ environment: 'live' })
    expect(
      (
        await live.client.post('/api/v1/rail/sandbox/simulate-inbound-credit', {
          virtualAccount: account.virtualAccount,
          amountKobo: 100,
        })
      ).status,
    ).toBe(404)
    for (const body of [
      {},
      { virtualAccount: account.virtualAccount },
      { virtualAccount: '123', amountKobo: 100 },
      { virtualAccount: account.virtualAccount, amountKobo: -1 },
      { virtualAccount: account.virtualAccount, amountKobo: 100, extra: 1 },
      { virtualAccount: account.virtualAccount, amountKobo: 100, payerBankCode: '999' },
    ]) {
      expect(
        (await owner.client.post('/api/v1/rail/sandbox/simulate-inbound-credit', body)).status,
        JSON.stringify(body),
      ).toBe(422)
    }
  })
})
