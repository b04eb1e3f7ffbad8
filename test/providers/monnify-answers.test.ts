// How the Monnify adapter reads each answer (src/banking/providers/monnify/adapter.ts, credits.ts, auth.ts):
// one line per answer → what Rail acts on. No database, no HTTP: the answers are written here.
import { describe, expect, it } from 'vitest'
import type { HttpAnswer } from '../../src/banking/providers/http.ts'
import {
  readArchive,
  readBalance,
  readDisbursement,
  readNameEnquiry,
  readReservedAccount,
  readSummary,
  readWallet,
  readWalletListing,
} from '../../src/banking/providers/monnify/adapter.ts'
import { readLogin } from '../../src/banking/providers/monnify/auth.ts'
import { CREDIT_PAGE_SIZE, readCreditPage, readWalletCredit } from '../../src/banking/providers/monnify/credits.ts'

const ok = (httpStatus: number, body: Record<string, unknown>): HttpAnswer => ({ ok: true, httpStatus, body })
const done = (responseBody: unknown): HttpAnswer =>
  ok(200, { requestSuccessful: true, responseMessage: 'success', responseCode: '0', responseBody })
const refused = (httpStatus: number, responseMessage: string, responseCode = '99'): HttpAnswer =>
  ok(httpStatus, { requestSuccessful: false, responseMessage, responseCode })
const lost: HttpAnswer = { ok: false, httpStatus: null, error: 'UND_ERR_HEADERS_TIMEOUT: Headers Timeout Error' }
const serverError: HttpAnswer = { ok: false, httpStatus: 502, error: 'provider answered 502' }

describe('a disbursement answer', () => {
  // One line per case: the answer → outcome, code, whether the adapter then asks what Monnify has.
  const CASES: ReadonlyArray<
    readonly [why: string, answer: HttpAnswer, outcome: string, code: string | null, refusal: string | undefined]
  > = [
    [
      'paid at once',
      done({ amount: 1234.56, reference: 'r', status: 'SUCCESS', sessionId: '0904' }),
      'successful',
      '00',
      undefined,
    ],
    ['accepted', done({ amount: 1234.56, reference: 'r', status: 'PENDING' }), 'pending', '09', undefined],
    [
      'held for an OTP',
      done({ amount: 1234.56, reference: 'r', status: 'PENDING_AUTHORIZATION' }),
      'pending',
      '09',
      undefined,
    ],
    [
      'failed for funds',
      done({ amount: 1234.56, reference: 'r', status: 'FAILED', comment: 'No sufficient funds' }),
      'failed',
      '51',
      undefined,
    ],
    [
      'a status Rail does not know',
      done({ amount: 1234.56, reference: 'r', status: 'QUEUED' }),
      'unknown',
      null,
      undefined,
    ],
    ['for another amount', done({ amount: 1234.55, reference: 'r', status: 'SUCCESS' }), 'unknown', null, undefined],
    ['an inexact amount', done({ amount: 1234.561, reference: 'r', status: 'SUCCESS' }), 'unknown', null, undefined],
    [
      'a reused reference',
      refused(400, 'Duplicate reference: a transfer with reference r already exists'),
      'pending',
      '26',
      'duplicate',
    ],
    // Possibly this payout's own original, not yet in its summary: never final.
    [
      'the same amount to the same account within minutes',
      refused(400, 'Duplicate request', 'D07'),
      'pending',
      '09',
      'duplicate',
    ],
    ['a bad bank code', refused(400, 'Invalid bank code: 999'), 'failed', '16', 'refused'],
    ['its credentials refused', refused(401, 'Invalid access token'), 'unknown', null, undefined],
    ['forbidden', refused(403, 'Forbidden'), 'unknown', null, undefined],
    ['a 5xx', serverError, 'unknown', null, undefined],
    ['no answer', lost, 'unknown', null, undefined],
    ['not the envelope', ok(200, { status: 'SUCCESS' }), 'unknown', null, undefined],
    ['successful without a transfer', done(null), 'unknown', null, undefined],
  ]

  it.each(CASES.map(([why, answer, outcome, code, refusal]) => ({ why, answer, outcome, code, refusal })))(
    '$why: $outcome $code',
    ({ answer, outcome, code, refusal }) => {
      const result = readDisbursement(answer, 123456)
      expect(result.outcome).toBe(outcome)
      if (result.outcome !== 'unknown') expect(result.responseCode).toBe(code)
      expect(result.refusal).toBe(refusal)
    },
  )
})

