// The maximum amount of one instruction (RAIL_MAX_AMOUNT_KOBO) on every money-taking route: the
// maximum is accepted, one kobo more is refused with 422 amount_above_limit and changes nothing.
// Then the attack: one partner pushes 2^53 − 1 kobo into the sandbox again and again, and
// another partner's wallet credit, debit, bank send and outbound transfer still succeed.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { canonicalRequest, computeSignature } from '../../src/client/signing.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { createRequest, escrowClient } from '../support/escrow.ts'
import { PAYEE, PAYMENT_WORKERS, settle, startPayment, type PaymentParty } from '../support/payments.ts'
import { startRail, type Rail } from '../support/rail.ts'
import { waitFor } from '../support/wait.ts'

const SECRET = 'amount-limits-test-secret'

interface Reply {
  status: number
  body: { error?: string; details?: { maximumKobo?: number; field?: string }; status?: string; responseCode?: string }
}

/** A signed call to the sandbox bank's own API, as its client (the provider adapter) makes it. */
async function bank(app: TestApp, method: string, path: string, body: unknown): Promise<Reply> {
  const fullPath = `/sandbox-bank/v1${path}`
  const text = JSON.stringify(body)
  const timestampS = Math.floor(Date.now() / 1000)
  const headers = {
    'Content-Type': 'application/json',
    'X-Sandbox-Timestamp': String(timestampS),
    'X-Sandbox-Signature': computeSignature(SECRET, canonicalRequest(timestampS, method, fullPath, text)),
  }
  const response = await fetch(`${app.baseUrl}${fullPath}`, { method, headers, body: text })
  return { status: response.status, body: (await response.json()) as Reply['body'] }
}

async function newWallet(client: RailClient): Promise<{ walletId: string; accountNumber: string }> {
  const created = await client.post<{ walletId: string; accountNumber: string }>('/wallet', {
    customerReference: randomUUID(),
    name: 'Ada Obi',
  })
  expect(created.status).toBe(201)
  return created.body
}

async function virtualAccount(client: RailClient): Promise<string> {
  const created = await client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', {
    reference: randomUUID(),
  })
  expect(created.status).toBe(200)
  return created.body.virtualAccount
}

/** Row counts of the tables a refused request could have written. */
async function rowCounts(app: TestApp, tables: readonly string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const table of tables)
    counts[table] = (await app.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n
  return counts
}

