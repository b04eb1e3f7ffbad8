// How Monnify's words read in Rail's (src/banking/providers/monnify/mapping.ts): disbursement statuses in
// the NIP vocabulary, references, times, credits and webhooks — one line per case, no database.
import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  creditsSince,
  failureCode,
  isDuplicateReference,
  isNotFound,
  monnifyReference,
  MONNIFY_REFERENCE,
  railReferenceOf,
  readEnvelope,
  readMonnifyTime,
  readMonnifyWebhook,
  readReservedCredit,
  transferResult,
  TRANSFER_STATUSES,
} from '../../src/banking/providers/monnify/mapping.ts'
import { signedWithHmacSha512 } from '../../src/banking/providers/webhooks.ts'
import type { ProviderCredit } from '../../src/banking/providers/types.ts'

// One line per case: Monnify's status → outcome, NIP code, reversed, and why.
const STATUSES: readonly (readonly [
  status: string,
  outcome: string,
  code: string | null,
  reversed: boolean,
  why: string,
])[] = [
  ['SUCCESS', 'successful', '00', false, 'paid'],
  ['COMPLETED', 'successful', '00', false, 'paid, in its other word'],
  ['PENDING', 'pending', '09', false, 'accepted, in progress'],
  ['AWAITING_PROCESSING', 'pending', '09', false, 'queued at Monnify'],
  ['IN_PROGRESS', 'pending', '09', false, 'at the bank'],
  ['PENDING_AUTHORIZATION', 'pending', '09', false, 'held for an OTP'],
  ['PENDING_BATCH_AUTHORIZATION', 'pending', '09', false, 'held for a batch OTP'],
  ['OTP_EMAIL_DISPATCH_FAILED', 'pending', '09', false, 'held, the OTP never sent'],
  ['FAILED', 'failed', '05', false, 'refused, cause unsaid'],
  ['EXPIRED', 'failed', '05', false, 'never authorised'],
  ['REVERSED', 'failed', '05', true, 'paid, then taken back'],
  ['PROCESSING', 'unknown', null, false, 'not a status Monnify documents'],
  ['success', 'unknown', null, false, 'statuses are upper case'],
  ['', 'unknown', null, false, 'empty'],
]

describe('disbursement statuses', () => {
  it.each(STATUSES.map(([status, outcome, code, reversed, why]) => ({ status, outcome, code, reversed, why })))(
    '$status is $outcome $code ($why)',
    ({ status, outcome, code, reversed }) => {
      const result = transferResult({ status, amount: 100, reference: 'r', sessionId: '000001' })
      expect(result.outcome).toBe(outcome)
      if (result.outcome === 'unknown') return
      expect(result.responseCode).toBe(code)
      expect('reversed' in result && result.reversed === true).toBe(reversed)
    },
  )

  it('covers every status of its table', () => {
    expect(Object.keys(TRANSFER_STATUSES).sort()).toEqual(
      STATUSES.filter(([, outcome]) => outcome !== 'unknown')
        .map(([status]) => status)
        .sort(),
    )
  })

  it('says why an OTP-held transfer does not move', () => {
    const result = transferResult({ status: 'PENDING_AUTHORIZATION' })
    expect(result.outcome === 'pending' && result.responseMessage).toMatch(/OTP.*disabled for API disbursements/)
  })

  it('is unknown when there is no status at all', () => {
    expect(transferResult({ amount: 100 }).outcome).toBe('unknown')
  })

  it('gives the session id as the provider reference when Monnify gives one', () => {
    expect(
      transferResult({ status: 'SUCCESS', sessionId: '090405221103151339936348270655', reference: 'r' }),
    ).toMatchObject({ providerReference: '090405221103151339936348270655' })
  })
})

// One line per case: the amount in the answer, the amount sent → the outcome.
const AMOUNTS: readonly (readonly [amount: unknown, sentKobo: number | undefined, outcome: string, why: string])[] = [
  [1234.56, 123456, 'successful', 'the amount sent'],
  ['1234.56', 123456, 'successful', 'the amount sent, as a string'],
  [1234.57, 123456, 'unknown', 'a kobo more than sent'],
  [1234.567, 123456, 'unknown', 'not an exact amount'],
  [-1234.56, 123456, 'unknown', 'negative'],
  ['abc', undefined, 'unknown', 'not a number, even on a requery'],
  [1234.56, undefined, 'successful', 'a requery knows no amount sent'],
  [undefined, 123456, 'successful', 'no amount in the answer: only its status to read'],
]

