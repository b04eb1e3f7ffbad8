// The sandbox bank over real HTTP: accounts with valid NUBANs, name enquiry, transfers on its
// books answered with NIP codes, duplicates, requery, its own signature, and strict bodies.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { computeSignature, canonicalRequest } from '../../src/client/signing.ts'
import { isValidNuban, nuban } from '../../src/banking/nip/nuban.ts'
import { SESSION_ID_PATTERN } from '../../src/banking/nip/session-id.ts'
import { startTestApp, type TestApp } from '../support/app.ts'

const SECRET = 'sandbox-bank-test-secret'
let app: TestApp

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: SECRET })
})
afterAll(async () => app?.close())

interface Reply<T> {
  status: number
  body: T
}

async function bank<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  secret = SECRET,
  timestampS = Math.floor(Date.now() / 1000),
): Promise<Reply<T>> {
  const fullPath = `/sandbox-bank/v1${path}`
  const text = body === undefined ? '' : JSON.stringify(body)
  const headers: Record<string, string> = {
    'X-Sandbox-Timestamp': String(timestampS),
    'X-Sandbox-Signature': computeSignature(secret, canonicalRequest(timestampS, method, fullPath, text)),
  }
  if (text) headers['Content-Type'] = 'application/json'
  const response = await fetch(`${app.baseUrl}${fullPath}`, { method, headers, body: text || undefined })
  return { status: response.status, body: (await response.json()) as T }
}

async function openAccount(name = 'ADA OBI'): Promise<string> {
  const opened = await bank<{ accountNumber: string }>('POST', '/accounts', { accountName: name })
  expect(opened.status).toBe(201)
  return opened.body.accountNumber
}

async function balanceOf(accountNumber: string): Promise<number> {
  return (await bank<{ balanceKobo: number }>('GET', `/accounts/${accountNumber}`)).body.balanceKobo
}

describe('accounts', () => {
  it('opens accounts with valid NUBANs at its bank code, starting empty', async () => {
    const opened = await bank<{ bankCode: string; accountNumber: string; accountName: string; balanceKobo: number }>(
      'POST',
      '/accounts',
      { accountName: 'CHIOMA EZE' },
    )
    expect(opened.status).toBe(201)
    expect(opened.body).toMatchObject({ bankCode: '101', accountName: 'CHIOMA EZE', balanceKobo: 0, status: 'active' })
    expect(isValidNuban('101', opened.body.accountNumber)).toBe(true)
    expect((await bank('GET', `/accounts/${opened.body.accountNumber}`)).body).toMatchObject({
      accountName: 'CHIOMA EZE',
    })
    expect((await bank('GET', `/accounts/${nuban('101', '999999999')}`)).status).toBe(404)
  })
})