describe('the maximum of one instruction on every money route', () => {
  const MAXIMUM_KOBO = 1_000_000
  let app: TestApp
  let client: RailClient
  let escrowApiKey: string
  let first: { walletId: string; accountNumber: string }
  let second: { walletId: string; accountNumber: string }
  let collection: string
  let bankCustomer: string

  beforeAll(async () => {
    app = await startTestApp({ sandboxBankSecret: SECRET, maxAmountKobo: MAXIMUM_KOBO })
    const partner = await app.newPartner()
    client = partner.client
    escrowApiKey = partner.credentials.escrowApiKey
    first = await newWallet(client)
    second = await newWallet(client)
    collection = await virtualAccount(client)
    const opened = await bank(app, 'POST', '/accounts', { accountName: 'CHIOMA EZE' })
    bankCustomer = (opened.body as { accountNumber?: string }).accountNumber!
  })
  afterAll(async () => app?.close())

  const NGN = { currency: 'NGN' }
  // One line per route, in an order whose accepted maxima fund the next: [name, tables it writes, before, send].
  const cases: [
    string,
    string[],
    (() => Promise<void>) | undefined,
    (amountKobo: number, reference: string) => Promise<Reply>,
  ][] = [
    [
      'POST /wallet/credit',
      ['wallet_moves', 'ledger_transfers', 'sandbox_bank.transfers'],
      undefined,
      (amountKobo, reference) =>
        client.post('/wallet/credit', { walletId: first.walletId, reference, amountKobo, ...NGN }),
    ],
    [
      'POST /transfer/wallet',
      ['wallet_moves', 'ledger_transfers', 'sandbox_bank.transfers'],
      undefined,
      (amountKobo, reference) =>
        client.post('/transfer/wallet', {
          walletId: first.walletId,
          destinationWalletId: second.walletId,
          reference,
          amountKobo,
          ...NGN,
        }),
    ],
    [
      'POST /wallet/debit',
      ['wallet_moves', 'ledger_transfers', 'sandbox_bank.transfers'],
      undefined,
      (amountKobo, reference) =>
        client.post('/wallet/debit', { walletId: second.walletId, reference, amountKobo, ...NGN }),
    ],
    [
      'POST /transfer/bank/customer',
      ['wallet_moves', 'ledger_transfers', 'sandbox_bank.transfers'],
      async () => {
        expect(
          (
            await client.post('/wallet/credit', {
              walletId: second.walletId,
              reference: randomUUID(),
              amountKobo: MAXIMUM_KOBO,
              ...NGN,
            })
          ).status,
        ).toBe(200)
      },
      (amountKobo, reference) =>
        client.post('/transfer/bank/customer', {
          walletId: second.walletId,
          reference,
          amountKobo,
          ...NGN,
          destinationAccountNumber: PAYEE.accountNumber,
          destinationBankCode: PAYEE.bankCode,
          destinationAccountName: PAYEE.accountName,
        }),
    ],
    [
      'POST /api/v1/rail/sandbox/fund-float',
      ['ledger_transfers'],
      undefined,
      (amountKobo, reference) => client.post('/api/v1/rail/sandbox/fund-float', { amountKobo, reference }),
    ],
    [
      'POST /api/v1/rail/payment/intent',
      ['payment_intents', 'virtual_accounts'],
      undefined,
      (amountKobo, reference) => client.post('/api/v1/rail/payment/intent', { reference, amountKobo }),
    ],
    [
      'POST /api/v1/rail/invoice',
      ['invoices', 'payment_intents'],
      undefined,
      (amountKobo, reference) =>
        client.post('/api/v1/rail/invoice', { reference, title: 'Consulting', amountKobo, publishOnCreate: true }),
    ],
    [
      'POST /api/v1/escrow/partner/create',
      ['escrows', 'payment_intents'],
      undefined,
      (amount, reference) =>
        escrowClient(app.baseUrl, escrowApiKey).create(createRequest({ amount, reference })) as Promise<Reply>,
    ],
    [
      'POST /api/v1/rail/sandbox/simulate-inbound-credit',
      ['sandbox_bank.transfers', 'inbound_credits'],
      undefined,
      (amountKobo) =>
        client.post('/api/v1/rail/sandbox/simulate-inbound-credit', { virtualAccount: collection, amountKobo }),
    ],
    [
      'POST /sandbox-bank/v1/transfers',
      ['sandbox_bank.transfers'],
      undefined,
      (amountKobo, reference) =>
        bank(app, 'POST', '/transfers', { reference, kind: 'credit', creditAccountNumber: bankCustomer, amountKobo }),
    ],
    [
      'POST /sandbox-bank/v1/inbound-credits',
      ['sandbox_bank.transfers'],
      undefined,
      (amountKobo) => bank(app, 'POST', '/inbound-credits', { accountNumber: collection, amountKobo }),
    ],
    // Last: its submission to the bank carries on after the answer.
    [
      'POST /api/v1/rail/outbound',
      ['outbound_transfers', 'ledger_transfers', 'bank_instructions'],
      undefined,
      (amountKobo, reference) =>
        client.post('/api/v1/rail/outbound', {
          clientReference: reference,
          amountKobo,
          beneficiaryAccountNumber: PAYEE.accountNumber,
          beneficiaryBankCode: PAYEE.bankCode,
          beneficiaryAccountName: PAYEE.accountName,
          ...NGN,
        }),
    ],
  ]

  it.each(cases)(
    '%s: one kobo above the maximum is refused with amount_above_limit and changes nothing; the maximum is accepted',
    async (_route, tables, before, send) => {
      await before?.()
      const reference = randomUUID()
      const counts = await rowCounts(app, tables)
      const refused = await send(MAXIMUM_KOBO + 1, reference)
      expect(refused.status).toBe(422)
      expect(refused.body.error).toBe('amount_above_limit')
      expect(refused.body.details?.maximumKobo).toBe(MAXIMUM_KOBO)
      expect(await rowCounts(app, tables)).toEqual(counts)
      // The refused request claimed nothing, not even its reference: the maximum under the same one is accepted.
      const accepted = await send(MAXIMUM_KOBO, reference)
      expect(accepted.status, JSON.stringify(accepted.body)).toBeGreaterThanOrEqual(200)
      expect(accepted.status).toBeLessThan(300)
      expect(accepted.body.status ?? 'accepted').not.toMatch(/^(failed|unknown)$/)
      expect(['00', '09', undefined, null]).toContain(accepted.body.responseCode)
    },
  )

  it('a sum beyond JavaScript numbers is a validation error, before any limit', async () => {
    const refused = await client.post<Reply['body']>('/wallet/credit', {
      walletId: first.walletId,
      reference: randomUUID(),
      amountKobo: 2 ** 53,
      ...NGN,
    })
    expect(refused.status).toBe(422)
    expect(refused.body.error).toBe('validation_error')
  })
})

