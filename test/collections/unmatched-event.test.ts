// credit.unmatched: whenever a credit falls to triage — an archived account, an expired intent, a
// closed or overpaid invoice, an account Rail does not know, another currency, a wallet credit it
// cannot take — the partner receives one signed credit.unmatched callback per triage item, from
// the transaction that put it there. Over HTTP with the sandbox bank and a real receiver.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { systemClock } from '../../src/platform/clock.ts'
import { expireIntents } from '../../src/collections/intents/service.ts'
import { SandboxBank } from '../../src/sandbox/service.ts'
import { allocationReference } from '../../src/collections/virtual-accounts/service.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import {
  callbacksFor,
  payIn,
  postBankNotice,
  startCollections,
  waitForCallback,
  type CollectionsHarness,
  type EventBody,
} from './support.ts'

let harness: CollectionsHarness

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  if (harness) await expectLedgerVerified(harness.app.db.pool)
  await harness?.app.close()
})

const PAYER = { payerName: 'Yusuf Bello', payerAccountNumber: nuban('011', '000456789'), payerBankCode: '011' }

interface TriageItem {
  id: string
  reason: string
  amountKobo: number
  sessionId: string
  trackingId: string | null
}

interface UnmatchedData {
  creditId: string
  reason: string
  amountKobo: number
  currency: string
  virtualAccount: string
  trackingId: string | null
  walletId: string | null
  sessionId: string
  payer: { name: string | null; accountNumber: string | null; bankCode: string | null }
  excessOf: { creditId: string; sessionId: string; amountKobo: number } | null
}

async function partner() {
  return harness.app.newPartner({ callbackUrl: harness.hook.url })
}

async function newAccount(client: RailClient, extra: Record<string, unknown> = {}) {
  const created = await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
    reference: randomUUID(),
    ...extra,
  })
  expect(created.status, JSON.stringify(created.body)).toBe(200)
  return created.body
}

async function triage(client: RailClient, count: number): Promise<TriageItem[]> {
  let items: TriageItem[] = []
  await waitFor(
    async () => {
      items = (await client.get<{ data: TriageItem[] }>('/api/v1/rail/unmatched?limit=100')).body.data
      return items.length >= count
    },
    15_000,
    `${count} triage items`,
  )
  return items
}

const unmatchedCallbacks = (secret: string, match: (data: UnmatchedData) => boolean): EventBody<UnmatchedData>[] =>
  callbacksFor(
    harness.hook,
    secret,
    (body) => body.event === 'credit.unmatched' && match(body.data as unknown as UnmatchedData),
  ) as unknown as EventBody<UnmatchedData>[]

async function unmatchedCallbackOf(secret: string, item: TriageItem): Promise<UnmatchedData> {
  const [callback] = await waitForCallback(
    harness.hook,
    secret,
    (body) => body.event === 'credit.unmatched' && body.data.creditId === item.id,
  )
  return callback!.data as unknown as UnmatchedData
}

/** Each triage item of the partner has exactly one credit.unmatched event, and there is no other. */
async function expectOneEventPerItem(partnerId: string): Promise<void> {
  const found = await harness.app.db.pool.query<{ id: string; events: string }>(
    `SELECT c.id, (SELECT count(*) FROM events e WHERE e.type = 'credit.unmatched' AND e.object_id = c.id::text) AS events
       FROM inbound_credits c WHERE c.partner_id = $1 AND c.unmatched_reason IS NOT NULL`,
    [partnerId],
  )
  expect(found.rows.length).toBeGreaterThan(0)
  for (const row of found.rows) expect(Number(row.events), row.id).toBe(1)
  const events = await harness.app.db.pool.query<{ count: string }>(
    `SELECT count(*) FROM events WHERE partner_id = $1 AND type = 'credit.unmatched'`,
    [partnerId],
  )
  expect(Number(events.rows[0]!.count)).toBe(found.rows.length)
}

