// The Paystack adapter against the sandbox's Paystack dialect (/sandbox-paystack) over real HTTP,
// on the sandbox bank's books: payouts to a kept recipient that settle when the settlement
// simulator registers their outcome, refusals, a reused reference that moves nothing, faults that
// are unknown and never failed, no record (25), name enquiry, dedicated accounts and their credits,
// the balance, and webhooks signed with the dialect's key.
import { createHmac, randomUUID } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { canonicalRequest, computeSignature } from '../../src/client/signing.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { systemClock } from '../../src/platform/clock.ts'
import type { ProviderProfile } from '../../src/banking/providers/capabilities.ts'
import { ProviderHttp } from '../../src/banking/providers/http.ts'
import { PaystackAdapter } from '../../src/banking/providers/paystack/adapter.ts'
import { SandboxAdapter } from '../../src/banking/providers/sandbox-adapter.ts'
import { sandboxPaystackSecretKey } from '../../src/sandbox/dialect-credentials.ts'
import { SANDBOX_PAYSTACK_PREFIX, SANDBOX_PAYSTACK_PROFILE } from '../../src/sandbox/dialects.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { waitFor } from '../support/wait.ts'

const SECRET = 'paystack-adapter-test-secret'
const PROFILE: ProviderProfile = {
  name: SANDBOX_PAYSTACK_PROFILE,
  adapter: 'paystack',
  baseUrl: null,
  settings: {},
  webhookSourceAddresses: null,
  capabilities: {
    merchantCredit: false,
    debit: false,
    walletTransfer: false,
    bankPayout: true,
    nameCheck: true,
    narration: true,
    virtualAccounts: true,
  },
}
const NO_FAULTS = { noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 }

let app: TestApp
let adapter: PaystackAdapter
/** Registers payout outcomes at the sandbox bank (the settlement simulator), by the reference Paystack was sent. */
let simulator: SandboxAdapter

function paystackAdapter(
  profile: ProviderProfile = PROFILE,
  secretKey = sandboxPaystackSecretKey(SECRET),
): PaystackAdapter {
  return new PaystackAdapter({
    profile,
    baseUrl: `${app.baseUrl}${SANDBOX_PAYSTACK_PREFIX}`,
    secrets: { secretKey },
    http: new ProviderHttp({ provider: profile.name, pool: app.db.pool, timeoutMs: 2_000 }),
    pool: app.db.pool,
    clock: systemClock,
    session: new Map(),
  })
}

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: SECRET })
  adapter = paystackAdapter()
  simulator = new SandboxAdapter({ provider: 'sandbox', baseUrl: app.baseUrl, secret: SECRET, pool: app.db.pool })
})
afterEach(async () => sandboxBank('PUT', '/sandbox-bank/v1/faults', NO_FAULTS))
afterAll(async () => app?.close())

