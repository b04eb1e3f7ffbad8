// Statements over signed HTTP against the real app, the sandbox bank and the payment pipeline: after
// a random sequence of wallet credits, debits, transfers and bank payouts and of float fundings and payouts, every
// statement's lines sum to the account's balance and chain line to line across pages, name their
// cause and object, and come back the same as CSV; from/to ranges; another partner's wallet and bad
// input refused in the one error shape.
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { fundFloat } from '../support/float.ts'
import { startRail, type Rail } from '../support/rail.ts'
import { waitFor } from '../support/wait.ts'
import { signedKobo, statementPage, wholeStatement, withQuery, type LineJson, type StatementJson } from './support.ts'

const SECRET = 'statements-test-secret'
const SCHEDULE = { sandbox: { firstDelayMs: 100, deadlineMs: 10_000 } }
let app: Rail

beforeAll(async () => {
  app = await startRail({
    sandboxBankSecret: SECRET,
    payments: SCHEDULE,
    workers: { concurrency: 8, events: { retryDelaysMs: [200] } },
  })
})
// Closing verifies the ledger before the database is dropped.
afterAll(() => app?.close())

const BENEFICIARY = {
  beneficiaryAccountNumber: nuban('058', '123456789'),
  beneficiaryBankCode: '058',
  beneficiaryAccountName: syntheticAccountName('058', nuban('058', '123456789')),
  currency: 'NGN',
}
// Narrations a spreadsheet would run, or that need quoting in CSV (control characters are refused by the moves).
const NARRATIONS = [
  'top up',
  '=HYPERLINK("http://x.test","click")',
  '+2348012345678',
  '-10 kobo',
  '@SUM(A1:A9)',
  'rent, "March"',
  'split;=1+1',
  undefined,
] as const

async function newWallet(client: RailClient): Promise<string> {
  const created = await client.post<{ walletId: string }>('/wallet', {
    customerReference: randomUUID(),
    name: 'Statement Customer',
  })
  expect(created.status).toBe(201)
  return created.body.walletId
}

async function walletMove(client: RailClient, path: string, body: Record<string, unknown>): Promise<void> {
  const response = await client.post<{ status: string }>(path, { reference: randomUUID(), currency: 'NGN', ...body })
  expect(response.status, JSON.stringify(response.body)).toBe(200)
  expect(response.body.status).toBe('successful')
}

/** A payout from the float, settled by the simulator; answers once the pipeline has made it final. */
async function payout(
  client: RailClient,
  amountKobo: number,
  outcome: 'confirmed' | 'failed',
  narration?: string,
): Promise<string> {
  const submitted = await client.post<{ id: string }>('/api/v1/rail/outbound', {
    clientReference: randomUUID(),
    amountKobo,
    ...BENEFICIARY,
    ...(narration ? { narration } : {}),
  })
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(202)
  const id = submitted.body.id
  const state = async () => (await client.get<{ state: string }>(`/api/v1/rail/outbound/${id}`)).body.state
  await waitFor(async () => (await state()) === 'submitted', 15_000, 'payout submitted')
  expect(
    (await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', { transferId: id, outcome })).status,
  ).toBe(200)
  await waitFor(async () => (await state()) === outcome, 20_000, `payout ${outcome}`)
  return id
}

/** A wallet's payout to a bank account: held, then posted (successful) or voided (failed) when the bank settles it. */
async function walletBankPayout(
  client: RailClient,
  walletId: string,
  amountKobo: number,
  outcome: 'successful' | 'failed',
  narration?: string,
): Promise<void> {
  const reference = randomUUID()
  // The sandbox bank fails a destination ending 005 at settlement (docs/sandbox.md).
  const destinationAccountNumber = outcome === 'successful' ? nuban('058', '123456789') : nuban('058', '123456005')
  const accepted = await client.post<{ status: string }>('/transfer/bank/customer', {
    walletId,
    reference,
    amountKobo,
    currency: 'NGN',
    destinationAccountNumber,
    destinationBankCode: '058',
    narration,
  })
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200)
  const status = async () => (await client.get<{ status: string }>(`/transaction/batch/${reference}`)).body.status
  await waitFor(async () => (await status()) === outcome, 20_000, `wallet payout ${outcome}`)
}

