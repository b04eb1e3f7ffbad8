// Bad input on every escrow endpoint: authentication, each create rule at its bound and one past
// it, unknown and oversize fields, wrong types, idempotent replays and conflicts, release/cancel
// bodies, webhook registration. A refused request changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { METADATA_MAX_BYTES, TTL_HOURS_MAX } from '../../src/escrow/service.ts'
import { MAX_AMOUNT_KOBO_DEFAULT } from '../../src/platform/amounts.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { creditEscrow, createRequest, escrowClient, type EscrowClient } from '../support/escrow.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

let app: TestApp

beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => {
  await expectLedgerVerified(app.db.pool)
  await app?.close()
})

type ErrorJson = Schemas['ErrorBody'] & { details?: { fields?: { field: string; message: string }[] } }

async function partner(overrides: Record<string, unknown> = {}) {
  const { credentials, client } = await app.newPartner(overrides)
  return {
    partnerId: credentials.partnerId,
    credentials,
    client,
    api: escrowClient(app.baseUrl, credentials.escrowApiKey),
  }
}

const escrowCount = async (partnerId: string) =>
  (await app.db.pool.query(`SELECT count(*)::int AS n FROM escrows WHERE partner_id = $1`, [partnerId])).rows[0]
    .n as number

function expect422(response: { status: number; body: unknown }, ...fields: string[]) {
  expect(response.status).toBe(422)
  const body = response.body as ErrorJson
  expect(body).toEqual({
    statusCode: 422,
    error: 'validation_error',
    message: expect.any(String),
    details: { fields: expect.any(Array) },
  })
  const named = body.details!.fields!.map((f) => f.field)
  for (const field of fields) expect(named).toContain(field)
}

/** A metadata object whose JSON is exactly `bytes` long. */
function metadataOfBytes(bytes: number): Record<string, string> {
  const overhead = JSON.stringify({ k: '' }).length
  return { k: 'x'.repeat(bytes - overhead) }
}

describe('authentication', () => {
  it('every endpoint answers 401 with the one body for a missing, unknown or non-escrow key, before reading the body', async () => {
    const { credentials } = await partner()
    const keys: (string | undefined)[] = [
      undefined,
      '',
      'rk_test_unknownunknownunknownunknownunknownun',
      credentials.signingSecret,
      'x'.repeat(300),
    ]
    for (const key of keys) {
      const api = escrowClient(app.baseUrl, key)
      const responses = [
        await api.create(createRequest()),
        await api.create(undefined, { rawBody: '{not json' }),
        await api.get('EPT-1-abc'),
        await api.list(),
        await api.release('EPT-1-abc'),
        await api.cancel('EPT-1-abc', { reason: 'r' }),
        await api.webhook({ webhookUrl: 'https://example.com/hooks' }),
      ]
      for (const response of responses) {
        expect(response.status).toBe(401)
        expect(response.body).toEqual({
          statusCode: 401,
          error: 'unauthorized',
          message: 'Missing or invalid credentials',
        })
      }
    }
    expect(await escrowCount(credentials.partnerId)).toBe(0)
  })
})