describe('name enquiry', () => {
  it.each<[string, () => Promise<{ bankCode: string; accountNumber: string }>, string, string | null | RegExp]>([
    [
      'an account of its own',
      async () => ({ bankCode: '101', accountNumber: await openAccount('NGOZI BELLO') }),
      '00',
      'NGOZI BELLO',
    ],
    [
      'an account at another bank',
      async () => ({ bankCode: '058', accountNumber: nuban('058', '123456789') }),
      '00',
      /^[A-Z]+ [A-Z]+$/,
    ],
    [
      'a bad check digit',
      async () => ({
        bankCode: '058',
        accountNumber: `${nuban('058', '123456789').slice(0, 9)}${(Number(nuban('058', '123456789')[9]) + 1) % 10}`,
      }),
      '07',
      null,
    ],
    ['an unknown bank', async () => ({ bankCode: '999', accountNumber: nuban('058', '123456789') }), '16', null],
    [
      'a valid NUBAN it never issued',
      async () => ({ bankCode: '101', accountNumber: nuban('101', '888888888') }),
      '07',
      null,
    ],
  ])('%s → %s', async (_case, target, responseCode, accountName) => {
    const query = await target()
    const answer = await bank<{ responseCode: string; accountName: string | null; sessionId: string }>(
      'POST',
      '/name-enquiry',
      query,
    )
    expect(answer.status).toBe(200)
    expect(answer.body.responseCode).toBe(responseCode)
    if (accountName instanceof RegExp) expect(answer.body.accountName).toMatch(accountName)
    else expect(answer.body.accountName).toBe(accountName)
    expect(answer.body.sessionId).toMatch(SESSION_ID_PATTERN)
  })

  it('names another bank’s account the same way every time', async () => {
    const query = { bankCode: '033', accountNumber: nuban('033', '555000111') }
    const first = await bank<{ accountName: string }>('POST', '/name-enquiry', query)
    const second = await bank<{ accountName: string }>('POST', '/name-enquiry', query)
    expect(first.body.accountName).toBe(second.body.accountName)
  })

  it('answers 06 for a dormant account', async () => {
    const accountNumber = await openAccount('MUSA USMAN')
    await app.db.pool.query(`UPDATE sandbox_bank.accounts SET status = 'dormant' WHERE account_number = $1`, [
      accountNumber,
    ])
    expect(
      (await bank<{ responseCode: string }>('POST', '/name-enquiry', { bankCode: '101', accountNumber })).body
        .responseCode,
    ).toBe('06')
    const credit = await bank<{ responseCode: string }>('POST', '/transfers', {
      reference: randomUUID(),
      kind: 'credit',
      creditAccountNumber: accountNumber,
      amountKobo: 1,
    })
    expect(credit.body.responseCode).toBe('06')
  })
})

describe('transfers on its books', () => {
  it('credits from the settlement pool, moves between customers, debits back, and refuses overdrafts with 51', async () => {
    const ada = await openAccount('ADA')
    const obi = await openAccount('OBI')
    const transfer = (body: Record<string, unknown>) =>
      bank<{ responseCode: string; sessionId: string; reference: string }>('POST', '/transfers', {
        reference: randomUUID(),
        ...body,
      })

    const credited = await transfer({
      kind: 'credit',
      creditAccountNumber: ada,
      amountKobo: 10_000,
      narration: 'top up',
    })
    expect(credited.body.responseCode).toBe('00')
    expect(credited.body.sessionId).toMatch(SESSION_ID_PATTERN)
    expect(
      (await transfer({ kind: 'book', debitAccountNumber: ada, creditAccountNumber: obi, amountKobo: 2_500 })).body
        .responseCode,
    ).toBe('00')
    expect((await transfer({ kind: 'debit', debitAccountNumber: obi, amountKobo: 500 })).body.responseCode).toBe('00')
    expect(
      (await transfer({ kind: 'book', debitAccountNumber: ada, creditAccountNumber: obi, amountKobo: 7_501 })).body
        .responseCode,
    ).toBe('51')
    expect(
      (
        await transfer({
          kind: 'book',
          debitAccountNumber: ada,
          creditAccountNumber: nuban('101', '777777777'),
          amountKobo: 1,
        })
      ).body.responseCode,
    ).toBe('07')
    expect(
      (await transfer({ kind: 'book', debitAccountNumber: ada, creditAccountNumber: ada, amountKobo: 1 })).body
        .responseCode,
    ).toBe('12')
    expect([await balanceOf(ada), await balanceOf(obi)]).toEqual([7_500, 2_000])
  })

  it('a reused reference is a duplicate (26) and moves nothing; requery answers the original', async () => {
    const ada = await openAccount('ADA')
    const reference = randomUUID()
    const first = await bank<{ responseCode: string; sessionId: string }>('POST', '/transfers', {
      reference,
      kind: 'credit',
      creditAccountNumber: ada,
      amountKobo: 300,
    })
    const again = await bank<{ responseCode: string; sessionId: string }>('POST', '/transfers', {
      reference,
      kind: 'credit',
      creditAccountNumber: ada,
      amountKobo: 300,
    })
    expect([first.body.responseCode, again.body.responseCode]).toEqual(['00', '26'])
    expect(again.body.sessionId).toBe(first.body.sessionId)
    expect(await balanceOf(ada)).toBe(300)
    const requeried = await bank<{ responseCode: string; sessionId: string }>('GET', `/transfers/${reference}`)
    expect(requeried.body).toMatchObject({ responseCode: '00', sessionId: first.body.sessionId, amountKobo: 300 })
  })

  it('two concurrent requests with one reference move the money once', async () => {
    const ada = await openAccount('ADA')
    const reference = randomUUID()
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        bank<{ responseCode: string }>('POST', '/transfers', {
          reference,
          kind: 'credit',
          creditAccountNumber: ada,
          amountKobo: 100,
        }),
      ),
    )
    expect(answers.map((a) => a.body.responseCode).sort()).toEqual(['00', '26', '26', '26', '26', '26'])
    expect(await balanceOf(ada)).toBe(100)
  })

  it('requery says 25 for a reference it never saw, and the refusal code for a refused transfer', async () => {
    expect((await bank<{ responseCode: string }>('GET', `/transfers/${randomUUID()}`)).body.responseCode).toBe('25')
    const ada = await openAccount('ADA')
    const reference = randomUUID()
    await bank('POST', '/transfers', { reference, kind: 'debit', debitAccountNumber: ada, amountKobo: 1 })
    expect((await bank<{ responseCode: string }>('GET', `/transfers/${reference}`)).body.responseCode).toBe('51')
  })
})

