// The sandbox's Paystack dialect over real HTTP: its bearer key, name enquiry, recipients,
// transfers as payouts on the bank's books (pending until the simulator registers an outcome,
// duplicates refused without moving money, reversals), the balance, customers and dedicated
// accounts with the credits paid into them, and its signed webhooks received by a real server.
import { randomUUID } from 'node:crypto'
import type { Runner } from 'graphile-worker'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { canonicalRequest, computeSignature } from '../../src/client/signing.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { startWorkers } from '../../src/platform/jobs.ts'
import { sandboxPaystackSecretKey } from '../../src/sandbox/dialect-credentials.ts'
import { SANDBOX_PAYSTACK_PROFILE, type SandboxDialectJobDeps } from '../../src/sandbox/dialects.ts'
import { sandboxBankTasks } from '../../src/sandbox/jobs.ts'
import { paystackCreditNotifier, sandboxPaystackTasks } from '../../src/sandbox/paystack/index.ts'
import { paystackSignature } from '../../src/sandbox/paystack/wire.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { ReceivedRequest, Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'

const SECRET = 'sandbox-paystack-test-secret'
const KEY = sandboxPaystackSecretKey(SECRET)
const OPENING_BALANCE_KOBO = 10_000_000_000
let app: Rail
let receiver: Receiver
let worker: Runner

// Not startRail's workers: the bank's and the dialect's tasks alone, the webhooks to the test's receiver instead of Rail.
beforeAll(async () => {
  app = await startRail({ sandboxBankSecret: SECRET, receiver: true })
  receiver = app.receiver
  // The dialect's webhooks go to a receiver of the test's, by the workers `rail worker` runs.
  const deps: SandboxDialectJobDeps = {
    pool: app.db.pool,
    bankSecret: SECRET,
    clientBaseUrl: () => `http://127.0.0.1:${receiver.port}`,
    clock: { now: () => new Date() },
  }
  const bankTasks = sandboxBankTasks({
    pool: app.db.pool,
    secret: SECRET,
    clientBaseUrl: deps.clientBaseUrl,
    dialectNotifiers: { [SANDBOX_PAYSTACK_PROFILE]: paystackCreditNotifier(deps) },
  })
  worker = await startWorkers({
    pool: app.db.pool,
    concurrency: 2,
    taskList: { ...bankTasks, ...sandboxPaystackTasks(deps) },
  })
})
afterAll(async () => {
  await worker?.stop()
  await app?.close()
})

interface Answer {
  status: number
  body: { status: boolean; message: string; data: Record<string, unknown>; meta?: Record<string, unknown> }
}

