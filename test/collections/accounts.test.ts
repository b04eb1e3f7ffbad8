// Creating collection accounts over HTTP: payment intents, persistent virtual accounts and FBO
// pool accounts — synchronous allocation at the sandbox bank, the exact fields of docs/contracts/collections-and-payouts.md, BRR by
// customer class, idempotency and races, fail-closed capability, provider failure, bad input.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isValidBrr } from '../../src/banking/nip/brr.ts'
import { isValidNuban } from '../../src/banking/nip/nuban.ts'
import { setCapability } from '../../src/banking/providers/service.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { waitFor } from '../support/wait.ts'
import { BANK_SECRET } from './support.ts'

let app: TestApp

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: BANK_SECRET })
})
afterAll(async () => {
  await app?.close()
})

const INTENT_FIELDS = [
  'id',
  'trackingId',
  'partnerId',
  'reference',
  'status',
  'direction',
  'provider',
  'providerChannel',
  'providerReference',
  'amountKobo',
  'currency',
  'virtualAccount',
  'virtualAccountName',
  'virtualAccountBank',
  'purposeTag',
  'creatorMetadata',
  'expiresAt',
  'createdAt',
  'checkoutToken',
  'checkoutUrl',
  'merchantDisplayName',
  'returnUrl',
].sort()
const PERSISTENT_FIELDS = [
  'trackingId',
  'partnerId',
  'reference',
  'status',
  'provider',
  'providerChannel',
  'bankCode',
  'bankName',
  'currency',
  'virtualAccount',
  'virtualAccountName',
  'purposeTag',
  'creatorMetadata',
  'createdAt',
  'brr',
].sort()
const FBO_FIELDS = [
  'trackingId',
  'virtualAccount',
  'holderRef',
  'bankCode',
  'provider',
  'providerChannel',
  'purposeTag',
  'createdAt',
].sort()

async function rowCount(table: string): Promise<number> {
  return Number((await app.db.pool.query<{ count: string }>(`SELECT count(*) FROM ${table}`)).rows[0]!.count)
}