type Op =
  | {
      kind: 'bank_payout'
      wallet: number
      amountKobo: number
      outcome: 'successful' | 'failed'
      narration: string | undefined
    }
  | { kind: 'credit'; wallet: number; amountKobo: number; narration: string | undefined }
  | { kind: 'debit'; wallet: number; amountKobo: number; narration: string | undefined }
  | { kind: 'transfer'; wallet: number; amountKobo: number; narration: string | undefined }
  | { kind: 'fund'; amountKobo: number }
  | { kind: 'payout'; amountKobo: number; outcome: 'confirmed' | 'failed'; narration: string | undefined }

// Amounts whose last four digits are a sandbox bank magic value (docs/sandbox.md) would make the bank refuse or stall.
const MAGIC_ENDINGS = new Set([9007, 9009, 9051, 9096, 9097, 9098, 9404])
const amount = fc.integer({ min: 1, max: 500_000 }).filter((kobo) => !MAGIC_ENDINGS.has(kobo % 10_000))
const wallet = fc.integer({ min: 0, max: 1 })
const narration = fc.constantFrom(...NARRATIONS)
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('credit' as const), wallet, amountKobo: amount, narration }),
  fc.record({ kind: fc.constant('debit' as const), wallet, amountKobo: amount, narration }),
  fc.record({ kind: fc.constant('transfer' as const), wallet, amountKobo: amount, narration }),
  fc.record({ kind: fc.constant('fund' as const), amountKobo: amount }),
  fc.record({
    kind: fc.constant('bank_payout' as const),
    wallet,
    amountKobo: amount,
    outcome: fc.constantFrom('successful' as const, 'failed' as const),
    narration,
  }),
  fc.record({
    kind: fc.constant('payout' as const),
    amountKobo: amount,
    outcome: fc.constantFrom('confirmed' as const, 'failed' as const),
    narration,
  }),
)

/** What a line of the model says: the account, cause, direction, amount, object type and narration. */
interface ExpectedLine {
  account: 'float' | number
  cause: string
  direction: 'credit' | 'debit'
  amountKobo: number
  objectType: string
  narration: string | null
}

