// How Paystack's answers read in Rail's words (src/banking/providers/paystack/mapping.ts, credits.ts), one
// line per case: transfer statuses in the NIP vocabulary, refusals, name enquiries, recipients,
// balances, dedicated accounts, credits and webhooks. No database, no HTTP.
import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { HttpAnswer } from '../../src/banking/providers/http.ts'
import { transactionQuery } from '../../src/banking/providers/paystack/adapter.ts'
import {
  creditOfTransaction,
  dedicatedAccountBankCode,
  failureCode,
  readBalanceAnswer,
  readCustomerAnswer,
  readDedicatedAccount,
  readNameEnquiryAnswer,
  readPaystackWebhook,
  readRecipientAnswer,
  readTransactionPage,
  readTransferAnswer,
  readTransferStatus,
  readVerifyAnswer,
} from '../../src/banking/providers/paystack/mapping.ts'
import type { ProviderResult, WebhookRequest } from '../../src/banking/providers/types.ts'

const UUID = '3f2a9c1e-7b4d-4e8a-9f00-1c2d3e4f5a6b'

function json(httpStatus: number, body: Record<string, unknown>): HttpAnswer {
  return { ok: true, httpStatus, body }
}
const LOST: HttpAnswer = { ok: false, httpStatus: null, error: 'UND_ERR_HEADERS_TIMEOUT: Headers Timeout Error' }
const SERVER_ERROR: HttpAnswer = { ok: false, httpStatus: 502, error: 'provider answered 502' }
const NOT_JSON: HttpAnswer = { ok: false, httpStatus: 200, error: 'answer is not JSON' }

/** The outcome and code of a result, or 'unknown', for one-line expectations. */
function read(result: ProviderResult<unknown> | 'duplicate'): string {
  if (result === 'duplicate') return 'duplicate'
  if (result.outcome === 'unknown') return 'unknown'
  return `${result.outcome} ${result.responseCode}${'reversed' in result && result.reversed ? ' reversed' : ''}`
}

describe('transfer statuses', () => {
  // Paystack's status (and what it says of a failure) → outcome and NIP code.
  const CASES: readonly (readonly [status: unknown, reason: string | null, expected: string])[] = [
    ['success', null, 'successful 00'],
    ['pending', null, 'pending 09'],
    ['processing', null, 'pending 09'],
    ['queued', null, 'pending 09'],
    ['received', null, 'pending 09'],
    ['otp', null, 'pending 09'],
    ['failed', null, 'failed 05'],
    ['failed', 'Insufficient balance', 'failed 51'],
    ['failed', 'Could not resolve account name', 'failed 07'],
    ['failed', 'Beneficiary bank not available', 'failed 91'],
    ['rejected', null, 'failed 05'],
    ['abandoned', null, 'failed 05'],
    ['blocked', null, 'failed 05'],
    ['reversed', null, 'failed 05 reversed'],
    // What Rail does not know is never a failure: the money may have moved.
    ['paid', null, 'unknown'],
    ['SUCCESS', null, 'unknown'],
    ['Failed', null, 'unknown'],
    ['', null, 'unknown'],
    [42, null, 'unknown'],
    [null, null, 'unknown'],
    [undefined, null, 'unknown'],
  ]

  it.each(CASES)('%j (%s) → %s', (status, reason, expected) => {
    expect(read(readTransferStatus(status, { transferCode: 'TRF_1', reason }))).toBe(expected)
  })

  it("puts Paystack's own status in the message, and says what to do about an OTP", () => {
    const pending = readTransferStatus('queued', { transferCode: 'TRF_1', reason: null })
    expect(pending.outcome === 'pending' && pending.responseMessage).toMatch(/^queued: /)
    const otp = readTransferStatus('otp', { transferCode: 'TRF_1', reason: null })
    expect(otp.outcome === 'pending' && otp.responseMessage).toMatch(/^otp: .*OTP must be disabled for API transfers/)
    const reversed = readTransferStatus('reversed', { transferCode: 'TRF_1', reason: 'Bank declined' })
    expect(reversed).toMatchObject({
      outcome: 'failed',
      responseCode: '05',
      reversed: true,
      providerReference: 'TRF_1',
    })
    expect(reversed.outcome === 'failed' && reversed.responseMessage).toMatch(/^reversed/)
    const success = readTransferStatus('success', { transferCode: 'TRF_1', reason: null })
    expect(success).toMatchObject({ outcome: 'successful', providerReference: 'TRF_1' })
  })

  const CODES: readonly (readonly [reason: string, code: string])[] = [
    ['Your balance is not enough to fulfil this request', '51'],
    ['Insufficient funds', '51'],
    ['Invalid account number', '07'],
    ['Account number is invalid', '07'],
    ['Could not resolve account name. Check parameters or try again.', '07'],
    ['Customer bank not available', '91'],
    ['Transfer failed', '05'],
    ['', '05'],
  ]
  it.each(CODES)('failure %j → %s', (reason, code) => {
    expect(failureCode(reason)).toBe(code)
  })
})