describe('the amount of a transfer', () => {
  it.each(AMOUNTS.map(([amount, sentKobo, outcome, why]) => ({ amount, sentKobo, outcome, why })))(
    '$why: $outcome',
    ({ amount, sentKobo, outcome }) => {
      expect(transferResult({ status: 'SUCCESS', amount }, sentKobo).outcome).toBe(outcome)
    },
  )
})

// One line per case: Monnify's words of a failure → the NIP code.
const CAUSES: readonly (readonly [comment: string | null, code: string])[] = [
  ['You do not have sufficient balance to process this request. Please fund your account and try again.', '51'],
  ['No sufficient funds', '51'],
  ['Insufficient balance', '51'],
  ['Invalid account', '07'],
  ['Invalid destination account number', '07'],
  ['Dormant account', '06'],
  ['Invalid bank code: 999', '16'],
  ['Beneficiary bank not available', '91'],
  ['Do not honour', '05'],
  ['', '05'],
  [null, '05'],
]

describe('the cause of a failure', () => {
  it.each(CAUSES)('%j is %s', (comment, code) => {
    expect(failureCode(comment)).toBe(code)
  })

  it('reads the comment of a FAILED transfer, never of a reversed one', () => {
    expect(transferResult({ status: 'FAILED', comment: 'No sufficient funds' })).toMatchObject({
      outcome: 'failed',
      responseCode: '51',
    })
    expect(transferResult({ status: 'REVERSED', comment: 'No sufficient funds' })).toMatchObject({
      outcome: 'failed',
      responseCode: '05',
      reversed: true,
    })
  })
})

describe('references', () => {
  it("sends Rail's UUID reference as it is, and reads it back", () => {
    const reference = '0b9e4c9a-3f1d-4b6e-9f0a-5d2c7e8f1a2b'
    expect(monnifyReference(reference)).toBe(reference)
    expect(railReferenceOf(reference)).toBe(reference)
  })

  it.each(['with space', 'a.b', 'x'.repeat(65), 'rail-looks-hashed', '', 'ü'])(
    'maps %j to a digest Monnify takes, the same every time',
    (reference) => {
      const mapped = monnifyReference(reference)
      expect(mapped).toMatch(MONNIFY_REFERENCE)
      expect(mapped).toMatch(/^rail-[0-9a-f]{40}$/)
      expect(monnifyReference(reference)).toBe(mapped)
      expect(railReferenceOf(mapped)).toBeUndefined()
    },
  )
})

// One line per case: a time as Monnify writes it → the instant, or undefined.
const TIMES: readonly (readonly [value: unknown, iso: string | undefined])[] = [
  ['2024-05-01T09:30:00.000+0000', '2024-05-01T09:30:00.000Z'],
  ['2024-05-01T09:30:00.000Z', '2024-05-01T09:30:00.000Z'],
  ['2024-05-01T10:30:00+01:00', '2024-05-01T09:30:00.000Z'],
  ['2024-05-01 09:30:00.615', '2024-05-01T09:30:00.615Z'],
  ['2024-05-01 09:30:00', '2024-05-01T09:30:00.000Z'],
  ['01/05/2024 9:30:00 AM', undefined],
  ['2024-13-01 09:30:00', undefined],
  ['', undefined],
  [1714555800000, undefined],
  [null, undefined],
]

describe('times', () => {
  it.each(TIMES)('%j is %s', (value, iso) => {
    expect(readMonnifyTime(value)?.toISOString()).toBe(iso)
  })
})

describe('refusals', () => {
  const envelope = (responseMessage: string, responseCode = '99') =>
    readEnvelope({ requestSuccessful: false, responseMessage, responseCode })!

  it('tells a reused reference from other refusals', () => {
    expect(isDuplicateReference(envelope('Duplicate reference: a transfer with reference r already exists'))).toBe(true)
    expect(isDuplicateReference(envelope('Reference has already been used'))).toBe(true)
    expect(isDuplicateReference(envelope('Duplicate request', 'D07'))).toBe(false)
    expect(isDuplicateReference(envelope('Invalid bank code'))).toBe(false)
    expect(isDuplicateReference({ ...envelope('Duplicate'), requestSuccessful: true })).toBe(false)
  })

  it('tells no such transfer', () => {
    expect(isNotFound(404, envelope('anything'))).toBe(true)
    expect(isNotFound(400, envelope('Could not find transfer with reference r'))).toBe(true)
    expect(isNotFound(400, envelope('Invalid reference'))).toBe(false)
    expect(isNotFound(200, undefined)).toBe(false)
    // A refusal of the caller says nothing of the transfer, whatever its words.
    expect(isNotFound(401, envelope('Merchant not found'))).toBe(false)
    expect(isNotFound(403, envelope('Contract does not exist'))).toBe(false)
    expect(isNotFound(429, envelope('Could not find transfer with reference r'))).toBe(false)
  })

  it('reads an envelope only when it says whether the request succeeded', () => {
    expect(readEnvelope({ responseMessage: 'x' })).toBeUndefined()
    expect(readEnvelope({ requestSuccessful: true, responseCode: 0 })).toMatchObject({
      responseCode: '0',
      responseMessage: '',
    })
  })
})