describe('POST /api/v1/escrow/partner/create', () => {
  const invalid: [string, Record<string, unknown>, string[]][] = [
    ['type missing', { type: undefined }, ['type']],
    ['type not one of the four', { type: 'cash' }, ['type']],
    ['type not a string', { type: 1 }, ['type']],
    ['amount missing', { amount: undefined }, ['amount']],
    ['amount one below the minimum', { amount: 9_999 }, ['amount']],
    ['amount zero', { amount: 0 }, ['amount']],
    ['amount negative', { amount: -10_000 }, ['amount']],
    ['amount a string', { amount: '10000' }, ['amount']],
    ['amount a fraction', { amount: 10_000.5 }, ['amount']],
    ['amount above 2^53 − 1', { amount: 9_007_199_254_740_992 }, ['amount']],
    ['currency missing', { currency: undefined }, ['currency']],
    ['currency lower case', { currency: 'ngn' }, ['currency']],
    ['currency not three letters', { currency: 'NGNN' }, ['currency']],
    ['currency a number', { currency: 566 }, ['currency']],
    ['payerEmail missing', { payerEmail: undefined }, ['payerEmail']],
    ['payerEmail not an email', { payerEmail: 'payer.example.com' }, ['payerEmail']],
    ['payerEmail too long', { payerEmail: `${'a'.repeat(243)}@example.com` }, ['payerEmail']],
    ['recipientEmail missing', { recipientEmail: undefined }, ['recipientEmail']],
    ['recipientEmail not an email', { recipientEmail: 'nobody' }, ['recipientEmail']],
    ['recipientEmail a number', { recipientEmail: 42 }, ['recipientEmail']],
    ['description missing', { description: undefined }, ['description']],
    ['description one past 255', { description: 'd'.repeat(256) }, ['description']],
    ['description empty', { description: '' }, ['description']],
    ['description not a string', { description: ['a'] }, ['description']],
    ['ttlHours zero', { ttlHours: 0 }, ['ttlHours']],
    ['ttlHours one past the maximum', { ttlHours: TTL_HOURS_MAX + 1 }, ['ttlHours']],
    ['ttlHours a fraction', { ttlHours: 1.5 }, ['ttlHours']],
    ['ttlHours a string', { ttlHours: '24' }, ['ttlHours']],
    ['webhookUrl not a URL', { webhookUrl: 'not a url' }, ['webhookUrl']],
    ['webhookUrl not http(s)', { webhookUrl: 'ftp://example.com/hooks' }, ['webhookUrl']],
    ['webhookUrl too long', { webhookUrl: `https://example.com/${'p'.repeat(2030)}` }, ['webhookUrl']],
    ['webhookUrl a private address', { webhookUrl: 'http://10.0.0.7/hooks' }, ['webhookUrl']],
    ['webhookUrl cloud metadata', { webhookUrl: 'http://169.254.169.254/latest' }, ['webhookUrl']],
    ['webhookUrl with credentials', { webhookUrl: 'https://user:pass@example.com/hooks' }, ['webhookUrl']],
    ['metadata a string', { metadata: 'x' }, ['metadata']],
    ['metadata an array', { metadata: [1] }, ['metadata']],
    ['metadata null', { metadata: null }, ['metadata']],
    ['metadata one byte past the limit', { metadata: metadataOfBytes(METADATA_MAX_BYTES + 1) }, ['metadata']],
    ['reference empty', { reference: '' }, ['reference']],
    ['reference one past 64', { reference: 'r'.repeat(65) }, ['reference']],
    ['an unknown field', { fee: 100 }, ['fee']],
    ['several fields at once', { type: 'cash', amount: 5, payerEmail: 'x' }, ['type', 'amount', 'payerEmail']],
  ]

  it.each(invalid)('%s → 422 naming the field; nothing is created', async (_name, overrides, fields) => {
    const { partnerId, api } = await partner()
    expect422(await api.create(createRequest(overrides)), ...fields)
    expect(await escrowCount(partnerId)).toBe(0)
  })

  it('an empty object names all six required fields', async () => {
    const { api } = await partner()
    expect422(await api.create({}), 'type', 'amount', 'currency', 'payerEmail', 'recipientEmail', 'description')
  })

  it('another ISO 4217 currency → 422 unsupported_currency', async () => {
    const { partnerId, api } = await partner()
    const response = await api.create<ErrorJson>(createRequest({ currency: 'USD' }))
    expect(response.status).toBe(422)
    expect(response.body).toEqual(
      expect.objectContaining({ statusCode: 422, error: 'unsupported_currency', message: expect.any(String) }),
    )
    expect(await escrowCount(partnerId)).toBe(0)
  })

  it('a live partner may not use an http webhookUrl', async () => {
    const { partnerId, api } = await partner({ environment: 'live' })
    expect422(await api.create(createRequest({ webhookUrl: 'http://example.com/hooks' })), 'webhookUrl')
    expect(await escrowCount(partnerId)).toBe(0)
  })

  it("an escrow's own webhookUrl follows the registered webhook's rule: https (http only to a sandbox loopback receiver)", async () => {
    const { partnerId, api } = await partner()
    expect422(await api.create(createRequest({ webhookUrl: 'http://example.com/hooks' })), 'webhookUrl')
    expect422(await api.webhook({ webhookUrl: 'http://example.com/hooks' }), 'webhookUrl')
    expect(await escrowCount(partnerId)).toBe(0)
  })

  it('malformed JSON → 400 invalid_json; another media type → 415; over 1 MiB → 413; nothing is created', async () => {
    const { partnerId, api } = await partner()
    const malformed = await api.create<ErrorJson>(undefined, { rawBody: '{"type": "goods",' })
    expect(malformed.status).toBe(400)
    expect(malformed.body.error).toBe('invalid_json')
    const text = await api.create<ErrorJson>(undefined, {
      rawBody: 'type=goods',
      headers: { 'Content-Type': 'text/plain' },
    })
    expect(text.status).toBe(415)
    const huge = await api.create<ErrorJson>(createRequest({ description: 'x'.repeat(1_100_000) }))
    expect(huge.status).toBe(413)
    expect(huge.body.error).toBe('payload_too_large')
    expect(await escrowCount(partnerId)).toBe(0)
  })

  it('accepts every limit at its bound', async () => {
    const { partnerId, api } = await partner()
    const bounds: Record<string, unknown>[] = [
      { amount: 10_000 },
      { amount: MAX_AMOUNT_KOBO_DEFAULT }, // the maximum of one instruction; one kobo more is amount_above_limit (test/platform/amount-limits.test.ts)
      { description: 'd'.repeat(255) },
      { description: 'd' },
      { ttlHours: 1 },
      { ttlHours: TTL_HOURS_MAX },
      { metadata: metadataOfBytes(METADATA_MAX_BYTES) },
      { reference: 'r'.repeat(64) },
      { payerEmail: `${'a'.repeat(242)}@example.com` },
      { webhookUrl: 'https://example.com/escrow-hooks' },
      { webhookUrl: 'http://127.0.0.1:9/hooks' }, // sandbox with loopback callbacks allowed
      ...['goods', 'services', 'property', 'conditional'].map((type) => ({ type })),
    ]
    for (const overrides of bounds) {
      const response = await api.create<{ status: string; amount: number }>(createRequest(overrides))
      expect(response.status, JSON.stringify(overrides).slice(0, 80)).toBe(201)
      expect(response.body.status).toBe('initiated')
    }
    expect(await escrowCount(partnerId)).toBe(bounds.length)
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await api.list<{ data: unknown[] }>('?limit=100')).body.data.length === bounds.length,
      20_000,
      'the escrows listed',
    )
    const ttlMax = (await api.list<{ data: { createdAt: string; expiresAt: string }[] }>()).body.data.find(
      (e) => Date.parse(e.expiresAt) - Date.parse(e.createdAt) === TTL_HOURS_MAX * 3_600_000,
    )
    expect(ttlMax).toBeDefined()
  })

  describe('idempotency on reference', () => {
    it('the same reference and body answers the same escrow with Idempotent-Replayed: true', async () => {
      const { partnerId, api } = await partner()
      const request = createRequest({ reference: 'order-1001', metadata: { a: 1, b: 2 } })
      const first = await api.create<{ ref: string }>(request)
      expect(first.status).toBe(201)
      expect(first.headers.get('idempotent-replayed')).toBeNull()
      // Key order does not make another request, nor does spelling out the default TTL.
      const reordered = Object.fromEntries(
        Object.entries({ ...request, ttlHours: 24, metadata: { b: 2, a: 1 } }).reverse(),
      )
      const second = await api.create<{ ref: string }>(reordered)
      expect(second.status).toBe(201)
      expect(second.headers.get('idempotent-replayed')).toBe('true')
      expect(second.body).toEqual(first.body)
      expect(await escrowCount(partnerId)).toBe(1)
    })

    it('the same reference with another body → 409 idempotency_conflict, nothing created', async () => {
      const { partnerId, api } = await partner()
      expect((await api.create(createRequest({ reference: 'order-2002' }))).status).toBe(201)
      const conflict = await api.create<ErrorJson>(createRequest({ reference: 'order-2002', amount: 60_000 }))
      expect(conflict.status).toBe(409)
      expect(conflict.body).toEqual(
        expect.objectContaining({ statusCode: 409, error: 'idempotency_conflict', message: expect.any(String) }),
      )
      expect(await escrowCount(partnerId)).toBe(1)
    })

    it('concurrent creates with one reference make one escrow; every caller gets it', async () => {
      const { partnerId, api } = await partner()
      const request = createRequest({ reference: 'order-race' })
      const responses = await Promise.all(Array.from({ length: 12 }, () => api.create<{ ref: string }>(request)))
      expect(responses.map((r) => r.status)).toEqual(Array(12).fill(201))
      expect(new Set(responses.map((r) => r.body.ref)).size).toBe(1)
      expect(responses.filter((r) => r.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1)
      expect(await escrowCount(partnerId)).toBe(1)
    })

    it('references are per partner; creates without a reference are never replays', async () => {
      const one = await partner()
      const two = await partner()
      const a = await one.api.create<{ ref: string }>(createRequest({ reference: 'shared' }))
      const b = await two.api.create<{ ref: string }>(createRequest({ reference: 'shared' }))
      expect(b.headers.get('idempotent-replayed')).toBeNull()
      expect(a.body.ref).not.toBe(b.body.ref)
      const c = await one.api.create<{ ref: string }>(createRequest())
      const d = await one.api.create<{ ref: string }>(createRequest())
      expect(c.body.ref).not.toBe(d.body.ref)
      expect(await escrowCount(one.partnerId)).toBe(3)
    })
  })
})