describe('POST /transfer answers', () => {
  const transfer = (status: string) =>
    json(200, {
      status: true,
      message: 'Transfer has been queued',
      data: { status, reference: UUID, transfer_code: 'TRF_1', amount: 5000 },
    })
  const refusal = (httpStatus: number, message: string) => json(httpStatus, { status: false, message })
  const CASES: readonly (readonly [what: string, answer: HttpAnswer, expected: string])[] = [
    ['queued as pending', transfer('pending'), 'pending 09'],
    ['paid at once', transfer('success'), 'successful 00'],
    ['failed at once', transfer('failed'), 'failed 05'],
    ['waiting for an OTP', transfer('otp'), 'pending 09'],
    ['a status Rail does not know', transfer('on_hold'), 'unknown'],
    ['accepted without a transfer', json(200, { status: true, message: 'ok' }), 'unknown'],
    ['a reused reference', refusal(400, 'Duplicate Transfer Reference'), 'duplicate'],
    ['a reused reference, other words', refusal(400, 'Transfer reference has already been used'), 'duplicate'],
    ['a reused reference as a conflict', refusal(409, 'Reference already exists'), 'duplicate'],
    ['not enough balance', refusal(400, 'Your balance is not enough to fulfil this request'), 'failed 51'],
    ['a refusal Rail cannot place', refusal(400, 'Recipient specified is invalid'), 'unknown'],
    ['a key Paystack does not take', refusal(401, 'Invalid key'), 'unknown'],
    ['too many requests', refusal(429, 'Too many requests'), 'unknown'],
    ['no answer', LOST, 'unknown'],
    ['a 5xx', SERVER_ERROR, 'unknown'],
    ['not JSON', NOT_JSON, 'unknown'],
    ['JSON without the envelope', json(200, { hello: 'world' }), 'unknown'],
  ]
  it.each(CASES)('%s → %s', (_what, answer, expected) => {
    expect(read(readTransferAnswer(answer))).toBe(expected)
  })
})

describe('GET /transfer/verify answers', () => {
  const verified = (status: string) =>
    json(200, {
      status: true,
      message: 'Transfer retrieved',
      data: { status, reference: UUID, transfer_code: 'TRF_1', gateway_response: null },
    })
  const CASES: readonly (readonly [what: string, answer: HttpAnswer, expected: string])[] = [
    ['paid', verified('success'), 'successful 00'],
    ['in progress', verified('pending'), 'pending 09'],
    ['failed', verified('failed'), 'failed 05'],
    ['reversed', verified('reversed'), 'failed 05 reversed'],
    ['a status Rail does not know', verified('settled'), 'unknown'],
    ['no such transfer (404)', json(404, { status: false, message: 'Transfer not found' }), 'pending 25'],
    ['no such transfer (400)', json(400, { status: false, message: 'Transfer not found' }), 'pending 25'],
    ['another refusal', json(400, { status: false, message: 'Invalid reference' }), 'unknown'],
    ['a key Paystack does not take', json(401, { status: false, message: 'Invalid key' }), 'unknown'],
    [
      'a refusal of the caller that says "not found"',
      json(401, { status: false, message: 'Merchant not found' }),
      'unknown',
    ],
    ['a rate limit that says "not found"', json(429, { status: false, message: 'Transfer not found' }), 'unknown'],
    ['no answer', LOST, 'unknown'],
    ['a 5xx', SERVER_ERROR, 'unknown'],
  ]
  it.each(CASES)('%s → %s', (_what, answer, expected) => {
    expect(read(readVerifyAnswer(answer))).toBe(expected)
  })
})

