// Wallet funding by transfer (docs/contracts/wallets.md §Funding: some providers fund a wallet only when the customer
// transfers in to its account number). Over HTTP with the sandbox bank, its signed notices and a
// real callback receiver: the credit takes the inbound-credit path of virtual accounts and funds
// the wallet once, on a provider without merchant credit too, however its notice arrives.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { sweepStrandedCredits } from '../../src/collections/credits/service.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { SandboxBank } from '../../src/sandbox/service.ts'
import {
  callbacksFor,
  payIn,
  postBankNotice,
  startCollections,
  waitForCallback,
  type CollectionsHarness,
  type EventBody,
} from '../collections/support.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

let harness: CollectionsHarness

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  if (harness) await expectLedgerVerified(harness.app.db.pool)
  await harness?.app.close()
})

const PAYER = { payerName: 'Kemi Adeyemi', payerAccountNumber: nuban('058', '000123987'), payerBankCode: '058' }

type WalletJson = Schemas['Wallet']

type Balance = Schemas['WalletBalance']

async function partner() {
  return harness.app.newPartner({ callbackUrl: harness.hook.url })
}

async function openWallet(client: RailClient, provider = 'sandbox-restricted'): Promise<WalletJson> {
  const created = await client.post<WalletJson>('/wallet', {
    customerReference: randomUUID(),
    name: 'Tolu Bakare',
    provider,
  })
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  return created.body
}

async function balanceOf(client: RailClient, walletId: string): Promise<Balance> {
  const answer = await client.get<Balance>(`/wallet/customer?customerId=${walletId}`)
  expect(answer.status).toBe(200)
  return answer.body
}

async function waitForBalance(client: RailClient, walletId: string, bookedKobo: number): Promise<Balance> {
  let balance: Balance | undefined
  await waitFor(
    async () => {
      balance = await balanceOf(client, walletId)
      return balance.bookedBalanceKobo === bookedKobo
    },
    15_000,
    `wallet balance ${bookedKobo}`,
  )
  return balance!
}

const fundedCallbacks = (secret: string, walletId: string): EventBody[] =>
  callbacksFor(harness.hook, secret, (body) => body.event === 'wallet.funded' && body.data.walletId === walletId)

async function eventCount(type: string, objectId: string): Promise<number> {
  const found = await harness.app.db.pool.query<{ count: string }>(
    `SELECT count(*) FROM events WHERE type = $1 AND object_id = $2`,
    [type, objectId],
  )
  return Number(found.rows[0]!.count)
}

/** The bank's notice of a credit, as its webhook would carry it. */
async function bankNotice(sessionId: string): Promise<string> {
  const found = await new SandboxBank(harness.app.db.pool).inboundNotice(sessionId)
  return JSON.stringify(found!.notice)
}

async function bankBalanceKobo(accountNumber: string): Promise<number> {
  const found = await harness.app.db.pool.query<{ balance_kobo: string }>(
    `SELECT balance_kobo FROM sandbox_bank.accounts WHERE account_number = $1`,
    [accountNumber],
  )
  return Number(found.rows[0]!.balance_kobo)
}

describe('a transfer into a wallet on a provider without merchant credit', () => {
  it('funds the wallet once: balance, bank account, ledger, credit row and a signed wallet.funded callback', async () => {
    const { client, credentials } = await partner()
    const wallet = await openWallet(client)
    // The provider is not approved for merchant credit: the wallet cannot be funded that way.
    const refused = await client.post<{ error: string }>('/wallet/credit', {
      walletId: wallet.walletId,
      amountKobo: 1_000,
      currency: 'NGN',
      reference: randomUUID(),
    })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('capability_disabled')

    const paid = await payIn(client, wallet.accountNumber, 50_000, PAYER)
    expect(paid).toMatchObject({
      virtualAccount: wallet.accountNumber,
      trackingId: null,
      walletId: wallet.walletId,
      notified: true,
    })
    const [funded] = await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'wallet.funded' && body.data.walletId === wallet.walletId,
    )
    expect(funded!.data).toMatchObject({
      walletId: wallet.walletId,
      customerReference: wallet.customerReference,
      accountNumber: wallet.accountNumber,
      amountKobo: 50_000,
      currency: 'NGN',
      sessionId: paid.sessionId,
      payer: { name: PAYER.payerName, accountNumber: PAYER.payerAccountNumber, bankCode: PAYER.payerBankCode },
    })
    expect(await balanceOf(client, wallet.walletId)).toMatchObject({
      availableBalanceKobo: 50_000,
      bookedBalanceKobo: 50_000,
    })
    // The bank credited the wallet's own account (not its settlement pool).
    expect(await bankBalanceKobo(wallet.accountNumber)).toBe(50_000)

    const credit = await harness.app.db.pool.query(
      `SELECT id, status, wallet_id, virtual_account_id, partner_id FROM inbound_credits WHERE session_id = $1`,
      [paid.sessionId],
    )
    expect(credit.rows).toEqual([
      {
        id: funded!.data.creditId,
        status: 'applied',
        wallet_id: wallet.walletId,
        virtual_account_id: null,
        partner_id: credentials.partnerId,
      },
    ])
    const transfers = await harness.app.db.pool.query(
      `SELECT amount_kobo, code FROM ledger_transfers WHERE source_type = 'inbound_credit' AND source_id = $1`,
      [funded!.data.creditId],
    )
    expect(transfers.rows.map((row) => [Number(row.amount_kobo), row.code])).toEqual([[50_000, 'wallet_funding']])
  })

  it('funds a wallet on a provider with merchant credit the same way', async () => {
    const { client, credentials } = await partner()
    const wallet = await openWallet(client, 'sandbox')
    await payIn(client, wallet.accountNumber, 7_500)
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'wallet.funded' && body.data.walletId === wallet.walletId,
    )
    expect(await waitForBalance(client, wallet.walletId, 7_500)).toMatchObject({ availableBalanceKobo: 7_500 })
  })
})