/** Runs the operations the model allows (no overdraft) and answers the lines they must make. */
async function run(client: RailClient, wallets: string[], ops: Op[]): Promise<ExpectedLine[]> {
  const booked = { float: 0, wallets: [0, 0] }
  const expected: ExpectedLine[] = []
  const line = (
    account: ExpectedLine['account'],
    cause: string,
    direction: 'credit' | 'debit',
    amountKobo: number,
    objectType: string,
    narration: string | undefined,
  ) => expected.push({ account, cause, direction, amountKobo, objectType, narration: narration ?? null })
  for (const next of ops) {
    if (next.kind === 'credit') {
      await walletMove(client, '/wallet/credit', {
        walletId: wallets[next.wallet],
        amountKobo: next.amountKobo,
        narration: next.narration,
      })
      booked.wallets[next.wallet]! += next.amountKobo
      line(next.wallet, 'credit', 'credit', next.amountKobo, 'wallet_move', next.narration)
    } else if (next.kind === 'debit' && booked.wallets[next.wallet]! >= next.amountKobo) {
      await walletMove(client, '/wallet/debit', {
        walletId: wallets[next.wallet],
        amountKobo: next.amountKobo,
        narration: next.narration,
      })
      booked.wallets[next.wallet]! -= next.amountKobo
      line(next.wallet, 'debit', 'debit', next.amountKobo, 'wallet_move', next.narration)
    } else if (next.kind === 'transfer' && booked.wallets[next.wallet]! >= next.amountKobo) {
      const to = 1 - next.wallet
      await walletMove(client, '/transfer/wallet', {
        walletId: wallets[next.wallet],
        destinationWalletId: wallets[to],
        amountKobo: next.amountKobo,
        narration: next.narration,
      })
      booked.wallets[next.wallet]! -= next.amountKobo
      booked.wallets[to]! += next.amountKobo
      line(next.wallet, 'wallet_transfer', 'debit', next.amountKobo, 'wallet_move', next.narration)
      line(to, 'wallet_transfer', 'credit', next.amountKobo, 'wallet_move', next.narration)
    } else if (next.kind === 'bank_payout' && booked.wallets[next.wallet]! >= next.amountKobo) {
      await walletBankPayout(client, wallets[next.wallet]!, next.amountKobo, next.outcome, next.narration)
      // Held until the bank settles: a line only when the hold posts.
      if (next.outcome === 'successful') {
        booked.wallets[next.wallet]! -= next.amountKobo
        line(next.wallet, 'payout', 'debit', next.amountKobo, 'wallet_move', next.narration)
      }
    } else if (next.kind === 'fund') {
      expect((await fundFloat(client, next.amountKobo)).status).toBe(200)
      booked.float += next.amountKobo
      line('float', 'funding', 'credit', next.amountKobo, 'sandbox_funding', undefined)
    } else if (next.kind === 'payout' && booked.float >= next.amountKobo) {
      await payout(client, next.amountKobo, next.outcome, next.narration)
      // A failed payout's hold is voided: no line. A confirmed one's posts: one debit line.
      if (next.outcome === 'confirmed') {
        booked.float -= next.amountKobo
        line('float', 'payout', 'debit', next.amountKobo, 'outbound_transfer', next.narration)
      }
    }
  }
  return expected
}

function shape(line: LineJson): Omit<ExpectedLine, 'account'> & { referenced: boolean } {
  return {
    cause: line.cause,
    direction: line.direction,
    amountKobo: line.amountKobo,
    objectType: line.object!.type,
    narration: line.narration,
    referenced: line.object!.reference !== null,
  }
}

/** Moves and payouts are known to the partner by their reference: the line names it. */
const REFERENCED_OBJECTS = new Set(['wallet_move', 'outbound_transfer'])

async function expectStatementOf(
  client: RailClient,
  path: string,
  bookedKobo: number,
  expected: ExpectedLine[],
): Promise<void> {
  const statement = await wholeStatement(client, path, { limit: 3 })
  // Newest first; the range is the whole history: it opens at 0 and closes at the booked balance.
  expect(statement.lines.map(shape)).toEqual(
    expected
      .map(({ account: _account, ...rest }) => ({ ...rest, referenced: REFERENCED_OBJECTS.has(rest.objectType) }))
      .reverse(),
  )
  expect(statement.openingBalanceKobo).toBe(0)
  expect(statement.closingBalanceKobo).toBe(bookedKobo)
  expect(statement.lines.reduce((sum, line) => sum + signedKobo(line), 0)).toBe(bookedKobo)
  expect(statement.lines[0]?.balanceAfterKobo ?? 0).toBe(bookedKobo)
  expect(new Set(statement.lines.map((line) => line.id)).size).toBe(statement.lines.length)
}

