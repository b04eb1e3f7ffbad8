// Both authentication schemes of docs/design.md §7, one line per rule: what is sent → what comes back.
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { canonicalRequest, computeSignature, RailClient, signRequest } from '../../src/client/index.ts'
import { installAuthentication, callerOf } from '../../src/partners/auth.ts'
import {
  revokeSigningKey,
  rotateEscrowApiKey,
  rotateSigningSecret,
  type PartnerCredentials,
} from '../../src/partners/service.ts'
import { systemClock } from '../../src/platform/clock.ts'
import { BODY_LIMIT_BYTES, createHttpServer, type HttpServer } from '../../src/platform/http.ts'
import { startTestApp, type TestApp } from '../support/app.ts'

let app: TestApp
let credentials: PartnerCredentials
const PATH = '/api/v1/rail/settings'

beforeAll(async () => {
  app = await startTestApp()
  credentials = (await app.newPartner()).credentials
})
afterAll(async () => app?.close())

interface Attempt {
  method?: string
  path?: string
  body?: string
  headers?: Record<string, string | undefined>
}

async function send(attempt: Attempt): Promise<{ status: number; body: unknown }> {
  const method = attempt.method ?? 'GET'
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(attempt.headers ?? {})) if (value !== undefined) headers[name] = value
  if (attempt.body !== undefined) headers['Content-Type'] = 'application/json'
  const response = await fetch(`${app.baseUrl}${attempt.path ?? PATH}`, { method, headers, body: attempt.body })
  return { status: response.status, body: await response.json() }
}

function signed(
  overrides: {
    timestampS?: number
    path?: string
    body?: string | Uint8Array
    method?: string
    secret?: string
    keyId?: string
  } = {},
) {
  return signRequest({
    keyId: overrides.keyId ?? credentials.keyId,
    signingSecret: overrides.secret ?? credentials.signingSecret,
    method: overrides.method ?? 'GET',
    pathWithQuery: overrides.path ?? PATH,
    body: overrides.body ?? '',
    timestampS: overrides.timestampS,
  })
}

const now = () => Math.floor(Date.now() / 1000)
const UNAUTHORIZED = { statusCode: 401, error: 'unauthorized', message: 'Missing or invalid credentials' }