describe('a summary answer', () => {
  it.each([
    ['paid', done({ amount: 10, reference: 'r', status: 'SUCCESS' }), 'successful', '00'],
    ['in progress', done({ amount: 10, reference: 'r', status: 'IN_PROGRESS' }), 'pending', '09'],
    ['reversed', done({ amount: 10, reference: 'r', status: 'REVERSED' }), 'failed', '05'],
    ['no such transfer (404)', refused(404, 'Could not find transfer with reference r'), 'pending', '25'],
    ['no such transfer (400, in words)', refused(400, 'Transfer not found'), 'pending', '25'],
    ['another refusal', refused(400, 'reference is required'), 'unknown', null],
    ['a 5xx', serverError, 'unknown', null],
    ['no answer', lost, 'unknown', null],
  ] as const)('%s: %s %s', (_why, answer, outcome, code) => {
    const result = readSummary(answer)
    expect(result.outcome).toBe(outcome)
    if (result.outcome !== 'unknown') expect(result.responseCode).toBe(code)
  })

  it('says a reversal was one', () => {
    expect(readSummary(done({ status: 'REVERSED' }))).toMatchObject({ outcome: 'failed', reversed: true })
  })
})

describe('other answers', () => {
  it('name enquiry: the name, an invalid account (07) or bank (16), else unknown', () => {
    expect(
      readNameEnquiry(done({ accountNumber: '0123456789', accountName: 'ADA OBI', bankCode: '058' })),
    ).toMatchObject({ outcome: 'successful', value: { accountName: 'ADA OBI' } })
    expect(readNameEnquiry(refused(400, 'Could not validate account details'))).toMatchObject({
      outcome: 'failed',
      responseCode: '07',
    })
    expect(readNameEnquiry(refused(400, 'Invalid bank code: 999'))).toMatchObject({
      outcome: 'failed',
      responseCode: '16',
    })
    expect(readNameEnquiry(done({ accountName: '' })).outcome).toBe('unknown')
    expect(readNameEnquiry(serverError).outcome).toBe('unknown')
  })

  const wallet = {
    walletName: 'Ada Obi',
    walletReference: 'w-1',
    accountNumber: '6000000352',
    accountName: 'Ada Obi',
    topUpAccountDetails: {
      accountNumber: '6000000352',
      accountName: 'Ada Obi',
      bankCode: '50515',
      bankName: 'Moniepoint MFB',
    },
  }

  it('wallet: its account at its top-up bank; another name under the reference is 26; a refusal is looked up (26 with no reference)', () => {
    expect(readWallet(done(wallet), 'Ada Obi')).toMatchObject({
      outcome: 'successful',
      providerReference: 'w-1',
      value: { bankCode: '50515', accountNumber: '6000000352', accountName: 'Ada Obi' },
    })
    expect(readWallet(done(wallet), 'Chidi Eze')).toMatchObject({
      outcome: 'failed',
      responseCode: '26',
      providerReference: 'w-1',
    })
    expect(readWallet(refused(400, 'walletReference w-1 is already used'), 'Ada Obi')).toMatchObject({
      outcome: 'failed',
      responseCode: '26',
      providerReference: null,
    })
    expect(readWallet(done({ ...wallet, accountNumber: '123' }), 'Ada Obi').outcome).toBe('unknown')
    expect(readWalletListing(done({ content: [wallet] }), 'w-1', 'Ada Obi').outcome).toBe('successful')
    expect(readWalletListing(done({ content: [] }), 'w-1', 'Ada Obi')).toMatchObject({
      outcome: 'failed',
      responseCode: '25',
    })
  })

  it('reserved account: its first account, by its reference; a refusal is failed (then looked up)', () => {
    const reserved = {
      accountReference: 'ref-1',
      accounts: [{ bankCode: '50515', bankName: 'Moniepoint', accountNumber: '6106424552', accountName: 'Tes' }],
    }
    expect(readReservedAccount(done(reserved))).toMatchObject({
      outcome: 'successful',
      providerReference: 'ref-1',
      value: { accountNumber: '6106424552', bankCode: '50515' },
    })
    expect(
      readReservedAccount(refused(400, 'There is an existing reserved account with reference ref-1')).outcome,
    ).toBe('failed')
    expect(readReservedAccount(done({ ...reserved, accounts: [] })).outcome).toBe('unknown')
  })

  it('archive: done, no such account (07), else unknown', () => {
    expect(readArchive(done({})).outcome).toBe('successful')
    expect(readArchive(refused(404, 'Cannot find reserved account with reference r'))).toMatchObject({
      outcome: 'failed',
      responseCode: '07',
    })
    expect(readArchive(lost).outcome).toBe('unknown')
  })

  it('balance: the available balance in kobo, exactly, or unknown', () => {
    expect(readBalance(done({ availableBalance: 1999.19, ledgerBalance: 2000 }))).toMatchObject({
      outcome: 'successful',
      value: { balanceKobo: 199919 },
    })
    expect(readBalance(done({ availableBalance: 1999.191 })).outcome).toBe('unknown')
    expect(readBalance(refused(400, 'accountNumber is required')).outcome).toBe('unknown')
  })

  it('login: the token and its lifetime, or nothing', () => {
    expect(readLogin(done({ accessToken: 'tok', expiresIn: 3599 }))).toEqual({ accessToken: 'tok', expiresInS: 3599 })
    expect(readLogin(done({ accessToken: 'tok' }))).toEqual({ accessToken: 'tok', expiresInS: 3600 })
    expect(readLogin(refused(401, 'Invalid client credentials'))).toBeUndefined()
    expect(readLogin(done({ expiresIn: 3599 }))).toBeUndefined()
  })
})

