// The validating proxy (src/banking/providers/conformance/) against a tiny OpenAPI document of the test's
// own: it forwards exchanges unchanged and records what does not conform — a request's path,
// method, parameters, credentials and body; an answer's status and body — with $ref, nullable,
// compositions and the differences of OpenAPI 3.0 and 3.1. No database: a small HTTP server stands
// in for the API.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  formatViolation,
  startValidatingProxy,
  type ValidatingProxy,
} from '../../src/banking/providers/conformance/proxy.ts'
import { OpenApiValidator } from '../../src/banking/providers/conformance/validator.ts'

const item = {
  type: 'object',
  required: ['id', 'status', 'amount'],
  properties: {
    id: { type: 'integer', readOnly: true },
    status: { type: 'string', enum: ['pending', 'success'] },
    amount: { type: 'integer', minimum: 0, exclusiveMinimum: true },
    note: { type: 'string', nullable: true },
    owner: { allOf: [{ $ref: '#/components/schemas/Owner' }], nullable: true },
  },
}

const document30 = {
  openapi: '3.0.1',
  servers: [{ url: 'https://api.example.test/v1' }],
  security: [{ bearerAuth: [] }],
  paths: {
    '/items': {
      post: {
        operationId: 'item_create',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
        },
        responses: {
          '201': { $ref: '#/components/responses/ItemAnswer' },
          '4XX': { $ref: '#/components/responses/Error' },
        },
      },
      get: {
        operationId: 'item_list',
        parameters: [
          { $ref: '#/components/parameters/PerPage' },
          { name: 'status', in: 'query', schema: { type: 'string', enum: ['pending', 'success'] } },
        ],
        responses: {
          '200': {
            description: 'ok',
            content: {
              'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Item' } } },
            },
          },
          default: { description: 'error' },
        },
      },
    },
    '/items/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
      get: { operationId: 'item_fetch', responses: { '200': { $ref: '#/components/responses/ItemAnswer' } } },
    },
    '/items/search': {
      get: { operationId: 'item_search', security: [{}], responses: { '200': { description: 'ok' } } },
    },
  },
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
    parameters: { PerPage: { name: 'perPage', in: 'query', schema: { type: 'integer', maximum: 100 } } },
    responses: {
      ItemAnswer: {
        description: 'an item',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
      },
      Error: {
        description: 'an error',
        content: {
          'application/json': {
            schema: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
          },
        },
      },
    },
    schemas: {
      Item: item,
      Owner: {
        oneOf: [
          { type: 'object', required: ['person'], properties: { person: { type: 'string' } } },
          { type: 'object', required: ['company'], properties: { company: { type: 'string' } } },
        ],
      },
    },
  },
}

/** What the stand-in API answers next, by "METHOD path": status and body (undefined: it drops the connection). */
const answers = new Map<string, { status: number; body: unknown } | undefined>()
const seen: { method: string; url: string; body: string }[] = []
let api: http.Server
let proxy: ValidatingProxy

beforeAll(async () => {
  api = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      seen.push({ method: request.method!, url: request.url!, body: Buffer.concat(chunks).toString('utf8') })
      const key = `${request.method} ${new URL(request.url!, 'http://x').pathname}`
      const answer = answers.has(key) ? answers.get(key) : { status: 200, body: [] }
      if (answer === undefined) return request.socket.destroy()
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body))
    })
  })
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve))
  proxy = await startValidatingProxy({
    document: document30,
    targetBaseUrl: `http://127.0.0.1:${(api.address() as AddressInfo).port}/root`,
  })
})

afterAll(async () => {
  await proxy.close()
  await new Promise((resolve) => api.close(resolve))
})

beforeEach(() => {
  proxy.violations.length = 0
  proxy.unmatched.length = 0
  answers.clear()
})