const SECRET = 'TEST_CLIENT_SECRET_0123456789ABCDEF'
const sign = (rawBody: string, secret = SECRET) => createHmac('sha512', secret).update(rawBody).digest('hex')

const COLLECTION = {
  product: { reference: 'acct-ref-1', type: 'RESERVED_ACCOUNT' },
  transactionReference: 'MNFY|04|20240501093000|000170',
  paymentReference: 'MNFY|04|20240501093000|000170',
  paidOn: '2024-05-01 09:30:00.000',
  paymentDescription: 'rent',
  paymentSourceInformation: [
    {
      bankCode: '058',
      amountPaid: 1500.5,
      accountName: 'ADA OBI',
      sessionId: '000013240501093000000000000170',
      accountNumber: '0123456789',
    },
  ],
  destinationAccountInformation: { bankCode: '50515', bankName: 'Moniepoint MFB', accountNumber: '6000000352' },
  amountPaid: 1500.5,
  totalPayable: 1500.5,
  paymentMethod: 'ACCOUNT_TRANSFER',
  currency: 'NGN',
  paymentStatus: 'PAID',
}

const EXPECTED_CREDIT: ProviderCredit = {
  sessionId: 'MNFY|04|20240501093000|000170',
  accountNumber: '6000000352',
  amountKobo: 150050,
  currency: 'NGN',
  payerName: 'ADA OBI',
  payerAccountNumber: '0123456789',
  payerBankCode: '058',
  narration: 'rent',
  creditedAt: new Date('2024-05-01T09:30:00.000Z'),
  accountReference: 'acct-ref-1',
}

function webhook(body: unknown, options: { secret?: string; sourceAddress?: string; signature?: string } = {}) {
  const rawBody = JSON.stringify(body)
  return {
    pathWithQuery: '/providers/monnify/webhooks',
    headers: { 'monnify-signature': options.signature ?? sign(rawBody, options.secret) },
    rawBody,
    sourceAddress: options.sourceAddress,
  }
}