describe('name enquiries, recipients, balances and customers', () => {
  const NAMES: readonly (readonly [what: string, answer: HttpAnswer, expected: string])[] = [
    [
      'resolved',
      json(200, {
        status: true,
        message: 'Account number resolved',
        data: { account_number: '0123456789', account_name: 'ADA OBI', bank_id: 9 },
      }),
      'successful 00',
    ],
    [
      'resolved without a name',
      json(200, { status: true, message: 'ok', data: { account_number: '0123456789' } }),
      'unknown',
    ],
    [
      'refused (422)',
      json(422, { status: false, message: 'Could not resolve account name. Check parameters or try again.' }),
      'failed 07',
    ],
    ['refused (400)', json(400, { status: false, message: 'Could not resolve account name' }), 'failed 07'],
    ['a key Paystack does not take', json(401, { status: false, message: 'Invalid key' }), 'unknown'],
    ['too many requests', json(429, { status: false, message: 'Too many requests' }), 'unknown'],
    ['no answer', LOST, 'unknown'],
    ['a 5xx', SERVER_ERROR, 'unknown'],
  ]
  it.each(NAMES)('name enquiry %s → %s', (_what, answer, expected) => {
    expect(read(readNameEnquiryAnswer(answer))).toBe(expected)
  })

  it('reads the name of a resolved account', () => {
    const answer = json(200, {
      status: true,
      message: 'Account number resolved',
      data: { account_number: '0123456789', account_name: 'ADA OBI', bank_id: 9 },
    })
    expect(readNameEnquiryAnswer(answer)).toMatchObject({ outcome: 'successful', value: { accountName: 'ADA OBI' } })
  })

  const RECIPIENTS: readonly (readonly [
    what: string,
    answer: HttpAnswer,
    expected: string | { recipientCode: string },
  ])[] = [
    [
      'made',
      json(201, {
        status: true,
        message: 'Transfer recipient created successfully',
        data: { recipient_code: 'RCP_abc', active: true },
      }),
      { recipientCode: 'RCP_abc' },
    ],
    ['made, without a code', json(201, { status: true, message: 'ok', data: {} }), 'unknown'],
    ['the account refused', json(400, { status: false, message: 'Account number is invalid' }), 'failed 07'],
    ['the account unresolved', json(422, { status: false, message: 'Cannot resolve account' }), 'failed 07'],
    ['another refusal', json(400, { status: false, message: 'Invalid currency' }), 'unknown'],
    ['a key Paystack does not take', json(401, { status: false, message: 'Invalid key' }), 'unknown'],
    ['no answer', LOST, 'unknown'],
  ]
  it.each(RECIPIENTS)('recipient %s → %j', (_what, answer, expected) => {
    const made = readRecipientAnswer(answer)
    expect('outcome' in made ? read(made) : made).toEqual(expected)
  })

  const BALANCES: readonly (readonly [what: string, answer: HttpAnswer, expected: number | undefined])[] = [
    [
      'the NGN entry',
      json(200, {
        status: true,
        message: 'Balances retrieved',
        data: [
          { currency: 'USD', balance: 7 },
          { currency: 'NGN', balance: 123_456_789 },
        ],
      }),
      123_456_789,
    ],
    [
      'no NGN entry',
      json(200, { status: true, message: 'Balances retrieved', data: [{ currency: 'GHS', balance: 1 }] }),
      undefined,
    ],
    [
      'a balance that is not kobo',
      json(200, { status: true, message: 'Balances retrieved', data: [{ currency: 'NGN', balance: 12.5 }] }),
      undefined,
    ],
    ['a refusal', json(401, { status: false, message: 'Invalid key' }), undefined],
    ['no answer', LOST, undefined],
  ]
  it.each(BALANCES)('balance: %s → %s', (_what, answer, expected) => {
    expect(readBalanceAnswer(answer)).toBe(expected)
  })

  it('reads a customer by its id and code, and nothing else', () => {
    expect(
      readCustomerAnswer(
        json(200, {
          status: true,
          message: 'Customer created',
          data: { id: 42, customer_code: 'CUS_x', email: 'a@b' },
        }),
      ),
    ).toEqual({ id: 42, customerCode: 'CUS_x' })
    expect(
      readCustomerAnswer(
        json(200, { status: true, message: 'Customer created', data: { id: '42', customer_code: 'CUS_x' } }),
      ),
    ).toBeUndefined()
    expect(readCustomerAnswer(json(400, { status: false, message: 'Invalid email' }))).toBeUndefined()
    expect(readCustomerAnswer(LOST)).toBeUndefined()
  })

  it('asks for the successful transfers into one dedicated account since a time, a page at a time', () => {
    expect(transactionQuery({ accountNumber: '9930000737', page: 1 }).toString()).toBe(
      'status=success&channel=dedicated_nuban&virtual_account_number=9930000737&per_page=100&page=1',
    )
    const since = new Date('2026-01-02T03:04:05.000Z')
    expect(transactionQuery({ accountNumber: '9930000737', since, page: 3 }).toString()).toBe(
      'status=success&channel=dedicated_nuban&virtual_account_number=9930000737&from=2026-01-02T03%3A04%3A05.000Z&per_page=100&page=3',
    )
  })
})

