// The HTTP edge under hostile or careless input, on every route of the real app: strings
// PostgreSQL cannot store (or that have no business in a request), bodies that are not objects,
// over-long path parameters, bodies too large, credentials checked before bodies, rate limits,
// slow clients, and a database that cannot be reached in time.
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PoolClient } from 'pg'
import { signRequest, type RailClient } from '../../src/client/index.ts'
import type { PartnerCredentials } from '../../src/partners/service.ts'
import { AdmissionGate } from '../../src/platform/admission.ts'
import { startTestApp, type TestApp } from '../support/app.ts'

let app: TestApp
let client: RailClient
let credentials: PartnerCredentials

beforeAll(async () => {
  app = await startTestApp()
  ;({ client, credentials } = await app.newPartner())
})
afterAll(async () => app?.close())

interface Operation {
  method: string
  path: string
  security: 'signature' | 'api-key' | 'none'
  bodySchema: JsonSchema | undefined
  pathParams: string[]
  queryParams: string[]
}

interface JsonSchema {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  items?: JsonSchema
  anyOf?: JsonSchema[]
  $ref?: string
}

/** The schema with every `$ref` to a named component replaced by that component (the document names its bodies). */
function resolved(
  schema: JsonSchema | undefined,
  components: Record<string, JsonSchema>,
  depth = 0,
): JsonSchema | undefined {
  if (!schema || depth > 20) return schema
  if (schema.$ref) return resolved(components[schema.$ref.replace('#/components/schemas/', '')], components, depth + 1)
  return {
    ...schema,
    ...(schema.properties
      ? {
          properties: Object.fromEntries(
            Object.entries(schema.properties).map(([name, child]) => [name, resolved(child, components, depth + 1)!]),
          ),
        }
      : {}),
    ...(schema.items ? { items: resolved(schema.items, components, depth + 1) } : {}),
    ...(schema.anyOf ? { anyOf: schema.anyOf.map((variant) => resolved(variant, components, depth + 1)!) } : {}),
  }
}

/** Every operation of the app, from its own OpenAPI document. */
function operations(): Operation[] {
  const document = app.api.swagger() as {
    paths: Record<string, Record<string, OpenApiOperation>>
    components?: { schemas?: Record<string, JsonSchema> }
  }
  const components = document.components?.schemas ?? {}
  const found: Operation[] = []
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const security = operation.security?.[0]
      found.push({
        method: method.toUpperCase(),
        path,
        security: security?.escrowApiKey ? 'api-key' : security?.railKeyId ? 'signature' : 'none',
        bodySchema: resolved(operation.requestBody?.content?.['application/json']?.schema, components),
        pathParams: (operation.parameters ?? [])
          .filter((parameter) => parameter.in === 'path')
          .map((parameter) => parameter.name),
        queryParams: (operation.parameters ?? [])
          .filter((parameter) => parameter.in === 'query')
          .map((parameter) => parameter.name),
      })
    }
  }
  return found
}

interface OpenApiOperation {
  security?: Record<string, unknown>[]
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> }
  parameters?: { in: string; name: string }[]
}

/** The paths of every string field of a body schema (array items as index 0). */
function stringFields(schema: JsonSchema | undefined, prefix: string[] = []): string[][] {
  if (!schema) return []
  const variants = schema.anyOf ?? [schema]
  const paths: string[][] = []
  for (const variant of variants) {
    const types = Array.isArray(variant.type) ? variant.type : [variant.type]
    if (types.includes('string') && prefix.length > 0) paths.push(prefix)
    for (const [name, child] of Object.entries(variant.properties ?? {}))
      paths.push(...stringFields(child, [...prefix, name]))
    if (variant.items) paths.push(...stringFields(variant.items, [...prefix, '0']))
  }
  const unique = new Map(paths.map((path) => [path.join('.'), path]))
  return [...unique.values()]
}

/** A body holding `value` at `path` and nothing else (arrays where the path has an index). */
function bodyWith(path: string[], value: string): unknown {
  const [head, ...rest] = path
  const inner = rest.length === 0 ? value : bodyWith(rest, value)
  if (head === '0') return [inner]
  return { [head!]: inner }
}

function concretePath(operation: Operation, value: (param: string) => string): string {
  return operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) => value(name))
}

