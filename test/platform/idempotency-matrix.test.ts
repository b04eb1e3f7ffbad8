// One matrix for every route that takes a reference (docs/design.md §5): the same request twice
// answers the same status and body, the second marked Idempotent-Replayed, one object stored; the
// same reference with another body is 409 idempotency_conflict and changes nothing; the order of
// the body's keys does not make a new request; identical requests at once make exactly one object
// and answer alike.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { startCollections, type CollectionsHarness } from '../collections/support.ts'
import { confirmedCredit } from '../refunds/support.ts'
import { createRequest, escrowClient } from '../support/escrow.ts'
import { fundFloat } from '../support/float.ts'
import { expectLedgerVerified } from '../support/ledger.ts'

let harness: CollectionsHarness

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  if (harness) await expectLedgerVerified(harness.app.db.pool)
  await harness?.app.close()
})

interface Answer {
  status: number
  replayed: boolean
  body: Record<string, unknown>
}

type Body = Record<string, unknown>

/** One route under test, for one new partner. */
interface Route {
  /** Sends a body to the route. */
  send(body: Body): Promise<Answer>
  /** How many objects of the route's kind the partner has. */
  count(): Promise<number>
  /** A valid body with this reference; `other` a valid body with the same reference that differs. */
  body(reference: string): Body
  other(reference: string): Body
}

interface RouteCase {
  name: string
  /** The status of a create (and of its replays). */
  status: number
  open(partner: Awaited<ReturnType<CollectionsHarness['app']['newPartner']>>): Promise<Route>
}

const BENEFICIARY = {
  beneficiaryAccountNumber: nuban('058', '123456789'),
  beneficiaryBankCode: '058',
  beneficiaryAccountName: syntheticAccountName('058', nuban('058', '123456789')),
  currency: 'NGN',
}

async function post(client: RailClient, path: string, body: Body): Promise<Answer> {
  const answer = await client.post<Body>(path, body)
  return { status: answer.status, replayed: answer.headers.get('idempotent-replayed') === 'true', body: answer.body }
}

async function countOf(sql: string, partnerId: string): Promise<number> {
  const { rows } = await harness.app.db.pool.query<{ n: number }>(sql, [partnerId])
  return rows[0]!.n
}

/** A partner's route with a signed client; its objects counted by `sql` ($1 the partner's id). */
function signedRoute(
  client: RailClient,
  partnerId: string,
  path: string,
  sql: string,
  body: (reference: string) => Body,
  other: (reference: string) => Body,
): Route {
  return { send: (given) => post(client, path, given), count: () => countOf(sql, partnerId), body, other }
}

async function newWallet(client: RailClient): Promise<string> {
  const created = await client.post<{ walletId: string }>('/wallet', {
    customerReference: randomUUID(),
    name: 'Ada Obi',
  })
  expect(created.status).toBe(201)
  return created.body.walletId
}

/** A wallet holding 50 000 kobo, at Rail and at its bank (a merchant credit). */
async function fundedWallet(client: RailClient): Promise<string> {
  const walletId = await newWallet(client)
  const funded = await client.post<{ status: string }>('/wallet/credit', {
    walletId,
    reference: randomUUID(),
    amountKobo: 50_000,
    currency: 'NGN',
  })
  expect(funded.status, JSON.stringify(funded.body)).toBe(200)
  expect(funded.body.status).toBe('successful')
  return walletId
}