describe('one partner pushing 2^53 − 1 kobo again and again cannot break another partner', () => {
  const HUGE_KOBO = Number.MAX_SAFE_INTEGER
  let app: Rail

  beforeAll(async () => {
    // The issue's amount: the schema's maximum, allowed here by configuration (the workers' too).
    app = await startRail({
      sandboxBankSecret: SECRET,
      maxAmountKobo: HUGE_KOBO,
      payments: { sandbox: { firstDelayMs: 200, deadlineMs: 10_000 } },
      workers: PAYMENT_WORKERS,
    })
  })
  afterAll(() => app?.close())

  it('credits, inbound credits and float funding of 2^53 − 1 leave every other partner working', async () => {
    const attacker = (await app.newPartner()).client
    const wallets = [await newWallet(attacker), await newWallet(attacker), await newWallet(attacker)]
    // Into one wallet: the first credit fills its account at the bank, which refuses the next with NIP 61.
    const filled = await attacker.post<Reply['body']>('/wallet/credit', {
      walletId: wallets[0]!.walletId,
      reference: randomUUID(),
      amountKobo: HUGE_KOBO,
      currency: 'NGN',
    })
    expect(filled.body).toMatchObject({ status: 'successful', responseCode: '00' })
    const overfilled = await attacker.post<Reply['body']>('/wallet/credit', {
      walletId: wallets[0]!.walletId,
      reference: randomUUID(),
      amountKobo: 1,
      currency: 'NGN',
    })
    expect(overfilled.body).toMatchObject({ status: 'failed', responseCode: '61' })
    // Into other wallets, each from the bank's settlement pool: the pool is nobody's running balance.
    for (const wallet of wallets.slice(1)) {
      const credited = await attacker.post<Reply['body']>('/wallet/credit', {
        walletId: wallet.walletId,
        reference: randomUUID(),
        amountKobo: HUGE_KOBO,
        currency: 'NGN',
      })
      expect(credited.body.status).toBe('successful')
    }
    // Into a virtual account: each lands in the settlement pool.
    const collection = await virtualAccount(attacker)
    for (let round = 0; round < 3; round++) {
      const paid = await attacker.post('/api/v1/rail/sandbox/simulate-inbound-credit', {
        virtualAccount: collection,
        amountKobo: HUGE_KOBO,
      })
      expect(paid.status).toBe(200)
    }
    // The credits settle to the float (the default) while it has room below 2^53 − 1 in its
    // lifetime, the rest waits in collections; a funding past that room is refused, nothing moved,
    // and the float's balance stays readable.
    const attackerId = (await attacker.get<{ partnerId: string }>('/api/v1/rail/float')).body.partnerId
    const appliedCredits = async () =>
      Number(
        (
          await app.db.pool.query(`SELECT count(*) FROM inbound_credits WHERE partner_id = $1 AND status = 'applied'`, [
            attackerId,
          ])
        ).rows[0].count,
      )
    // Identical signed requests within one second are one credit (the signature is the key of a request without a reference).
    await waitFor(async () => (await appliedCredits()) >= 1, 20_000, 'the credit applied')
    const funding = await attacker.post<{ error: string }>('/api/v1/rail/sandbox/fund-float', {
      amountKobo: HUGE_KOBO,
      reference: randomUUID(),
    })
    expect(funding.status).toBe(422)
    expect(funding.body.error).toBe('balance_limit_exceeded')
    const float = await attacker.get<{ bookedBalanceKobo: number }>('/api/v1/rail/float')
    expect(float.status).toBe(200)
    expect(float.body.bookedBalanceKobo).toBe(HUGE_KOBO)

    // Every balance the bank stores is an exact JavaScript number.
    const unsafe = await app.db.pool.query(
      `SELECT account_number FROM sandbox_bank.accounts WHERE balance_kobo > 9007199254740991 OR balance_kobo < 0`,
    )
    expect(unsafe.rows).toEqual([])

    // Another partner: a wallet credit, a debit, a bank send and an outbound transfer all succeed.
    const { client, credentials } = await app.newPartner()
    expect(
      (await client.post('/api/v1/rail/sandbox/fund-float', { amountKobo: 1_000_000, reference: randomUUID() })).status,
    ).toBe(200)
    const wallet = await newWallet(client)
    const credited = await client.post<Reply['body']>('/wallet/credit', {
      walletId: wallet.walletId,
      reference: randomUUID(),
      amountKobo: 1_000_000,
      currency: 'NGN',
    })
    expect(credited.body).toMatchObject({ status: 'successful', responseCode: '00' })
    const party: PaymentParty = { client, credentials, partnerId: credentials.partnerId, walletId: wallet.walletId }
    for (const kind of ['wallet debit', 'wallet external send', 'outbound transfer'] as const) {
      const id = await startPayment(app, party, kind, 100_000)
      expect(await settle(app, party, kind, id, 30_000), kind).toBe('succeeded')
    }
    const balances = (
      await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
        `/wallet/customer?customerId=${wallet.walletId}`,
      )
    ).body
    expect(balances).toEqual(expect.objectContaining({ availableBalanceKobo: 800_000, bookedBalanceKobo: 800_000 }))
  })
})