describe('dedicated accounts', () => {
  const account = {
    id: 253,
    account_number: '9930000737',
    account_name: 'RAIL / ADA OBI',
    active: true,
    bank: { name: 'Wema Bank', id: 20, slug: 'wema-bank' },
  }

  it('reads an account, and refuses one without a whole account number', () => {
    expect(readDedicatedAccount(account)).toEqual({
      id: 253,
      accountNumber: '9930000737',
      accountName: 'RAIL / ADA OBI',
      active: true,
      bank: { name: 'Wema Bank', slug: 'wema-bank' },
    })
    expect(readDedicatedAccount({ ...account, account_number: '99300' })).toBeUndefined()
    expect(readDedicatedAccount({ ...account, id: 'x' })).toBeUndefined()
    expect(readDedicatedAccount({ ...account, active: false })?.active).toBe(false)
  })

  // The bank (slug, name) and the profile's setting → the CBN code Rail records.
  const BANK_CODES: readonly (readonly [
    slug: string | null,
    name: string | null,
    configured: string | undefined,
    expected: string | undefined,
  ])[] = [
    ['wema-bank', 'Wema Bank', undefined, '035'],
    ['access-bank', 'Access Bank', undefined, '044'],
    ['providus', 'Providus Bank', undefined, '101'],
    ['titan-paystack', 'Paystack-Titan', '100039', '100039'],
    ['titan-paystack', 'Paystack-Titan', undefined, undefined],
    ['test-bank', 'Test Bank', undefined, undefined],
    ['wema-bank', 'Wema Bank', 'not-a-code', '035'],
  ]
  it.each(BANK_CODES)('%s (%s, setting %s) → %s', (slug, name, configured, expected) => {
    expect(dedicatedAccountBankCode({ slug, name }, configured)).toBe(expected)
  })
})

/** A transaction into a dedicated account as Paystack reports it (webhook data and list item alike). */
function dedicatedTransaction(
  overrides: Record<string, unknown> = {},
  authorization: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: 4099260516,
    status: 'success',
    reference: '1058872019_25_10',
    amount: 250_000,
    paid_at: '2026-03-01T10:00:05.000Z',
    channel: 'dedicated_nuban',
    currency: 'NGN',
    customer: { id: 42, customer_code: 'CUS_x', email: `${UUID}.abc@customers.rail.invalid` },
    authorization: {
      channel: 'dedicated_nuban',
      sender_bank: 'Guaranty Trust Bank',
      sender_bank_account_number: '0123456789',
      sender_name: 'ADA OBI',
      narration: 'rent',
      receiver_bank_account_number: '9930000737',
      receiver_bank: 'Wema Bank',
      ...authorization,
    },
    ...overrides,
  }
}

