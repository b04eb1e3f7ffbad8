// The contract a generated client relies on: every error a route answers is documented on its
// operation, with its status, the ErrorBody schema and its code among the operation's codes
// (`x-rail-error-codes`, derived from the catalogue, src/platform/errors.ts); an unsupported
// method on a known path is 405 with Allow. The edge's refusals are driven over HTTP on every
// operation of both documents, and the cases the outside review found on their routes.
import { randomUUID } from 'node:crypto'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApi } from '../../src/app.ts'
import { MAX_AMOUNT_KOBO_DEFAULT } from '../../src/platform/amounts.ts'
import { createPool } from '../../src/platform/db.ts'
import { canonicalRequest, computeSignature, signRequest } from '../../src/client/signing.ts'
import { BODY_LIMIT_BYTES } from '../../src/platform/http.ts'
import { ERROR_CATALOGUE, type ErrorCode } from '../../src/platform/errors.ts'
import { BANK_SECRET, startCollections, type CollectionsHarness } from '../collections/support.ts'
import { confirmedCredit, newPartner, refund, type Partner } from '../refunds/support.ts'
import { PAYEE } from '../support/payments.ts'
import { waitFor } from '../support/wait.ts'

type Json = Record<string, unknown>
interface Operation extends Json {
  operationId: string
  parameters?: { name: string; in: string; example?: unknown }[]
  requestBody?: Json
  responses: Record<string, Json>
}
interface Document {
  paths: Record<string, Record<string, Operation>>
  components: { responses: Record<string, Json>; schemas: Record<string, Json> }
}
interface Answer {
  status: number
  headers: Headers
  body: { error?: string; statusCode?: number } & Json
}

let harness: CollectionsHarness
let partner: Partner
const documents: Record<'partner' | 'bank', Document> = {} as never

beforeAll(async () => {
  harness = await startCollections()
  partner = await newPartner(harness)
  documents.partner = (await (await fetch(`${harness.app.baseUrl}/openapi.json`)).json()) as Document
  documents.bank = (await (await fetch(`${harness.app.baseUrl}/sandbox-bank/openapi.json`)).json()) as Document
})
afterAll(async () => {
  await harness?.close()
  await harness?.app.close()
})

function operationsOf(document: Document): { method: string; path: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ method, path, operation })),
  )
}

function resolved(document: Document, response: Json): Json {
  const name = typeof response.$ref === 'string' ? response.$ref.split('/').pop()! : undefined
  return name ? document.components.responses[name]! : response
}

/** What the document says an operation answers with a status: its codes, and whether its body is ErrorBody. */
function documentedError(
  document: Document,
  operation: Operation,
  status: number,
): { codes: string[]; errorBody: boolean } | undefined {
  const raw = operation.responses[String(status)]
  if (!raw) return undefined
  const response = resolved(document, raw)
  const schema = ((response.content as Record<string, Json> | undefined)?.['application/json']?.schema ?? {}) as Json
  return {
    codes: (response['x-rail-error-codes'] ?? []) as string[],
    errorBody: schema.$ref === '#/components/schemas/ErrorBody',
  }
}

function expectDocumented(document: Document, method: string, path: string, answer: Answer, what: string): void {
  const operation = document.paths[path]![method]!
  const documented = documentedError(document, operation, answer.status)
  const label = `${method.toUpperCase()} ${path} (${what}) answered ${answer.status} ${answer.body.error}`
  expect(documented, `${label}: status not documented`).toBeDefined()
  expect(documented!.errorBody, `${label}: not ErrorBody`).toBe(true)
  expect(documented!.codes, `${label}: code not among the operation's`).toContain(answer.body.error)
}

/** The path with each parameter replaced by the document's example of it. */
function concretePath(path: string, operation: Operation, override?: string): string {
  return path.replace(
    /\{([^}]+)\}/g,
    (_match, name: string) =>
      override ??
      encodeURIComponent(String(operation.parameters?.find((parameter) => parameter.name === name)?.example ?? 'x')),
  )
}