describe('signed requests (X-Rail-Key-Id, X-Rail-Timestamp, X-Rail-Signature)', () => {
  it('a correctly signed request passes and carries the partner', async () => {
    const response = await send({ headers: signed() })
    expect(response.status).toBe(200)
    expect(response.body).toMatchObject({ partnerId: credentials.partnerId })
  })

  it('a signed body and query are accepted', async () => {
    const body = JSON.stringify({ callbackUrl: 'https://example.com/a' })
    const response = await send({ method: 'PATCH', body, headers: signed({ method: 'PATCH', body }) })
    expect(response.status).toBe(200)
    const withQuery = `${PATH}?verbose=1`
    expect((await send({ path: withQuery, headers: signed({ path: withQuery }) })).status).toBe(200)
  })

  it.each<[string, () => Attempt]>([
    ['no headers at all', () => ({})],
    ['missing key id', () => ({ headers: { ...signed(), 'X-Rail-Key-Id': undefined } })],
    ['missing timestamp', () => ({ headers: { ...signed(), 'X-Rail-Timestamp': undefined } })],
    ['missing signature', () => ({ headers: { ...signed(), 'X-Rail-Signature': undefined } })],
    ['unknown key id', () => ({ headers: signed({ keyId: 'rk_kid_test_doesnotexist0000000' }) })],
    ['signature made with another secret', () => ({ headers: signed({ secret: 'rk_sec_test_wrong' }) })],
    [
      'signature without the v1= prefix',
      () => ({ headers: { ...signed(), 'X-Rail-Signature': signed()['X-Rail-Signature']!.slice(3) } }),
    ],
    [
      'signature in upper-case hex',
      () => ({
        headers: { ...signed(), 'X-Rail-Signature': `v1=${signed()['X-Rail-Signature']!.slice(3).toUpperCase()}` },
      }),
    ],
    ['timestamp 301 s in the past', () => ({ headers: signed({ timestampS: now() - 301 }) })],
    ['timestamp 301 s in the future', () => ({ headers: signed({ timestampS: now() + 301 }) })],
    ['timestamp not a number', () => ({ headers: { ...signed(), 'X-Rail-Timestamp': 'yesterday' } })],
    ['path tampered', () => ({ path: '/api/v1/rail/settings?x=1', headers: signed() })],
    ['query tampered', () => ({ path: `${PATH}?a=2`, headers: signed({ path: `${PATH}?a=1` }) })],
    ['method tampered', () => ({ method: 'PATCH', body: '{}', headers: signed({ body: '{}' }) })],
    [
      'body tampered',
      () => ({
        method: 'PATCH',
        body: '{"callbackUrl":"https://evil.example/"}',
        headers: signed({ method: 'PATCH', body: '{"callbackUrl":"https://example.com/"}' }),
      }),
    ],
    ['body unparseable but unsigned', () => ({ method: 'PATCH', body: '{oops', headers: {} })],
  ])('%s → 401 with the same body', async (_case, attempt) => {
    const response = await send(attempt())
    expect(response.status).toBe(401)
    expect(response.body).toEqual(UNAUTHORIZED)
  })

  it('a timestamp 299 s off is still accepted', async () => {
    expect((await send({ headers: signed({ timestampS: now() - 299 }) })).status).toBe(200)
    expect((await send({ headers: signed({ timestampS: now() + 299 }) })).status).toBe(200)
  })

  it('a rejected request changes nothing', async () => {
    const before = await app.db.pool.query('SELECT callback_url, updated_at FROM partners WHERE id = $1', [
      credentials.partnerId,
    ])
    const body = JSON.stringify({ callbackUrl: 'https://evil.example/' })
    const response = await send({ method: 'PATCH', body, headers: signed({ method: 'PATCH', body: '{}' }) })
    expect(response.status).toBe(401)
    const after = await app.db.pool.query('SELECT callback_url, updated_at FROM partners WHERE id = $1', [
      credentials.partnerId,
    ])
    expect(after.rows).toEqual(before.rows)
  })

  it('a revoked key is refused at once', async () => {
    const { credentials: other } = await app.newPartner()
    const client = new RailClient(app.baseUrl, other)
    expect((await client.get(PATH)).status).toBe(200)
    expect(await revokeSigningKey(app.db.pool, other.keyId)).toBe(true)
    expect((await client.get(PATH)).status).toBe(401)
  })

  it('after rotation both keys work during the overlap; with no overlap only the new one', async () => {
    const { credentials: other } = await app.newPartner()
    const oldClient = new RailClient(app.baseUrl, other)
    const rotated = await rotateSigningSecret(app.db.pool, app.masterKey, other.partnerId, 3600)
    const newClient = new RailClient(app.baseUrl, rotated.issued)
    expect((await oldClient.get(PATH)).status).toBe(200)
    expect((await newClient.get(PATH)).status).toBe(200)
    expect(rotated.previousValidUntil.getTime()).toBeGreaterThan(Date.now() + 3500_000)

    const again = await rotateSigningSecret(app.db.pool, app.masterKey, other.partnerId, 0)
    expect((await oldClient.get(PATH)).status).toBe(401)
    expect((await newClient.get(PATH)).status).toBe(401)
    expect((await new RailClient(app.baseUrl, again.issued).get(PATH)).status).toBe(200)
  })

  it('the canonical string is timestamp, method, path with query and body hash, one per line', () => {
    const canonical = canonicalRequest(1700000000, 'post', '/wallet/credit?x=1', '{"a":1}')
    expect(canonical).toBe(
      '1700000000\nPOST\n/wallet/credit?x=1\n015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862',
    )
    // A fixed vector computed with openssl, so other implementations can check theirs (docs/authentication.md).
    expect(computeSignature('rk_sec_test_example', canonical)).toBe(
      'v1=370535b6f1a2dd61c80421d8185a81d81a7e0ad42b873024a5df7ab103af03f7',
    )
  })
})