describe('a page of credits', () => {
  const paid = {
    transactionReference: 'MNFY|1',
    amountPaid: 10,
    paidOn: '2024-05-01 09:30:00.000',
    paymentStatus: 'PAID',
    currency: 'NGN',
  }
  const reserved = {
    kind: 'reserved' as const,
    accountNumber: '6106424552',
    accountReference: 'ref-1',
    pagePath: () => '',
  }

  it('keeps paid credits only, and is the last page when Monnify says so', () => {
    const page = readCreditPage(
      done({ content: [paid, { ...paid, transactionReference: 'MNFY|2', paymentStatus: 'PENDING' }], last: true }),
      reserved,
      0,
    )
    expect(page.outcome === 'successful' && page.value.credits.map((credit) => credit.sessionId)).toEqual(['MNFY|1'])
    expect(page.outcome === 'successful' && page.value.last).toBe(true)
  })

  it('is not the last page while Monnify has more', () => {
    const full = Array.from({ length: CREDIT_PAGE_SIZE }, (_, index) => ({
      ...paid,
      transactionReference: `MNFY|${index}`,
    }))
    const page = readCreditPage(done({ content: full, totalPages: 3, last: false }), reserved, 1)
    expect(page.outcome === 'successful' && page.value.last).toBe(false)
  })

  it('is unknown when a paid credit is unreadable: a sweep would never look for it again', () => {
    expect(readCreditPage(done({ content: [{ ...paid, amountPaid: 10.001 }], last: true }), reserved, 0).outcome).toBe(
      'unknown',
    )
    expect(readCreditPage(refused(404, 'Cannot find reserved account'), reserved, 0).outcome).toBe('unknown')
  })

  it("reads a wallet's completed credits, and passes over its debits and pending ones", () => {
    const credit = {
      monnifyTransactionReference: 'MNFY|9',
      amount: 25.5,
      transactionDate: '2024-05-01T09:30:00.000+0000',
      transactionType: 'CREDIT',
      status: 'SUCCESS',
      narration: 'top up',
    }
    expect(readWalletCredit(credit, '6000000352')).toMatchObject({
      sessionId: 'MNFY|9',
      amountKobo: 2550,
      narration: 'top up',
      accountReference: null,
    })
    expect(readWalletCredit({ ...credit, transactionType: 'DEBIT' }, '6000000352')).toBeNull()
    expect(readWalletCredit({ ...credit, status: 'PENDING' }, '6000000352')).toBeNull()
    expect(readWalletCredit({ ...credit, amount: '1e3' }, '6000000352')).toBeUndefined()
  })
})