describe('credits', () => {
  it('reads a transfer into a dedicated account as a credit', () => {
    expect(creditOfTransaction(dedicatedTransaction())).toEqual({
      sessionId: '1058872019_25_10',
      accountNumber: '9930000737',
      amountKobo: 250_000,
      currency: 'NGN',
      payerName: 'ADA OBI',
      payerAccountNumber: '0123456789',
      payerBankCode: '058',
      narration: 'rent',
      creditedAt: new Date('2026-03-01T10:00:05.000Z'),
      accountReference: `${UUID}.abc`,
    })
  })

  // What the transaction is like → whether it is a credit (and what of it is kept).
  const CASES: readonly (readonly [
    what: string,
    transaction: unknown,
    expected: Record<string, unknown> | undefined,
  ])[] = [
    [
      'a masked payer number is not kept',
      dedicatedTransaction({}, { sender_bank_account_number: 'XXXXXX6789' }),
      { payerAccountNumber: null },
    ],
    [
      'a bank Rail does not know has no code',
      dedicatedTransaction({}, { sender_bank: 'Moniepoint MFB' }),
      { payerBankCode: null },
    ],
    [
      'a customer not made by Rail has no allocation reference',
      dedicatedTransaction({ customer: { email: 'someone@example.com' } }),
      { accountReference: null },
    ],
    [
      'paidAt when paid_at is missing',
      dedicatedTransaction({ paid_at: undefined, paidAt: '2026-03-01T11:00:00.000Z' }),
      { creditedAt: new Date('2026-03-01T11:00:00.000Z') },
    ],
    [
      'the id when the reference is too long for a session id',
      dedicatedTransaction({ reference: 'x'.repeat(65) }),
      { sessionId: '4099260516' },
    ],
    ['a card payment', dedicatedTransaction({ channel: 'card' }), undefined],
    ['not successful', dedicatedTransaction({ status: 'failed' }), undefined],
    ['no receiving account', dedicatedTransaction({}, { receiver_bank_account_number: null }), undefined],
    ['an amount that is not kobo', dedicatedTransaction({ amount: 2500.5 }), undefined],
    ['a zero amount', dedicatedTransaction({ amount: 0 }), undefined],
    ['no time', dedicatedTransaction({ paid_at: 'yesterday' }), undefined],
    ['no authorization', dedicatedTransaction({ authorization: null }), undefined],
    ['not an object', 'charge', undefined],
  ]
  it.each(CASES)('%s', (_what, transaction, expected) => {
    const credit = creditOfTransaction(transaction)
    if (expected === undefined) expect(credit).toBeUndefined()
    else expect(credit).toMatchObject(expected)
  })

  it('reads a page of transactions with its page count', () => {
    const page = json(200, {
      status: true,
      message: 'Transactions retrieved',
      data: [dedicatedTransaction()],
      meta: { total: 1, perPage: 100, page: 1, pageCount: 1 },
    })
    expect(readTransactionPage(page)).toEqual({ transactions: [dedicatedTransaction()], pageCount: 1 })
    expect(readTransactionPage(json(200, { status: true, message: 'ok', data: [] }))).toEqual({
      transactions: [],
      pageCount: null,
    })
    expect(readTransactionPage(json(401, { status: false, message: 'Invalid key' }))).toBeUndefined()
    expect(readTransactionPage(LOST)).toBeUndefined()
  })
})