async function send(
  operation: Operation,
  path: string,
  rawBody: string | undefined,
): Promise<{ status: number; body: { error?: string; details?: { fields?: { field: string }[] } }; headers: Headers }> {
  if (operation.security === 'signature') {
    return client.request(operation.method, path, undefined, rawBody === undefined ? {} : { rawBody })
  }
  const headers: Record<string, string> = rawBody === undefined ? {} : { 'Content-Type': 'application/json' }
  if (operation.security === 'api-key') headers['X-API-Key'] = credentials.escrowApiKey
  const response = await fetch(`${app.baseUrl}${path}`, { method: operation.method, headers, body: rawBody })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as never) : {} }
}

/** What PostgreSQL cannot store, what no reference or name may hold, and what is not a character. */
const BAD_STRINGS: [string, string][] = [
  ['NUL', 'a\u0000b'],
  ['BEL', 'a\u0007b'],
  ['ESC', 'a\u001bb'],
  ['DEL', 'a\u007fb'],
  ['C1 NEL', 'a\u0085b'],
  ['lone surrogate', 'a\ud800b'],
]

describe('bad strings are refused on every route, naming the field', () => {
  it('in every string field of every body', async () => {
    const checked: string[] = []
    for (const operation of operations()) {
      const path = concretePath(operation, () => 'x1')
      for (const field of stringFields(operation.bodySchema)) {
        for (const [name, value] of BAD_STRINGS) {
          const response = await send(operation, path, JSON.stringify(bodyWith(field, value)))
          const where = `${operation.method} ${operation.path} ${field.join('.')} ${name}`
          expect(response.status, where).toBe(422)
          expect(response.body.error, where).toBe('validation_error')
          expect(
            response.body.details?.fields?.map((issue) => issue.field),
            where,
          ).toContain(field.join('.'))
        }
        checked.push(`${operation.method} ${operation.path} ${field.join('.')}`)
      }
    }
    // The matrix is not empty by accident: wallets, payouts, collections and escrow are all in it.
    expect(checked.length).toBeGreaterThan(60)
    for (const route of [
      '/wallet',
      '/transfer/wallet',
      '/api/v1/rail/outbound',
      '/api/v1/escrow/partner/create',
      '/api/v1/rail/invoice',
    ]) {
      expect(
        checked.some((entry) => entry.includes(` ${route} `)),
        route,
      ).toBe(true)
    }
  })

  it('in every path parameter and query parameter', async () => {
    let checked = 0
    for (const operation of operations()) {
      const body = operation.bodySchema ? '{}' : undefined
      for (const param of operation.pathParams) {
        const path = concretePath(operation, (name) => (name === param ? 'a%00b' : 'x1'))
        const response = await send(operation, path, body)
        expect(response.status, `${operation.method} ${operation.path} ${param}`).toBe(422)
        expect(response.body.details?.fields?.map((issue) => issue.field)).toContain(param)
        checked += 1
      }
      for (const param of operation.queryParams) {
        const path = `${concretePath(operation, () => 'x1')}?${param}=a%1Bb`
        const response = await send(operation, path, body)
        expect(response.status, `${operation.method} ${operation.path} ?${param}`).toBe(422)
        expect(response.body.details?.fields?.map((issue) => issue.field)).toContain(param)
        checked += 1
      }
    }
    expect(checked).toBeGreaterThan(20)
  })

  it('free text may hold line breaks and tabs; names and references may not', async () => {
    const nameWithBreak = await client.post<{ details: { fields: { field: string }[] } }>('/wallet', {
      customerReference: 'c-1',
      name: 'Ada\nObi',
    })
    expect(nameWithBreak.status).toBe(422)
    expect(nameWithBreak.body.details.fields.map((issue) => issue.field)).toContain('name')
    const escrow = await fetch(`${app.baseUrl}/api/v1/escrow/partner/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': credentials.escrowApiKey },
      body: JSON.stringify({ description: 'line one\nline two\ttabbed', metadata: { note: 'a\nb' } }),
    })
    // Past the string check: the schema then names what is missing, not the description.
    const refused = (await escrow.json()) as { details: { fields: { field: string; message: string }[] } }
    expect(escrow.status).toBe(422)
    expect(refused.details.fields.map((issue) => issue.field)).toContain('amount')
    expect(refused.details.fields.some((issue) => /control/.test(issue.message))).toBe(false)
  })
})

describe('bodies that are not objects', () => {
  it.each([['null'], ['[]'], ['1'], ['"text"'], ['true']])(
    '%s → 422 on every route that takes a body',
    async (rawBody) => {
      for (const operation of operations()) {
        if (!operation.bodySchema) continue
        const response = await send(
          operation,
          concretePath(operation, () => 'x1'),
          rawBody,
        )
        expect(response.status, `${operation.method} ${operation.path}`).toBe(422)
        expect(response.body.details?.fields?.map((issue) => issue.field)).toContain('body')
      }
    },
  )

  it('PATCH release with the body null releases nothing', async () => {
    const response = await fetch(`${app.baseUrl}/api/v1/escrow/partner/ESC-1/release`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json', 'X-API-Key': credentials.escrowApiKey },
      body: 'null',
    })
    expect(response.status).toBe(422)
  })
})

describe('path parameters of any length get the one error body', () => {
  it('over the schema limit: 422 naming the parameter', async () => {
    const response = await client.get<{ error: string; details: { fields: { field: string }[] } }>(
      `/api/v1/rail/invoice/${'a'.repeat(300)}`,
    )
    expect(response.status).toBe(422)
    expect(response.body.details.fields.map((issue) => issue.field)).toContain('reference')
  })

  it('over the router limit: 422, never the router’s own 414', async () => {
    const response = await client.get<{ error: string; statusCode: number }>(`/api/v1/rail/invoice/${'a'.repeat(3000)}`)
    expect(response.status).toBe(422)
    expect(response.body).toMatchObject({ statusCode: 422, error: 'validation_error' })
    expect(response.headers.get('x-request-id')).toBeTruthy()
  })
})

describe('credentials before bodies', () => {
  it('no credentials and a 2 MiB body: 401, not 413', async () => {
    const response = await fetch(`${app.baseUrl}/api/v1/rail/outbound`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: 'x'.repeat(2 * 1024 * 1024),
    })
    expect(response.status).toBe(401)
  })

  it('no credentials and a body that is not JSON: 401, not 415', async () => {
    const response = await fetch(`${app.baseUrl}/api/v1/rail/outbound`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'hello',
    })
    expect(response.status).toBe(401)
  })

  it('a signed 20 MB body: 413 in the error body, the connection not reset', async () => {
    const response = await client.post<{ error: string }>('/api/v1/rail/outbound', undefined, {
      rawBody: JSON.stringify({ reference: 'x'.repeat(20 * 1024 * 1024) }),
    })
    expect(response.status).toBe(413)
    expect(response.body.error).toBe('payload_too_large')
  })
})

describe('rate limits', () => {
  let limited: TestApp
  beforeAll(async () => {
    limited = await startTestApp({ edge: { rateLimits: { partnerRps: 5, unauthenticatedRps: 3 } } })
  })
  afterAll(async () => limited?.close())

  it('a partner past its rate gets 429 rate_limited with Retry-After and RateLimit-* headers; another partner is not affected', async () => {
    const { client: busy } = await limited.newPartner()
    const { client: quiet } = await limited.newPartner()
    const responses = await Promise.all(Array.from({ length: 12 }, () => busy.get('/api/v1/rail/settings')))
    const statuses = responses.map((response) => response.status)
    // Five a second: twelve at once span at most two windows even on a slow machine.
    expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(10)
    const refused = responses.find((response) => response.status === 429)!
    expect(refused.body).toMatchObject({ statusCode: 429, error: 'rate_limited' })
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(refused.headers.get('ratelimit-limit')).toBe('5')
    expect(refused.headers.get('ratelimit-remaining')).toBe('0')
    expect(refused.headers.get('ratelimit-reset')).toBeTruthy()
    const served = responses.find((response) => response.status === 200)!
    expect(served.headers.get('ratelimit-limit')).toBe('5')
    expect((await quiet.get('/api/v1/rail/settings')).status).toBe(200)
  })

  it('failed authentications are limited per client IP: 401 then 429', async () => {
    const statuses: number[] = []
    // Three a second: twenty in a row exceed it however slowly this machine answers them.
    for (let i = 0; i < 20 && !statuses.includes(429); i++) {
      const response = await fetch(`${limited.baseUrl}/api/v1/rail/settings`, {
        headers: { 'X-Rail-Key-Id': 'nobody', 'X-Rail-Timestamp': '1', 'X-Rail-Signature': `v1=${'0'.repeat(64)}` },
      })
      statuses.push(response.status)
      if (response.status === 429) expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    }
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401])
    expect(statuses).toContain(429)
  })

  it('a payment link asked for past the limit is 429 with Retry-After, not the page of a link not found', async () => {
    let limitedAnswer: Response | undefined
    for (let i = 0; i < 20 && !limitedAnswer; i++) {
      const response = await fetch(`${limited.baseUrl}/checkout/cht_unknown`)
      if (response.status === 429) limitedAnswer = response
      else expect([response.status, response.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8'])
    }
    expect(limitedAnswer?.status).toBe(429)
    expect(Number(limitedAnswer!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(((await limitedAnswer!.json()) as { error: string }).error).toBe('rate_limited')
  })
})

describe('slow clients are cut off', () => {
  let strict: TestApp
  beforeAll(async () => {
    strict = await startTestApp({ edge: { httpTimeouts: { headersTimeoutMs: 500, requestTimeoutMs: 1_000 } } })
  })
  afterAll(async () => strict?.close())

  /** Opens a connection, sends `first`, then one byte of `trickle` every 200 ms; resolves when the server closes it. */
  function slowClient(first: string, trickle: string): Promise<{ closed: boolean; answer: string }> {
    const port = new URL(strict.baseUrl).port
    return new Promise((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1')
      let answer = ''
      let sent = 0
      const timer = setInterval(() => {
        if (sent < trickle.length) socket.write(trickle[sent++]!)
      }, 200)
      // A bound on the test, not a timing assertion: the server must close long before this.
      const giveUp = setTimeout(() => finish(false), 20_000)
      const finish = (closed: boolean) => {
        clearInterval(timer)
        clearTimeout(giveUp)
        socket.destroy()
        resolve({ closed, answer })
      }
      socket.on('data', (chunk) => (answer += chunk.toString()))
      socket.on('close', () => finish(true))
      socket.on('error', () => {})
      socket.write(first)
    })
  }

  it('headers trickling in: the connection is closed', async () => {
    const result = await slowClient('GET /healthz HTTP/1.1\r\nHost: x\r\n', 'X-Slow: ' + 'a'.repeat(500))
    expect(result.closed).toBe(true)
  })

  it('bytes that are not HTTP: 400 in the one error body', async () => {
    const result = await slowClient('NOT HTTP AT ALL\r\n\r\n', '')
    expect(result.answer).toMatch(/^HTTP\/1\.1 400/)
    expect(result.answer).toContain('"error":"bad_request"')
  })

  it('an unauthenticated body trickling in: 401 at once, and the connection is closed', async () => {
    const result = await slowClient(
      'POST /api/v1/rail/outbound HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n',
      '{' + ' '.repeat(999),
    )
    expect(result.closed).toBe(true)
    expect(result.answer).toMatch(/^HTTP\/1\.1 401/)
    // One answer only: no stray 408 after it for a proxy to hand to the next request.
    expect(result.answer.match(/HTTP\/1\.1 \d{3}/g)).toHaveLength(1)
  })

  it('a signed body trickling in: 408 request_timeout in the one error body, and the connection is closed', async () => {
    const { credentials: signer } = await strict.newPartner()
    const body = `{"clientReference":"slow"${' '.repeat(960)}}`
    const headers = signRequest({ ...signer, method: 'POST', pathWithQuery: '/api/v1/rail/outbound', body })
    const head = [
      'POST /api/v1/rail/outbound HTTP/1.1',
      'Host: x',
      'Content-Type: application/json',
      `Content-Length: ${body.length}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ].join('\r\n')
    const result = await slowClient(`${head}\r\n\r\n`, body)
    expect(result.closed).toBe(true)
    expect(result.answer).toMatch(/^HTTP\/1\.1 408/)
    expect(JSON.parse(result.answer.slice(result.answer.indexOf('\r\n\r\n') + 4))).toEqual({
      statusCode: 408,
      error: 'request_timeout',
      message: expect.any(String),
    })
  })
})

