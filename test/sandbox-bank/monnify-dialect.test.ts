// The sandbox's Monnify dialect over real HTTP: token login, name enquiry, single disbursements on
// the bank's books (pending until the simulator's outcome, then a signed webhook to a real
// receiver), their reversal by the simulator, duplicates, naira amounts, wallets, reserved accounts
// and their credits, faults.
import { randomUUID } from 'node:crypto'
import type { Runner } from 'graphile-worker'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { canonicalRequest, computeSignature } from '../../src/client/signing.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { systemClock } from '../../src/platform/clock.ts'
import { startWorkers } from '../../src/platform/jobs.ts'
import { sandboxMonnifyCredentials } from '../../src/sandbox/dialect-credentials.ts'
import { SANDBOX_MONNIFY_PROFILE, type SandboxDialectJobDeps } from '../../src/sandbox/dialects.ts'
import { sandboxBankTasks } from '../../src/sandbox/jobs.ts'
import {
  monnifyCreditNotifier,
  monnifyMainAccountNumber,
  monnifySignature,
  sandboxMonnifyTasks,
} from '../../src/sandbox/monnify/index.ts'
import { nairaToKobo } from '../../src/sandbox/monnify/wire.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'

const SECRET = 'sandbox-monnify-test-secret'
const CREDENTIALS = sandboxMonnifyCredentials(SECRET)
const MAIN_ACCOUNT = monnifyMainAccountNumber('101')
let app: Rail
let receiver: Receiver
let runner: Runner
let token: string

// Not startRail's workers: the bank's and the dialect's tasks alone, the webhooks to the test's receiver instead of Rail.
beforeAll(async () => {
  app = await startRail({ sandboxBankSecret: SECRET, receiver: true })
  receiver = app.receiver
  const deps: SandboxDialectJobDeps = {
    pool: app.db.pool,
    bankSecret: SECRET,
    clientBaseUrl: () => `http://127.0.0.1:${receiver.port}`,
    clock: systemClock,
  }
  const notifiers = { [SANDBOX_MONNIFY_PROFILE]: monnifyCreditNotifier(deps) }
  const taskList = {
    ...sandboxBankTasks({
      pool: app.db.pool,
      secret: SECRET,
      clientBaseUrl: deps.clientBaseUrl,
      dialectNotifiers: notifiers,
    }),
    ...sandboxMonnifyTasks(deps),
  }
  runner = await startWorkers({ pool: app.db.pool, concurrency: 2, taskList })
  token = await login()
})
afterAll(async () => {
  await runner?.stop()
  await app?.close()
})

interface Envelope<T = Record<string, unknown>> {
  requestSuccessful: boolean
  responseMessage: string
  responseCode: string
  responseBody: T
}

