// A wallet credit Rail cannot apply (another currency) is a triage item that names its wallet
// (walletId), in the list and on its own; a virtual account's triage item has walletId null.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postBankNotice, startCollections, type CollectionsHarness } from '../collections/support.ts'
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

type TriageItem = Schemas['UnmatchedCredit']

async function usdNotice(accountNumber: string, provider: string): Promise<string> {
  const sessionId = `999${Date.now()}${Math.floor(Math.random() * 1000)}`
  const notice = {
    type: 'credit.received',
    sessionId,
    accountNumber,
    amountKobo: 3_000,
    currency: 'USD',
    creditedAt: new Date().toISOString(),
  }
  expect((await postBankNotice(harness.app.baseUrl, JSON.stringify(notice), { provider })).status).toBe(200)
  return sessionId
}

describe('triage items of wallet credits', () => {
  it('carry the walletId of the wallet the credit was paid into; a virtual account’s carry null', async () => {
    const { client } = await harness.app.newPartner()
    const wallet = (
      await client.post<{ walletId: string; accountNumber: string }>('/wallet', {
        customerReference: randomUUID(),
        name: 'Ada',
        provider: 'sandbox-restricted',
      })
    ).body
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    const walletSession = await usdNotice(wallet.accountNumber, 'sandbox-restricted')
    const accountSession = await usdNotice(account.virtualAccount, 'sandbox')

    let items: TriageItem[] = []
    await waitFor(
      async () => {
        items = (await client.get<{ data: TriageItem[] }>('/api/v1/rail/unmatched?limit=100')).body.data
        return items.length >= 2
      },
      15_000,
      'two triage items',
    )
    const ofWallet = items.find((item) => item.sessionId === walletSession)!
    const ofAccount = items.find((item) => item.sessionId === accountSession)!
    expect(ofWallet).toMatchObject({
      reason: 'currency_mismatch',
      virtualAccount: wallet.accountNumber,
      trackingId: null,
      walletId: wallet.walletId,
    })
    expect(ofAccount).toMatchObject({ reason: 'currency_mismatch', trackingId: account.trackingId, walletId: null })

    const one = await client.get<TriageItem>(`/api/v1/rail/unmatched/${ofWallet.id}`)
    expect(one.status).toBe(200)
    expect(one.body.walletId).toBe(wallet.walletId)
  })
})