describe('release and cancel bodies', () => {
  async function fundedEscrow(partnerId: string, api: EscrowClient): Promise<string> {
    const ref = (await api.create<{ ref: string }>(createRequest({ amount: 10_000 }))).body.ref
    expect(await creditEscrow(app.db.pool, { partnerId, ref, amountKobo: 10_000 })).toBe('applied')
    return ref
  }
  const statusOf = async (api: EscrowClient, ref: string) =>
    (await api.get<{ escrow: { status: string } }>(ref)).body.escrow.status

  it('release: reason one past 500, not a string, or an unknown field → 422 and the escrow stays funded; reason at 500 releases', async () => {
    const { partnerId, api } = await partner()
    const ref = await fundedEscrow(partnerId, api)
    expect422(await api.release(ref, { reason: 'r'.repeat(501) }), 'reason')
    expect422(await api.release(ref, { reason: 7 }), 'reason')
    expect422(await api.release(ref, { reason: 'ok', amount: 1 }), 'amount')
    expect((await api.release(ref, undefined, { rawBody: '{"reason":' })).status).toBe(400)
    expect(await statusOf(api, ref)).toBe('funded')
    expect((await api.release(ref, { reason: 'r'.repeat(500) })).status).toBe(200)
    expect(await statusOf(api, ref)).toBe('released')
  })

  it('cancel: reason missing, empty, one past 500, not a string, or an unknown field → 422 and nothing changes; reason at 500 cancels', async () => {
    const { partnerId, api } = await partner()
    const ref = await fundedEscrow(partnerId, api)
    expect422(await api.cancel(ref), 'reason')
    expect422(await api.cancel(ref, {}), 'reason')
    expect422(await api.cancel(ref, { reason: '' }), 'reason')
    expect422(await api.cancel(ref, { reason: 'r'.repeat(501) }), 'reason')
    expect422(await api.cancel(ref, { reason: false }), 'reason')
    expect422(await api.cancel(ref, { reason: 'ok', refund: 0 }), 'refund')
    expect(await statusOf(api, ref)).toBe('funded')
    expect((await api.cancel(ref, { reason: 'r'.repeat(500) })).status).toBe(200)
    expect(await statusOf(api, ref)).toBe('cancelled')
  })

  it('an oversize ref in the path → 422; a well-sized unknown one → 404', async () => {
    const { api } = await partner()
    expect422(await api.get(`EPT-1-${'a'.repeat(60)}`), 'ref')
    expect((await api.get(`EPT-1-${'a'.repeat(58)}`)).status).toBe(404)
    expect422(await api.release(`EPT-1-${'a'.repeat(60)}`), 'ref')
  })
})