describe('money funded by transfer', () => {
  it('is really at the bank: the wallet pays it out to another bank, on the restricted provider too', async () => {
    const { client } = await partner()
    const wallet = await openWallet(client)
    await payIn(client, wallet.accountNumber, 20_000, PAYER)
    await waitForBalance(client, wallet.walletId, 20_000)
    const reference = randomUUID()
    const sent = await client.post<{ status: string; responseCode: string }>('/transfer/bank/customer', {
      walletId: wallet.walletId,
      reference,
      amountKobo: 12_000,
      currency: 'NGN',
      destinationAccountNumber: nuban('058', '222333444'),
      destinationBankCode: '058',
    })
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    expect(sent.body.responseCode).toBe('09') // accepted: the wallet's account at the bank covered it
    await waitFor(
      async () =>
        (await client.get<{ status: string }>(`/transaction/batch/${reference}`)).body.status === 'successful',
      15_000,
      'payout settled',
    )
    expect(await balanceOf(client, wallet.walletId)).toMatchObject({
      availableBalanceKobo: 8_000,
      bookedBalanceKobo: 8_000,
    })
    expect(await bankBalanceKobo(wallet.accountNumber)).toBe(8_000)
  })
})

describe('the same credit announced more than once', () => {
  it('credits once when the bank notice arrives twice more', async () => {
    const { client, credentials } = await partner()
    const wallet = await openWallet(client)
    const paid = await payIn(client, wallet.accountNumber, 30_000, PAYER)
    await waitForBalance(client, wallet.walletId, 30_000)
    const notice = await bankNotice(paid.sessionId)
    const again = await Promise.all(
      [1, 2].map(() => postBankNotice(harness.app.baseUrl, notice, { provider: 'sandbox-restricted' })),
    )
    for (const answer of again) {
      expect(answer.status).toBe(200)
      expect(await answer.json()).toMatchObject({ received: true, duplicate: true })
    }
    expect(await balanceOf(client, wallet.walletId)).toMatchObject({
      availableBalanceKobo: 30_000,
      bookedBalanceKobo: 30_000,
    })
    await waitFor(
      () => fundedCallbacks(credentials.callbackSigningSecret, wallet.walletId).length >= 1,
      10_000,
      'wallet.funded',
    ) // at least once; recorded once, below
    expect(await eventCount('wallet.funded', wallet.walletId)).toBe(1)
  })

  it('credits once when a requery races the late webhook of a lost notice', async () => {
    const { client, credentials } = await partner()
    const wallet = await openWallet(client)
    const lost = await payIn(client, wallet.accountNumber, 19_404) // magic amount: the bank never announces it
    expect(lost.notified).toBe(false)
    const notice = await bankNotice(lost.sessionId)
    // The requery and the webhook (late, from another delivery) at once: one credit, applied once.
    const [requery, late] = await Promise.all([
      client.post<{
        walletId: string
        creditsFound: number
        creditsRecorded: number
        credits: { sessionId: string; status: string }[]
      }>('/wallet/requery', { customerId: wallet.walletId }),
      postBankNotice(harness.app.baseUrl, notice, { provider: 'sandbox-restricted' }),
    ])
    expect(requery.status, JSON.stringify(requery.body)).toBe(200)
    expect(late.status).toBe(200)
    expect(requery.body).toMatchObject({ walletId: wallet.walletId, creditsFound: 1 })
    expect(requery.body.credits.map((credit) => [credit.sessionId, credit.status])).toEqual([
      [lost.sessionId, 'confirmed'],
    ])
    const recordedByWebhook = ((await late.json()) as { duplicate: boolean }).duplicate === false
    expect(requery.body.creditsRecorded + (recordedByWebhook ? 1 : 0)).toBe(1)
    expect(await waitForBalance(client, wallet.walletId, 19_404)).toMatchObject({ availableBalanceKobo: 19_404 })
    await waitFor(
      () => fundedCallbacks(credentials.callbackSigningSecret, wallet.walletId).length >= 1,
      10_000,
      'wallet.funded',
    ) // at least once; recorded once, below
    // Asking again finds nothing new and moves nothing.
    const again = await client.post<{ creditsRecorded: number }>('/wallet/requery', { customerId: wallet.walletId })
    expect(again.body.creditsRecorded).toBe(0)
    expect(await balanceOf(client, wallet.walletId)).toMatchObject({ bookedBalanceKobo: 19_404 })
    expect(await eventCount('wallet.funded', wallet.walletId)).toBe(1)
  })

  it('funds many wallets paid at once (the apply batch takes wallet credits with the others), each once', async () => {
    const { client, credentials } = await partner()
    const wallets = await Promise.all([1, 2, 3, 4, 5].map(() => openWallet(client)))
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    await Promise.all([
      ...wallets.flatMap((wallet, index) => [
        payIn(client, wallet.accountNumber, 1_000 * (index + 1)),
        payIn(client, wallet.accountNumber, 100),
      ]),
      payIn(client, account.virtualAccount, 4_000),
      payIn(client, account.virtualAccount, 6_000),
    ])
    for (const [index, wallet] of wallets.entries())
      await waitForBalance(client, wallet.walletId, 1_000 * (index + 1) + 100)
    // Delivery is at least once (an attempt that timed out on a busy machine is sent again): each
    // wallet's two events arrive, counted by event id.
    const eventsDelivered = (walletId: string) =>
      new Set(fundedCallbacks(credentials.callbackSigningSecret, walletId).map((body) => body.id)).size
    await waitFor(() => wallets.every((wallet) => eventsDelivered(wallet.walletId) === 2), 15_000, 'wallet.funded ×10')
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'credit.confirmed' && body.data.trackingId === account.trackingId,
      2,
    )
    for (const wallet of wallets) expect(await eventCount('wallet.funded', wallet.walletId)).toBe(2)
  })
})