const CASES: RouteCase[] = [
  {
    name: 'POST /wallet (customerReference)',
    status: 201,
    open: async ({ client, credentials }) =>
      signedRoute(
        client,
        credentials.partnerId,
        '/wallet',
        `SELECT count(*)::int AS n FROM wallets WHERE partner_id = $1`,
        (reference) => ({ customerReference: reference, name: 'Ada Obi' }),
        (reference) => ({ customerReference: reference, name: 'Ada Obi-Eze' }),
      ),
  },
  {
    name: 'POST /wallet/credit (reference)',
    status: 200,
    open: async ({ client, credentials }) => {
      const wallet = (
        await client.post<{ walletId: string }>('/wallet', { customerReference: randomUUID(), name: 'Ada Obi' })
      ).body
      const move = (reference: string, amountKobo: number) => ({
        walletId: wallet.walletId,
        reference,
        amountKobo,
        currency: 'NGN',
        narration: 'top up',
      })
      return signedRoute(
        client,
        credentials.partnerId,
        '/wallet/credit',
        `SELECT count(*)::int AS n FROM wallet_moves WHERE partner_id = $1`,
        (reference) => move(reference, 300),
        (reference) => move(reference, 301),
      )
    },
  },
  ...(
    [
      ['/wallet/debit', {}],
      ['/transfer/wallet', { destinationWalletId: 'second' }],
      ['/transfer/bank/customer', { destinationAccountNumber: nuban('058', '222333444'), destinationBankCode: '058' }],
    ] as const
  ).map(([path, extra]): RouteCase => ({
    name: `POST ${path} (reference)`,
    status: 200,
    open: async ({ client, credentials }) => {
      const wallet = await fundedWallet(client)
      const destination = 'destinationWalletId' in extra ? { destinationWalletId: await newWallet(client) } : extra
      const move = (reference: string, amountKobo: number) => ({
        walletId: wallet,
        reference,
        amountKobo,
        currency: 'NGN',
        ...destination,
      })
      return signedRoute(
        client,
        credentials.partnerId,
        path,
        `SELECT count(*)::int AS n FROM wallet_moves WHERE partner_id = $1 AND type <> 'credit'`,
        (reference) => move(reference, 1_000),
        (reference) => move(reference, 1_001),
      )
    },
  })),
  {
    name: 'POST /api/v1/rail/outbound (clientReference)',
    status: 202,
    open: async ({ client, credentials }) => {
      expect((await fundFloat(client, 1_000_000)).status).toBe(200)
      const transfer = (reference: string, amountKobo: number) => ({
        clientReference: reference,
        amountKobo,
        narration: 'invoice 12',
        ...BENEFICIARY,
      })
      return signedRoute(
        client,
        credentials.partnerId,
        '/api/v1/rail/outbound',
        `SELECT count(*)::int AS n FROM outbound_transfers WHERE partner_id = $1`,
        (reference) => transfer(reference, 10_000),
        (reference) => transfer(reference, 10_001),
      )
    },
  },
  {
    name: 'POST /api/v1/rail/sandbox/fund-float (reference)',
    status: 200,
    open: async ({ client, credentials }) =>
      signedRoute(
        client,
        credentials.partnerId,
        '/api/v1/rail/sandbox/fund-float',
        `SELECT count(*)::int AS n FROM ledger_transfers t JOIN ledger_accounts a ON a.id = t.credit_account_id WHERE a.partner_id = $1 AND t.code = 'sandbox_float_funding'`,
        (reference) => ({ reference, amountKobo: 70_000 }),
        (reference) => ({ reference, amountKobo: 70_001 }),
      ),
  },
  {
    name: 'POST /api/v1/rail/payment/intent (reference)',
    status: 200,
    open: async ({ client, credentials }) =>
      signedRoute(
        client,
        credentials.partnerId,
        '/api/v1/rail/payment/intent',
        `SELECT count(*)::int AS n FROM payment_intents WHERE partner_id = $1`,
        (reference) => ({ reference, amountKobo: 5_000 }),
        (reference) => ({ reference, amountKobo: 5_001 }),
      ),
  },
  {
    name: 'POST /api/v1/rail/invoice (reference)',
    status: 200,
    open: async ({ client, credentials }) =>
      signedRoute(
        client,
        credentials.partnerId,
        '/api/v1/rail/invoice',
        `SELECT count(*)::int AS n FROM invoices WHERE partner_id = $1`,
        (reference) => ({ reference, title: 'School fees', amountKobo: 500_000, publishOnCreate: true }),
        (reference) => ({ reference, title: 'School fees', amountKobo: 500_001, publishOnCreate: true }),
      ),
  },
  {
    name: 'POST /api/v1/rail/virtual-account (reference)',
    status: 200,
    open: async ({ client, credentials }) =>
      signedRoute(
        client,
        credentials.partnerId,
        '/api/v1/rail/virtual-account',
        `SELECT count(*)::int AS n FROM virtual_accounts WHERE partner_id = $1 AND purpose = 'persistent'`,
        (reference) => ({ reference, purposeTag: 'rent' }),
        (reference) => ({ reference, purposeTag: 'school' }),
      ),
  },
  {
    name: 'POST /api/v1/rail/fbo/provision (holderRef)',
    status: 200,
    open: async ({ client, credentials }) =>
      signedRoute(
        client,
        credentials.partnerId,
        '/api/v1/rail/fbo/provision',
        `SELECT count(*)::int AS n FROM virtual_accounts WHERE partner_id = $1 AND purpose = 'fbo'`,
        (reference) => ({ holderRef: reference, purposeTag: 'wages' }),
        (reference) => ({ holderRef: reference, purposeTag: 'wages', callbackUrl: 'http://127.0.0.1:9/other' }),
      ),
  },
  {
    name: 'POST /api/v1/escrow/partner/create (reference)',
    status: 201,
    open: async ({ credentials }) => {
      const api = escrowClient(harness.app.baseUrl, credentials.escrowApiKey)
      return {
        send: async (given) => {
          const answer = await api.create<Body>(given)
          return {
            status: answer.status,
            replayed: answer.headers.get('idempotent-replayed') === 'true',
            body: answer.body,
          }
        },
        count: () => countOf(`SELECT count(*)::int AS n FROM escrows WHERE partner_id = $1`, credentials.partnerId),
        body: (reference) => createRequest({ reference }),
        other: (reference) => createRequest({ reference, amount: 50_001 }),
      }
    },
  },
  {
    name: 'POST /api/v1/rail/refunds (reference)',
    status: 201,
    open: async (partner) => {
      const creditId = await confirmedCredit(harness, partner, 30_000)
      return signedRoute(
        partner.client,
        partner.credentials.partnerId,
        '/api/v1/rail/refunds',
        `SELECT count(*)::int AS n FROM refunds WHERE partner_id = $1`,
        (reference) => ({ reference, creditId, amountKobo: 1_000 }),
        (reference) => ({ reference, creditId, amountKobo: 1_001 }),
      )
    },
  },
]