describe('a database that cannot serve in time', () => {
  it('a request that cannot get a connection is answered 503 overloaded with Retry-After, never 500', async () => {
    // Two connections: the credential cache listens on one (once it is up), the test takes the rest.
    const starved = await startTestApp({ poolMax: 2 })
    try {
      const { client: partner } = await starved.newPartner()
      expect((await partner.get('/api/v1/rail/settings')).status).toBe(200)
      // Every connection the listener does not hold is taken (on a busy machine its first connect
      // may have timed out and be waiting to try again): none is left for the request.
      const pool = starved.db.pool
      const held: PoolClient[] = []
      while (pool.totalCount < 2 || pool.idleCount > 0) held.push(await pool.connect())
      try {
        const response = await partner.get<{ error: string }>('/api/v1/rail/float')
        expect(response.status).toBe(503)
        expect(response.body.error).toBe('overloaded')
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      } finally {
        for (const connection of held) connection.release()
      }
    } finally {
      await starved.close()
    }
  })
})

describe('admission and clients that go away', () => {
  it('a client that disconnects while queued gives up its place: the next request is served', async () => {
    const narrow = await startTestApp({ edge: { admission: { inFlightMax: 1, queueMax: 5, queueWaitMs: 15_000 } } })
    try {
      const { client: partner, credentials: signer } = await narrow.newPartner()
      const port = Number(new URL(narrow.baseUrl).port)
      const rawRequest = (method: string, path: string, body: string, bodyLength: number) => {
        const headers = signRequest({ ...signer, method, pathWithQuery: path, body })
        const lines = [
          `${method} ${path} HTTP/1.1`,
          'Host: x',
          ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
        ]
        if (bodyLength > 0) lines.push('Content-Type: application/json', `Content-Length: ${bodyLength}`)
        const socket = net.connect(port, '127.0.0.1')
        socket.on('error', () => {})
        socket.write(`${lines.join('\r\n')}\r\n\r\n`)
        return socket
      }
      // One request holds the only place: signed, its body never sent.
      const holder = rawRequest('POST', '/api/v1/rail/outbound', '{}', 2)
      await new Promise((resolve) => setTimeout(resolve, 300))
      // A second waits for the place, then goes away.
      const quitter = rawRequest('GET', '/api/v1/rail/settings', '', 0)
      await new Promise((resolve) => setTimeout(resolve, 300))
      quitter.destroy()
      await new Promise((resolve) => setTimeout(resolve, 100))
      holder.destroy()
      // Had the quitter kept its place in the queue, the freed place would have gone to it for good.
      const served = await partner.get('/api/v1/rail/settings')
      expect(served.status).toBe(200)
      expect((await partner.get('/api/v1/rail/settings')).status).toBe(200)
    } finally {
      await narrow.close()
    }
  })
})