describe('refusals', () => {
  it.each<[string, Record<string, unknown>]>([
    [
      'unknown field',
      { reference: 'r1', kind: 'credit', creditAccountNumber: nuban('101', '000001000'), amountKobo: 1, extra: true },
    ],
    ['zero amount', { reference: 'r2', kind: 'credit', creditAccountNumber: nuban('101', '000001000'), amountKobo: 0 }],
    [
      'amount as text',
      { reference: 'r3', kind: 'credit', creditAccountNumber: nuban('101', '000001000'), amountKobo: '5' },
    ],
    ['account number not 10 digits', { reference: 'r4', kind: 'credit', creditAccountNumber: '12345', amountKobo: 1 }],
    [
      'unknown kind',
      { reference: 'r5', kind: 'refund', creditAccountNumber: nuban('101', '000001000'), amountKobo: 1 },
    ],
    [
      'credit naming a debit account',
      {
        reference: 'r6',
        kind: 'credit',
        debitAccountNumber: nuban('101', '000001000'),
        creditAccountNumber: nuban('101', '000001000'),
        amountKobo: 1,
      },
    ],
    [
      'book missing its credit account',
      { reference: 'r7', kind: 'book', debitAccountNumber: nuban('101', '000001000'), amountKobo: 1 },
    ],
  ])('%s → 422, nothing recorded', async (_case, body) => {
    const answer = await bank<{ error: string }>('POST', '/transfers', body)
    expect(answer.status).toBe(422)
    expect(answer.body.error).toBe('validation_error')
    const recorded = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM sandbox_bank.transfers WHERE reference = $1`,
      [body.reference],
    )
    expect(recorded.rows[0].n).toBe(0)
  })

  it.each<[string, () => Promise<Reply<{ error: string }>>]>([
    ['another secret', () => bank('POST', '/accounts', { accountName: 'X' }, 'wrong-secret')],
    [
      'a stale timestamp',
      () => bank('POST', '/accounts', { accountName: 'X' }, SECRET, Math.floor(Date.now() / 1000) - 301),
    ],
    [
      'no signature at all',
      async () => {
        const response = await fetch(`${app.baseUrl}/sandbox-bank/v1/accounts`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: '{"accountName":"X"}',
        })
        return { status: response.status, body: (await response.json()) as { error: string } }
      },
    ],
  ])('a request with %s → 401', async (_case, send) => {
    const before = await app.db.pool.query(`SELECT count(*)::int AS n FROM sandbox_bank.accounts`)
    const answer = await send()
    expect(answer.status).toBe(401)
    expect(answer.body.error).toBe('unauthorized')
    const after = await app.db.pool.query(`SELECT count(*)::int AS n FROM sandbox_bank.accounts`)
    expect(after.rows[0].n).toBe(before.rows[0].n)
  })
})