describe('payment intents', () => {
  it('allocates a NUBAN during the request and answers 200 with exactly the fields of the contract', async () => {
    const { client, credentials } = await app.newPartner({ name: 'Ada Stores' })
    const reference = randomUUID()
    const before = Date.now()
    const response = await client.post<Record<string, unknown>>('/api/v1/rail/payment/intent', {
      reference,
      currency: 'NGN',
      amountKobo: 250_000,
      purposeTag: 'order',
      virtualAccountHolder: { name: 'Chidi Okeke', email: 'chidi@example.com' },
      returnUrl: 'https://shop.example.com/thanks',
    })
    expect(response.status).toBe(200)
    const intent = response.body
    expect(Object.keys(intent).sort()).toEqual(INTENT_FIELDS)
    expect(intent).toMatchObject({
      partnerId: credentials.partnerId,
      reference,
      status: 'pending',
      provider: 'sandbox',
      amountKobo: 250_000,
      currency: 'NGN',
      virtualAccountName: 'Chidi Okeke',
      virtualAccountBank: 'Providus Bank',
      purposeTag: 'order',
      merchantDisplayName: 'Ada Stores',
      returnUrl: 'https://shop.example.com/thanks',
    })
    expect(isValidNuban('101', intent.virtualAccount as string)).toBe(true)
    expect(intent.trackingId).toMatch(/^trk_[a-z0-9]{24}$/)
    expect(String(intent.checkoutToken).length).toBeGreaterThanOrEqual(40)
    expect(intent.creatorMetadata).toMatchObject({
      partnerId: credentials.partnerId,
      credentialId: expect.any(String),
      requestId: expect.any(String),
    })
    const ttlMs = new Date(intent.expiresAt as string).getTime() - before
    expect(ttlMs).toBeGreaterThan(24 * 3600_000 - 60_000)
    expect(ttlMs).toBeLessThan(24 * 3600_000 + 60_000)
    // The bank holds the account in Rail's name for this provider.
    const atBank = await app.db.pool.query(`SELECT kind, client FROM sandbox_bank.accounts WHERE account_number = $1`, [
      intent.virtualAccount,
    ])
    expect(atBank.rows[0]).toEqual({ kind: 'virtual', client: 'sandbox' })
    // Readable by id, trackingId and reference; listed.
    for (const key of [intent.id, intent.trackingId, reference]) {
      const read = await client.get<Record<string, unknown>>(`/api/v1/rail/payment/intent/${String(key)}`)
      expect(read.status).toBe(200)
      expect(read.body).toEqual(intent)
    }
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () =>
        (await client.get<{ data: { id: string }[] }>('/api/v1/rail/payment/intent?limit=100')).body.data.length === 1,
      20_000,
      'the intent listed',
    )
    const listed = await client.get<{ data: { id: string }[] }>('/api/v1/rail/payment/intent?limit=5')
    expect(listed.body.data.map((item) => item.id)).toContain(intent.id)
  })

  it('takes an expiry from the request, within one minute and 90 days ahead', async () => {
    const { client } = await app.newPartner()
    const expiresAt = new Date(Date.now() + 2 * 3600_000).toISOString()
    const ok = await client.post<{ expiresAt: string; amountKobo: number | null }>('/api/v1/rail/payment/intent', {
      reference: randomUUID(),
      expiresAt,
    })
    expect(ok.status).toBe(200)
    expect(ok.body.expiresAt).toBe(expiresAt)
    expect(ok.body.amountKobo).toBeNull()
    for (const bad of [
      new Date(Date.now() - 1000).toISOString(),
      new Date(Date.now() + 91 * 86400_000).toISOString(),
      'tomorrow',
    ]) {
      const refused = await client.post<{ error: string; details: { fields: { field: string }[] } }>(
        '/api/v1/rail/payment/intent',
        { reference: randomUUID(), expiresAt: bad },
      )
      expect(refused.status).toBe(422)
      expect(refused.body.error).toBe('validation_error')
    }
  })

  it('replays the same reference with Idempotent-Replayed, refuses another body with 409, and allocates once under a race', async () => {
    const { client } = await app.newPartner()
    const body = { reference: randomUUID(), amountKobo: 10_000 }
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        client.post<{ id: string; virtualAccount: string }>('/api/v1/rail/payment/intent', body),
      ),
    )
    expect(results.map((result) => result.status)).toEqual([200, 200, 200, 200, 200, 200])
    expect(new Set(results.map((result) => result.body.virtualAccount)).size).toBe(1)
    expect(results.filter((result) => result.headers.get('idempotent-replayed') === 'true')).toHaveLength(5)
    const conflict = await client.post<{ error: string }>('/api/v1/rail/payment/intent', {
      ...body,
      amountKobo: 20_000,
    })
    expect(conflict.status).toBe(409)
    expect(conflict.body.error).toBe('idempotency_conflict')
    const intents = await app.db.pool.query(`SELECT count(*)::int AS n FROM payment_intents WHERE reference = $1`, [
      body.reference,
    ])
    expect(intents.rows[0].n).toBe(1)
  })

  it('refuses bad input with one error shape and records nothing', async () => {
    const { client } = await app.newPartner()
    const intentsBefore = await rowCount('payment_intents')
    const cases: [Record<string, unknown>, number, string][] = [
      [{}, 422, 'validation_error'],
      [{ reference: 42 }, 422, 'validation_error'],
      [{ reference: 'x'.repeat(65) }, 422, 'validation_error'],
      [{ reference: 'r', amountKobo: 0 }, 422, 'validation_error'],
      [{ reference: 'r', amountKobo: 1.5 }, 422, 'validation_error'],
      [{ reference: 'r', amountKobo: Number.MAX_SAFE_INTEGER + 1 }, 422, 'validation_error'],
      [{ reference: 'r', currency: 'USD' }, 422, 'unsupported_currency'],
      [{ reference: 'r', callbackUrl: 'ftp://example.com' }, 422, 'validation_error'],
      [{ reference: 'r', surprise: true }, 422, 'validation_error'],
      [{ reference: 'r', virtualAccountHolder: { name: 'A', bvn: '12345678901' } }, 422, 'validation_error'],
    ]
    for (const [body, status, error] of cases) {
      const response = await client.post<{ statusCode: number; error: string; message: string }>(
        '/api/v1/rail/payment/intent',
        body,
      )
      expect(response.status, JSON.stringify(body)).toBe(status)
      expect(response.body).toMatchObject({ statusCode: status, error })
    }
    expect(await rowCount('payment_intents')).toBe(intentsBefore)
  })

  it("answers 404 for another partner's intent", async () => {
    const owner = await app.newPartner()
    const other = await app.newPartner()
    const created = await owner.client.post<{ id: string; trackingId: string }>('/api/v1/rail/payment/intent', {
      reference: randomUUID(),
    })
    const theirs = await other.client.get<{ error: string }>(`/api/v1/rail/payment/intent/${created.body.id}`)
    const unknown = await other.client.get<{ error: string }>(`/api/v1/rail/payment/intent/${randomUUID()}`)
    expect(theirs.status).toBe(404)
    expect(theirs.body).toEqual(unknown.body)
  })
})