/** A call to the sandbox bank's own routes, signed with its secret. */
async function sandboxBank(
  method: 'PUT' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const text = body === undefined ? '' : JSON.stringify(body)
  const timestampS = Math.floor(Date.now() / 1000)
  const headers: Record<string, string> = {
    'X-Sandbox-Timestamp': String(timestampS),
    'X-Sandbox-Signature': computeSignature(SECRET, canonicalRequest(timestampS, method, path, text)),
  }
  if (text) headers['Content-Type'] = 'application/json'
  const response = await fetch(`${app.baseUrl}${path}`, { method, headers, body: text || undefined })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

async function calls(
  reference: string,
): Promise<{ operation: string; outcome: string; response_code: string | null }[]> {
  const { rows } = await app.db.pool.query(
    'SELECT operation, outcome, response_code FROM provider_calls WHERE reference = $1 ORDER BY created_at, id',
    [reference],
  )
  return rows
}

/** A beneficiary at GTBank whose payouts settle with 00 (the sandbox's magic accounts aside). */
function beneficiary(serial = String(100_000_000 + Math.floor(Math.random() * 800_000_000))): {
  destinationBankCode: string
  destinationAccountNumber: string
} {
  return { destinationBankCode: '058', destinationAccountNumber: nuban('058', serial) }
}

describe('payouts', () => {
  it('pays a payout in progress once the simulator registers its outcome, making the recipient once', async () => {
    const to = beneficiary()
    const reference = randomUUID()
    expect(await adapter.payout({ reference, amountKobo: 125_000, narration: 'rent', ...to })).toMatchObject({
      outcome: 'pending',
      responseCode: '09',
    })
    expect(await adapter.requery(reference)).toMatchObject({
      outcome: 'pending',
      responseCode: '09',
      responseMessage: expect.stringMatching(/^pending: /),
    })
    expect(await simulator.registerPayoutOutcome(reference, 'confirmed')).toMatchObject({ outcome: 'successful' })
    await waitFor(async () => (await adapter.requery(reference)).outcome === 'successful', 10_000, 'the payout settled')
    expect(await adapter.requery(reference)).toMatchObject({
      outcome: 'successful',
      responseCode: '00',
      providerReference: expect.stringMatching(/^TRF_/),
    })

    // A second payout to the same account uses the recipient kept for it.
    const second = randomUUID()
    expect(await adapter.payout({ reference: second, amountKobo: 1_000, ...to })).toMatchObject({ outcome: 'pending' })
    expect((await calls(second)).map((call) => call.operation)).toEqual(['payout'])
    expect((await calls(reference)).map((call) => call.operation).slice(0, 2)).toEqual(['create_recipient', 'payout'])
    const { rows } = await app.db.pool.query(
      'SELECT recipient_code FROM provider_recipients WHERE provider = $1 AND account_number = $2',
      [PROFILE.name, to.destinationAccountNumber],
    )
    expect(rows).toEqual([{ recipient_code: expect.stringMatching(/^RCP_/) }])
  })

  it('a refusal at the bank fails the payout with its final code; a failed settlement fails its requery', async () => {
    const refused = randomUUID()
    const result = await adapter.payout({ reference: refused, amountKobo: 1_239_051, ...beneficiary() })
    expect(result).toMatchObject({
      outcome: 'failed',
      responseCode: '51',
      responseMessage: expect.stringMatching(/^failed: /),
    })
    expect(await adapter.requery(refused)).toMatchObject({ outcome: 'failed', responseCode: '51' })

    const settlesFailed = randomUUID()
    expect(await adapter.payout({ reference: settlesFailed, amountKobo: 5_000, ...beneficiary() })).toMatchObject({
      outcome: 'pending',
    })
    await simulator.registerPayoutOutcome(settlesFailed, 'failed')
    await waitFor(async () => (await adapter.requery(settlesFailed)).outcome === 'failed', 10_000, 'the payout failed')
  })

  it('a payout reversed after it was paid is failed (05), marked reversed', async () => {
    const reference = randomUUID()
    expect(await adapter.payout({ reference, amountKobo: 6_000, ...beneficiary() })).toMatchObject({
      outcome: 'pending',
    })
    await simulator.registerPayoutOutcome(reference, 'confirmed')
    await waitFor(async () => (await adapter.requery(reference)).outcome === 'successful', 10_000, 'the payout settled')
    expect((await sandboxBank('POST', `/sandbox-bank/v1/transfers/${reference}/reversal`)).status).toBe(200)
    expect(await adapter.requery(reference)).toMatchObject({
      outcome: 'failed',
      responseCode: '05',
      reversed: true,
      responseMessage: expect.stringMatching(/^reversed/),
    })
  })

  it('an account Paystack cannot resolve fails the payout with 07 before any transfer', async () => {
    const reference = randomUUID()
    expect(
      await adapter.payout({
        reference,
        amountKobo: 5_000,
        destinationBankCode: '058',
        destinationAccountNumber: '1234567890',
      }),
    ).toMatchObject({ outcome: 'failed', responseCode: '07' })
    expect((await calls(reference)).map((call) => call.operation)).toEqual(['create_recipient'])
  })

  it('a reused reference moves nothing: the original is asked about and answered', async () => {
    const to = beneficiary()
    const reference = randomUUID()
    expect(await adapter.payout({ reference, amountKobo: 7_000, ...to })).toMatchObject({
      outcome: 'pending',
      responseCode: '09',
    })
    expect(await adapter.payout({ reference, amountKobo: 7_000, ...to })).toMatchObject({
      outcome: 'pending',
      responseCode: '09',
    })
    expect((await calls(reference)).map((call) => call.operation)).toEqual([
      'create_recipient',
      'payout',
      'payout',
      'requery',
    ])
    const { rows } = await app.db.pool.query(
      'SELECT count(*)::int AS transfers FROM sandbox_bank.transfers WHERE reference = $1',
      [reference],
    )
    expect(rows[0].transfers).toBe(1)
  })

  it.each([
    ['the bank answers 500', { ...NO_FAULTS, errorRate: 1 }],
    ['the bank drops the connection', { ...NO_FAULTS, noAnswerRate: 1 }],
  ])('%s: the payout is unknown, never failed', async (_case, faults) => {
    const to = beneficiary()
    // The recipient is made first, so that the fault falls on the transfer itself.
    expect(await adapter.payout({ reference: randomUUID(), amountKobo: 1_000, ...to })).toMatchObject({
      outcome: 'pending',
    })
    expect((await sandboxBank('PUT', '/sandbox-bank/v1/faults', faults)).status).toBe(200)
    const reference = randomUUID()
    expect(await adapter.payout({ reference, amountKobo: 2_000, ...to })).toMatchObject({ outcome: 'unknown' })
    expect(await adapter.requery(reference)).toMatchObject({ outcome: 'unknown' })
    await sandboxBank('PUT', '/sandbox-bank/v1/faults', NO_FAULTS)
    expect(await adapter.requery(reference)).toMatchObject({ outcome: 'pending', responseCode: '25' })
  })

  it('an answer lost after the transfer was made is unknown; the requery finds the transfer', async () => {
    const reference = randomUUID()
    expect(await adapter.payout({ reference, amountKobo: 3_119_098, ...beneficiary() })).toMatchObject({
      outcome: 'unknown',
    })
    expect(await adapter.requery(reference)).toMatchObject({ outcome: 'pending', responseCode: '09' })
  })

  it('a reference Paystack never saw is no record (25), pending and not failed', async () => {
    expect(await adapter.requery(randomUUID())).toMatchObject({
      outcome: 'pending',
      responseCode: '25',
      providerReference: null,
    })
  })

  it('a key Paystack does not take is no answer Rail reads: unknown', async () => {
    const wrongKey = paystackAdapter(PROFILE, 'sk_test_not-the-key')
    expect(await wrongKey.requery(randomUUID())).toMatchObject({ outcome: 'unknown' })
    expect(await wrongKey.payout({ reference: randomUUID(), amountKobo: 1_000, ...beneficiary() })).toMatchObject({
      outcome: 'unknown',
    })
  })

  it('never records the secret key', async () => {
    const key = sandboxPaystackSecretKey(SECRET)
    const { rows } = await app.db.pool.query(
      `SELECT count(*)::int AS leaks FROM provider_calls WHERE concat_ws(' ', reference, error, response_code, request_id) LIKE '%' || $1 || '%'`,
      [key],
    )
    expect(rows[0].leaks).toBe(0)
  })
})

describe('name enquiry, balance and what Paystack cannot do', () => {
  it('names the holder, or refuses an account with 07', async () => {
    const found = await adapter.nameEnquiry({ bankCode: '058', accountNumber: nuban('058', '100200300') })
    expect(found).toMatchObject({
      outcome: 'successful',
      responseCode: '00',
      value: { accountName: expect.stringMatching(/^[A-Z]+ [A-Z]+$/) },
    })
    expect(await adapter.nameEnquiry({ bankCode: '058', accountNumber: '1234567890' })).toMatchObject({
      outcome: 'failed',
      responseCode: '07',
    })
  })

  it('reads the balance in kobo, less a payout in progress', async () => {
    const before = await adapter.balance()
    if (before.outcome !== 'successful') throw new Error(`no balance: ${JSON.stringify(before)}`)
    expect(Number.isSafeInteger(before.value.balanceKobo)).toBe(true)
    expect(await adapter.payout({ reference: randomUUID(), amountKobo: 40_000, ...beneficiary() })).toMatchObject({
      outcome: 'pending',
    })
    expect(await adapter.balance()).toMatchObject({
      outcome: 'successful',
      value: { balanceKobo: before.value.balanceKobo - 40_000 },
    })
  })

  it('answers 58 for wallets without a call', async () => {
    const count = async () =>
      (await app.db.pool.query('SELECT count(*)::int AS calls FROM provider_calls WHERE provider = $1', [PROFILE.name]))
        .rows[0].calls as number
    const before = await count()
    const results = [
      await adapter.createWallet(),
      await adapter.credit(),
      await adapter.debit(),
      await adapter.walletTransfer(),
      await adapter.sendToBank(),
    ]
    for (const result of results)
      expect(result).toMatchObject({
        outcome: 'failed',
        responseCode: '58',
        responseMessage: expect.stringMatching(/^Paystack has no wallets/),
      })
    expect(await count()).toBe(before)
  })
})

describe('dedicated accounts and their credits', () => {
  it('allocates an account once per reference, lists its credits since a time, and deactivates it', async () => {
    const reference = `${randomUUID()}.${'a'.repeat(27)}`
    const allocated = await adapter.allocateVirtualAccount({ reference, accountName: 'Ada Obi' })
    if (allocated.outcome !== 'successful') throw new Error(`not allocated: ${JSON.stringify(allocated)}`)
    expect(allocated.value).toMatchObject({ bankCode: '101', accountNumber: expect.stringMatching(/^[0-9]{10}$/) })
    expect(allocated.providerReference).toMatch(/^[0-9]+:[0-9]+$/)
    expect(await adapter.allocateVirtualAccount({ reference, accountName: 'Ada Obi' })).toMatchObject({
      outcome: 'successful',
      value: allocated.value,
      providerReference: allocated.providerReference,
    })

    const { accountNumber } = allocated.value
    expect(await adapter.listCredits(accountNumber)).toMatchObject({ outcome: 'successful', value: [] })
    const payer = { payerName: 'OBI ADA', payerAccountNumber: nuban('058', '100200300'), payerBankCode: '058' }
    const paid = await sandboxBank('POST', '/sandbox-bank/v1/inbound-credits', {
      accountNumber,
      amountKobo: 250_000,
      narration: 'rent',
      ...payer,
    })
    expect(paid.status).toBe(200)
    const listed = await adapter.listCredits(accountNumber)
    expect(listed).toMatchObject({
      outcome: 'successful',
      value: [
        {
          accountNumber,
          amountKobo: 250_000,
          currency: 'NGN',
          payerName: 'OBI ADA',
          payerAccountNumber: payer.payerAccountNumber,
          payerBankCode: '058',
          accountReference: reference,
        },
      ],
    })
    const credited = listed.outcome === 'successful' ? listed.value[0]! : undefined
    expect(credited?.sessionId).toBe(paid.body.sessionId)
    expect(await adapter.listCredits(accountNumber, new Date(credited!.creditedAt.getTime() + 1_000))).toMatchObject({
      outcome: 'successful',
      value: [],
    })
    expect(await adapter.listCredits(accountNumber, credited!.creditedAt)).toMatchObject({
      outcome: 'successful',
      value: [{ sessionId: credited!.sessionId }],
    })

    // The adapter kept what it allocated the account with: it deactivates it by number.
    expect(await adapter.archiveVirtualAccount(accountNumber)).toMatchObject({
      outcome: 'successful',
      responseCode: '00',
    })
    expect(await adapter.archiveVirtualAccount(nuban('101', '999888777'))).toMatchObject({
      outcome: 'failed',
      responseCode: '07',
    })
  })
})

describe('webhooks', () => {
  it("reads a webhook signed with the dialect's key and refuses any other", () => {
    const reference = randomUUID()
    const rawBody = JSON.stringify({ event: 'transfer.success', data: { reference, status: 'success' } })
    const sign = (key: string) => createHmac('sha512', key).update(rawBody).digest('hex')
    const request = (signature: string) => ({
      pathWithQuery: '/providers/sandbox-paystack/webhooks',
      headers: { 'x-paystack-signature': signature },
      rawBody,
      sourceAddress: '127.0.0.1',
    })
    expect(adapter.readWebhook(request(sign(sandboxPaystackSecretKey(SECRET))))).toEqual({
      kind: 'transfer',
      reference,
      event: 'success',
    })
    expect(adapter.readWebhook(request(sign(sandboxPaystackSecretKey('another bank secret'))))).toEqual({
      kind: 'unauthorized',
    })
    const listed = paystackAdapter({
      ...PROFILE,
      webhookSourceAddresses: ['52.31.139.75', '52.49.173.169', '52.214.14.220'],
    })
    expect(listed.readWebhook(request(sign(sandboxPaystackSecretKey(SECRET))))).toEqual({ kind: 'unauthorized' })
  })
})

describe('against a stub of Paystack, for what the dialect never answers', () => {
  let server: http.Server
  let stub: PaystackAdapter
  const asked: string[] = []
  /** The transfer status the stub's verify answers. */
  let transferStatus = 'otp'

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      asked.push(`${request.method} ${request.url}`)
      const answer = (status: number, body: unknown) =>
        void response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body))
      request.resume()
      if (request.url === '/customer')
        return answer(200, {
          status: true,
          message: 'Customer created',
          data: { id: 481193, customer_code: 'CUS_stub' },
        })
      if (request.method === 'POST' && request.url === '/dedicated_account')
        return answer(400, { status: false, message: 'Customer already has an active dedicated account' })
      if (request.url?.startsWith('/dedicated_account?')) {
        const account = (id: number, number: string, slug: string, active: boolean) => ({
          id,
          account_number: number,
          account_name: 'RAIL/ADA OBI',
          active,
          bank: { name: 'Wema Bank', id: 20, slug },
        })
        return answer(200, {
          status: true,
          message: 'Managed accounts retrieved',
          data: [account(7, '9930000001', 'wema-bank', false), account(8, '9930000002', 'wema-bank', true)],
        })
      }
      if (request.url?.startsWith('/transfer/verify/')) {
        if (transferStatus === 'none') return answer(404, { status: false, message: 'Transfer not found' })
        return answer(200, {
          status: true,
          message: 'Transfer retrieved',
          data: { status: transferStatus, transfer_code: 'TRF_stub' },
        })
      }
      if (request.url === '/transferrecipient')
        return answer(201, {
          status: true,
          message: 'Transfer recipient created successfully',
          data: { recipient_code: 'RCP_stub', active: true },
        })
      // Every transfer refused for funds: a resend whose original spent the balance looks like this.
      if (request.url === '/transfer')
        return answer(400, { status: false, message: 'Your balance is not enough to fulfil this request' })
      answer(404, { status: false, message: 'Not found' })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const stubProfile: ProviderProfile = { ...PROFILE, settings: { preferredBank: 'wema-bank' } }
    stub = new PaystackAdapter({
      profile: stubProfile,
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      secrets: { secretKey: 'sk_live_stub' },
      http: new ProviderHttp({ provider: PROFILE.name, pool: app.db.pool, timeoutMs: 2_000 }),
      pool: app.db.pool,
      clock: systemClock,
      session: new Map(),
    })
  })
  afterAll(async () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())))

  it("answers a customer's active account when Paystack refuses another", async () => {
    const allocated = await stub.allocateVirtualAccount({
      reference: `${randomUUID()}.${'d'.repeat(27)}`,
      accountName: 'Ada Obi',
    })
    expect(allocated).toMatchObject({
      outcome: 'successful',
      providerReference: '481193:8',
      value: { bankCode: '035', accountNumber: '9930000002' },
    })
    expect(asked.slice(-3)).toEqual([
      'POST /customer',
      'POST /dedicated_account',
      'GET /dedicated_account?active=true&customer=481193',
    ])
  })

  it('a refused send stands only when Paystack has no transfer under its reference: a resend refused for funds its original spent is the original', async () => {
    const payout = { amountKobo: 10_000, destinationBankCode: '058', destinationAccountNumber: '0001234560' }
    transferStatus = 'success'
    expect(await stub.payout({ reference: randomUUID(), ...payout })).toMatchObject({
      outcome: 'successful',
      responseCode: '00',
    })
    transferStatus = 'pending'
    expect(await stub.payout({ reference: randomUUID(), ...payout })).toMatchObject({
      outcome: 'pending',
      responseCode: '09',
    })
    transferStatus = 'none'
    expect(await stub.payout({ reference: randomUUID(), ...payout })).toMatchObject({
      outcome: 'failed',
      responseCode: '51',
    })
  })

  it('reads an OTP as in progress, and a status it does not know as unknown', async () => {
    transferStatus = 'otp'
    expect(await stub.requery(randomUUID())).toMatchObject({
      outcome: 'pending',
      responseCode: '09',
      responseMessage: expect.stringMatching(/OTP must be disabled/),
    })
    transferStatus = 'settled'
    expect(await stub.requery(randomUUID())).toMatchObject({ outcome: 'unknown' })
  })
})