/**
 * Sends `body` as it is, in `chunks` writes (without a Content-Length when `chunked`), and resolves
 * with the answer; the server may answer and stop reading before the body has all been written.
 */
function sendRaw(
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  chunked = false,
  baseUrl = app.baseUrl,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      `${baseUrl}${path}`,
      { method: 'PATCH', headers: chunked ? headers : { ...headers, 'Content-Length': String(body.length) } },
      (response) => {
        const parts: Buffer[] = []
        response.on('data', (part: Buffer) => parts.push(part))
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString('utf8')) }),
        )
      },
    )
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
    )
    const chunkBytes = 64 * 1024
    for (let offset = 0; offset < body.length; offset += chunkBytes)
      outgoing.write(body.subarray(offset, offset + chunkBytes))
    outgoing.end()
  })
}

describe('a known key id with a bad signature is answered as an unknown one, whatever the body', () => {
  const oversize = Buffer.from(JSON.stringify({ callbackUrl: 'x'.repeat(BODY_LIMIT_BYTES) }))
  const bodies: [string, string, Buffer][] = [
    ['not JSON', 'text/plain', Buffer.from('callbackUrl=x')],
    ['malformed JSON', 'application/json', Buffer.from('{oops')],
    [
      'not UTF-8',
      'application/json',
      Buffer.from([...Buffer.from('{"callbackUrl":"https://example.com/'), 0xff, ...Buffer.from('"}')]),
    ],
    ['nested too deep', 'application/json', Buffer.from(`{"callbackUrl":${'['.repeat(1000)}${']'.repeat(1000)}}`)],
  ]
  const keyIds = () => [credentials.keyId, 'rk_kid_test_doesnotexist0000000']

  it.each(bodies)('%s → 401 for a known key id and for an unknown one', async (_case, contentType, body) => {
    for (const keyId of keyIds()) {
      const headers = { ...signed({ method: 'PATCH', body: 'something else', keyId }), 'Content-Type': contentType }
      const response = await sendRaw(PATH, headers as Record<string, string>, body)
      expect([keyId, response.status, response.body]).toEqual([keyId, 401, UNAUTHORIZED])
    }
  })

  it('a body declared over the limit → 413 for a known key id and for an unknown one', async () => {
    for (const keyId of keyIds()) {
      const headers = {
        ...signed({ method: 'PATCH', body: 'something else', keyId }),
        'Content-Type': 'application/json',
      }
      const response = await sendRaw(PATH, headers as Record<string, string>, oversize)
      expect([keyId, response.status, (response.body as { error: string }).error]).toEqual([
        keyId,
        413,
        'payload_too_large',
      ])
    }
  })

  it('a body over the limit sent without a Content-Length → 401 for a known key id and for an unknown one', async () => {
    for (const keyId of keyIds()) {
      const headers = {
        ...signed({ method: 'PATCH', body: 'something else', keyId }),
        'Content-Type': 'application/json',
      }
      const response = await sendRaw(PATH, headers as Record<string, string>, oversize, true)
      expect([keyId, response.status, response.body]).toEqual([keyId, 401, UNAUTHORIZED])
    }
  })

  it('a body over the limit sent without a Content-Length counts as a failed authentication for a known key id, as for an unknown one: both reach 429', async () => {
    const limited = await startTestApp({ edge: { rateLimits: { partnerRps: 100, unauthenticatedRps: 2 } } })
    const { credentials: known } = await limited.newPartner()
    try {
      for (const keyId of [known.keyId, 'rk_kid_test_doesnotexist0000000']) {
        const statuses: number[] = []
        // Two failures a second: twenty in a row exceed it however slowly this machine answers them.
        for (let i = 0; i < 20 && !statuses.includes(429); i++) {
          const headers = {
            ...signed({ method: 'PATCH', body: 'something else', keyId }),
            'Content-Type': 'application/json',
          }
          statuses.push(
            (await sendRaw(PATH, headers as Record<string, string>, oversize, true, limited.baseUrl)).status,
          )
        }
        expect([keyId, statuses.filter((status) => status !== 401 && status !== 429)]).toEqual([keyId, []])
        expect([keyId, statuses.includes(429)]).toEqual([keyId, true])
      }
    } finally {
      await limited.close()
    }
  })

  it.each(bodies)('%s, correctly signed → its own refusal, after authentication', async (_case, contentType, body) => {
    const headers = { ...signed({ method: 'PATCH', body }), 'Content-Type': contentType }
    const response = await sendRaw(PATH, headers as Record<string, string>, body)
    const expected = { 'not JSON': 415, 'malformed JSON': 400, 'not UTF-8': 400, 'nested too deep': 422 }[_case]
    expect(response.status).toBe(expected)
  })
})