describe('the admission gate', () => {
  it('admits up to its limit, queues up to its bound in order, refuses the rest at once', async () => {
    const gate = new AdmissionGate({ inFlightMax: 2, queueMax: 2, queueWaitMs: 60_000 })
    expect(await gate.enter()).toBe(true)
    expect(await gate.enter()).toBe(true)
    const order: number[] = []
    const third = Promise.resolve(gate.enter()).then((admitted) => order.push(3) && admitted)
    const fourth = Promise.resolve(gate.enter()).then((admitted) => order.push(4) && admitted)
    expect(await gate.enter()).toBe(false) // the queue is full
    expect(gate.state).toEqual({ inFlight: 2, waiting: 2 })
    gate.leave()
    gate.leave()
    expect(await third).toBe(true)
    expect(await fourth).toBe(true)
    expect(order).toEqual([3, 4])
    gate.leave()
    gate.leave()
    expect(gate.state).toEqual({ inFlight: 0, waiting: 0 })
  })

  it('a waiter whose client went away leaves the queue, and the place goes to the next', async () => {
    const gate = new AdmissionGate({ inFlightMax: 1, queueMax: 5, queueWaitMs: 60_000 })
    expect(await gate.enter()).toBe(true)
    const gone = new AbortController()
    const abandoned = gate.enter(gone.signal)
    const next = gate.enter()
    gone.abort()
    expect(await abandoned).toBe(false)
    expect(gate.state).toEqual({ inFlight: 1, waiting: 1 })
    gate.leave()
    expect(await next).toBe(true)
    gate.leave()
    expect(gate.state).toEqual({ inFlight: 0, waiting: 0 })
  })

  it('a waiter past its bound is refused and leaves the queue', async () => {
    const gate = new AdmissionGate({ inFlightMax: 1, queueMax: 5, queueWaitMs: 10 })
    expect(await gate.enter()).toBe(true)
    expect(await gate.enter()).toBe(false)
    expect(gate.state).toEqual({ inFlight: 1, waiting: 0 })
    gate.leave()
    expect(await gate.enter()).toBe(true)
  })
})