describe('statements after a random sequence of moves', () => {
  it('sum to each balance, chain across pages, name cause and object, and read the same as CSV', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 2, maxLength: 12 }), async (random) => {
        const { client } = await app.newPartner()
        const wallets = [await newWallet(client), await newWallet(client)]
        // Every run funds, credits and pays out (both outcomes) at least once, around the random part.
        const ops = [
          { kind: 'fund', amountKobo: 300_000 } as const,
          { kind: 'credit', wallet: 0, amountKobo: 50_000, narration: 'opening' } as const,
          { kind: 'bank_payout', wallet: 0, amountKobo: 1_000, outcome: 'failed', narration: undefined } as const,
          ...random,
          { kind: 'payout', amountKobo: 1_000, outcome: 'failed', narration: 'refused' } as const,
          { kind: 'payout', amountKobo: 2_000, outcome: 'confirmed', narration: '=cmd|" /C calc"!A0' } as const,
        ]
        const expected = await run(client, wallets, ops)
        for (const [index, walletId] of wallets.entries()) {
          const balance = (
            await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
              `/wallet/customer?customerId=${walletId}`,
            )
          ).body
          await expectStatementOf(
            client,
            withQuery('/wallet/statement', { customerId: walletId }),
            balance.bookedBalanceKobo,
            expected.filter((line) => line.account === index),
          )
        }
        const float = (await client.get<{ bookedBalanceKobo: number }>('/api/v1/rail/float')).body
        await expectStatementOf(
          client,
          '/api/v1/rail/float/statement',
          float.bookedBalanceKobo,
          expected.filter((line) => line.account === 'float'),
        )
      }),
      { numRuns: 4, endOnFailure: true },
    )
  }, 600_000)
})

describe('concurrent moves on the same wallets', () => {
  it("still chain: the ledger orders an account's lines as it applied them (one batch or many)", async () => {
    const { client } = await app.newPartner()
    const [ada, obi] = [await newWallet(client), await newWallet(client)]
    await walletMove(client, '/wallet/credit', { walletId: ada, amountKobo: 100_000 })
    await walletMove(client, '/wallet/credit', { walletId: obi, amountKobo: 100_000 })
    // Concurrent claims share transactions (coalesced batches): several lines of one account per ledger call.
    await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        i % 3 === 2
          ? walletMove(client, '/wallet/credit', { walletId: i % 2 ? ada : obi, amountKobo: 700 + i })
          : walletMove(client, '/transfer/wallet', {
              walletId: i % 2 ? ada : obi,
              destinationWalletId: i % 2 ? obi : ada,
              amountKobo: 1_000 + i,
            }),
      ),
    )
    for (const walletId of [ada, obi]) {
      const booked = (await client.get<{ bookedBalanceKobo: number }>(`/wallet/customer?customerId=${walletId}`)).body
        .bookedBalanceKobo
      const statement = await wholeStatement(client, withQuery('/wallet/statement', { customerId: walletId }), {
        limit: 5,
      })
      expect(statement).toMatchObject({ openingBalanceKobo: 0, closingBalanceKobo: booked })
      expect(statement.lines.reduce((sum, line) => sum + signedKobo(line), 0)).toBe(booked)
    }
  })
})

describe('a wallet funded by a transfer into its account number', () => {
  it('is a funding line naming the inbound credit', async () => {
    const { client } = await app.newPartner()
    const created = await client.post<{ walletId: string; accountNumber: string }>('/wallet', {
      customerReference: randomUUID(),
      name: 'Funded Customer',
    })
    const { walletId, accountNumber } = created.body
    const paid = await client.post('/api/v1/rail/sandbox/simulate-inbound-credit', {
      virtualAccount: accountNumber,
      amountKobo: 12_345,
    })
    expect(paid.status, JSON.stringify(paid.body)).toBe(200)
    const path = withQuery('/wallet/statement', { customerId: walletId })
    await waitFor(async () => (await statementPage(client, path)).data.length === 1, 20_000, 'the wallet funded')
    const statement = await wholeStatement(client, path)
    expect(statement.lines).toEqual([
      expect.objectContaining({
        cause: 'funding',
        direction: 'credit',
        amountKobo: 12_345,
        balanceAfterKobo: 12_345,
        object: { type: 'inbound_credit', id: expect.any(String), reference: null },
      }),
    ])
    const balance = (await client.get<{ bookedBalanceKobo: number }>(`/wallet/customer?customerId=${walletId}`)).body
    expect(statement.closingBalanceKobo).toBe(balance.bookedBalanceKobo)
  })
})