/** A request as the operation's document authenticates it: the partner's signature or API key, or the sandbox bank's signature. */
async function send(
  kind: 'partner' | 'bank',
  path: string,
  operation: Operation,
  method: string,
  body: string | undefined,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const upper = method.toUpperCase()
  const auth: Record<string, string> = {}
  if (kind === 'bank') {
    const timestampS = Math.floor(Date.now() / 1000)
    auth['X-Sandbox-Timestamp'] = String(timestampS)
    auth['X-Sandbox-Signature'] = computeSignature(BANK_SECRET, canonicalRequest(timestampS, upper, path, body ?? ''))
  } else if (JSON.stringify(operation.security).includes('escrowApiKey')) {
    auth['X-API-Key'] = partner.credentials.escrowApiKey
  } else {
    Object.assign(
      auth,
      signRequest({
        keyId: partner.credentials.keyId,
        signingSecret: partner.credentials.signingSecret,
        method: upper,
        pathWithQuery: path,
        body: body ?? '',
      }),
    )
  }
  return fetchAnswer(path, upper, body, { ...auth, ...headers })
}

async function fetchAnswer(
  path: string,
  method: string,
  body: string | undefined,
  headers: Record<string, string>,
): Promise<Answer> {
  const response = await fetch(`${harness.app.baseUrl}${path}`, { method, headers, body })
  const text = await response.text()
  return {
    status: response.status,
    headers: response.headers,
    body: text.startsWith('{') ? (JSON.parse(text) as Answer['body']) : {},
  }
}

const HAS_BODY = new Set(['post', 'put', 'patch', 'delete'])

describe('the documents against the catalogue', () => {
  it("list, on every error response, the operation's codes, each under its catalogue status, with the ErrorBody schema", () => {
    for (const document of Object.values(documents)) {
      for (const { method, path, operation } of operationsOf(document)) {
        const errors = Object.keys(operation.responses).filter((status) => /^[45]/.test(status))
        expect(errors.length, `${method} ${path}`).toBeGreaterThan(0)
        for (const status of errors) {
          const documented = documentedError(document, operation, Number(status))!
          expect(documented.errorBody, `${method} ${path} ${status}`).toBe(true)
          expect(documented.codes.length, `${method} ${path} ${status}`).toBeGreaterThan(0)
          for (const code of documented.codes)
            expect(ERROR_CATALOGUE[code as ErrorCode]?.status, `${method} ${path} ${status} ${code}`).toBe(
              Number(status),
            )
        }
      }
    }
  })

  it('document the refusals of the edge on every operation where they can occur', () => {
    for (const [kind, document] of Object.entries(documents)) {
      for (const { method, path, operation } of operationsOf(document)) {
        const codes = Object.keys(operation.responses).flatMap(
          (status) => documentedError(document, operation, Number(status))?.codes ?? [],
        )
        const expected: ErrorCode[] = [
          'bad_request',
          'unauthorized',
          'validation_error',
          'internal_error',
          'overloaded',
        ]
        if (kind === 'partner') expected.push('rate_limited', 'payload_too_large')
        if (HAS_BODY.has(method))
          expected.push('invalid_json', 'payload_too_large', 'unsupported_media_type', 'request_timeout')
        if (path.includes('{')) expected.push('not_found')
        expect(codes, `${method} ${path}`).toEqual(expect.arrayContaining(expected))
      }
    }
  })
})

