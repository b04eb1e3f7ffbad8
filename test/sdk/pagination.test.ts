// Cursor lists through the SDK: `await` is one page as asked, `for await` walks every page with
// the same filters, and each list of the document iterates to the same items, in the same
// order, as one large page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { OPERATIONS, type ListCall, type OperationId, type Rail } from '../../packages/sdk/src/index.ts'
import { waitFor } from '../support/wait.ts'
import { startSdkHarness, type SdkHarness } from './support.ts'

let harness: SdkHarness

beforeAll(async () => {
  harness = await startSdkHarness()
})

afterAll(async () => {
  await harness?.close()
})

describe('cursor lists', () => {
  it('await is the first page; for await and pages() walk every page, keeping the filter', async () => {
    const { rail } = await harness.newPartner()
    for (const title of ['A', 'B', 'C']) await rail.createInvoice({ body: { title, amountKobo: 10_000 } })
    for (const title of ['D', 'E'])
      await rail.createInvoice({ body: { title, amountKobo: 10_000, publishOnCreate: true } })
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await rail.listInvoices({ query: { limit: 100 } })).data.length === 5,
      20_000,
      'the five invoices listed',
    )

    const first = await rail.listInvoices({ query: { limit: 2 } })
    expect(first.data.map((invoice) => invoice.title)).toEqual(['E', 'D'])

    const pages: string[][] = []
    for await (const page of rail.listInvoices({ query: { limit: 2 } }).pages())
      pages.push(page.data.map((invoice) => invoice.title))
    expect(pages).toEqual([['E', 'D'], ['C', 'B'], ['A']])

    const drafts: string[] = []
    for await (const invoice of rail.listInvoices({ query: { status: 'draft', limit: 1 } }))
      drafts.push(`${invoice.title}:${invoice.status}`)
    expect(drafts).toEqual(['C:draft', 'B:draft', 'A:draft'])

    // A cursor given starts there.
    const fromSecondPage = await rail.listInvoices({ query: { limit: 2, cursor: first.nextCursor! } }).toArray()
    expect(fromSecondPage.map((invoice) => invoice.title)).toEqual(['C', 'B', 'A'])
  })

  it(
    'every cursor list of the document, walked one item a page, gives what one page of 100 gives',
    { timeout: 120_000 },
    async () => {
      const { rail } = await harness.newPartner()
      const walletId = await partnerWithSomethingInEveryList(rail)
      const required: Partial<Record<OperationId, Record<string, string>>> = {
        getWalletStatement: { customerId: walletId },
      }
      // The bank list is one page and takes no limit (the test below walks it).
      const lists = (Object.keys(OPERATIONS) as OperationId[]).filter(
        (operationId) => OPERATIONS[operationId].list && operationId !== 'listBanks',
      )
      expect(lists.length).toBeGreaterThanOrEqual(15)

      const walked: Record<string, number> = {}
      for (const operationId of lists) {
        const call = (query: Record<string, unknown>) =>
          (rail[operationId] as (params: unknown) => ListCall<unknown>)({
            query: { ...required[operationId], ...query },
          })
        const onePage = await call({ limit: 100 })
        expect(onePage.nextCursor, operationId).toBeNull()
        const items = await call({ limit: 1 }).toArray()
        // Compared by identity and order: an object's state may move on between the two reads.
        expect(items.map(identity), operationId).toEqual(onePage.data.map(identity))
        walked[operationId] = items.length
      }
      // The lists this partner has something in were walked across several pages.
      for (const operationId of [
        'listEvents',
        'listInvoices',
        'listPaymentIntents',
        'listOutboundTransfers',
        'listEscrows',
        'listCounterparties',
        'getFloatStatement',
        'getWalletStatement',
      ] as const) {
        expect(walked[operationId], operationId).toBeGreaterThanOrEqual(2)
      }
    },
  )
})

describe('lists on one page', () => {
  it('the banks: await is the whole list, and for await walks it, ending after its one page', async () => {
    const { rail } = await harness.newPartner()
    const page = await rail.listBanks()
    expect(page.nextCursor).toBeNull()
    expect(page.data.length).toBeGreaterThanOrEqual(10)
    const walked: string[] = []
    for await (const bank of rail.listBanks()) walked.push(bank.code)
    expect(walked).toEqual(page.data.map((bank) => bank.code))
  })
})

/** Two or more of each object most lists show; answers the wallet whose statement is read. */
async function partnerWithSomethingInEveryList(rail: Rail): Promise<string> {
  await rail.fundSandboxFloat({ body: { amountKobo: 1_000_000 } })
  await rail.fundSandboxFloat({ body: { amountKobo: 1_000_000 } })
  for (const serial of ['111222333', '111222444']) {
    const accountNumber = nuban('058', serial)
    const account = {
      beneficiaryAccountNumber: accountNumber,
      beneficiaryBankCode: '058',
      beneficiaryAccountName: syntheticAccountName('058', accountNumber),
    }
    await rail.createOutboundTransfer({ body: { ...account, amountKobo: 50_000, currency: 'NGN' } })
    await rail.createCounterparty({
      body: { accountNumber, bankCode: '058', accountName: account.beneficiaryAccountName },
    })
  }
  for (const title of ['Rent', 'Water'])
    await rail.createInvoice({ body: { title, amountKobo: 10_000, publishOnCreate: true } })
  const intents = [
    await rail.createPaymentIntent({ body: { amountKobo: 20_000, currency: 'NGN' } }),
    await rail.createPaymentIntent({ body: { amountKobo: 30_000, currency: 'NGN' } }),
  ]
  for (const intent of intents)
    await rail.simulateInboundCredit({
      body: { virtualAccount: intent.virtualAccount, amountKobo: intent.amountKobo! },
    })
  for (const amount of [40_000, 60_000]) {
    await rail.createEscrow({
      body: {
        type: 'goods',
        amount,
        currency: 'NGN',
        payerEmail: 'payer@example.com',
        recipientEmail: 'recipient@example.com',
        description: 'Goods',
      },
    })
  }
  const wallet = await rail.createWallet({ body: { customerReference: 'customer-1', name: 'Ada Obi' } })
  await rail.creditWallet({ body: { walletId: wallet.walletId, amountKobo: 5_000, currency: 'NGN' } })
  await rail.creditWallet({ body: { walletId: wallet.walletId, amountKobo: 7_000, currency: 'NGN' } })
  await waitFor(
    async () => (await rail.listPaymentIntents({ query: { status: 'paid' } })).data.length === 2,
    45_000,
    'both intents paid',
  )
  await waitFor(
    async () => (await rail.getWalletStatement({ query: { customerId: wallet.walletId } })).data.length === 2,
    45_000,
    'both wallet credits posted',
  )
  // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md): the wallet
  // and the credits' events are written last, so once they are listed, every row written before them is too.
  await waitFor(
    async () => (await rail.listWallets({ query: { limit: 100 } })).data.length === 1,
    20_000,
    'the wallet listed',
  )
  await waitFor(
    async () => (await rail.listEvents({ query: { limit: 100 } })).data.length >= 4,
    20_000,
    "the invoices' and credits' events listed",
  )
  return wallet.walletId
}

/** What names a list's item, whichever list it is. */
function identity(item: unknown): string {
  const fields = item as Record<string, unknown>
  const key = ['id', 'ref', 'trackingId', 'walletId', 'creditId'].find((name) => typeof fields[name] === 'string')
  if (key === undefined) throw new Error(`no identity in ${JSON.stringify(item)}`)
  return `${key}:${String(fields[key])}`
}