/** What the bank or the pipeline may have changed between two answers: a replay answers the object as it stands. */
const PROGRESS_FIELDS = new Set([
  'state',
  'status',
  'stateChangedAt',
  'terminalAt',
  'completedAt',
  'providerSessionId',
  'providerResponseCode',
  'providerResponseMessage',
  'providerReference',
  'responseCode',
  'responseMessage',
  'failureReason',
  'rail',
  'settlementAccountName',
])

/** The answer without the fields that record progress since the first answer. */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Body)
        .filter(([key]) => !PROGRESS_FIELDS.has(key))
        .map(([key, field]) => [key, stable(field)]),
    )
  }
  return value
}

/** The same keys in the reverse order (a JSON body another client might send). */
function reversed(body: Body): Body {
  return Object.fromEntries(Object.entries(body).reverse())
}

async function openRoute(routeCase: RouteCase): Promise<Route> {
  const partner = await harness.app.newPartner({ callbackUrl: harness.hook.url })
  return routeCase.open(partner)
}

describe.each(CASES)('$name', (routeCase) => {
  it('the same request twice: the same status and body, the second replayed; one object', async () => {
    const route = await openRoute(routeCase)
    const reference = randomUUID()
    const first = await route.send(route.body(reference))
    expect(first.status, JSON.stringify(first.body)).toBe(routeCase.status)
    expect(first.replayed).toBe(false)
    const again = await route.send(route.body(reference))
    expect(again.status).toBe(routeCase.status)
    expect(again.replayed).toBe(true)
    expect(stable(again.body)).toEqual(stable(first.body))
    expect(await route.count()).toBe(1)
  })

  it('the same reference with another body: 409 idempotency_conflict, nothing changed', async () => {
    const route = await openRoute(routeCase)
    const reference = randomUUID()
    const first = await route.send(route.body(reference))
    expect(first.status, JSON.stringify(first.body)).toBe(routeCase.status)
    const conflict = await route.send(route.other(reference))
    expect(conflict.status).toBe(409)
    expect(conflict.body).toMatchObject({ statusCode: 409, error: 'idempotency_conflict', details: { reference } })
    expect(conflict.body.message).toMatch(/ was already used with a different request$/)
    expect(typeof (conflict.body.details as Body).id).toBe('string')
    expect(await route.count()).toBe(1)
    const stored = await route.send(route.body(reference))
    expect(stored.replayed).toBe(true)
    expect(stable(stored.body)).toEqual(stable(first.body))
  })

  it('the order of the body keys does not make a new request', async () => {
    const route = await openRoute(routeCase)
    const reference = randomUUID()
    const first = await route.send(route.body(reference))
    expect(first.status, JSON.stringify(first.body)).toBe(routeCase.status)
    const reordered = await route.send(reversed(route.body(reference)))
    expect(reordered.status).toBe(routeCase.status)
    expect(reordered.replayed).toBe(true)
    expect(stable(reordered.body)).toEqual(stable(first.body))
    expect(await route.count()).toBe(1)
  })

  it('identical requests at once: exactly one object, every answer alike', async () => {
    const route = await openRoute(routeCase)
    const reference = randomUUID()
    const answers = await Promise.all(Array.from({ length: 6 }, () => route.send(route.body(reference))))
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(routeCase.status)
    expect(answers.filter((answer) => !answer.replayed)).toHaveLength(1)
    for (const answer of answers) expect(stable(answer.body)).toEqual(stable(answers[0]!.body))
    expect(await route.count()).toBe(1)
  })
})