describe("the edge's refusals, driven on every operation, answer only what the operation documents", () => {
  it(
    'without credentials, with a malformed or oversized body, another media type, a bad query or a malformed path parameter',
    { timeout: 120_000 },
    async () => {
      for (const kind of ['partner', 'bank'] as const) {
        const document = documents[kind]
        for (const { method, path, operation } of operationsOf(document)) {
          const at = concretePath(path, operation)
          const upper = method.toUpperCase()
          const answers: [string, Answer][] = [['no credentials', await fetchAnswer(at, upper, undefined, {})]]
          answers.push(['a query no route takes', await send(kind, `${at}?unknown%01=1`, operation, method, undefined)])
          if (path.includes('{'))
            answers.push([
              'a malformed path parameter',
              await send(kind, concretePath(path, operation, '%E0%A4%A'), operation, method, undefined),
            ])
          if (HAS_BODY.has(method)) {
            answers.push([
              'malformed JSON',
              await send(kind, at, operation, method, '{"a":', { 'Content-Type': 'application/json' }),
            ])
            answers.push([
              'text/plain',
              await send(kind, at, operation, method, 'hello', { 'Content-Type': 'text/plain' }),
            ])
            answers.push([
              'an empty object',
              await send(kind, at, operation, method, '{}', { 'Content-Type': 'application/json' }),
            ])
            if (kind === 'partner')
              answers.push([
                'a body over the limit',
                await send(kind, at, operation, method, `{"a":"${'x'.repeat(BODY_LIMIT_BYTES)}"}`, {
                  'Content-Type': 'application/json',
                }),
              ])
          }
          for (const [what, answer] of answers) {
            // An empty object is a whole request for a route whose fields are all optional.
            if (what === 'an empty object' && answer.status < 400) continue
            expect(answer.status, `${upper} ${at} (${what})`).toBeGreaterThanOrEqual(400)
            expectDocumented(document, method, path, answer, what)
          }
        }
      }
    },
  )
})