describe('persistent virtual accounts', () => {
  it.each([
    ['government', true],
    ['corporate', true],
    ['fintech', false],
    ['citizen', false],
  ] as const)('a %s partner gets brr %s, in the same shape', async (customerClass, bearsBrr) => {
    const { client, credentials } = await app.newPartner({ customerClass })
    const reference = randomUUID()
    const response = await client.post<Record<string, unknown>>('/api/v1/rail/virtual-account', {
      reference,
      virtualAccountHolder: { firstName: 'Bola', lastName: 'Ade' },
      purposeTag: 'rent',
    })
    expect(response.status).toBe(200)
    expect(Object.keys(response.body).sort()).toEqual(PERSISTENT_FIELDS)
    expect(response.body).toMatchObject({
      partnerId: credentials.partnerId,
      reference,
      status: 'active',
      currency: 'NGN',
      virtualAccountName: 'Bola Ade',
      bankCode: '101',
    })
    if (bearsBrr) expect(isValidBrr(response.body.brr as string)).toBe(true)
    else expect(response.body.brr).toBeNull()
    const read = await client.get(`/api/v1/rail/virtual-account/${String(response.body.trackingId)}`)
    expect(read.body).toEqual(response.body)
  })

  it('replays, conflicts, archives once, and hides other partners’ accounts', async () => {
    const { client } = await app.newPartner()
    const body = { reference: randomUUID() }
    const first = await client.post<{ trackingId: string }>('/api/v1/rail/virtual-account', body)
    const again = await client.post<{ trackingId: string }>('/api/v1/rail/virtual-account', body)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(first.body)
    expect((await client.post('/api/v1/rail/virtual-account', { ...body, purposeTag: 'other' })).status).toBe(409)
    const archived = await client.post<{ status: string }>(
      `/api/v1/rail/virtual-account/${first.body.trackingId}/archive`,
    )
    expect(archived.status).toBe(200)
    expect(archived.body.status).toBe('archived')
    const twice = await client.post<{ error: string }>(`/api/v1/rail/virtual-account/${first.body.trackingId}/archive`)
    expect(twice.status).toBe(409)
    expect(twice.body.error).toBe('invalid_state')
    const other = await app.newPartner()
    expect((await other.client.get(`/api/v1/rail/virtual-account/${first.body.trackingId}`)).status).toBe(404)
    expect((await other.client.post(`/api/v1/rail/virtual-account/${first.body.trackingId}/archive`)).status).toBe(404)
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () =>
        (await client.get<{ data: { trackingId: string }[] }>('/api/v1/rail/virtual-account?limit=100')).body.data
          .length === 1,
      20_000,
      'the account listed',
    )
    const listed = await client.get<{ data: { trackingId: string }[] }>('/api/v1/rail/virtual-account?status=archived')
    expect(listed.body.data.map((account) => account.trackingId)).toEqual([first.body.trackingId])
  })

  it('refuses bad input and records nothing', async () => {
    const { client } = await app.newPartner()
    const before = await rowCount('virtual_accounts')
    for (const body of [
      {},
      { reference: '' },
      { reference: 'r', virtualAccountHolder: 'Ada' },
      { reference: 'r', virtualAccountHolder: { email: 'not-an-email' } },
      { reference: 'r', currency: 'NGN' },
    ]) {
      const response = await client.post<{ error: string }>('/api/v1/rail/virtual-account', body)
      expect(response.status, JSON.stringify(body)).toBe(422)
    }
    expect((await client.get('/api/v1/rail/virtual-account/not-a-tracking-id')).status).toBe(422)
    expect(await rowCount('virtual_accounts')).toBe(before)
  })
})