async function monnify<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  authorization = `Bearer ${token}`,
): Promise<{ status: number; body: Envelope<T> }> {
  const headers: Record<string, string> = authorization ? { Authorization: authorization } : {}
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  const response = await fetch(`${app.baseUrl}/sandbox-monnify${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as Envelope<T> }
}

async function login(): Promise<string> {
  const basic = `Basic ${Buffer.from(`${CREDENTIALS.apiKey}:${CREDENTIALS.secretKey}`).toString('base64')}`
  const answer = await monnify<{ accessToken: string; expiresIn: number }>(
    'POST',
    '/api/v1/auth/login',
    undefined,
    basic,
  )
  expect(answer.status).toBe(200)
  return answer.body.responseBody.accessToken
}

/** A call to the sandbox bank itself, signed with its secret (the settlement simulator, a payer). */
async function bank(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const fullPath = `/sandbox-bank/v1${path}`
  const text = body === undefined ? '' : JSON.stringify(body)
  const timestampS = Math.floor(Date.now() / 1000)
  const headers: Record<string, string> = {
    'X-Sandbox-Timestamp': String(timestampS),
    'X-Sandbox-Signature': computeSignature(SECRET, canonicalRequest(timestampS, method, fullPath, text)),
  }
  if (text) headers['Content-Type'] = 'application/json'
  const response = await fetch(`${app.baseUrl}${fullPath}`, { method, headers, body: text || undefined })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

function disbursement(amount: number | string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount,
    reference: `ref-${randomUUID()}`,
    narration: 'Test payout',
    destinationBankCode: '058',
    destinationAccountNumber: nuban('058', '123456789'),
    currency: 'NGN',
    sourceAccountNumber: MAIN_ACCOUNT,
    ...overrides,
  }
}

/** The webhook the receiver got whose body matches, once it arrives; its signature is checked. */
async function webhookWhere(
  matches: (event: { eventType: string; eventData: Record<string, unknown> }) => boolean,
): Promise<{ eventType: string; eventData: Record<string, unknown> }> {
  let found: { eventType: string; eventData: Record<string, unknown> } | undefined
  await waitFor(
    () => {
      for (const request of receiver.requests) {
        const event = JSON.parse(request.rawBody) as { eventType: string; eventData: Record<string, unknown> }
        if (!matches(event)) continue
        expect(request.path).toBe('/providers/sandbox-monnify/webhooks')
        expect(request.headers['monnify-signature']).toBe(monnifySignature(request.rawBody, CREDENTIALS.secretKey))
        found = event
        return true
      }
      return false
    },
    20_000,
    'the webhook',
  )
  return found!
}

/** The webhooks the receiver got for a disbursement reference, in order of arrival. */
function webhooksOf(reference: string): { eventType: string; eventData: Record<string, unknown> }[] {
  return receiver.requests
    .map((request) => JSON.parse(request.rawBody) as { eventType: string; eventData: Record<string, unknown> })
    .filter((event) => event.eventData.reference === reference)
}

/** Jobs of the dialect's (a watch, a webhook, a payout change) still queued or running for a reference. */
async function dialectJobsOf(reference: string): Promise<number> {
  const { rows } = await app.db.pool.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
      WHERE t.identifier LIKE 'sandbox_monnify_%' AND j.payload->>'reference' = $1`,
    [reference],
  )
  return rows[0]!.count
}

/** The main account's ledger balance, in kobo (read from Monnify's naira exactly). */
async function mainLedgerKobo(): Promise<number> {
  const naira = (
    await monnify<{ ledgerBalance: number }>(
      'GET',
      `/api/v2/disbursements/wallet-balance?accountNumber=${MAIN_ACCOUNT}`,
    )
  ).body.responseBody.ledgerBalance
  const converted = nairaToKobo(naira)
  if (!('amountKobo' in converted)) throw new Error(`the ledger balance ${naira} is not an exact naira amount`)
  return converted.amountKobo
}

const summaryOf = (reference: string) =>
  monnify<{ status: string; amount: number; fee: number }>(
    'GET',
    `/api/v2/disbursements/single/summary?reference=${encodeURIComponent(reference)}`,
  )

describe('authentication', () => {
  it('issues a bearer token for the API key and client secret, and every other route requires one', async () => {
    const basic = `Basic ${Buffer.from(`${CREDENTIALS.apiKey}:${CREDENTIALS.secretKey}`).toString('base64')}`
    const issued = await monnify<{ accessToken: string; expiresIn: number }>(
      'POST',
      '/api/v1/auth/login',
      undefined,
      basic,
    )
    expect(issued.body).toMatchObject({
      requestSuccessful: true,
      responseMessage: 'success',
      responseCode: '0',
      responseBody: { expiresIn: 3600 },
    })
    const wrong = await monnify(
      'POST',
      '/api/v1/auth/login',
      undefined,
      `Basic ${Buffer.from(`${CREDENTIALS.apiKey}:nope`).toString('base64')}`,
    )
    expect(wrong).toMatchObject({ status: 401, body: { requestSuccessful: false, responseCode: '99' } })
    expect((await monnify('POST', '/api/v1/auth/login', undefined, '')).status).toBe(401)

    const path = `/api/v1/disbursements/account/validate?accountNumber=${nuban('058', '123456789')}&bankCode=058`
    expect(await monnify('GET', path, undefined, '')).toMatchObject({
      status: 401,
      body: { requestSuccessful: false, responseCode: '99' },
    })
    expect(await monnify('GET', path, undefined, 'Bearer not-a-token')).toMatchObject({
      status: 401,
      body: { responseMessage: 'Invalid access token' },
    })
    expect((await monnify('GET', path, undefined, `Bearer ${issued.body.responseBody.accessToken}`)).status).toBe(200)
    await app.db.pool.query(`UPDATE sandbox_bank.monnify_access_tokens SET expires_at = now() - interval '1 second'`)
    expect(await monnify('GET', path, undefined, `Bearer ${issued.body.responseBody.accessToken}`)).toMatchObject({
      status: 401,
      body: { responseMessage: 'Access token expired' },
    })
    token = await login()
  })
})