async function paystack(method: string, path: string, body?: unknown, key: string | null = KEY): Promise<Answer> {
  const headers: Record<string, string> = {}
  if (key !== null) headers.Authorization = `Bearer ${key}`
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  const response = await fetch(`${app.baseUrl}/sandbox-paystack${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as Answer['body'] }
}

async function bank<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const fullPath = `/sandbox-bank/v1${path}`
  const text = body === undefined ? '' : JSON.stringify(body)
  const timestampS = Math.floor(Date.now() / 1000)
  const headers: Record<string, string> = {
    'X-Sandbox-Timestamp': String(timestampS),
    'X-Sandbox-Signature': computeSignature(SECRET, canonicalRequest(timestampS, method, fullPath, text)),
  }
  if (text) headers['Content-Type'] = 'application/json'
  const response = await fetch(`${app.baseUrl}${fullPath}`, { method, headers, body: text || undefined })
  return { status: response.status, body: (await response.json()) as T }
}

/** A Paystack-style reference (16 to 50 lowercase letters, digits, - and _). */
const newReference = (): string => randomUUID()

/** The webhooks received for a transfer reference (or a credit's account), each verified against its signature. */
function webhooks(event: string, match: (data: Record<string, unknown>) => boolean): ReceivedRequest[] {
  return receiver.requests.filter((request) => {
    const body = JSON.parse(request.rawBody) as { event: string; data: Record<string, unknown> }
    return body.event === event && match(body.data)
  })
}

async function webhookFor(
  event: string,
  match: (data: Record<string, unknown>) => boolean,
): Promise<{ event: string; data: Record<string, unknown> }> {
  await waitFor(() => webhooks(event, match).length > 0, 20_000, `${event} webhook`)
  const received = webhooks(event, match)[0]!
  expect(received.path).toBe('/providers/sandbox-paystack/webhooks')
  expect(received.headers['x-paystack-signature']).toBe(paystackSignature(KEY, received.rawBody))
  return JSON.parse(received.rawBody) as { event: string; data: Record<string, unknown> }
}

async function balance(): Promise<number> {
  const answer = await paystack('GET', '/balance')
  expect(answer.status).toBe(200)
  const data = answer.body.data as unknown as { currency: string; balance: number }[]
  expect(data).toEqual([{ currency: 'NGN', balance: expect.any(Number) }])
  return data[0]!.balance
}

let recipientCode = ''
const destination = { bankCode: '058', accountNumber: nuban('058', '123456789') }

async function transfer(amount: number, reference = newReference()): Promise<Answer & { reference: string }> {
  const answer = await paystack('POST', '/transfer', {
    source: 'balance',
    amount,
    recipient: recipientCode,
    reference,
    reason: 'Payout',
    currency: 'NGN',
  })
  return { ...answer, reference }
}

async function bankTransferCount(reference: string): Promise<number> {
  const found = await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [reference])
  return found.rowCount ?? 0
}

describe('the bearer key', () => {
  it.each([
    ['no Authorization header', null],
    ['another key', 'sk_test_not_the_key'],
  ])('refuses %s with Paystack’s 401', async (_case, key) => {
    const answer = await paystack('GET', '/balance', undefined, key)
    expect(answer.status).toBe(401)
    expect(answer.body).toMatchObject({ status: false, message: expect.any(String) })
  })

  it('lets the key in: the balance is the opening float before anything moved', async () => {
    expect(await balance()).toBe(OPENING_BALANCE_KOBO)
  })
})

describe('name enquiry and recipients', () => {
  it('resolves an account at the bank and refuses one it cannot resolve', async () => {
    const opened = await bank<{ accountNumber: string }>('POST', '/accounts', { accountName: 'ADA OBI' })
    const resolved = await paystack('GET', `/bank/resolve?account_number=${opened.body.accountNumber}&bank_code=101`)
    expect(resolved.status).toBe(200)
    expect(resolved.body).toEqual({
      status: true,
      message: 'Account number resolved',
      data: { account_number: opened.body.accountNumber, account_name: 'ADA OBI', bank_id: 101 },
    })
    const unknown = await paystack('GET', `/bank/resolve?account_number=${nuban('101', '888888888')}&bank_code=101`)
    expect(unknown.status).toBe(422)
    expect(unknown.body).toMatchObject({
      status: false,
      message: 'Could not resolve account name. Check parameters or try again.',
    })
  })

  it('creates a recipient once per account, fetched by code or id', async () => {
    const body = {
      type: 'nuban',
      name: 'Chidi Okeke',
      account_number: destination.accountNumber,
      bank_code: destination.bankCode,
      currency: 'NGN',
    }
    const first = await paystack('POST', '/transferrecipient', body)
    expect(first.status).toBe(201)
    expect(first.body.data).toMatchObject({
      type: 'nuban',
      name: 'Chidi Okeke',
      recipient_code: expect.stringMatching(/^RCP_[a-z0-9]{15}$/),
      details: { account_number: destination.accountNumber, bank_code: '058', bank_name: 'Guaranty Trust Bank' },
    })
    const again = await paystack('POST', '/transferrecipient', body)
    expect(again.body.data.recipient_code).toBe(first.body.data.recipient_code)
    recipientCode = String(first.body.data.recipient_code)
    expect((await paystack('GET', `/transferrecipient/${recipientCode}`)).body.data.id).toBe(first.body.data.id)
    expect((await paystack('GET', `/transferrecipient/${first.body.data.id}`)).body.data.recipient_code).toBe(
      recipientCode,
    )
    expect((await paystack('GET', '/transferrecipient/RCP_000000000000000')).status).toBe(404)
  })
})

describe('transfers', () => {
  it('stays pending until the simulator registers an outcome, then succeeds and says so by a signed webhook', async () => {
    const before = await balance()
    const made = await transfer(250_000)
    expect(made.status).toBe(200)
    expect(made.body.data).toMatchObject({
      status: 'pending',
      amount: 250_000,
      reference: made.reference,
      transfer_code: expect.stringMatching(/^TRF_/),
      recipient: expect.any(Number),
    })
    expect(await balance()).toBe(before - 250_000)
    expect((await paystack('GET', `/transfer/verify/${made.reference}`)).body.data.status).toBe('pending')
    expect((await bank('POST', `/transfers/${made.reference}/outcome`, { outcome: 'confirmed' })).status).toBe(200)
    const event = await webhookFor('transfer.success', (data) => data.reference === made.reference)
    expect(event.data).toMatchObject({
      status: 'success',
      amount: 250_000,
      transfer_code: made.body.data.transfer_code,
    })
    const verified = await paystack('GET', `/transfer/verify/${made.reference}`)
    expect(verified.body).toMatchObject({
      status: true,
      message: 'Transfer retrieved',
      data: { status: 'success', recipient: { recipient_code: recipientCode } },
    })
    expect((await paystack('GET', `/transfer/${made.body.data.transfer_code}`)).body.data.status).toBe('success')
    expect(await balance()).toBe(before - 250_000)
  })

  it('refuses a reference used before and moves nothing', async () => {
    const made = await transfer(100_000)
    const before = await balance()
    const again = await transfer(100_000, made.reference)
    expect(again.status).toBe(400)
    expect(again.body).toMatchObject({ status: false, message: 'Duplicate Transfer Reference' })
    expect(await bankTransferCount(made.reference)).toBe(1)
    expect(await balance()).toBe(before)
  })

  it('answers Paystack’s not found for a reference it never saw', async () => {
    const answer = await paystack('GET', `/transfer/verify/${newReference()}`)
    expect(answer.status).toBe(404)
    expect(answer.body).toMatchObject({ status: false, message: 'Transfer not found' })
  })

  it('fails when the simulator says so, giving the money back', async () => {
    const before = await balance()
    const made = await transfer(300_000)
    await bank('POST', `/transfers/${made.reference}/outcome`, { outcome: 'failed' })
    const event = await webhookFor('transfer.failed', (data) => data.reference === made.reference)
    expect(event.data.status).toBe('failed')
    expect((await paystack('GET', `/transfer/verify/${made.reference}`)).body.data.status).toBe('failed')
    expect(await balance()).toBe(before)
  })

  it('is reversed after it succeeded: the money comes back and transfer.reversed is sent', async () => {
    const before = await balance()
    const made = await transfer(400_000)
    await bank('POST', `/transfers/${made.reference}/outcome`, { outcome: 'confirmed' })
    await webhookFor('transfer.success', (data) => data.reference === made.reference)
    expect(await balance()).toBe(before - 400_000)
    expect((await bank('POST', `/transfers/${made.reference}/reversal`)).status).toBe(200)
    expect((await bank('POST', `/transfers/${made.reference}/reversal`)).status).toBe(409)
    const event = await webhookFor('transfer.reversed', (data) => data.reference === made.reference)
    expect(event.data.status).toBe('reversed')
    expect((await paystack('GET', `/transfer/verify/${made.reference}`)).body.data.status).toBe('reversed')
    expect(await balance()).toBe(before)
  })

  it.each([
    [19_051, 'Insufficient funds'],
    [19_007, 'Invalid account'],
  ])('fails at once for the magic amount %s, announced as transfer.failed', async (amount, gatewayResponse) => {
    const made = await transfer(amount)
    expect(made.status).toBe(200)
    expect(made.body.data).toMatchObject({ status: 'failed', gateway_response: gatewayResponse })
    await webhookFor('transfer.failed', (data) => data.reference === made.reference)
  })

  it('injects the bank’s faults: an error, and a lost request whose resend is processed once', async () => {
    const failing = await transfer(19_096)
    expect(failing.status).toBe(500)
    const reference = newReference()
    await expect(transfer(19_097, reference)).rejects.toThrow()
    expect(await bankTransferCount(reference)).toBe(0)
    const resent = await transfer(19_097, reference)
    expect(resent.body.data.status).toBe('pending')
    expect(await bankTransferCount(reference)).toBe(1)
  })
})

describe('customers, dedicated accounts and their credits', () => {
  it('allocates a dedicated account, announces a credit to it as charge.success and lists it', async () => {
    const customer = await paystack('POST', '/customer', {
      email: 'ngozi@example.com',
      first_name: 'Ngozi',
      last_name: 'Bello',
      phone: '08031234567',
    })
    expect(customer.status).toBe(200)
    expect(customer.body.data).toMatchObject({
      customer_code: expect.stringMatching(/^CUS_/),
      id: expect.any(Number),
      email: 'ngozi@example.com',
    })
    const customerCode = String(customer.body.data.customer_code)
    expect((await paystack('POST', '/customer', { email: 'ngozi@example.com' })).body.data.customer_code).toBe(
      customerCode,
    )

    const created = await paystack('POST', '/dedicated_account', {
      customer: customerCode,
      preferred_bank: 'test-bank',
    })
    expect(created.status).toBe(200)
    expect(created.body.data).toMatchObject({
      bank: { name: 'Providus Bank', id: 101, slug: 'providus-bank' },
      assigned: true,
      active: true,
      currency: 'NGN',
      customer: { customer_code: customerCode },
    })
    const accountNumber = String(created.body.data.account_number)
    expect((await paystack('POST', '/dedicated_account', { customer: customerCode })).body.data.id).toBe(
      created.body.data.id,
    )
    expect((await paystack('GET', `/dedicated_account/${created.body.data.id}`)).body.data.account_number).toBe(
      accountNumber,
    )

    const before = await balance()
    const credited = await bank<{ sessionId: string }>('POST', '/inbound-credits', {
      accountNumber,
      amountKobo: 750_000,
      payerName: 'EMEKA EZE',
      payerAccountNumber: nuban('033', '555000111'),
      payerBankCode: '033',
    })
    expect(credited.status).toBe(200)
    const event = await webhookFor('charge.success', (data) => data.reference === credited.body.sessionId)
    expect(event.data).toMatchObject({
      status: 'success',
      amount: 750_000,
      channel: 'dedicated_nuban',
      customer: { customer_code: customerCode },
      authorization: {
        receiver_bank_account_number: accountNumber,
        sender_name: 'EMEKA EZE',
        sender_bank_account_number: nuban('033', '555000111'),
      },
    })
    expect(await balance()).toBe(before + 750_000)

    const listed = await paystack(
      'GET',
      `/transaction?customer=${customer.body.data.id}&status=success&perPage=10&page=1`,
    )
    expect(listed.status).toBe(200)
    expect(listed.body.data).toEqual([
      expect.objectContaining({ reference: credited.body.sessionId, amount: 750_000, channel: 'dedicated_nuban' }),
    ])
    expect(listed.body.meta).toEqual({
      total: 1,
      total_volume: 750_000,
      skipped: 0,
      perPage: 10,
      page: 1,
      pageCount: 1,
    })
    expect((await paystack('GET', `/transaction?customer=${customer.body.data.id}&status=failed`)).body.data).toEqual(
      [],
    )
    const byAccount = await paystack(
      'GET',
      `/transaction?status=success&channel=dedicated_nuban&virtual_account_number=${accountNumber}&per_page=50&page=1`,
    )
    expect(
      (byAccount.body.data as unknown as { reference: string }[]).map((transaction) => transaction.reference),
    ).toEqual([credited.body.sessionId])
    const accounts = await paystack('GET', `/dedicated_account?active=true&customer=${customer.body.data.id}`)
    expect(
      (accounts.body.data as unknown as { account_number: string }[]).map((account) => account.account_number),
    ).toEqual([accountNumber])

    const deactivated = await paystack('DELETE', `/dedicated_account/${created.body.data.id}`)
    expect(deactivated.body.data).toMatchObject({ active: false, assigned: false })
    const next = await paystack('POST', '/dedicated_account', { customer: customerCode })
    expect(next.body.data.account_number).not.toBe(accountNumber)
  })
})