describe('the cases the outside review found undocumented', () => {
  it('POST /api/v1/rail/outbound: another body with a used clientReference is 409 idempotency_conflict (the README example)', async () => {
    expect(
      (await partner.client.post('/api/v1/rail/sandbox/fund-float', { amountKobo: 1_000_000, reference: randomUUID() }))
        .status,
    ).toBe(200)
    const body = {
      clientReference: randomUUID(),
      amountKobo: 10_000,
      beneficiaryAccountNumber: PAYEE.accountNumber,
      beneficiaryBankCode: PAYEE.bankCode,
      beneficiaryAccountName: PAYEE.accountName,
      currency: 'NGN',
    }
    expect((await partner.client.post('/api/v1/rail/outbound', body)).status).toBe(202)
    const conflict = (await partner.client.post('/api/v1/rail/outbound', { ...body, amountKobo: 10_001 })) as Answer
    expect([conflict.status, conflict.body.error]).toEqual([409, 'idempotency_conflict'])
    expectDocumented(documents.partner, 'post', '/api/v1/rail/outbound', conflict, 'reference reused')
  })

  it('POST /api/v1/rail/refunds: 404 for an unknown credit, 409 for a reused reference', async () => {
    const creditId = await confirmedCredit(harness, partner, 20_000)
    const reference = randomUUID()
    expect((await refund(partner.client, { reference, creditId, amountKobo: 1_000 })).status).toBe(201)
    const cases: [Json, number, string][] = [
      [{ reference: randomUUID(), creditId: randomUUID() }, 404, 'not_found'],
      [{ reference, creditId, amountKobo: 1_001 }, 409, 'idempotency_conflict'],
    ]
    for (const [body, status, error] of cases) {
      const answer = (await refund(partner.client, body)) as unknown as Answer
      expect([answer.status, answer.body.error]).toEqual([status, error])
      expectDocumented(documents.partner, 'post', '/api/v1/rail/refunds', answer, error)
    }
  })

  it(
    'the settlement simulator: 404 for an unknown transfer, 409 invalid_state for one no longer in progress',
    { timeout: 60_000 },
    async () => {
      const simulate = async (body: Json) =>
        (await partner.client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', body)) as Answer
      const unknown = await simulate({ transferId: randomUUID(), outcome: 'confirmed' })
      expect([unknown.status, unknown.body.error]).toEqual([404, 'not_found'])
      expectDocumented(
        documents.partner,
        'post',
        '/api/v1/rail/sandbox/simulate-outbound-settlement',
        unknown,
        'unknown transfer',
      )

      expect(
        (
          await partner.client.post('/api/v1/rail/sandbox/fund-float', {
            amountKobo: 1_000_000,
            reference: randomUUID(),
          })
        ).status,
      ).toBe(200)
      const body = {
        clientReference: randomUUID(),
        amountKobo: 5_000,
        beneficiaryAccountNumber: PAYEE.accountNumber,
        beneficiaryBankCode: PAYEE.bankCode,
        beneficiaryAccountName: PAYEE.accountName,
        currency: 'NGN',
      }
      const transfer = (await partner.client.post<{ id: string }>('/api/v1/rail/outbound', body)).body
      await waitFor(
        async () => (await simulate({ transferId: transfer.id, outcome: 'confirmed' })).status === 200,
        20_000,
        'the transfer submitted',
      )
      await waitFor(
        async () =>
          (await partner.client.get<{ state: string }>(`/api/v1/rail/outbound/${transfer.id}`)).body.state ===
          'confirmed',
        20_000,
        'the transfer confirmed',
      )
      const settled = await simulate({ transferId: transfer.id, outcome: 'failed' })
      expect([settled.status, settled.body.error]).toEqual([409, 'invalid_state'])
      expectDocumented(
        documents.partner,
        'post',
        '/api/v1/rail/sandbox/simulate-outbound-settlement',
        settled,
        'transfer confirmed',
      )
    },
  )

  it("the sandbox bank's outcome route: 409 invalid_state for a payout not in progress", async () => {
    const path = `/sandbox-bank/v1/transfers/${randomUUID().replaceAll('-', '')}/outcome`
    const operation = documents.bank.paths['/sandbox-bank/v1/transfers/{reference}/outcome']!.post!
    const answer = await send('bank', path, operation, 'post', JSON.stringify({ outcome: 'confirmed' }), {
      'Content-Type': 'application/json',
    })
    expect([answer.status, answer.body.error]).toEqual([409, 'invalid_state'])
    expectDocumented(
      documents.bank,
      'post',
      '/sandbox-bank/v1/transfers/{reference}/outcome',
      answer,
      'no payout in progress',
    )
  })
})

/** Whether a body is valid by the document's schema of that name (JSON Schema 2020-12, as OpenAPI 3.1 says). */
function documentAccepts(document: Document, schemaName: string, body: unknown): boolean {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema({ $id: 'doc', components: document.components })
  const schema = JSON.parse(
    JSON.stringify(document.components.schemas[schemaName]).replaceAll('"#/components/', '"doc#/components/'),
  ) as Json
  return ajv.validate(schema, body)
}

describe('the document states what the service enforces', () => {
  it('a body the document refuses, the service refuses too, and one it accepts reaches the rules beyond it', async () => {
    const document = documents.partner
    const post = async (path: string, body: Json) => (await partner.client.post(path, body)) as Answer
    const uuid = randomUUID()
    const payout = {
      clientReference: randomUUID(),
      amountKobo: 10_000,
      beneficiaryAccountNumber: PAYEE.accountNumber,
      beneficiaryBankCode: PAYEE.bankCode,
      beneficiaryAccountName: PAYEE.accountName,
      currency: 'NGN',
    }
    const refused: [schema: string, path: string, body: Json, status: number, error: string][] = [
      ['CreateRefundRequest', '/api/v1/rail/refunds', { reference: randomUUID() }, 422, 'validation_error'],
      [
        'CreateRefundRequest',
        '/api/v1/rail/refunds',
        { reference: randomUUID(), creditId: uuid, paymentIntentId: uuid },
        422,
        'validation_error',
      ],
      [
        'SimulateOutboundSettlementRequest',
        '/api/v1/rail/sandbox/simulate-outbound-settlement',
        { outcome: 'confirmed' },
        422,
        'validation_error',
      ],
      [
        'SimulateOutboundSettlementRequest',
        '/api/v1/rail/sandbox/simulate-outbound-settlement',
        { transferId: uuid, clientReference: 'x', outcome: 'confirmed' },
        422,
        'validation_error',
      ],
      ['SetSettlementSettingsRequest', '/api/v1/rail/settlement', { mode: 'bank' }, 422, 'validation_error'],
      [
        'CreateOutboundTransferRequest',
        '/api/v1/rail/outbound',
        { ...payout, currency: 'USD' },
        422,
        'unsupported_currency',
      ],
      [
        'CreateOutboundTransferRequest',
        '/api/v1/rail/outbound',
        { ...payout, amountKobo: MAX_AMOUNT_KOBO_DEFAULT + 1 },
        422,
        'amount_above_limit',
      ],
      [
        'CreateOutboundTransferRequest',
        '/api/v1/rail/outbound',
        { ...payout, narration: 'rent\u0001' },
        422,
        'validation_error',
      ],
      [
        'CreateOutboundTransferRequest',
        '/api/v1/rail/outbound',
        { ...payout, beneficiaryAccountName: 'ADA\u0085EZE' },
        422,
        'validation_error',
      ],
    ]
    for (const [schema, path, body, status, error] of refused) {
      expect(documentAccepts(document, schema, body), `${schema} ${JSON.stringify(body)}`).toBe(false)
      const answer =
        path === '/api/v1/rail/settlement'
          ? ((await partner.client.request('PUT', path, body)) as Answer)
          : await post(path, body)
      expect([answer.status, answer.body.error], `${path} ${JSON.stringify(body)}`).toEqual([status, error])
    }
    const accepted: [string, Json][] = [
      ['CreateRefundRequest', { reference: 'r-1', paymentIntentId: uuid, amountKobo: 100 }],
      ['SimulateOutboundSettlementRequest', { clientReference: 'payout-1', outcome: 'failed' }],
      ['SetSettlementSettingsRequest', { mode: 'float' }],
      ['CreateOutboundTransferRequest', { ...payout, narration: 'November rent' }],
      ['ResolveUnmatchedCreditRequest', { action: 'refund' }],
      ['ResolveUnmatchedCreditRequest', { action: 'assign', target: 'trk_0123456789abcdefghijklmn' }],
    ]
    for (const [schema, body] of accepted)
      expect(documentAccepts(document, schema, body), `${schema} ${JSON.stringify(body)}`).toBe(true)
  })

  it("the maximum amount is the configured one (RAIL_MAX_AMOUNT_KOBO), and every request's currency is NGN", async () => {
    // Building the routes and the document reads nothing from the database.
    const pool = createPool('postgres://contract@127.0.0.1:1/unused', 1, 'rail-contract-test')
    const app = await buildApi({ pool, masterKey: Buffer.alloc(32), maxAmountKobo: 1_234_567 })
    try {
      const configured = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as Document
      const amounts =
        JSON.stringify(configured.components.schemas).match(/"maximum":\d+,[^{}]*"x-rail-amount":true/g) ?? []
      expect(amounts.length).toBeGreaterThan(10)
      for (const amount of amounts) expect(amount).toMatch(/"maximum":1234567,/)
    } finally {
      await app.close()
      await pool.end()
    }
    const currencies = Object.entries(documents.partner.components.schemas)
      .filter(([name]) => name.endsWith('Request'))
      .flatMap(([name, schema]) =>
        Object.entries((schema.properties ?? {}) as Record<string, Json>)
          .filter(([field]) => field === 'currency')
          .map(([, field]) => [name, field] as const),
      )
    expect(currencies.length).toBeGreaterThanOrEqual(5)
    for (const [name, field] of currencies) expect(field.enum, name).toEqual(['NGN'])
  })

  it('ResolveUnmatchedCreditRequest is a flat oneOf of two objects told apart by a required action, with no nested choice', () => {
    const schema = documents.partner.components.schemas.ResolveUnmatchedCreditRequest!
    const variants = schema.oneOf as Json[]
    expect(
      variants.map((variant) => [
        variant.type,
        (variant.required as string[])[0],
        ((variant.properties as Record<string, Json>).action!.enum as string[])[0],
      ]),
    ).toEqual([
      ['object', 'action', 'refund'],
      ['object', 'action', 'assign'],
    ])
    expect(JSON.stringify(schema)).not.toMatch(/anyOf|"oneOf".*"oneOf"/)
  })

  it("the provider notice route documents its JSON body, and the sandbox bank's notices are valid by it", async () => {
    const operation = documents.bank.paths['/providers/{provider}/webhooks']!.post!
    const media = (operation.requestBody?.content as Record<string, Json> | undefined)?.['application/json']
    expect(media?.schema).toEqual({ $ref: '#/components/schemas/ProviderCreditNotice' })
    const account = (
      await partner.client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', { reference: randomUUID() })
    ).body
    const path = `/sandbox-bank/v1/inbound-credits`
    const paid = await send(
      'bank',
      path,
      documents.bank.paths[path]!.post!,
      'post',
      JSON.stringify({ accountNumber: account.virtualAccount, amountKobo: 4_200, payerName: 'Ngozi Eze' }),
      { 'Content-Type': 'application/json' },
    )
    expect(paid.status, JSON.stringify(paid.body)).toBeLessThan(300)
    // The sandbox provider is the bank's client, by its name.
    const creditsPath = `/sandbox-bank/v1/virtual-accounts/${account.virtualAccount}/credits?client=sandbox`
    const listed = await send(
      'bank',
      creditsPath,
      documents.bank.paths['/sandbox-bank/v1/virtual-accounts/{accountNumber}/credits']!.get!,
      'get',
      undefined,
    )
    const notices = (listed.body as { credits: unknown[] }).credits
    expect(notices.length).toBe(1)
    for (const notice of notices)
      expect(documentAccepts(documents.bank, 'ProviderCreditNotice', notice), JSON.stringify(notice)).toBe(true)
  })
})

describe('an unsupported method on a known path', () => {
  it('answers 405 method_not_allowed with Allow listing the methods the path has, signed or not', async () => {
    const cases: [method: string, path: string, allowed: string][] = [
      ['DELETE', '/api/v1/rail/refunds', 'GET, HEAD, POST'],
      ['PUT', '/api/v1/rail/outbound/0193b7e2-4c1a-7d3e-9f20-6a5b8c7d1e42', 'GET, HEAD'],
      ['GET', '/api/v1/rail/sandbox/simulate-outbound-settlement', 'POST'],
      ['POST', '/openapi.json', 'GET, HEAD'],
    ]
    for (const [method, path, allowed] of cases) {
      const unsigned = await fetch(`${harness.app.baseUrl}${path}`, { method })
      const signed = await partner.client.request(method, path)
      for (const [answer, body] of [
        [unsigned, await unsigned.json()],
        [signed, signed.body],
      ] as const) {
        expect([answer.status, answer.headers.get('allow')], `${method} ${path}`).toEqual([405, allowed])
        expect(body, `${method} ${path}`).toEqual({
          statusCode: 405,
          error: 'method_not_allowed',
          message: expect.stringContaining(method),
          details: { allowedMethods: allowed.split(', ') },
        })
      }
    }
  })

  it('a path no route has stays 404 not_found', async () => {
    const answer = await fetch(`${harness.app.baseUrl}/api/v1/rail/no-such-thing`, { method: 'DELETE' })
    expect([answer.status, answer.headers.get('allow'), ((await answer.json()) as { error: string }).error]).toEqual([
      404,
      null,
      'not_found',
    ])
  })
})