describe('name enquiry', () => {
  it('names an account at another bank, and refuses an unknown bank or a bad account', async () => {
    const named = await monnify<{ accountName: string; accountNumber: string; bankCode: string }>(
      'GET',
      `/api/v1/disbursements/account/validate?accountNumber=${nuban('058', '123456789')}&bankCode=058`,
    )
    expect(named.body).toMatchObject({
      requestSuccessful: true,
      responseBody: { accountNumber: nuban('058', '123456789'), bankCode: '058' },
    })
    expect(named.body.responseBody.accountName).toMatch(/^[A-Z]+ [A-Z]+$/)
    expect(
      await monnify(
        'GET',
        `/api/v1/disbursements/account/validate?accountNumber=${nuban('058', '123456789')}&bankCode=999`,
      ),
    ).toMatchObject({ status: 400, body: { requestSuccessful: false } })
    expect(
      (
        await monnify(
          'GET',
          `/api/v1/disbursements/account/validate?accountNumber=${nuban('101', '888888888')}&bankCode=101`,
        )
      ).status,
    ).toBe(400)
  })
})

describe('single disbursements from the main account', () => {
  it('stays PENDING until the simulator registers its outcome by the same reference, then SUCCESS and a signed webhook', async () => {
    const request = disbursement(1234.56)
    const reference = request.reference as string
    const made = await monnify<{ status: string; amount: number; reference: string; totalFee: number }>(
      'POST',
      '/api/v2/disbursements/single',
      request,
    )
    expect(made.body).toMatchObject({
      requestSuccessful: true,
      responseCode: '0',
      responseBody: { status: 'PENDING', amount: 1234.56, reference, totalFee: 0 },
    })
    const onBooks = await app.db.pool.query(
      `SELECT amount_kobo, kind FROM sandbox_bank.transfers WHERE reference = $1`,
      [reference],
    )
    expect(onBooks.rows[0]).toMatchObject({ amount_kobo: 123456, kind: 'payout' })
    expect((await summaryOf(reference)).body.responseBody.status).toBe('PENDING')

    expect((await bank('POST', `/transfers/${reference}/outcome`, { outcome: 'confirmed' })).status).toBe(200)
    expect((await summaryOf(reference)).body.responseBody).toMatchObject({ status: 'SUCCESS', amount: 1234.56, fee: 0 })
    const event = await webhookWhere((candidate) => candidate.eventData.reference === reference)
    expect(event).toMatchObject({
      eventType: 'SUCCESSFUL_DISBURSEMENT',
      eventData: { status: 'SUCCESS', amount: 1234.56, destinationBankCode: '058', currency: 'NGN' },
    })
  })

  it('a registered failure is FAILED with a FAILED_DISBURSEMENT webhook; a refused magic amount fails at once', async () => {
    const request = disbursement(50)
    await monnify('POST', '/api/v2/disbursements/single', request)
    await bank('POST', `/transfers/${request.reference as string}/outcome`, { outcome: 'failed' })
    const event = await webhookWhere((candidate) => candidate.eventData.reference === request.reference)
    expect(event).toMatchObject({ eventType: 'FAILED_DISBURSEMENT', eventData: { status: 'FAILED' } })
    expect((await summaryOf(request.reference as string)).body.responseBody.status).toBe('FAILED')

    const refused = await monnify<{ status: string }>('POST', '/api/v2/disbursements/single', disbursement(90.51))
    expect(refused.body.responseBody.status).toBe('FAILED')
  })

  it('reversed after it was paid: REVERSED in its summary, one signed REVERSED_DISBURSEMENT, the main account given it back', async () => {
    const ledgerBeforeKobo = await mainLedgerKobo()
    const request = disbursement(777.77)
    const reference = request.reference as string
    await monnify('POST', '/api/v2/disbursements/single', request)
    // Not paid yet: nothing to reverse.
    expect((await bank('POST', `/transfers/${reference}/reversal`)).status).toBe(409)
    expect((await bank('POST', `/transfers/${reference}/outcome`, { outcome: 'confirmed' })).status).toBe(200)
    expect((await summaryOf(reference)).body.responseBody.status).toBe('SUCCESS')
    await webhookWhere(
      (event) => event.eventData.reference === reference && event.eventType === 'SUCCESSFUL_DISBURSEMENT',
    )
    expect(await mainLedgerKobo()).toBe(ledgerBeforeKobo - 77_777)

    expect((await bank('POST', `/transfers/${reference}/reversal`)).body).toEqual({ reference, reversed: true })
    expect((await bank('POST', `/transfers/${reference}/reversal`)).status).toBe(409)
    const reversed = await webhookWhere(
      (event) => event.eventData.reference === reference && event.eventType === 'REVERSED_DISBURSEMENT',
    )
    expect(reversed.eventData).toMatchObject({
      status: 'REVERSED',
      amount: 777.77,
      destinationBankCode: '058',
      currency: 'NGN',
    })
    expect((await summaryOf(reference)).body.responseBody).toMatchObject({ status: 'REVERSED', amount: 777.77 })
    expect(await mainLedgerKobo()).toBe(ledgerBeforeKobo)

    // Every job of the dialect's for it done (the outcome's own change job does nothing): each event once.
    await waitFor(async () => (await dialectJobsOf(reference)) === 0, 20_000, 'the dialect done with the disbursement')
    expect(webhooksOf(reference).map((event) => event.eventType)).toEqual([
      'SUCCESSFUL_DISBURSEMENT',
      'REVERSED_DISBURSEMENT',
    ])
  })

  it('a reused reference moves nothing and is refused as a duplicate', async () => {
    const request = disbursement(10)
    expect((await monnify('POST', '/api/v2/disbursements/single', request)).status).toBe(200)
    const again = await monnify('POST', '/api/v2/disbursements/single', { ...request, amount: 20 })
    expect(again).toMatchObject({ status: 400, body: { requestSuccessful: false, responseCode: '99' } })
    expect(again.body.responseMessage).toMatch(/^Duplicate reference/)
    const onBooks = await app.db.pool.query(`SELECT amount_kobo FROM sandbox_bank.transfers WHERE reference = $1`, [
      request.reference,
    ])
    expect(onBooks.rows).toEqual([{ amount_kobo: 1000 }])
    expect((await summaryOf(request.reference as string)).body.responseBody.amount).toBe(10)
  })

  it('converts naira exactly and refuses more than two decimals, an unknown reference is not found', async () => {
    const refused = await monnify('POST', '/api/v2/disbursements/single', disbursement(1.234))
    expect(refused).toMatchObject({ status: 400, body: { requestSuccessful: false } })
    const tiny = disbursement(0.1)
    expect(
      (await monnify<{ amount: number }>('POST', '/api/v2/disbursements/single', tiny)).body.responseBody.amount,
    ).toBe(0.1)
    expect(
      (await app.db.pool.query(`SELECT amount_kobo FROM sandbox_bank.transfers WHERE reference = $1`, [tiny.reference]))
        .rows,
    ).toEqual([{ amount_kobo: 10 }])
    expect(await summaryOf('no-such-reference')).toMatchObject({
      status: 404,
      body: { requestSuccessful: false, responseCode: '99' },
    })
    const balance = await monnify<{ availableBalance: number; ledgerBalance: number }>(
      'GET',
      `/api/v2/disbursements/wallet-balance?accountNumber=${MAIN_ACCOUNT}`,
    )
    expect(balance.body.responseBody.availableBalance).toBeLessThan(balance.body.responseBody.ledgerBalance)
  })
})