describe('from/to', () => {
  let client: RailClient
  let lines: LineJson[] // newest first

  beforeAll(async () => {
    client = (await app.newPartner()).client
    for (const amountKobo of [1_000, 2_000, 3_000, 4_000, 5_000, 6_000]) {
      expect((await fundFloat(client, amountKobo)).status).toBe(200)
      // Distinct milliseconds, so each line can be a bound of its own.
      const last = Date.now()
      await waitFor(() => Date.now() > last + 1, 1_000, 'the next millisecond')
    }
    lines = (await wholeStatement(client, '/api/v1/rail/float/statement')).lines
    expect(lines.map((line) => line.amountKobo)).toEqual([6_000, 5_000, 4_000, 3_000, 2_000, 1_000])
  })

  const range = (query: Record<string, string>) =>
    wholeStatement(client, '/api/v1/rail/float/statement', { ...query, limit: 1 })

  it('from is inclusive, to exclusive; the range sums from its opening to its closing balance', async () => {
    const from = lines[4]!.postedAt // the 2,000
    const to = lines[1]!.postedAt // the 5,000
    const inRange = await range({ from, to })
    expect(inRange.lines.map((line) => line.amountKobo)).toEqual([4_000, 3_000, 2_000])
    expect(inRange.openingBalanceKobo).toBe(1_000)
    expect(inRange.closingBalanceKobo).toBe(10_000)
    expect(inRange.lines).toEqual(lines.slice(2, 5))
  })

  it('either bound alone', async () => {
    expect((await range({ from: lines[1]!.postedAt })).lines.map((line) => line.amountKobo)).toEqual([6_000, 5_000])
    const before = await range({ to: lines[3]!.postedAt })
    expect(before.lines.map((line) => line.amountKobo)).toEqual([2_000, 1_000])
    expect(before).toMatchObject({ openingBalanceKobo: 0, closingBalanceKobo: 3_000 })
  })

  it('a range without lines has the balance of its time as opening and closing', async () => {
    const future = await statementPage(
      client,
      withQuery('/api/v1/rail/float/statement', { from: new Date(Date.now() + 3_600_000).toISOString() }),
    )
    expect(future).toMatchObject({ data: [], openingBalanceKobo: 21_000, closingBalanceKobo: 21_000, nextCursor: null })
    const past = await statementPage(client, withQuery('/api/v1/rail/float/statement', { to: '2020-01-01T00:00:00Z' }))
    expect(past).toMatchObject({ data: [], openingBalanceKobo: 0, closingBalanceKobo: 0 })
    // Between two lines: the balance after the earlier one.
    const gapFrom = new Date(Date.parse(lines[3]!.postedAt) + 1).toISOString()
    const between = await statementPage(
      client,
      withQuery('/api/v1/rail/float/statement', { from: gapFrom, to: lines[2]!.postedAt }),
    )
    expect(between).toMatchObject({ data: [], openingBalanceKobo: 6_000, closingBalanceKobo: 6_000 })
  })

  it('an account never used has an empty statement at 0', async () => {
    const fresh = (await app.newPartner()).client
    for (const path of ['/api/v1/rail/float/statement', '/api/v1/rail/collections/statement']) {
      expect(await statementPage(fresh, path)).toMatchObject({
        data: [],
        openingBalanceKobo: 0,
        closingBalanceKobo: 0,
        nextCursor: null,
      })
    }
    expect(
      await statementPage(fresh, withQuery('/wallet/statement', { customerId: await newWallet(fresh) })),
    ).toMatchObject({
      account: { type: 'wallet', currency: 'NGN' },
      data: [],
      openingBalanceKobo: 0,
    })
  })
})

