// Every adapter's answers are made storable at the seam (src/banking/providers/clean.ts): what PostgreSQL
// cannot store (NUL, in text and jsonb) is removed and lengths are bounded, so that a provider's odd
// text can never make the write that carries a payment's outcome throw, again at every retry.
import { describe, expect, it } from 'vitest'
import { cleanAnswers, cleanCredit, cleanResult, cleanText } from '../../src/banking/providers/clean.ts'
import type { ProviderAdapter, ProviderCredit } from '../../src/banking/providers/types.ts'

const CREDIT: ProviderCredit = {
  sessionId: 'T1234567890',
  accountNumber: '0000010001',
  amountKobo: 150_000,
  currency: 'NGN',
  payerName: 'ADA OBI',
  payerAccountNumber: '0001234560',
  payerBankCode: '058',
  narration: 'school fees',
  creditedAt: new Date('2026-11-28T00:00:00Z'),
  accountReference: 'a1b2',
}

describe('cleanText', () => {
  it.each([
    ['ADA\u0000OBI', 'ADA OBI'],
    ['line\nbreak\ttab\u007fdel', 'line break tab del'],
    ['  padded  ', 'padded'],
    ['₦5,000 to Ọlá', '₦5,000 to Ọlá'],
  ])('%j → %j', (given, expected) => expect(cleanText(given, 100)).toBe(expected))

  it('bounds the length', () => expect(cleanText('x'.repeat(1_000), 500)).toHaveLength(500))
})

describe('cleanResult', () => {
  it("bounds an answer's code, message and reference as the columns keep them, and removes NUL", () => {
    const cleaned = cleanResult({
      outcome: 'failed',
      responseCode: '05\u0000xxxxxxxxxxxxxxxxxx',
      responseMessage: `refused\u0000${'m'.repeat(900)}`,
      providerReference: `r${'\u0000'.repeat(3)}`,
    })
    expect(cleaned).toMatchObject({ outcome: 'failed', responseCode: '05 xxxxxxxxxxxxx', providerReference: 'r' })
    expect(cleaned.outcome !== 'unknown' && cleaned.responseMessage.length).toBe(500)
    expect(JSON.stringify(cleaned)).not.toContain('\\u0000')
  })

  it('keeps what is already storable as it is, reversed marks included', () => {
    const result = {
      outcome: 'failed' as const,
      responseCode: '05',
      responseMessage: 'reversed: by the bank',
      providerReference: null,
      reversed: true as const,
    }
    expect(cleanResult(result)).toEqual(result)
    expect(cleanResult({ outcome: 'unknown', error: 'ECONNRESET\u0000' })).toEqual({
      outcome: 'unknown',
      error: 'ECONNRESET',
    })
  })
})

describe('cleanCredit', () => {
  it('removes NUL from the payer and the narration, and drops an account reference Rail cannot store', () => {
    const cleaned = cleanCredit({
      ...CREDIT,
      payerName: 'ADA\u0000OBI',
      narration: '\u0000',
      accountReference: 'x'.repeat(65),
    })
    expect(cleaned).toMatchObject({
      payerName: 'ADA OBI',
      narration: null,
      accountReference: null,
      sessionId: CREDIT.sessionId,
      amountKobo: 150_000,
    })
  })

  it('reads a credit whose id Rail cannot store as no credit (a credit is applied once per id)', () => {
    expect(cleanCredit({ ...CREDIT, sessionId: 'T\u00001' })).toBeUndefined()
    expect(cleanCredit({ ...CREDIT, sessionId: 'x'.repeat(65) })).toBeUndefined()
    expect(cleanCredit(CREDIT)).toEqual(CREDIT)
  })
})

describe('cleanAnswers', () => {
  const adapter = {
    traits: {
      deduplicatesReferences: true,
      requestValidityWindowMs: null,
      referenceFormat: '',
      amountUnit: 'kobo',
      webhookAuthentication: '',
    },
    listCredits: async () => ({
      outcome: 'successful',
      responseCode: '00',
      responseMessage: 'ok',
      providerReference: 'a',
      value: [CREDIT, { ...CREDIT, sessionId: 'bad\u0000' }],
    }),
    readWebhook: () => ({ kind: 'credit', credit: { ...CREDIT, payerName: 'A\u0000B' } }),
    nameEnquiry: async () => ({
      outcome: 'successful',
      responseCode: '00',
      responseMessage: 'ok',
      providerReference: 'a',
      value: { accountName: 'ADA\u0000OBI' },
    }),
  } as unknown as ProviderAdapter

  it("makes a listing with an unstorable credit id unknown (asked again), a webhook's payer storable, a holder's name storable", async () => {
    const cleaned = cleanAnswers(adapter)
    expect(await cleaned.listCredits('0000010001')).toMatchObject({ outcome: 'unknown' })
    expect(cleaned.readWebhook({ pathWithQuery: '/', headers: {}, rawBody: '' })).toMatchObject({
      kind: 'credit',
      credit: { payerName: 'A B' },
    })
    expect(await cleaned.nameEnquiry({ bankCode: '058', accountNumber: '0001234560' })).toMatchObject({
      value: { accountName: 'ADA OBI' },
    })
    expect(cleaned.traits).toBe(adapter.traits)
  })
})