describe('webhooks', () => {
  const SECRET_KEY = 'sk_test_0123456789abcdef'
  const PAYSTACK_ADDRESSES = ['52.31.139.75', '52.49.173.169', '52.214.14.220']

  function signed(body: unknown, options: { key?: string; sourceAddress?: string; raw?: string } = {}): WebhookRequest {
    const rawBody = options.raw ?? JSON.stringify(body)
    const signature = createHmac('sha512', options.key ?? SECRET_KEY)
      .update(rawBody)
      .digest('hex')
    return {
      pathWithQuery: '/providers/paystack/webhooks',
      headers: { 'x-paystack-signature': signature },
      rawBody,
      sourceAddress: options.sourceAddress,
    }
  }
  const readOpen = (request: WebhookRequest) =>
    readPaystackWebhook(request, { secretKey: SECRET_KEY, allowedAddresses: null })
  const readListed = (request: WebhookRequest) =>
    readPaystackWebhook(request, { secretKey: SECRET_KEY, allowedAddresses: PAYSTACK_ADDRESSES })

  it('reads a credit to a dedicated account', () => {
    const webhook = readOpen(signed({ event: 'charge.success', data: dedicatedTransaction() }))
    expect(webhook).toMatchObject({
      kind: 'credit',
      credit: { sessionId: '1058872019_25_10', accountNumber: '9930000737', amountKobo: 250_000 },
    })
  })

  // An event → what Rail reads of it.
  const EVENTS: readonly (readonly [what: string, body: unknown, expected: Record<string, unknown>])[] = [
    [
      'a card payment',
      { event: 'charge.success', data: dedicatedTransaction({ channel: 'card' }) },
      { kind: 'ignored', event: 'charge.success' },
    ],
    [
      'an incomplete credit',
      { event: 'charge.success', data: dedicatedTransaction({ amount: -1 }) },
      { kind: 'invalid' },
    ],
    [
      'a transfer paid',
      { event: 'transfer.success', data: { reference: UUID, status: 'success' } },
      { kind: 'transfer', reference: UUID, event: 'success' },
    ],
    [
      'a transfer failed',
      { event: 'transfer.failed', data: { reference: UUID, status: 'failed' } },
      { kind: 'transfer', reference: UUID, event: 'failed' },
    ],
    [
      'a transfer reversed',
      { event: 'transfer.reversed', data: { reference: UUID, status: 'reversed' } },
      { kind: 'transfer', reference: UUID, event: 'reversed' },
    ],
    [
      'an escaped reference, mapped back',
      { event: 'transfer.success', data: { reference: 'r__pay-1_0000000' } },
      { kind: 'transfer', reference: 'Pay-1', event: 'success' },
    ],
    // Another system's transfer on the same integration: acknowledged, so that Paystack stops sending it.
    [
      'a reference Rail never sent',
      { event: 'transfer.success', data: { reference: 'r_abc_1000000000000' } },
      { kind: 'ignored', event: 'transfer.success' },
    ],
    ['a transfer without a reference', { event: 'transfer.success', data: {} }, { kind: 'invalid' }],
    [
      'an event Rail does not act on',
      { event: 'subscription.create', data: {} },
      { kind: 'ignored', event: 'subscription.create' },
    ],
    ['no event', { data: {} }, { kind: 'invalid' }],
    ['no data', { event: 'transfer.success' }, { kind: 'invalid' }],
    ['not an object', [1, 2], { kind: 'invalid' }],
  ]
  it.each(EVENTS)('%s', (_what, body, expected) => {
    expect(readOpen(signed(body))).toMatchObject(expected)
  })

  it('refuses a body that is not JSON once its signature is checked', () => {
    expect(readOpen(signed(undefined, { raw: '{"event":' }))).toMatchObject({ kind: 'invalid' })
    expect(readOpen({ ...signed(undefined, { raw: '{"event":' }), headers: {} })).toEqual({ kind: 'unauthorized' })
  })

  it('refuses a signature that is missing, malformed, made with another key or of another body', () => {
    const body = { event: 'transfer.success', data: { reference: UUID } }
    const good = signed(body)
    expect(readOpen({ ...good, headers: {} })).toEqual({ kind: 'unauthorized' })
    expect(readOpen({ ...good, headers: { 'x-paystack-signature': 'not-hex' } })).toEqual({ kind: 'unauthorized' })
    expect(
      readOpen({ ...good, headers: { 'x-paystack-signature': [String(good.headers['x-paystack-signature'])] } }),
    ).toEqual({ kind: 'unauthorized' })
    expect(readOpen(signed(body, { key: 'sk_test_another' }))).toEqual({ kind: 'unauthorized' })
    expect(readOpen({ ...good, rawBody: `${good.rawBody} ` })).toEqual({ kind: 'unauthorized' })
    const upper = String(good.headers['x-paystack-signature']).toUpperCase()
    expect(readOpen({ ...good, headers: { 'x-paystack-signature': upper } })).toMatchObject({ kind: 'transfer' })
  })

  it("accepts only Paystack's addresses when the profile keeps the allowlist", () => {
    const body = { event: 'transfer.success', data: { reference: UUID } }
    expect(readListed(signed(body, { sourceAddress: '52.31.139.75' }))).toMatchObject({ kind: 'transfer' })
    expect(readListed(signed(body, { sourceAddress: '::ffff:52.214.14.220' }))).toMatchObject({ kind: 'transfer' })
    expect(readListed(signed(body, { sourceAddress: '203.0.113.9' }))).toEqual({ kind: 'unauthorized' })
    expect(readListed(signed(body))).toEqual({ kind: 'unauthorized' })
    expect(readOpen(signed(body, { sourceAddress: '203.0.113.9' }))).toMatchObject({ kind: 'transfer' })
  })
})
