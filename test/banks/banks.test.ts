// Banks: the list, and the account-name check through the sandbox bank's real name enquiry —
// NUBAN-checked first (a malformed number never reaches the bank), refusals and silence from the
// bank as 422 and 502, never 500 (read the same by every route that asks a name), and a
// per-partner limit on enquiries (429 with Retry-After).
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BANKS } from '../../src/banking/nip/banks.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { setCapability } from '../../src/banking/providers/service.ts'
import { writeFaults } from '../../src/sandbox/faults.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { PARTNER_RPS_DEFAULT, UNAUTHENTICATED_RPS_DEFAULT } from '../../src/platform/rate-limit.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { createRequest, escrowClient } from '../support/escrow.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const ENQUIRIES_PER_MINUTE = 25
let app: TestApp

beforeAll(async () => {
  app = await startTestApp({
    providerTimeoutMs: 2_000,
    edge: {
      rateLimits: {
        partnerRps: PARTNER_RPS_DEFAULT,
        unauthenticatedRps: UNAUTHENTICATED_RPS_DEFAULT,
        nameEnquiriesPerMinute: ENQUIRIES_PER_MINUTE,
      },
    },
  })
})
afterAll(async () => {
  await app?.close()
})

type ErrorJson = Schemas['ErrorBody'] & {
  details?: { fields?: { field: string; message: string }[]; responseCode?: string }
}

async function nameEnquiriesAt(accountNumber: string): Promise<number> {
  const { rows } = await app.db.pool.query<{ count: string }>(
    `SELECT count(*) FROM provider_calls WHERE operation = 'name_enquiry' AND split_part(reference, ':', 2) = $1`,
    [accountNumber],
  )
  return Number(rows[0]!.count)
}

describe('GET /api/v1/rail/banks', () => {
  it('lists every bank with its CBN code, name and NIP institution code, by name', async () => {
    const { client } = await app.newPartner()
    const answer = await client.get<{
      data: { code: string; name: string; nipInstitutionCode: string }[]
      nextCursor: null
    }>('/api/v1/rail/banks')
    expect(answer.status).toBe(200)
    expect(answer.body.nextCursor).toBeNull()
    expect(answer.body.data).toHaveLength(BANKS.length)
    expect(answer.body.data.map((bank) => bank.name)).toEqual(
      [...BANKS.map((bank) => bank.name)].sort((a, b) => a.localeCompare(b)),
    )
    expect(answer.body.data).toContainEqual({ code: '058', name: 'Guaranty Trust Bank', nipInstitutionCode: '000058' })
  })

  it('is signed like every partner route, and takes no query', async () => {
    const unsigned = await fetch(`${app.baseUrl}/api/v1/rail/banks`)
    expect(unsigned.status).toBe(401)
    const { client } = await app.newPartner()
    const withQuery = await client.get<ErrorJson>('/api/v1/rail/banks?limit=5')
    expect(withQuery.status).toBe(422)
    expect(withQuery.body.error).toBe('validation_error')
  })
})

