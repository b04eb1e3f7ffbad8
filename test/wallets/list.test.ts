// GET /wallet: the caller's wallets, newest first, cursor-paginated like the other lists; one
// customer reference finds its wallet; another partner's wallets never appear; bad input is 422.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient, RailResponse } from '../../src/client/index.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { waitFor } from '../support/wait.ts'
import type { ResponseBody, Schemas } from '../../packages/sdk/src/index.ts'

type WalletJson = Schemas['Wallet']
type ListedWalletJson = Schemas['ListedWallet']
type Page = ResponseBody<'listWallets'>

let app: TestApp
let owner: RailClient
let other: RailClient
const created: WalletJson[] = []
let othersWalletId: string

beforeAll(async () => {
  app = await startTestApp()
  owner = (await app.newPartner()).client
  other = (await app.newPartner()).client
  // One after another, so the creation order (and the ids, UUIDv7) is known.
  for (let index = 0; index < 7; index++) {
    const answer = await owner.post<WalletJson>('/wallet', {
      customerReference: `list-${index}`,
      name: `List ${index}`,
    })
    expect(answer.status).toBe(201)
    created.push(answer.body)
  }
  const others = await other.post<WalletJson>('/wallet', { customerReference: 'list-0', name: 'Someone else' })
  expect(others.status).toBe(201)
  othersWalletId = others.body.walletId
  // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
  await waitFor(
    async () => (await owner.get<Page>('/wallet?limit=100')).body.data.length === created.length,
    20_000,
    "the owner's wallets listed",
  )
  await waitFor(
    async () => (await other.get<Page>('/wallet?limit=100')).body.data.length === 1,
    20_000,
    "the other partner's wallet listed",
  )
})
afterAll(async () => {
  await app.close()
})

async function allPages(client: RailClient, limit: number): Promise<{ pages: Page[]; wallets: ListedWalletJson[] }> {
  const pages: Page[] = []
  let cursor: string | null = null
  do {
    const answer: RailResponse<Page> = await client.get<Page>(
      `/wallet?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
    )
    expect(answer.status).toBe(200)
    pages.push(answer.body)
    cursor = answer.body.nextCursor
  } while (cursor)
  return { pages, wallets: pages.flatMap((page) => page.data) }
}

describe('GET /wallet', () => {
  it('pages through every wallet newest first, with no duplicate and no gap', async () => {
    const { pages, wallets } = await allPages(owner, 3)
    expect(pages.map((page) => page.data.length)).toEqual([3, 3, 1])
    expect(wallets.map((wallet) => wallet.walletId)).toEqual(created.map((wallet) => wallet.walletId).reverse())
    expect(pages.at(-1)!.nextCursor).toBeNull()
  })

  it('answers each wallet as POST /wallet answered it, with its balances as GET /wallet/customer has them', async () => {
    const credited = await owner.post('/wallet/credit', {
      walletId: created[2]!.walletId,
      reference: randomUUID(),
      amountKobo: 12_345,
      currency: 'NGN',
    })
    expect(credited.status, JSON.stringify(credited.body)).toBe(200)
    const { wallets } = await allPages(owner, 100)
    expect(
      wallets.map(({ availableBalanceKobo: _available, bookedBalanceKobo: _booked, ...wallet }) => wallet),
    ).toEqual([...created].reverse())
    for (const listed of wallets) {
      const balance = (
        await owner.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
          `/wallet/customer?customerId=${listed.walletId}`,
        )
      ).body
      expect({ available: listed.availableBalanceKobo, booked: listed.bookedBalanceKobo }).toEqual({
        available: balance.availableBalanceKobo,
        booked: balance.bookedBalanceKobo,
      })
    }
    expect(wallets.find((wallet) => wallet.walletId === created[2]!.walletId)!.availableBalanceKobo).toBeGreaterThan(0)
  })

  it('a page holding the last wallet has a null cursor', async () => {
    const first = await owner.get<Page>('/wallet?limit=7')
    expect(first.body.data).toHaveLength(7)
    expect(first.body.nextCursor).toBeNull()
  })

  it('customerReference finds the one wallet, and only the caller’s', async () => {
    const found = await owner.get<Page>('/wallet?customerReference=list-4')
    expect(found.status).toBe(200)
    expect(found.body).toEqual({
      data: [{ ...created[4], availableBalanceKobo: 0, bookedBalanceKobo: 0 }],
      nextCursor: null,
    })
    const theirs = await other.get<Page>('/wallet?customerReference=list-0')
    expect(theirs.body.data.map((wallet) => wallet.walletId)).toEqual([othersWalletId])
    const none = await owner.get<Page>('/wallet?customerReference=nobody')
    expect(none.body).toEqual({ data: [], nextCursor: null })
  })

  it("never lists another partner's wallets", async () => {
    const { wallets } = await allPages(owner, 2)
    expect(wallets.map((wallet) => wallet.walletId)).not.toContain(othersWalletId)
    const { wallets: theirs } = await allPages(other, 2)
    expect(theirs.map((wallet) => wallet.walletId)).toEqual([othersWalletId])
    // The owner's cursor on the other partner's list shows only the other partner's wallets.
    const crossed = await other.get<Page>(`/wallet?cursor=${created[6]!.walletId}`)
    expect(crossed.status).toBe(200)
    expect(crossed.body.data.every((wallet) => wallet.walletId === othersWalletId)).toBe(true)
  })

  it('refuses bad input with 422', async () => {
    for (const query of ['unknown=1', 'limit=0', 'limit=101', 'limit=abc', 'cursor=not-a-uuid', 'customerReference=']) {
      const answer = await owner.get<{ error: string }>(`/wallet?${query}`)
      expect({ query, status: answer.status }).toEqual({ query, status: 422 })
    }
  })
})