describe('POST /api/v1/escrow/partner/webhook', () => {
  interface Registered {
    success: boolean
    webhookUrl: string
    hasSecret: boolean
    message: string
  }

  it('registers with a secret, updates the URL keeping the secret, removes the secret with null; the secret is stored sealed', async () => {
    const { partnerId, api } = await partner()
    const secret = 'escrow-webhook-secret-1'
    const first = await api.webhook<Registered>({ webhookUrl: 'https://example.com/escrow', webhookSecret: secret })
    expect(first.status).toBe(200)
    expect(first.body).toEqual({
      success: true,
      webhookUrl: 'https://example.com/escrow',
      hasSecret: true,
      message: expect.any(String),
    })
    const stored = await app.db.pool.query(`SELECT url, secret_sealed FROM escrow_webhooks WHERE partner_id = $1`, [
      partnerId,
    ])
    expect(stored.rows[0].url).toBe('https://example.com/escrow')
    expect((stored.rows[0].secret_sealed as Buffer).includes(Buffer.from(secret))).toBe(false)

    const moved = await api.webhook<Registered>({ webhookUrl: 'https://example.org/escrow' })
    expect(moved.body).toEqual({
      success: true,
      webhookUrl: 'https://example.org/escrow',
      hasSecret: true,
      message: expect.any(String),
    })
    const unsigned = await api.webhook<Registered>({ webhookUrl: 'https://example.org/escrow', webhookSecret: null })
    expect(unsigned.body.hasSecret).toBe(false)
  })

  const invalid: [string, Record<string, unknown>, string][] = [
    ['webhookUrl missing', { webhookSecret: 'abcdefgh' }, 'webhookUrl'],
    ['webhookUrl not a URL', { webhookUrl: 'example.com' }, 'webhookUrl'],
    ['webhookUrl http to a public host', { webhookUrl: 'http://example.com/escrow' }, 'webhookUrl'],
    ['webhookUrl a private address', { webhookUrl: 'https://192.168.1.10/escrow' }, 'webhookUrl'],
    ['webhookUrl cloud metadata', { webhookUrl: 'https://169.254.169.254/' }, 'webhookUrl'],
    ['webhookUrl a number', { webhookUrl: 5 }, 'webhookUrl'],
    [
      'webhookSecret one short of 8',
      { webhookUrl: 'https://example.com/e', webhookSecret: 'abcdefg' },
      'webhookSecret',
    ],
    [
      'webhookSecret one past 256',
      { webhookUrl: 'https://example.com/e', webhookSecret: 's'.repeat(257) },
      'webhookSecret',
    ],
    ['webhookSecret a number', { webhookUrl: 'https://example.com/e', webhookSecret: 12345678 }, 'webhookSecret'],
    ['an unknown field', { webhookUrl: 'https://example.com/e', events: ['escrow.released'] }, 'events'],
  ]
  it.each(invalid)('%s → 422 naming the field; nothing is registered', async (_name, body, field) => {
    const { partnerId, api } = await partner()
    expect422(await api.webhook(body), field)
    expect((await app.db.pool.query(`SELECT 1 FROM escrow_webhooks WHERE partner_id = $1`, [partnerId])).rowCount).toBe(
      0,
    )
  })

  it('secrets of 8 and 256 characters are accepted; sandbox may register a loopback http receiver, live may not', async () => {
    const { api } = await partner()
    expect((await api.webhook({ webhookUrl: 'https://example.com/e', webhookSecret: 's'.repeat(8) })).status).toBe(200)
    expect((await api.webhook({ webhookUrl: 'https://example.com/e', webhookSecret: 's'.repeat(256) })).status).toBe(
      200,
    )
    expect((await api.webhook({ webhookUrl: 'http://127.0.0.1:9/hooks' })).status).toBe(200)
    const live = await partner({ environment: 'live' })
    expect422(await live.api.webhook({ webhookUrl: 'http://127.0.0.1:9/hooks' }), 'webhookUrl')
    expect422(await live.api.webhook({ webhookUrl: 'https://127.0.0.1/hooks' }), 'webhookUrl')
  })
})
