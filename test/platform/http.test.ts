// The HTTP platform as a caller sees it: one error body, strict validation, limits, request ids,
// health, metrics and the generated API description.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signRequest, type RailClient } from '../../src/client/index.ts'
import type { PartnerCredentials } from '../../src/partners/service.ts'
import { JSON_DEPTH_MAX } from '../../src/platform/request-body.ts'
import { startTestApp, type TestApp } from '../support/app.ts'

let app: TestApp
let client: RailClient
let credentials: PartnerCredentials

beforeAll(async () => {
  app = await startTestApp()
  ;({ client, credentials } = await app.newPartner())
})
afterAll(async () => app?.close())

function expectErrorShape(body: unknown, statusCode: number, error: string): void {
  expect(body).toMatchObject({ statusCode, error, message: expect.any(String) })
  expect(Object.keys(body as object).every((key) => ['statusCode', 'error', 'message', 'details'].includes(key))).toBe(
    true,
  )
}

describe('request bodies', () => {
  it('rejects malformed JSON with 400 invalid_json', async () => {
    const response = await client.patch('/api/v1/rail/settings', undefined, { rawBody: '{"callbackUrl": ' })
    expect(response.status).toBe(400)
    expectErrorShape(response.body, 400, 'invalid_json')
  })

  it.each([
    ['unknown field', { callbackUrl: null, role: 'admin' }, ['role']],
    ['wrong type', { callbackUrl: 42 }, ['callbackUrl']],
    ['not a URL', { callbackUrl: 'ftp://example.com/x' }, ['callbackUrl']],
    ['oversize field', { callbackUrl: `https://example.com/${'a'.repeat(2100)}` }, ['callbackUrl']],
    ['empty object', {}, []],
    ['two bad fields at once', { callbackUrl: 1, extra: true }, ['callbackUrl', 'extra']],
  ])('%s → 422 validation_error naming each field', async (_case, body, fields) => {
    const response = await client.patch<{ details: { fields: { field: string }[] } }>('/api/v1/rail/settings', body)
    expect(response.status).toBe(422)
    expectErrorShape(response.body, 422, 'validation_error')
    const named = response.body.details.fields.map((issue) => issue.field)
    for (const field of fields) expect(named).toContain(field)
  })

  it('a body that is not an object is a 422, not a crash', async () => {
    const response = await client.patch('/api/v1/rail/settings', [1, 2])
    expect(response.status).toBe(422)
  })

  it('refuses a body over 1 MiB with 413', async () => {
    const huge = JSON.stringify({ callbackUrl: 'x'.repeat(1024 * 1024 + 10) })
    const response = await client.patch('/api/v1/rail/settings', undefined, { rawBody: huge })
    expect(response.status).toBe(413)
    expectErrorShape(response.body, 413, 'payload_too_large')
  })

  it('refuses a body that is not JSON with 415', async () => {
    const response = await client.patch('/api/v1/rail/settings', undefined, {
      rawBody: 'callbackUrl=x',
      headers: { 'Content-Type': 'text/plain' },
    })
    expect(response.status).toBe(415)
    expectErrorShape(response.body, 415, 'unsupported_media_type')
  })

  /** `depth` arrays, one inside another, as a field of an object. */
  const nested = (depth: number) => `{"callbackUrl":null,"x":${'['.repeat(depth)}${']'.repeat(depth)}}`

  it(`a body nested deeper than ${JSON_DEPTH_MAX} levels → 422 naming the body, before anything walks it, never a 500`, async () => {
    // The object around the arrays is one level: JSON_DEPTH_MAX - 1 arrays are within the limit (and
    // refused for the unknown field only).
    for (const [depth, tooDeep] of [
      [JSON_DEPTH_MAX - 1, false],
      [JSON_DEPTH_MAX, true],
      [10_000, true],
    ] as const) {
      const response = await client.patch<{ details: { fields: { field: string; message: string }[] } }>(
        '/api/v1/rail/settings',
        undefined,
        { rawBody: nested(depth) },
      )
      expect(response.status).toBe(422)
      expectErrorShape(response.body, 422, 'validation_error')
      const aboutDepth = response.body.details.fields.some(
        (issue) => issue.field === 'body' && /levels deep/.test(issue.message),
      )
      expect([depth, aboutDepth]).toEqual([depth, tooDeep])
    }
    // Without credentials, on a route that takes none and on a path no route has.
    for (const path of ['/sandbox-bank/v1/transfers', '/nowhere']) {
      const response = await fetch(`${app.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: nested(100_000),
      })
      expect([path, response.status]).toEqual([path, 422])
      expectErrorShape(await response.json(), 422, 'validation_error')
    }
  })

  it('a body that is not valid UTF-8 → 400 invalid_json, never read with U+FFFD in its place', async () => {
    const before = await client.get<{ callbackUrl: string | null }>('/api/v1/rail/settings')
    for (const byte of [0xff, 0xfe]) {
      const body = Buffer.from([...Buffer.from('{"callbackUrl":"https://example.com/'), byte, ...Buffer.from('"}')])
      const headers = {
        ...signRequest({ ...credentials, method: 'PATCH', pathWithQuery: '/api/v1/rail/settings', body }),
        'Content-Type': 'application/json',
      }
      const response = await fetch(`${app.baseUrl}/api/v1/rail/settings`, { method: 'PATCH', headers, body })
      expect(response.status).toBe(400)
      const refusal = (await response.json()) as { message: string }
      expectErrorShape(refusal, 400, 'invalid_json')
      expect(refusal.message).toMatch(/UTF-8/)
    }
    expect((await client.get<{ callbackUrl: string | null }>('/api/v1/rail/settings')).body.callbackUrl).toBe(
      before.body.callbackUrl,
    )
  })

  it('a query whose percent-escapes are not UTF-8 → 422 naming the parameter, not read as the text %FF that %25FF spells', async () => {
    for (const escape of ['%FF', '%FE', '%C3', '%ZZ']) {
      const response = await client.get<{ details: { fields: { field: string; message: string }[] } }>(
        `/wallet/customer?customerId=cus${escape}`,
      )
      expect([escape, response.status]).toEqual([escape, 422])
      expect(response.body.details.fields).toContainEqual({
        field: 'customerId',
        message: 'must be percent-encoded UTF-8',
      })
    }
    // The escaped percent sign is an ordinary value: that wallet simply does not exist.
    expect((await client.get('/wallet/customer?customerId=cus%25FF')).status).toBe(404)
  })

  it('a rejected request changes nothing', async () => {
    const before = await client.get<{ callbackUrl: string | null }>('/api/v1/rail/settings')
    await client.patch('/api/v1/rail/settings', { callbackUrl: 'https://example.com/a', extra: 1 })
    await client.patch('/api/v1/rail/settings', undefined, { rawBody: '{"callbackUrl":"https://example.com/b"' })
    const after = await client.get<{ callbackUrl: string | null }>('/api/v1/rail/settings')
    expect(after.body.callbackUrl).toBe(before.body.callbackUrl)
  })

  it('accepts a valid body', async () => {
    const response = await client.patch<{ callbackUrl: string }>('/api/v1/rail/settings', {
      callbackUrl: 'https://example.com/hooks',
    })
    expect(response.status).toBe(200)
    expect(response.body.callbackUrl).toBe('https://example.com/hooks')
  })
})

describe('live partners', () => {
  it('must use https callback URLs', async () => {
    const live = (await app.newPartner({ environment: 'live' })).client
    const plain = await live.patch('/api/v1/rail/settings', { callbackUrl: 'http://example.com/hooks' })
    expect(plain.status).toBe(422)
    const secure = await live.patch('/api/v1/rail/settings', { callbackUrl: 'https://example.com/hooks' })
    expect(secure.status).toBe(200)
  })

  it('may not register an IPv4-translated, NAT64 or IPv4-compatible form of a private address, nor localhost with a trailing dot', async () => {
    const live = (await app.newPartner({ environment: 'live' })).client
    for (const callbackUrl of [
      'https://[::ffff:0:169.254.169.254]/hooks',
      'https://[::ffff:0:a00:1]/hooks',
      'https://[64:ff9b::10.0.0.1]/hooks',
      'https://[::10.0.0.1]/hooks',
      'https://localhost./hooks',
      'https://hooks.localhost./hooks',
    ]) {
      const response = await live.patch<{ details: { fields: { field: string }[] } }>('/api/v1/rail/settings', {
        callbackUrl,
      })
      expect([callbackUrl, response.status]).toEqual([callbackUrl, 422])
      expect(response.body.details.fields.map((issue) => issue.field)).toEqual(['callbackUrl'])
    }
  })
})

describe('every response', () => {
  it('carries X-Request-Id, echoing a well-formed one the caller sent', async () => {
    const generated = await fetch(`${app.baseUrl}/healthz`)
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    const echoed = await fetch(`${app.baseUrl}/healthz`, { headers: { 'X-Request-Id': 'trace-123' } })
    expect(echoed.headers.get('x-request-id')).toBe('trace-123')
    const refused = await fetch(`${app.baseUrl}/healthz`, { headers: { 'X-Request-Id': 'bad id with spaces' } })
    expect(refused.headers.get('x-request-id')).not.toBe('bad id with spaces')
    const failed = await client.patch('/api/v1/rail/settings', { nope: 1 })
    expect(failed.headers.get('x-request-id')).toBeTruthy()
  })

  it('unknown routes get 404 in the one error shape', async () => {
    const response = await fetch(`${app.baseUrl}/no/such/route`)
    expect(response.status).toBe(404)
    expectErrorShape(await response.json(), 404, 'not_found')
  })
})

describe('operations endpoints', () => {
  it('/healthz and /readyz answer', async () => {
    expect((await fetch(`${app.baseUrl}/healthz`)).status).toBe(200)
    const ready = await fetch(`${app.baseUrl}/readyz`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ status: 'ready' })
  })

  it('/readyz is 503 when migrations are missing', async () => {
    await app.db.pool.query('ALTER TABLE migrations RENAME TO migrations_hidden')
    try {
      const response = await fetch(`${app.baseUrl}/readyz`)
      expect(response.status).toBe(503)
      expectErrorShape(await response.json(), 503, 'service_unavailable')
    } finally {
      await app.db.pool.query('ALTER TABLE migrations_hidden RENAME TO migrations')
    }
  })

  it('/metrics counts requests by route and status', async () => {
    await fetch(`${app.baseUrl}/healthz`)
    const text = await (await fetch(`${app.baseUrl}/metrics`)).text()
    expect(text).toMatch(/rail_http_requests_total\{method="GET",route="\/healthz",status_code="200"\} \d+/)
    expect(text).toContain('rail_http_request_duration_seconds_bucket')
  })

  it('/openapi.json is OpenAPI 3.1 generated from the route schemas', async () => {
    const spec = (await (await fetch(`${app.baseUrl}/openapi.json`)).json()) as {
      openapi: string
      paths: Record<string, Record<string, { security?: unknown[]; requestBody?: unknown }>>
    }
    expect(spec.openapi).toBe('3.1.0')
    expect(spec.paths['/api/v1/rail/settings']?.patch?.requestBody).toBeDefined()
    expect(spec.paths['/api/v1/rail/settings']?.get?.security).toEqual([
      { railKeyId: [], railTimestamp: [], railSignature: [] },
    ])
  })

  it('/docs serves the reference page', async () => {
    const response = await fetch(`${app.baseUrl}/docs/`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/html')
  })
})