async function send(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = { authorization: 'Bearer sk_test' },
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${proxy.url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return { status: response.status, body: await response.json() }
}

const violations = () =>
  proxy.violations.map((violation) => ({
    side: violation.side,
    operation: violation.operation,
    location: violation.location,
    pointer: violation.pointer,
    message: violation.message,
  }))

describe('the validating proxy', () => {
  it('forwards a conforming exchange unchanged under the target base path and records nothing', async () => {
    answers.set('POST /root/v1/items', {
      status: 201,
      body: { id: 7, status: 'pending', amount: 5000, note: null, owner: { person: 'Ada' } },
    })
    const answer = await send('POST', '/v1/items', { status: 'pending', amount: 5000, note: null, owner: null })
    expect(answer).toEqual({
      status: 201,
      body: { id: 7, status: 'pending', amount: 5000, note: null, owner: { person: 'Ada' } },
    })
    expect(seen.at(-1)).toEqual({
      method: 'POST',
      url: '/root/v1/items',
      body: '{"status":"pending","amount":5000,"note":null,"owner":null}',
    })
    expect(proxy.violations).toEqual([])
    expect(proxy.exchanges.at(-1)).toMatchObject({
      operation: 'item_create',
      status: 201,
      responseBodyChecked: true,
      violations: 0,
    })
  })

  it("records a request body's violations with JSON pointers (required, enum, a 3.0 exclusive minimum, oneOf)", async () => {
    answers.set('POST /root/v1/items', { status: 201, body: { id: 1, status: 'pending', amount: 1 } })
    await send('POST', '/v1/items', { status: 'done', amount: 0, owner: { nobody: true } })
    expect(violations()).toEqual(
      expect.arrayContaining([
        {
          side: 'request',
          operation: 'item_create',
          location: 'body',
          pointer: '/status',
          message: 'must be equal to one of the allowed values: "pending", "success"',
        },
        { side: 'request', operation: 'item_create', location: 'body', pointer: '/amount', message: 'must be > 0' },
        {
          side: 'request',
          operation: 'item_create',
          location: 'body',
          pointer: '/owner',
          message: 'must match exactly one schema in oneOf',
        },
      ]),
    )
    // id is readOnly: a request need not send it, and the answer's does not conform to nothing.
    expect(violations().some((violation) => violation.pointer === '' && violation.message.includes("'id'"))).toBe(false)
  })

  it("records an answer's violations, and a response described by status class or not at all", async () => {
    answers.set('GET /root/v1/items/12', { status: 200, body: { status: 'success', amount: '5000', note: 3 } })
    await send('GET', '/v1/items/12')
    expect(violations()).toEqual([
      {
        side: 'response',
        operation: 'item_fetch',
        location: 'body',
        pointer: '',
        message: "must have required property 'id'",
      },
      { side: 'response', operation: 'item_fetch', location: 'body', pointer: '/amount', message: 'must be integer' },
      { side: 'response', operation: 'item_fetch', location: 'body', pointer: '/note', message: 'must be string,null' },
    ])
    proxy.violations.length = 0
    answers.set('POST /root/v1/items', { status: 422, body: { error: 'no' } })
    await send('POST', '/v1/items', { status: 'pending', amount: 1 })
    expect(violations()).toEqual([
      {
        side: 'response',
        operation: 'item_create',
        location: 'body',
        pointer: '',
        message: "must have required property 'message'",
      },
    ])
    expect(formatViolation(proxy.violations[0]!)).toBe(
      "[response] item_create (POST /v1/items → 422) body: must have required property 'message'",
    )
    proxy.violations.length = 0
    answers.set('GET /root/v1/items/12', { status: 404, body: { message: 'gone' } })
    await send('GET', '/v1/items/12')
    expect(violations()).toEqual([
      {
        side: 'response',
        operation: 'item_fetch',
        location: 'status',
        pointer: '',
        message: 'status 404 is not described by the operation (it describes 200)',
      },
    ])
    proxy.violations.length = 0
    // `default` without content: the answer's body is not described, so not checked.
    answers.set('GET /root/v1/items', { status: 500, body: { anything: true } })
    await send('GET', '/v1/items')
    expect(proxy.violations).toEqual([])
    expect(proxy.exchanges.at(-1)).toMatchObject({ operation: 'item_list', status: 500, responseBodyChecked: false })
  })

  it('checks path and query parameters with coercion, and names undeclared and repeated ones', async () => {
    await send('GET', '/v1/items?perPage=50&status=pending')
    expect(proxy.violations).toEqual([])
    await send('GET', '/v1/items?perPage=abc&status=pending&status=success&from=2024-01-01')
    expect(violations()).toEqual([
      {
        side: 'request',
        operation: 'item_list',
        location: 'query',
        pointer: '/from',
        message: 'is not a query parameter of the operation',
      },
      { side: 'request', operation: 'item_list', location: 'query', pointer: '/perPage', message: 'must be integer' },
      {
        side: 'request',
        operation: 'item_list',
        location: 'query',
        pointer: '/status',
        message: 'is given 2 times, the operation takes one',
      },
    ])
    proxy.violations.length = 0
    answers.set('GET /root/v1/items/abc', { status: 200, body: { id: 1, status: 'pending', amount: 1 } })
    await send('GET', '/v1/items/abc')
    expect(violations()).toEqual([
      { side: 'request', operation: 'item_fetch', location: 'path', pointer: '/id', message: 'must be integer' },
    ])
  })

  it('matches literal paths before templates, and records requests that match no operation', async () => {
    answers.set('GET /root/v1/items/search', { status: 200, body: {} })
    await send('GET', '/v1/items/search', undefined, {})
    expect(proxy.exchanges.at(-1)).toMatchObject({ operation: 'item_search' })
    expect(proxy.violations).toEqual([]) // its security is optional ({})
    answers.set('DELETE /root/v1/items/3', { status: 200, body: {} })
    answers.set('GET /root/v1/orders', { status: 200, body: {} })
    answers.set('GET /root/items', { status: 200, body: {} })
    await send('DELETE', '/v1/items/3')
    await send('GET', '/v1/orders')
    await send('GET', '/items')
    expect(proxy.unmatched).toEqual([
      { method: 'DELETE', path: '/v1/items/3', reason: '/items/{id} has no DELETE operation' },
      { method: 'GET', path: '/v1/orders', reason: 'no path of the description matches' },
      { method: 'GET', path: '/items', reason: "the path is not under the server's /v1" },
    ])
  })

  it('records a request without the credentials the document asks for, and a wrong content type', async () => {
    await send('GET', '/v1/items', undefined, { authorization: 'Basic abc' })
    expect(violations()).toEqual([
      {
        side: 'request',
        operation: 'item_list',
        location: 'header',
        pointer: '/authorization',
        message: 'no credentials the operation asks for: bearerAuth (Authorization: bearer)',
      },
    ])
    proxy.violations.length = 0
    answers.set('POST /root/v1/items', { status: 201, body: { id: 1, status: 'pending', amount: 1 } })
    await fetch(`${proxy.url}/v1/items`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'text/plain' },
      body: 'status=pending',
    })
    expect(violations()).toEqual([
      {
        side: 'request',
        operation: 'item_create',
        location: 'header',
        pointer: '/content-type',
        message: 'text/plain is not a media type described here (application/json)',
      },
    ])
  })

  it('forwards paths outside the base path unchecked when told, and shows every exchange to an observer', async () => {
    const observed: string[] = []
    const beside = await startValidatingProxy({
      document: document30,
      targetBaseUrl: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
      basePath: '/root/v1',
      forwardOutsideBasePath: true,
      observe: (exchange) =>
        observed.push(`${exchange.request.method} ${exchange.request.path} ${exchange.response?.status}`),
    })
    try {
      answers.set('POST /hooks', { status: 204, body: '' })
      await fetch(`${beside.url}/hooks`, { method: 'POST', body: '{}' })
      await fetch(`${beside.url}/root/v1/items?perPage=7`, { headers: { authorization: 'Bearer k' } })
      expect(observed).toEqual(['POST /hooks 204', 'GET /root/v1/items 200'])
      expect(beside.unmatched).toEqual([])
      expect(beside.exchanges.map((exchange) => exchange.operation)).toEqual(['item_list'])
      expect(beside.violations).toEqual([])
    } finally {
      await beside.close()
    }
  })

  it('gives no answer when the target gave none', async () => {
    answers.set('GET /root/v1/items/5', undefined)
    await expect(fetch(`${proxy.url}/v1/items/5`, { headers: { authorization: 'Bearer k' } })).rejects.toThrow()
    expect(proxy.exchanges.at(-1)).toMatchObject({ operation: 'item_fetch', status: null })
  })
})