describe('refusals', () => {
  let client: RailClient
  let walletId: string

  beforeAll(async () => {
    client = (await app.newPartner()).client
    walletId = await newWallet(client)
  })

  it("another partner's wallet is not found, and so is a wallet id that is no id", async () => {
    const other = (await app.newPartner()).client
    for (const customerId of [walletId, 'not-a-wallet']) {
      const response = await other.get<{ statusCode: number; error: string; message: string }>(
        withQuery('/wallet/statement', { customerId }),
      )
      expect(response.status).toBe(404)
      expect(response.body).toEqual({ statusCode: 404, error: 'not_found', message: expect.any(String) })
    }
  })

  it.each([
    ['an unknown query field', '/wallet/statement', { customerId: 'W', currency: 'NGN' }],
    ['no customerId', '/wallet/statement', {}],
    ['a cursor no statement gave', '/api/v1/rail/float/statement', { cursor: 'bm90LWEtY3Vyc29y' }],
    ['a cursor that is not base64url', '/api/v1/rail/float/statement', { cursor: '***' }],
    ['an empty cursor', '/api/v1/rail/collections/statement', { cursor: '' }],
    ['a date that is no date', '/api/v1/rail/float/statement', { from: 'yesterday' }],
    ['a day February lacks', '/api/v1/rail/float/statement', { to: '2026-02-30T00:00:00Z' }],
    [
      'a leap second (RFC 3339 allows it; JavaScript dates cannot hold it)',
      '/api/v1/rail/float/statement',
      { from: '2016-12-31T23:59:60Z' },
    ],
    ['a leap second in to', '/wallet/statement', { customerId: 'W', to: '2016-12-31T23:59:60Z' }],
    ['a time without a zone', '/api/v1/rail/float/statement', { from: '2026-01-01T00:00:00' }],
    ['from after to', '/api/v1/rail/float/statement', { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }],
    [
      'from equal to to (an empty range)',
      '/api/v1/rail/collections/statement',
      { from: '2026-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' },
    ],
    ['a limit of 0', '/api/v1/rail/float/statement', { limit: '0' }],
    ['a limit above the maximum', '/api/v1/rail/float/statement', { limit: '501' }],
    ['an unknown field on balances', '/api/v1/rail/balances', { currency: 'NGN' }],
  ])('%s: 422 in the error shape', async (_what, path, query: Record<string, string>) => {
    const filled = Object.fromEntries(
      Object.entries(query).map(([key, value]) => [key, value === 'W' ? walletId : value]),
    )
    for (const accept of ['application/json', 'text/csv']) {
      const response = await client.get<{ statusCode: number; error: string; message: string; details?: unknown }>(
        withQuery(path, filled),
        { headers: { Accept: accept } },
      )
      expect(response.status, JSON.stringify(response.body)).toBe(422)
      expect(response.body).toMatchObject({ statusCode: 422, error: 'validation_error', message: expect.any(String) })
    }
  })

  it('needs a signed request', async () => {
    for (const path of [
      '/api/v1/rail/balances',
      '/api/v1/rail/float/statement',
      `/wallet/statement?customerId=${walletId}`,
    ]) {
      expect((await fetch(`${app.baseUrl}${path}`)).status).toBe(401)
    }
  })

  it('a cursor carries on where its page ended, whatever the page size', async () => {
    expect((await fundFloat(client, 700)).status).toBe(200)
    expect((await fundFloat(client, 300)).status).toBe(200)
    const first = await statementPage(client, withQuery('/api/v1/rail/float/statement', { limit: 1 }))
    expect(first.data.map((line) => line.amountKobo)).toEqual([300])
    const rest = (
      await client.get<StatementJson>(
        withQuery('/api/v1/rail/float/statement', { limit: 10, cursor: first.nextCursor! }),
      )
    ).body
    expect(rest).toMatchObject({ openingBalanceKobo: 0, closingBalanceKobo: 700, nextCursor: null })
    expect(rest.data.map((line) => line.amountKobo)).toEqual([700])
  })
})