describe('credit.unmatched', () => {
  it('is delivered, signed, for a credit to an archived account: reason, amount, account, payer', async () => {
    const { client, credentials } = await partner()
    const account = await newAccount(client)
    expect((await client.post(`/api/v1/rail/virtual-account/${account.trackingId}/archive`)).status).toBe(200)
    const paid = await payIn(client, account.virtualAccount, 80_000, PAYER)
    const [item] = await triage(client, 1)
    const data = await unmatchedCallbackOf(credentials.callbackSigningSecret, item!)
    expect(data).toEqual({
      creditId: item!.id,
      reason: 'account_archived',
      amountKobo: 80_000,
      currency: 'NGN',
      virtualAccount: account.virtualAccount,
      trackingId: account.trackingId,
      walletId: null,
      sessionId: paid.sessionId,
      payer: { name: PAYER.payerName, accountNumber: PAYER.payerAccountNumber, bankCode: PAYER.payerBankCode },
      narration: null,
      creditedAt: expect.any(String),
      excessOf: null,
      foundBy: 'notice',
    })
    // The same bank notice again stores nothing new and tells nothing new.
    const notice = (await new SandboxBank(harness.app.db.pool).inboundNotice(paid.sessionId))!.notice
    expect((await postBankNotice(harness.app.baseUrl, JSON.stringify(notice))).status).toBe(200)
    await expectOneEventPerItem(credentials.partnerId)
  })

  it("goes to the account's own callback URL when it has one", async () => {
    const { client, credentials } = await partner()
    const account = await newAccount(client, { callbackUrl: `${harness.hook.url}/account-hook` })
    await client.post(`/api/v1/rail/virtual-account/${account.trackingId}/archive`)
    await payIn(client, account.virtualAccount, 3_000)
    const [item] = await triage(client, 1)
    await unmatchedCallbackOf(credentials.callbackSigningSecret, item!)
    const delivered = harness.hook.requests.filter((request) => request.rawBody.includes(item!.id))
    expect(delivered.map((request) => request.path)).toEqual(['/hooks/account-hook'])
  })

  it('is delivered for a credit to an expired payment intent (its account archived by the expiry, or not yet)', async () => {
    const { client, credentials } = await partner()
    const expired = (
      await client.post<{ id: string; trackingId: string; virtualAccount: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 10_000,
      })
    ).body
    await harness.app.db.pool.query(
      `UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [expired.id],
    )
    expect(await expireIntents(harness.app.db.pool, systemClock)).toBeGreaterThanOrEqual(1)
    await payIn(client, expired.virtualAccount, 10_000, PAYER)
    const [archivedItem] = await triage(client, 1)
    expect(await unmatchedCallbackOf(credentials.callbackSigningSecret, archivedItem!)).toMatchObject({
      reason: 'account_archived',
      trackingId: expired.trackingId,
      amountKobo: 10_000,
    })

    // An intent expired whose account is still open (the expiry's archive has not reached it).
    const lapsed = (
      await client.post<{ id: string; trackingId: string; virtualAccount: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 4_000,
      })
    ).body
    await harness.app.db.pool.query(
      `UPDATE payment_intents SET status = 'expired', status_changed_at = now() WHERE id = $1`,
      [lapsed.id],
    )
    await payIn(client, lapsed.virtualAccount, 4_000)
    const items = await triage(client, 2)
    const lapsedItem = items.find((item) => item.trackingId === lapsed.trackingId)!
    expect(await unmatchedCallbackOf(credentials.callbackSigningSecret, lapsedItem)).toMatchObject({
      reason: 'payment_intent_expired',
      trackingId: lapsed.trackingId,
      amountKobo: 4_000,
    })
    await expectOneEventPerItem(credentials.partnerId)
  })

  it("is delivered for an overpayment's excess (naming the credit it was part of) and for a credit a paid invoice does not take", async () => {
    const { client, credentials } = await partner()
    const invoice = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/invoice', {
        reference: randomUUID(),
        title: 'Rent',
        amountKobo: 100_000,
        publishOnCreate: true,
      })
    ).body
    const overpaid = await payIn(client, invoice.virtualAccount, 120_000, PAYER)
    const [excess] = await triage(client, 1)
    const excessData = await unmatchedCallbackOf(credentials.callbackSigningSecret, excess!)
    const original = await harness.app.db.pool.query<{ id: string }>(
      `SELECT id FROM inbound_credits WHERE session_id = $1`,
      [overpaid.sessionId],
    )
    expect(excessData).toMatchObject({
      creditId: excess!.id,
      reason: 'invoice_overpaid',
      amountKobo: 20_000,
      trackingId: invoice.trackingId,
      payer: { accountNumber: PAYER.payerAccountNumber },
      excessOf: { creditId: original.rows[0]!.id, sessionId: overpaid.sessionId, amountKobo: 120_000 },
    })
    // The credit itself was confirmed (the invoice took 100,000 of it).
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'credit.confirmed' && body.data.sessionId === overpaid.sessionId,
    )

    await payIn(client, invoice.virtualAccount, 5_000)
    const items = await triage(client, 2)
    const closed = items.find((item) => item.reason === 'invoice_closed')!
    expect(await unmatchedCallbackOf(credentials.callbackSigningSecret, closed)).toMatchObject({
      reason: 'invoice_closed',
      amountKobo: 5_000,
      excessOf: null,
    })
    await expectOneEventPerItem(credentials.partnerId)
  })

  it('is delivered for a credit to an account Rail does not know but the partner allocated, and for another currency', async () => {
    const { client, credentials } = await partner()
    const bank = new SandboxBank(harness.app.db.pool)
    const orphan = await bank.allocateVirtualAccount(
      'sandbox',
      allocationReference(credentials.partnerId, `orphan ${randomUUID()}`),
      'ORPHAN',
    )
    await bank.receiveInboundCredit({ accountNumber: orphan.accountNumber, amountKobo: 6_000, ...PAYER })
    const [unknown] = await triage(client, 1)
    expect(await unmatchedCallbackOf(credentials.callbackSigningSecret, unknown!)).toMatchObject({
      reason: 'unknown_account',
      virtualAccount: orphan.accountNumber,
      trackingId: null,
    })

    const account = await newAccount(client)
    const notice = {
      type: 'credit.received',
      sessionId: `777${Date.now()}`,
      accountNumber: account.virtualAccount,
      amountKobo: 5_000,
      currency: 'USD',
      creditedAt: new Date().toISOString(),
    }
    expect((await postBankNotice(harness.app.baseUrl, JSON.stringify(notice))).status).toBe(200)
    const items = await triage(client, 2)
    const foreign = items.find((item) => item.reason === 'currency_mismatch')!
    expect(await unmatchedCallbackOf(credentials.callbackSigningSecret, foreign)).toMatchObject({
      currency: 'USD',
      amountKobo: 5_000,
      trackingId: account.trackingId,
    })
    await expectOneEventPerItem(credentials.partnerId)
  })

  it('is delivered for a wallet credit in another currency (the money goes to suspense, the wallet is untouched)', async () => {
    const { client, credentials } = await partner()
    const wallet = (
      await client.post<{ walletId: string; accountNumber: string }>('/wallet', {
        customerReference: randomUUID(),
        name: 'Ada',
        provider: 'sandbox-restricted',
      })
    ).body
    const notice = {
      type: 'credit.received',
      sessionId: `888${Date.now()}`,
      accountNumber: wallet.accountNumber,
      amountKobo: 2_500,
      currency: 'USD',
      creditedAt: new Date().toISOString(),
    }
    expect(
      (await postBankNotice(harness.app.baseUrl, JSON.stringify(notice), { provider: 'sandbox-restricted' })).status,
    ).toBe(200)
    const [item] = await triage(client, 1)
    expect(await unmatchedCallbackOf(credentials.callbackSigningSecret, item!)).toMatchObject({
      reason: 'currency_mismatch',
      walletId: wallet.walletId,
      virtualAccount: wallet.accountNumber,
    })
    expect(
      (await client.get<{ bookedBalanceKobo: number }>(`/wallet/customer?customerId=${wallet.walletId}`)).body
        .bookedBalanceKobo,
    ).toBe(0)
    await expectOneEventPerItem(credentials.partnerId)
  })

  it('is delivered once per item when many credits fall to triage at once (the batched apply path)', async () => {
    const { client, credentials } = await partner()
    const accounts = await Promise.all([1, 2, 3, 4, 5, 6].map(() => newAccount(client)))
    for (const account of accounts) await client.post(`/api/v1/rail/virtual-account/${account.trackingId}/archive`)
    const live = await newAccount(client)
    await Promise.all([
      ...accounts.map((account, index) => payIn(client, account.virtualAccount, 1_000 + index)),
      payIn(client, live.virtualAccount, 9_999),
    ])
    const items = await triage(client, accounts.length)
    const ours = (data: UnmatchedData) => items.some((item) => item.id === data.creditId)
    await waitFor(
      () => unmatchedCallbacks(credentials.callbackSigningSecret, ours).length === accounts.length,
      15_000,
      'a callback per item',
    )
    for (const item of items) {
      const callbacks = unmatchedCallbacks(credentials.callbackSigningSecret, (data) => data.creditId === item.id)
      expect(callbacks.map((body) => body.data)).toEqual([
        expect.objectContaining({
          reason: 'account_archived',
          amountKobo: item.amountKobo,
          trackingId: item.trackingId,
        }),
      ])
    }
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'credit.confirmed' && body.data.trackingId === live.trackingId,
    )
    await expectOneEventPerItem(credentials.partnerId)
  })
})