describe('an OpenAPI 3.1 document', () => {
  const document31 = {
    openapi: '3.1.0',
    paths: {},
    webhooks: {
      'charge.success': {
        post: {
          requestBody: {
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['event', 'data'],
                  properties: { event: { const: 'charge.success' }, data: { $ref: '#/components/schemas/Charge' } },
                },
              },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        Charge: {
          type: 'object',
          required: ['amount'],
          properties: { amount: { type: 'integer', exclusiveMinimum: 0 }, note: { type: ['string', 'null'] } },
        },
      },
    },
  }

  it('validates webhooks with JSON Schema 2020-12 words', () => {
    const validator = new OpenApiValidator(document31)
    expect(validator.webhookNames()).toEqual(['charge.success'])
    expect(
      validator.validateWebhook(
        'charge.success',
        JSON.stringify({ event: 'charge.success', data: { amount: 10, note: null } }),
      ),
    ).toEqual([])
    const found = validator.validateWebhook(
      'charge.success',
      JSON.stringify({ event: 'charge.failed', data: { amount: 0, note: 1 } }),
    )
    expect(
      found.map((violation) => [violation.side, violation.operation, violation.pointer, violation.message]),
    ).toEqual([
      ['webhook', 'charge.success', '/event', 'must be equal to constant: "charge.success"'],
      ['webhook', 'charge.success', '/data/amount', 'must be > 0'],
      ['webhook', 'charge.success', '/data/note', 'must be string,null'],
    ])
    expect(formatViolation(found[0]!)).toBe(
      '[webhook] charge.success body /event: must be equal to constant: "charge.success"',
    )
    expect(validator.validateWebhook('transfer.success', '{}')).toMatchObject([
      { message: 'the description has no webhook transfer.success' },
    ])
  })
})