describe('FBO pool accounts', () => {
  it('provisions an identity-blind, reference-only account with exactly the fields of the contract', async () => {
    const { client } = await app.newPartner({ customerClass: 'government', name: 'State Revenue' })
    const response = await client.post<Record<string, unknown>>('/api/v1/rail/fbo/provision', {
      holderRef: 'holder-8841',
      purposeTag: 'levy',
    })
    expect(response.status).toBe(200)
    expect(Object.keys(response.body).sort()).toEqual(FBO_FIELDS)
    expect(response.body).toMatchObject({
      holderRef: 'holder-8841',
      purposeTag: 'levy',
      provider: 'sandbox',
      bankCode: '101',
    })
    const stored = await app.db.pool.query(
      `SELECT holder, brr, account_name FROM virtual_accounts WHERE tracking_id = $1`,
      [response.body.trackingId],
    )
    expect(stored.rows[0]).toEqual({ holder: null, brr: null, account_name: 'State Revenue FBO POOL' })
    // Idempotent on holderRef + purposeTag; another purpose is another account.
    const again = await client.post('/api/v1/rail/fbo/provision', { holderRef: 'holder-8841', purposeTag: 'levy' })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(response.body)
    const other = await client.post<{ trackingId: string }>('/api/v1/rail/fbo/provision', {
      holderRef: 'holder-8841',
      purposeTag: 'fees',
    })
    expect(other.body.trackingId).not.toBe(response.body.trackingId)
    expect((await client.get(`/api/v1/rail/fbo/${String(response.body.trackingId)}`)).body).toEqual(response.body)
  })

  it.each(['name', 'phone', 'email', 'bvn', 'customerName', 'virtualAccountHolder'])(
    'refuses the identifying field %s with 422',
    async (field) => {
      const { client } = await app.newPartner()
      const before = await rowCount('virtual_accounts')
      const response = await client.post<{ error: string; details: { fields: { field: string }[] } }>(
        '/api/v1/rail/fbo/provision',
        { holderRef: 'h-1', [field]: 'x' },
      )
      expect(response.status).toBe(422)
      expect(response.body.error).toBe('validation_error')
      expect(await rowCount('virtual_accounts')).toBe(before)
    },
  )

  it('refuses a holder reference that could carry an identity (an email address) or is missing', async () => {
    const { client } = await app.newPartner()
    expect((await client.post('/api/v1/rail/fbo/provision', { holderRef: 'ada@example.com' })).status).toBe(422)
    expect((await client.post('/api/v1/rail/fbo/provision', {})).status).toBe(422)
    expect((await client.post('/api/v1/rail/fbo/provision', { holderRef: 'x'.repeat(129) })).status).toBe(422)
  })
})

describe('the provider', () => {
  it('fails closed with 403 capability_disabled when virtual accounts are not approved, calling nothing', async () => {
    const { client } = await app.newPartner()
    await setCapability(app.db.pool, 'sandbox', 'virtualAccounts', false)
    try {
      const callsBefore = await rowCount('provider_calls')
      for (const [path, body] of [
        ['/api/v1/rail/payment/intent', { reference: randomUUID() }],
        ['/api/v1/rail/virtual-account', { reference: randomUUID() }],
        ['/api/v1/rail/fbo/provision', { holderRef: randomUUID() }],
      ] as const) {
        const response = await client.post<{ error: string; details: { capability: string } }>(path, body)
        expect(response.status).toBe(403)
        expect(response.body.error).toBe('capability_disabled')
        expect(response.body.details.capability).toBe('virtualAccounts')
      }
      expect(await rowCount('provider_calls')).toBe(callsBefore)
    } finally {
      await setCapability(app.db.pool, 'sandbox', 'virtualAccounts', true)
    }
  })

  it('answers 502 provider_unavailable and records nothing when the bank fails; the same reference works after', async () => {
    const { client } = await app.newPartner()
    const reference = randomUUID()
    await app.db.pool.query(`UPDATE sandbox_bank.faults SET error_rate = 1 WHERE id = 1`)
    try {
      const failed = await client.post<{ error: string }>('/api/v1/rail/payment/intent', { reference })
      expect(failed.status).toBe(502)
      expect(failed.body.error).toBe('provider_unavailable')
      expect(
        (await app.db.pool.query(`SELECT 1 FROM payment_intents WHERE reference = $1`, [reference])).rowCount,
      ).toBe(0)
    } finally {
      await app.db.pool.query(`UPDATE sandbox_bank.faults SET error_rate = 0 WHERE id = 1`)
    }
    expect((await client.post('/api/v1/rail/payment/intent', { reference })).status).toBe(200)
  })
})