describe('a wallet credit whose job was lost', () => {
  it('is applied by the stranded-credit sweep', async () => {
    const { client, credentials } = await partner()
    const wallet = await openWallet(client)
    // Stored as a notice is, but without its job and long enough ago (a worker died with it).
    const sessionId = `999${Date.now()}`
    await harness.app.db.pool.query(
      `INSERT INTO inbound_credits (id, provider, session_id, account_number, amount_kobo, currency, credited_at, received_at)
       VALUES (gen_random_uuid(), 'sandbox-restricted', $1, $2, 4200, 'NGN', now(), now() - interval '5 minutes')`,
      [sessionId, wallet.accountNumber],
    )
    expect(await sweepStrandedCredits(harness.app.db.pool)).toBeGreaterThanOrEqual(1)
    await waitForBalance(client, wallet.walletId, 4_200)
    const [funded] = await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'wallet.funded' && body.data.walletId === wallet.walletId,
    )
    expect(funded!.data).toMatchObject({ sessionId, amountKobo: 4_200 })
  })
})

describe("another partner's wallet", () => {
  it('is not found: no simulated credit into it, no requery of it', async () => {
    const { client } = await partner()
    const wallet = await openWallet(client)
    const other = await partner()
    const simulated = await other.client.post<{ error: string }>('/api/v1/rail/sandbox/simulate-inbound-credit', {
      virtualAccount: wallet.accountNumber,
      amountKobo: 5_000,
    })
    expect(simulated.status).toBe(404)
    expect(simulated.body.error).toBe('not_found')
    expect((await other.client.post('/wallet/requery', { customerId: wallet.walletId })).status).toBe(404)
    expect((await client.post('/wallet/requery', { customerId: randomUUID() })).status).toBe(404)
    expect((await client.post('/wallet/requery', { customerId: wallet.walletId, extra: 1 })).status).toBe(422)
    expect((await client.post('/wallet/requery', {})).status).toBe(422)
    expect((await client.post('/wallet/requery', { customerId: 42 })).status).toBe(422)
    const paidIn = await harness.app.db.pool.query(
      `SELECT count(*) FROM sandbox_bank.transfers WHERE kind = 'inbound' AND credit_account_number = $1`,
      [wallet.accountNumber],
    )
    expect(Number(paidIn.rows[0].count)).toBe(0)
    expect(await balanceOf(client, wallet.walletId)).toMatchObject({ bookedBalanceKobo: 0 })
  })
})