describe('wallets', () => {
  it('opens a wallet once per reference; credits, a send and the transactions with running balances', async () => {
    const walletReference = `wallet-${randomUUID()}`
    const create = {
      walletReference,
      walletName: 'ADA OBI WALLET',
      customerName: 'Ada Obi',
      customerEmail: 'ada@example.com',
      bvnDetails: { bvn: '22222222222', bvnDateOfBirth: '1990-01-01' },
    }
    const created = await monnify<{ accountNumber: string; walletReference: string }>(
      'POST',
      '/api/v1/disbursements/wallet',
      create,
    )
    expect(created.body).toMatchObject({
      requestSuccessful: true,
      responseBody: { walletReference, feeBearer: 'SELF' },
    })
    const accountNumber = created.body.responseBody.accountNumber
    expect(
      (await monnify<{ accountNumber: string }>('POST', '/api/v1/disbursements/wallet', create)).body.responseBody
        .accountNumber,
    ).toBe(accountNumber)

    expect(
      (await bank('POST', '/inbound-credits', { accountNumber, amountKobo: 500_000, payerName: 'BOLA ADE' })).status,
    ).toBe(200)
    const credited = await webhookWhere(
      (event) => (event.eventData.product as { reference?: string } | undefined)?.reference === walletReference,
    )
    expect(credited).toMatchObject({
      eventType: 'SUCCESSFUL_TRANSACTION',
      eventData: { amountPaid: 5000, paymentStatus: 'PAID', product: { type: 'RESERVED_ACCOUNT' } },
    })
    expect(
      (await monnify('GET', `/api/v1/disbursements/wallet/balance?accountNumber=${accountNumber}`)).body.responseBody,
    ).toEqual({ availableBalance: 5000, ledgerBalance: 5000 })

    const send = disbursement(1500.5, { sourceAccountNumber: accountNumber })
    expect(
      (await monnify<{ status: string }>('POST', '/api/v2/disbursements/single', send)).body.responseBody.status,
    ).toBe('PENDING')
    expect((await monnify('POST', '/api/v2/disbursements/single', send)).status).toBe(400)
    expect(
      (await monnify('GET', `/api/v1/disbursements/wallet/balance?accountNumber=${accountNumber}`)).body.responseBody,
    ).toMatchObject({ availableBalance: 3499.5 })
    await webhookWhere(
      (event) => event.eventData.reference === send.reference && event.eventType === 'SUCCESSFUL_DISBURSEMENT',
    )
    // A wallet's send is the wallet's own interbank transfer, not a payout: the simulator cannot reverse it.
    expect((await bank('POST', `/transfers/${send.reference as string}/reversal`)).status).toBe(409)

    const listed = await monnify<{
      content: {
        transactionType: string
        amount: number
        availableBalanceBefore: number
        availableBalanceAfter: number
      }[]
    }>('GET', `/api/v1/disbursements/wallet/transactions?accountNumber=${accountNumber}&pageNo=0&pageSize=10`)
    expect(
      listed.body.responseBody.content.map(
        ({ transactionType, amount, availableBalanceBefore, availableBalanceAfter }) => [
          transactionType,
          amount,
          availableBalanceBefore,
          availableBalanceAfter,
        ],
      ),
    ).toEqual([
      ['DEBIT', 1500.5, 5000, 3499.5],
      ['CREDIT', 5000, 0, 5000],
    ])
  })
})