describe('escrow API keys (X-API-Key)', () => {
  let server: HttpServer
  beforeAll(async () => {
    server = createHttpServer(false)
    installAuthentication(server, { pool: app.db.pool, masterKey: app.masterKey, clock: systemClock })
    server.get('/api/v1/escrow/partner/whoami', { config: { auth: 'api-key' } }, async (request) => ({
      partnerId: callerOf(request).partner.id,
    }))
    server.post('/api/v1/escrow/partner/echo', { config: { auth: 'api-key' } }, async (request) => ({
      partnerId: callerOf(request).partner.id,
    }))
    await server.ready()
  })
  afterAll(async () => server?.close())

  const call = (apiKey?: string) =>
    server.inject({
      method: 'GET',
      url: '/api/v1/escrow/partner/whoami',
      headers: apiKey === undefined ? {} : { 'x-api-key': apiKey },
    })

  it('a valid key authenticates its partner', async () => {
    const response = await call(credentials.escrowApiKey)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ partnerId: credentials.partnerId })
  })

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['unknown', 'rk_test_unknownunknownunknownunknown0000000'],
    ['oversized', 'x'.repeat(5000)],
  ])('%s key → 401', async (_case, key) => {
    const response = await call(key)
    expect(response.statusCode).toBe(401)
    expect(response.json()).toEqual(UNAUTHORIZED)
  })

  it('an unknown key is 401 whatever the body; only the holder of a valid key learns 413 or 415 (the key is the credential)', async () => {
    const post = (apiKey: string, contentType: string, payload: string) =>
      server.inject({
        method: 'POST',
        url: '/api/v1/escrow/partner/echo',
        headers: { 'x-api-key': apiKey, 'content-type': contentType },
        payload,
      })
    const oversize = JSON.stringify({ x: 'x'.repeat(BODY_LIMIT_BYTES) })
    for (const [contentType, payload, known] of [
      ['text/plain', 'hello', 415],
      ['application/json', oversize, 413],
      ['application/json', '{oops', 400],
    ] as const) {
      const unknown = await post('rk_test_unknownunknownunknownunknown0000000', contentType, payload)
      expect([unknown.statusCode, unknown.json()]).toEqual([401, UNAUTHORIZED])
      expect((await post(credentials.escrowApiKey, contentType, payload)).statusCode).toBe(known)
    }
  })

  it('a signing secret is not an API key', async () => {
    expect((await call(credentials.signingSecret)).statusCode).toBe(401)
  })

  it('rotation keeps the old key for the overlap only', async () => {
    const { credentials: other } = await app.newPartner()
    const rotated = await rotateEscrowApiKey(app.db.pool, other.partnerId, 60)
    expect((await call(other.escrowApiKey)).statusCode).toBe(200)
    expect((await call(rotated.issued.escrowApiKey)).statusCode).toBe(200)
    await rotateEscrowApiKey(app.db.pool, other.partnerId, 0)
    expect((await call(other.escrowApiKey)).statusCode).toBe(401)
    expect((await call(rotated.issued.escrowApiKey)).statusCode).toBe(401)
  })

  it('a route under a protected prefix without a declared scheme is refused at start-up', async () => {
    const bare = createHttpServer(false)
    installAuthentication(bare, { pool: app.db.pool, masterKey: app.masterKey, clock: systemClock })
    expect(() => bare.get('/api/v1/rail/oops', async () => ({}))).toThrow(/declares no auth scheme/)
    await bare.close()
  })
})