describe('POST /api/v1/rail/banks/resolve', () => {
  it("answers the name the bank gives for an account at another bank, and records the enquiry with the request's id", async () => {
    const { client } = await app.newPartner()
    const accountNumber = nuban('058', '123450001')
    const answer = await client.post(
      '/api/v1/rail/banks/resolve',
      { bankCode: '058', accountNumber },
      { headers: { 'X-Request-Id': 'resolve-test-1' } },
    )
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({
      bankCode: '058',
      accountNumber,
      accountName: syntheticAccountName('058', accountNumber),
    })
    const { rows } = await app.db.pool.query(
      `SELECT outcome, request_id FROM provider_calls WHERE operation = 'name_enquiry' AND reference = $1`,
      [`058:${accountNumber}`],
    )
    expect(rows).toEqual([{ outcome: 'successful', request_id: 'resolve-test-1' }])
  })

  it("answers the holder of an account at the sandbox bank itself: a wallet's account in its name", async () => {
    const { client } = await app.newPartner()
    const wallet = await client.post<{ accountNumber: string; bankCode?: string }>('/wallet', {
      customerReference: randomUUID(),
      name: 'Adaeze Okoro',
    })
    expect(wallet.status).toBe(201)
    const answer = await client.post<{ accountName: string }>('/api/v1/rail/banks/resolve', {
      bankCode: '101',
      accountNumber: wallet.body.accountNumber,
    })
    expect(answer.status).toBe(200)
    expect(answer.body.accountName.toUpperCase()).toBe('ADAEZE OKORO')
  })

  it('refuses a number that is not a NUBAN at that bank, or an unknown bank, before asking the bank', async () => {
    const { client } = await app.newPartner()
    const good = nuban('058', '123450002')
    const typo = `${good.slice(0, 9)}${(Number(good[9]) + 1) % 10}` // the check digit is wrong
    const refused = await client.post<ErrorJson>('/api/v1/rail/banks/resolve', { bankCode: '058', accountNumber: typo })
    expect(refused.status).toBe(422)
    expect(refused.body.details?.fields).toEqual([
      { field: 'accountNumber', message: expect.stringContaining('NUBAN') },
    ])
    const unknownBank = await client.post<ErrorJson>('/api/v1/rail/banks/resolve', {
      bankCode: '999',
      accountNumber: good,
    })
    expect(unknownBank.status).toBe(422)
    expect(unknownBank.body.details?.fields?.[0]?.field).toBe('bankCode')
    expect(await nameEnquiriesAt(typo)).toBe(0)
    expect(await nameEnquiriesAt(good)).toBe(0)
  })

  it('refuses bad input with 422 (missing, wrong type, wrong length, unknown field, control characters), 400 for bad JSON, 413 oversize, 415 not JSON', async () => {
    const { client } = await app.newPartner()
    const accountNumber = nuban('058', '123450003')
    const bodies: unknown[] = [
      {},
      { bankCode: '058' },
      { accountNumber },
      { bankCode: 58, accountNumber },
      { bankCode: '058', accountNumber: Number(accountNumber) },
      { bankCode: '058', accountNumber: accountNumber.slice(1) },
      { bankCode: '0580', accountNumber },
      { bankCode: '058', accountNumber, accountName: 'Ada' },
      { bankCode: '058', accountNumber: `${accountNumber.slice(0, 9)}\u0000` },
      { bankCode: '05\u0007', accountNumber },
      [],
    ]
    for (const body of bodies) {
      const answer = await client.post<ErrorJson>('/api/v1/rail/banks/resolve', body)
      expect(answer.status, JSON.stringify(body)).toBe(422)
      expect(answer.body.error).toBe('validation_error')
    }
    expect(
      (
        await client.post<ErrorJson>('/api/v1/rail/banks/resolve', undefined, {
          rawBody: '{"bankCode":',
          headers: { 'Content-Type': 'application/json' },
        })
      ).body.error,
    ).toBe('invalid_json')
    const oversize = await client.post<ErrorJson>('/api/v1/rail/banks/resolve', undefined, {
      rawBody: JSON.stringify({ bankCode: '058', accountNumber, pad: 'x'.repeat(1_100_000) }),
      headers: { 'Content-Type': 'application/json' },
    })
    expect(oversize.status).toBe(413)
    const text = await client.post<ErrorJson>('/api/v1/rail/banks/resolve', undefined, {
      rawBody: 'bankCode=058',
      headers: { 'Content-Type': 'text/plain' },
    })
    expect(text.status).toBe(415)
    expect(await nameEnquiriesAt(accountNumber)).toBe(0)
  })

  it('is signed: unsigned, a bad signature and a stale timestamp are 401 and ask no bank', async () => {
    const { client } = await app.newPartner()
    const accountNumber = nuban('058', '123450004')
    const body = JSON.stringify({ bankCode: '058', accountNumber })
    const unsigned = await fetch(`${app.baseUrl}/api/v1/rail/banks/resolve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    })
    expect(unsigned.status).toBe(401)
    const stale = await client.post('/api/v1/rail/banks/resolve', JSON.parse(body), {
      timestampS: Math.floor(Date.now() / 1000) - 3_600,
    })
    expect(stale.status).toBe(401)
    const forged = await client.post('/api/v1/rail/banks/resolve', JSON.parse(body), {
      headers: { 'X-Rail-Signature': `v1=${'0'.repeat(64)}` },
    })
    expect(forged.status).toBe(401)
    expect(await nameEnquiriesAt(accountNumber)).toBe(0)
  })

  it("answers 422 with the bank's NIP code when the bank refuses (no such account at the sandbox bank)", async () => {
    const { client } = await app.newPartner()
    const accountNumber = nuban('101', '987650001') // well-formed, but the sandbox bank has no such account
    const answer = await client.post<ErrorJson>('/api/v1/rail/banks/resolve', { bankCode: '101', accountNumber })
    expect(answer.status).toBe(422)
    expect(answer.body).toMatchObject({
      error: 'validation_error',
      details: { fields: [{ field: 'accountNumber' }], responseCode: '07' },
    })
    expect(await nameEnquiriesAt(accountNumber)).toBe(1)
  })

  it("reads the bank's refusal the same wherever a name is asked: a settlement account and an escrow's disbursement are the same 422 on their own field", async () => {
    const { client, credentials } = await app.newPartner()
    const refused = { bankCode: '101', accountNumber: nuban('101', '987650002'), accountName: 'ADA OBI' } // no such account at the sandbox bank
    const settlement = await client.request<ErrorJson>('PUT', '/api/v1/rail/settlement', {
      mode: 'bank',
      bankAccount: refused,
    })
    const escrow = await escrowClient(app.baseUrl, credentials.escrowApiKey).create<ErrorJson>(
      createRequest({ reference: randomUUID(), disbursement: refused }),
    )
    for (const [answer, field] of [
      [settlement, 'bankAccount.accountNumber'],
      [escrow, 'disbursement.accountNumber'],
    ] as const) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(422)
      expect(answer.body).toMatchObject({
        error: 'validation_error',
        details: { fields: [{ field }], responseCode: '07' },
      })
    }
    expect(await nameEnquiriesAt(refused.accountNumber)).toBe(2)
  })

  it('answers 502 provider_unavailable, not 500, when the bank gives no answer; the same request then succeeds', async () => {
    const { client } = await app.newPartner()
    const accountNumber = nuban('033', '123450005')
    const noFaults = { noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 }
    for (const fault of [{ errorRate: 1 }, { noAnswerRate: 1 }]) {
      await writeFaults(app.db.pool, { ...noFaults, ...fault })
      try {
        const answer = await client.post<ErrorJson>('/api/v1/rail/banks/resolve', { bankCode: '033', accountNumber })
        expect(answer.status, JSON.stringify(fault)).toBe(502)
        expect(answer.body.error).toBe('provider_unavailable')
      } finally {
        await writeFaults(app.db.pool, noFaults)
      }
    }
    expect((await client.post('/api/v1/rail/banks/resolve', { bankCode: '033', accountNumber })).status).toBe(200)
  })

  it('answers 403 capability_disabled when the provider is not approved for name checks, asking no bank', async () => {
    const { client } = await app.newPartner()
    const accountNumber = nuban('057', '123450006')
    await setCapability(app.db.pool, 'sandbox', 'nameCheck', false)
    try {
      const answer = await client.post<ErrorJson>('/api/v1/rail/banks/resolve', { bankCode: '057', accountNumber })
      expect(answer.status).toBe(403)
      expect(answer.body.error).toBe('capability_disabled')
    } finally {
      await setCapability(app.db.pool, 'sandbox', 'nameCheck', true)
    }
    expect(await nameEnquiriesAt(accountNumber)).toBe(0)
  })

  it('limits each partner to its name enquiries a minute: past it 429 rate_limited with Retry-After, asking no bank; other partners and refused input are not counted', async () => {
    const { client } = await app.newPartner()
    const other = (await app.newPartner()).client
    const typo = nuban('058', '123450007').replace(/.$/, (digit) => String((Number(digit) + 1) % 10))
    for (let i = 0; i < 5; i++)
      expect((await client.post('/api/v1/rail/banks/resolve', { bankCode: '058', accountNumber: typo })).status).toBe(
        422,
      )
    const accounts = Array.from({ length: ENQUIRIES_PER_MINUTE }, (_, i) => nuban('058', String(200_000_000 + i)))
    for (const accountNumber of accounts)
      expect((await client.post('/api/v1/rail/banks/resolve', { bankCode: '058', accountNumber })).status).toBe(200)
    const last = nuban('058', '299999999')
    const refused = await client.post<ErrorJson>('/api/v1/rail/banks/resolve', { bankCode: '058', accountNumber: last })
    expect(refused.status).toBe(429)
    expect(refused.body.error).toBe('rate_limited')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(await nameEnquiriesAt(last)).toBe(0)
    expect((await other.post('/api/v1/rail/banks/resolve', { bankCode: '058', accountNumber: last })).status).toBe(200)
  })

  it('the same signed request again is another enquiry with the same answer (an enquiry changes nothing)', async () => {
    const { client } = await app.newPartner()
    const accountNumber = nuban('044', '123450008')
    const timestampS = Math.floor(Date.now() / 1000)
    const first = await client.post('/api/v1/rail/banks/resolve', { bankCode: '044', accountNumber }, { timestampS })
    const again = await client.post('/api/v1/rail/banks/resolve', { bankCode: '044', accountNumber }, { timestampS })
    expect(first.status).toBe(200)
    expect(again.body).toEqual(first.body)
    expect(await nameEnquiriesAt(accountNumber)).toBe(2)
  })
})

describe('RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE', () => {
  it('is read into the rate limits: unset or blank keeps the default, 0 turns the limit off, anything else is refused at start', () => {
    expect(loadConfig({}).rateLimits.nameEnquiriesPerMinute).toBeUndefined()
    expect(
      loadConfig({ RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE: ' ' }).rateLimits.nameEnquiriesPerMinute,
    ).toBeUndefined()
    expect(loadConfig({ RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE: '0' }).rateLimits.nameEnquiriesPerMinute).toBe(0)
    expect(loadConfig({ RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE: '120' }).rateLimits.nameEnquiriesPerMinute).toBe(120)
    for (const value of ['-1', '1.5', 'many'])
      expect(() => loadConfig({ RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE: value }), value).toThrow(
        /RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE/,
      )
  })
})