describe('reserved accounts', () => {
  it('reserves an account, announces a credit to it as SUCCESSFUL_TRANSACTION, lists it, and deallocates', async () => {
    const accountReference = `acct-${randomUUID()}`
    const reserve = {
      accountReference,
      accountName: 'Chioma Eze',
      currencyCode: 'NGN',
      contractCode: CREDENTIALS.contractCode,
      customerEmail: 'chioma@example.com',
      customerName: 'Chioma Eze',
      getAllAvailableBanks: false,
      preferredBanks: ['101'],
    }
    const reserved = await monnify<{
      accounts: { bankCode: string; accountNumber: string; accountName: string }[]
      status: string
    }>('POST', '/api/v2/bank-transfer/reserved-accounts', reserve)
    expect(reserved.body).toMatchObject({
      requestSuccessful: true,
      responseBody: { status: 'ACTIVE', accounts: [{ bankCode: '101', accountName: 'Chioma Eze' }] },
    })
    const accountNumber = reserved.body.responseBody.accounts[0]!.accountNumber
    expect((await monnify('POST', '/api/v2/bank-transfer/reserved-accounts', reserve)).status).toBe(400)
    expect(
      (
        await monnify('POST', '/api/v2/bank-transfer/reserved-accounts', {
          ...reserve,
          accountReference: `x-${randomUUID()}`,
          contractCode: '0',
        })
      ).status,
    ).toBe(400)
    expect(
      (
        await monnify<{ accountReference: string }>(
          'GET',
          `/api/v2/bank-transfer/reserved-accounts/${accountReference}`,
        )
      ).body.responseBody.accountReference,
    ).toBe(accountReference)

    const credit = await bank('POST', '/inbound-credits', {
      accountNumber,
      amountKobo: 250_075,
      payerName: 'MUSA USMAN',
      payerAccountNumber: nuban('058', '111222333'),
      payerBankCode: '058',
    })
    const event = await webhookWhere(
      (candidate) =>
        (candidate.eventData.product as { reference?: string } | undefined)?.reference === accountReference,
    )
    expect(event).toMatchObject({
      eventType: 'SUCCESSFUL_TRANSACTION',
      eventData: {
        amountPaid: 2500.75,
        paymentStatus: 'PAID',
        paymentMethod: 'ACCOUNT_TRANSFER',
        destinationAccountInformation: { bankCode: '101', accountNumber },
        paymentSourceInformation: [
          { accountName: 'MUSA USMAN', bankCode: '058', sessionId: credit.body.sessionId, amountPaid: 2500.75 },
        ],
        customer: { email: 'chioma@example.com' },
      },
    })
    const listed = await monnify<{
      content: { transactionReference: string; amountPaid: number; paymentStatus: string }[]
    }>(
      'GET',
      `/api/v1/bank-transfer/reserved-accounts/transactions?accountReference=${accountReference}&page=0&size=10`,
    )
    expect(listed.body.responseBody.content).toEqual([
      expect.objectContaining({
        transactionReference: event.eventData.transactionReference,
        amountPaid: 2500.75,
        paymentStatus: 'PAID',
      }),
    ])

    expect(
      (await monnify('DELETE', `/api/v1/bank-transfer/reserved-accounts/reference/${accountReference}`)).status,
    ).toBe(200)
    expect((await monnify('GET', `/api/v2/bank-transfer/reserved-accounts/${accountReference}`)).status).toBe(404)
  })
})

describe('faults and magic amounts', () => {
  it('an error amount answers 500 and moves nothing; a lost request is dropped once, then processed', async () => {
    const failing = disbursement(90.96)
    expect(
      (
        await fetch(`${app.baseUrl}/sandbox-monnify/api/v2/disbursements/single`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(failing),
        })
      ).status,
    ).toBe(500)
    expect(
      (await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [failing.reference]))
        .rowCount,
    ).toBe(0)

    const lost = disbursement(90.97)
    await expect(monnify('POST', '/api/v2/disbursements/single', lost)).rejects.toThrow()
    expect(
      (await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [lost.reference])).rowCount,
    ).toBe(0)
    expect(
      (await monnify<{ status: string }>('POST', '/api/v2/disbursements/single', lost)).body.responseBody.status,
    ).toBe('PENDING')
  })

  it('a lost answer: the transfer is made, the caller hears nothing, and the summary finds it', async () => {
    const request = disbursement(90.98)
    await expect(monnify('POST', '/api/v2/disbursements/single', request)).rejects.toThrow()
    expect((await summaryOf(request.reference as string)).body.responseBody.status).toBe('PENDING')
  })
})