describe('webhooks', () => {
  it('reads a reserved account credit', () => {
    expect(
      readMonnifyWebhook(webhook({ eventType: 'SUCCESSFUL_TRANSACTION', eventData: COLLECTION }), SECRET, null),
    ).toEqual({ kind: 'credit', credit: EXPECTED_CREDIT })
  })

  it.each([
    ['SUCCESSFUL_DISBURSEMENT', 'success'],
    ['FAILED_DISBURSEMENT', 'failed'],
    ['REVERSED_DISBURSEMENT', 'reversed'],
  ])("reads %s as the payout's news by Rail's reference", (eventType, event) => {
    const reference = '0b9e4c9a-3f1d-4b6e-9f0a-5d2c7e8f1a2b'
    expect(
      readMonnifyWebhook(webhook({ eventType, eventData: { reference, amount: 10, status: 'SUCCESS' } }), SECRET, null),
    ).toEqual({ kind: 'transfer', reference, event })
  })

  // One line per case: a webhook → what it reads as, and why.
  const CASES: ReadonlyArray<
    readonly [why: string, request: ReturnType<typeof webhook>, allowlist: string[] | null, kind: string]
  > = [
    [
      'signed with another secret',
      webhook({ eventType: 'SUCCESSFUL_TRANSACTION', eventData: COLLECTION }, { secret: 'another' }),
      null,
      'unauthorized',
    ],
    [
      'a signature of the wrong length',
      webhook({ eventType: 'X', eventData: {} }, { signature: 'abc' }),
      null,
      'unauthorized',
    ],
    [
      'from an address not allowed',
      webhook({ eventType: 'X', eventData: {} }, { sourceAddress: '10.0.0.1' }),
      ['35.242.133.146'],
      'unauthorized',
    ],
    [
      'from no known address under an allowlist',
      webhook({ eventType: 'X', eventData: {} }),
      ['35.242.133.146'],
      'unauthorized',
    ],
    [
      'from the allowed address, as IPv4-mapped IPv6',
      webhook({ eventType: 'X', eventData: {} }, { sourceAddress: '::ffff:35.242.133.146' }),
      ['35.242.133.146'],
      'ignored',
    ],
    ['an event Rail does not act on', webhook({ eventType: 'SETTLEMENT', eventData: {} }), null, 'ignored'],
    [
      'a card payment',
      webhook({
        eventType: 'SUCCESSFUL_TRANSACTION',
        eventData: { ...COLLECTION, product: { reference: 'p', type: 'WEB_SDK' } },
      }),
      null,
      'ignored',
    ],
    [
      'an unpaid collection',
      webhook({ eventType: 'SUCCESSFUL_TRANSACTION', eventData: { ...COLLECTION, paymentStatus: 'PENDING' } }),
      null,
      'ignored',
    ],
    [
      "a payout that is not Rail's",
      webhook({ eventType: 'SUCCESSFUL_DISBURSEMENT', eventData: { reference: 'made on the dashboard' } }),
      null,
      'ignored',
    ],
    ['a payout without a reference', webhook({ eventType: 'FAILED_DISBURSEMENT', eventData: {} }), null, 'invalid'],
    [
      'a credit whose amount is not exact',
      webhook({ eventType: 'SUCCESSFUL_TRANSACTION', eventData: { ...COLLECTION, amountPaid: 1500.505 } }),
      null,
      'invalid',
    ],
    [
      'a credit without its account',
      webhook({ eventType: 'SUCCESSFUL_TRANSACTION', eventData: { ...COLLECTION, destinationAccountInformation: {} } }),
      null,
      'invalid',
    ],
    ['no eventData', webhook({ eventType: 'SUCCESSFUL_TRANSACTION' }), null, 'invalid'],
    ['not an object', webhook([1, 2]), null, 'invalid'],
  ]

  it.each(CASES.map(([why, request, allowlist, kind]) => ({ why, request, allowlist, kind })))(
    '$why: $kind',
    ({ request, allowlist, kind }) => {
      expect(readMonnifyWebhook(request, SECRET, allowlist).kind).toBe(kind)
    },
  )

  it('is invalid when a signed body is not JSON', () => {
    expect(
      readMonnifyWebhook(
        { pathWithQuery: '/', headers: { 'monnify-signature': sign('{nope') }, rawBody: '{nope' },
        SECRET,
        null,
      ),
    ).toEqual({ kind: 'invalid', message: 'the body is not JSON' })
  })

  it('verifies the signature of the raw body, not of a re-serialised one', () => {
    const rawBody = '{ "eventType" : "X" }'
    expect(signedWithHmacSha512(rawBody, sign(rawBody), SECRET)).toBe(true)
    expect(signedWithHmacSha512(JSON.stringify(JSON.parse(rawBody)), sign(rawBody), SECRET)).toBe(false)
    expect(signedWithHmacSha512(rawBody, sign(rawBody).toUpperCase(), SECRET)).toBe(true)
    expect(signedWithHmacSha512(rawBody, [sign(rawBody)], SECRET)).toBe(false)
    expect(signedWithHmacSha512(rawBody, undefined, SECRET)).toBe(false)
  })
})

describe('credits', () => {
  it('reads a listed credit, its account told by the listing', () => {
    const item = {
      ...COLLECTION,
      destinationAccountInformation: undefined,
      amount: 1500.5,
      completedOn: '2024-05-01T09:30:00.000+0000',
    }
    expect(readReservedCredit(item, '6000000352', 'acct-ref-1')).toEqual(EXPECTED_CREDIT)
  })

  it.each([
    ['no transaction reference', { ...COLLECTION, transactionReference: undefined }],
    ['a zero amount', { ...COLLECTION, amountPaid: 0 }],
    ['three decimals', { ...COLLECTION, amountPaid: '1.005' }],
    ['no time', { ...COLLECTION, paidOn: undefined }],
    ['a currency that is not a code', { ...COLLECTION, currency: 'naira' }],
  ])('refuses a credit with %s', (_why, data) => {
    expect(readReservedCredit(data as Record<string, unknown>, '6000000352', null)).toBeUndefined()
  })

  it('keeps those at or after a time, oldest first', () => {
    const at = (iso: string) => ({ ...EXPECTED_CREDIT, sessionId: iso, creditedAt: new Date(iso) })
    const credits = [at('2024-05-03T00:00:00Z'), at('2024-05-01T00:00:00Z'), at('2024-05-02T00:00:00Z')]
    expect(creditsSince(credits).map((credit) => credit.sessionId)).toEqual([
      '2024-05-01T00:00:00Z',
      '2024-05-02T00:00:00Z',
      '2024-05-03T00:00:00Z',
    ])
    expect(creditsSince(credits, new Date('2024-05-02T00:00:00Z')).map((credit) => credit.sessionId)).toEqual([
      '2024-05-02T00:00:00Z',
      '2024-05-03T00:00:00Z',
    ])
  })
})
