// The served OpenAPI documents as tools read them: Redocly's recommended ruleset (redocly.yaml)
// finds nothing in either, and every operation carries what an SDK generator and a reader need —
// an operationId, a description, examples, named schemas, the headers and errors Rail sends.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signTryItRequest, type TryItRequest } from '../../src/platform/openapi-try-it.ts'
import { startTestApp, type TestApp } from '../support/app.ts'

type Json = Record<string, unknown>
interface Operation extends Json {
  operationId?: string
  summary?: string
  description?: string
  tags?: string[]
  security?: Json[]
  parameters?: Json[]
  requestBody?: { content: Record<string, Json> }
  responses: Record<string, Json>
}
interface Document extends Json {
  servers: { url: string }[]
  tags: { name: string; description?: string }[]
  paths: Record<string, Record<string, Operation>>
  webhooks: Record<string, Record<string, Operation>>
  components: {
    schemas: Record<string, Json>
    responses: Record<string, Json>
    headers: Record<string, Json>
    parameters?: Record<string, Json>
    securitySchemes: Record<string, Json>
  }
}

const REPOSITORY = join(import.meta.dirname, '..', '..')
const REDOCLY = join(REPOSITORY, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js')
const BANK_PATHS = /^\/(sandbox-bank|providers)\//

let app: TestApp
let workDir: string
const documents: { partner?: Document; bank?: Document } = {}

beforeAll(async () => {
  app = await startTestApp()
  workDir = await mkdtemp(join(tmpdir(), 'rail-openapi-'))
  documents.partner = (await (await fetch(`${app.baseUrl}/openapi.json`)).json()) as Document
  documents.bank = (await (await fetch(`${app.baseUrl}/sandbox-bank/openapi.json`)).json()) as Document
})
afterAll(async () => {
  await app?.close()
  if (workDir) await rm(workDir, { recursive: true, force: true })
})

function partner(): Document {
  return documents.partner!
}

function operationsOf(document: Document, section: 'paths' | 'webhooks' = 'paths'): [string, Operation][] {
  return Object.entries(document[section] ?? {}).flatMap(([path, item]) =>
    Object.entries(item).map(
      ([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as [string, Operation],
    ),
  )
}

/** Follows a local $ref (`#/components/…`) to what it names. */
function resolve<T = Json>(document: Document, node: unknown): T {
  const target = node as { $ref?: string }
  if (typeof target?.$ref !== 'string') return node as T
  return target.$ref
    .slice(2)
    .split('/')
    .reduce<unknown>((at, key) => (at as Json)[key], document) as T
}

/** Schemas under `at` that still carry a title (examples, whose data may hold a `title` field, are skipped). */
function titledSchemasIn(at: unknown, path = ''): string[] {
  if (typeof at !== 'object' || at === null) return []
  const node = at as Json
  const here =
    typeof node.title === 'string' && ('type' in node || 'properties' in node) ? [`${path}: ${node.title}`] : []
  const below = Object.entries(node).filter(([key]) => key !== 'example' && key !== 'examples')
  return [...here, ...below.flatMap(([key, value]) => titledSchemasIn(value, `${path}/${key}`))]
}

interface LintReport {
  totals: { errors: number; warnings: number }
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[]
}

async function lint(document: Document, name: string): Promise<LintReport> {
  const file = join(workDir, `${name}.json`)
  await writeFile(file, JSON.stringify(document))
  // The CLI exits 1 when it finds errors; its JSON report says what they are either way.
  const run = promisify(execFile)(
    process.execPath,
    [REDOCLY, 'lint', '--config', join(REPOSITORY, 'redocly.yaml'), '--format', 'json', file],
    {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 64 * 1024 * 1024,
    },
  )
  const { stdout } = await run.catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }))
  return JSON.parse(stdout) as LintReport
}

function problemsOf(report: LintReport): string[] {
  return report.problems.map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`)
}

describe('Redocly (recommended ruleset, redocly.yaml)', () => {
  it('the partner document: 0 errors, 0 warnings', { timeout: 60_000 }, async () => {
    const report = await lint(partner(), 'partner')
    expect(problemsOf(report)).toEqual([])
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
  })

  it('the sandbox bank document: 0 errors, 0 warnings', { timeout: 60_000 }, async () => {
    const report = await lint(documents.bank!, 'bank')
    expect(problemsOf(report)).toEqual([])
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 })
  })

  it('a document with a fault is caught (the lint can fail)', { timeout: 60_000 }, async () => {
    const broken = structuredClone(partner())
    const [, first] = operationsOf(broken)[0]!
    delete first.operationId
    const report = await lint(broken, 'broken')
    expect(report.problems.some((problem) => problem.ruleId === 'operation-operationId')).toBe(true)
  })
})

describe('every operation', () => {
  it('has a unique camelCase operationId, a summary, a description and a declared, described tag', () => {
    const declared = new Map(partner().tags.map((tag) => [tag.name, tag.description]))
    const ids = new Set<string>()
    for (const [route, operation] of [...operationsOf(partner()), ...operationsOf(documents.bank!)]) {
      expect(operation.operationId, route).toMatch(/^[a-z][a-zA-Z0-9]+$/)
      ids.add(operation.operationId!)
      expect(operation.summary, route).toBeTruthy()
      expect(operation.description, route).toBeTruthy()
      expect(operation.description, route).not.toBe(operation.summary)
    }
    for (const [route, operation] of operationsOf(partner())) {
      for (const tag of operation.tags ?? []) expect(declared.get(tag), `${route} tag ${tag}`).toBeTruthy()
    }
    expect(ids.size).toBe(operationsOf(partner()).length + operationsOf(documents.bank!).length)
  })

  it('is authenticated: the HMAC signature or the escrow API key, each explained', () => {
    const schemes = partner().components.securitySchemes
    for (const [route, operation] of operationsOf(partner())) {
      const expected = route.includes('/api/v1/escrow/')
        ? [{ escrowApiKey: [] }]
        : [{ railKeyId: [], railTimestamp: [], railSignature: [] }]
      expect(operation.security, route).toEqual(expected)
    }
    expect(schemes.railKeyId!.description).toMatch(/canonical string/)
    expect(schemes.railKeyId!.description).toMatch(/X-Rail-Timestamp/)
    expect(schemes.escrowApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' })
  })

  it('has a JSON example of its body and of every success answer, and every parameter described with an example', () => {
    const missing: string[] = []
    for (const [route, operation] of operationsOf(partner())) {
      const body = operation.requestBody?.content['application/json']
      if (operation.requestBody && body?.example === undefined) missing.push(`${route} request body`)
      for (const declared of operation.parameters ?? []) {
        const parameter = resolve(partner(), declared)
        if (!parameter.description) missing.push(`${route} parameter ${String(parameter.name)} description`)
        if (parameter.example === undefined) missing.push(`${route} parameter ${String(parameter.name)} example`)
      }
      const successes = Object.entries(operation.responses).filter(([status]) => status.startsWith('2'))
      expect(successes.length, route).toBeGreaterThan(0)
      for (const [status, response] of successes) {
        const content = (response.content ?? {}) as Record<string, Json>
        if (Object.keys(content).length === 0) missing.push(`${route} ${status} content`)
        for (const [type, media] of Object.entries(content))
          if (media.example === undefined) missing.push(`${route} ${status} ${type} example`)
      }
    }
    expect(missing).toEqual([])
  })

  it('takes the Idempotency-Key header when it changes state without a reference, and may answer a replay', () => {
    const referenceCreates = new Set([
      'createEscrow',
      'createInvoice',
      'createOutboundTransfer',
      'createPaymentIntent',
      'createRefund',
      'createVirtualAccount',
      'createWallet',
      'creditWallet',
      'debitWallet',
      'fundSandboxFloat',
      'provisionFboAccount',
      'transferBetweenWallets',
      'transferWalletToBank',
    ])
    const keyed: string[] = []
    for (const [route, operation] of operationsOf(partner())) {
      const parameters = (operation.parameters ?? []).map((parameter) => resolve(partner(), parameter))
      const takesKey = parameters.some((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key')
      if (route.startsWith('GET ')) {
        expect(takesKey, route).toBe(false)
        continue
      }
      expect(takesKey, route).toBe(!referenceCreates.has(operation.operationId!))
      if (takesKey) keyed.push(operation.operationId!)
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))![1]
      expect(Object.keys((success.headers ?? {}) as Json), route).toContain('Idempotent-Replayed')
      if (takesKey)
        expect(resolve<Json>(partner(), operation.responses['409'])['x-rail-error-codes'], route).toContain(
          'idempotency_conflict',
        )
    }
    expect(keyed).toEqual(
      expect.arrayContaining([
        'updateSettings',
        'redeliverEvent',
        'simulateInboundCredit',
        'resolveUnmatchedCredit',
        'releaseEscrow',
        'advanceSandboxClock',
      ]),
    )
    expect(partner().components.parameters?.['IdempotencyKey']).toMatchObject({
      in: 'header',
      name: 'Idempotency-Key',
      schema: { maxLength: 255 },
    })
  })

  it('describes its answers: no "Default Response", X-Request-Id on each, 429 and 500, Retry-After on 429 and 503', () => {
    const document = partner()
    for (const [route, operation] of operationsOf(document)) {
      for (const [status, raw] of Object.entries(operation.responses)) {
        const response = resolve(document, raw)
        expect(response.description, `${route} ${status}`).toBeTruthy()
        expect(response.description, `${route} ${status}`).not.toBe('Default Response')
        expect(Object.keys((response.headers ?? {}) as Json), `${route} ${status}`).toContain('X-Request-Id')
      }
      expect(Object.keys(operation.responses), route).toEqual(expect.arrayContaining(['429', '500', '503']))
      for (const status of ['429', '503'])
        expect(Object.keys(resolve<{ headers: Json }>(document, operation.responses[status]).headers), route).toContain(
          'Retry-After',
        )
    }
    const create = document.paths['/api/v1/rail/outbound']!.post!
    expect(Object.keys(create.responses['202']!.headers as Json)).toContain('Idempotent-Replayed')
  })

  it('refers to named schemas: every body and JSON answer is a component, no titled schema left inline', () => {
    const document = partner()
    for (const [route, operation] of operationsOf(document)) {
      const media = [
        operation.requestBody?.content['application/json'],
        ...Object.values(operation.responses).map(
          (response) => (resolve(document, response).content as Record<string, Json> | undefined)?.['application/json'],
        ),
      ]
      for (const entry of media.filter((candidate): candidate is Json => candidate !== undefined)) {
        const reference = (entry.schema as { $ref?: string }).$ref
        expect(reference, route).toMatch(/^#\/components\/schemas\/[A-Za-z0-9]+$/)
        expect(resolve(document, entry.schema), `${route} ${reference}`).toBeTruthy()
      }
    }
    expect(titledSchemasIn(document.paths)).toEqual([])
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'OutboundTransfer',
        'PaymentIntent',
        'Invoice',
        'Escrow',
        'ErrorBody',
        'Event',
        'Refund',
        'Settlement',
        'Wallet',
      ]),
    )
  })
})

describe('the documents', () => {
  it('keep the sandbox bank and provider routes out of the partner reference, in their own document', () => {
    const partnerPaths = Object.keys(partner().paths)
    const bankPaths = Object.keys(documents.bank!.paths)
    expect(partnerPaths.filter((path) => BANK_PATHS.test(path))).toEqual([])
    expect(bankPaths.length).toBeGreaterThan(0)
    expect(bankPaths.every((path) => BANK_PATHS.test(path))).toBe(true)
    expect(bankPaths).toEqual(
      expect.arrayContaining([
        '/sandbox-bank/v1/transfers',
        '/sandbox-bank/v1/name-enquiry',
        '/providers/{provider}/webhooks',
      ]),
    )
    for (const [route, operation] of operationsOf(documents.bank!))
      expect(operation.security, route).toEqual([{ sandboxTimestamp: [], sandboxSignature: [] }])
  })

  it('name the server that serves them', () => {
    expect(partner().servers).toEqual([{ url: app.baseUrl, description: expect.any(String) }])
    expect(documents.bank!.servers[0]!.url).toBe(app.baseUrl)
  })

  it('list every event of docs/webhooks.md under webhooks, each with its payload, signature headers and an example', async () => {
    const page = await readFile(join(REPOSITORY, 'docs', 'webhooks.md'), 'utf8')
    const table = page.slice(page.indexOf('## Event payloads'), page.indexOf('## The event API'))
    const documented = new Set(
      [...table.matchAll(/^\| (.+?) \|/gm)].flatMap((row) =>
        [...row[1]!.matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((name) => name[1]!),
      ),
    )
    expect(documented.size).toBeGreaterThan(15)
    const webhooks = partner().webhooks
    expect(Object.keys(webhooks).sort()).toEqual([...documented].sort())
    for (const [route, operation] of operationsOf(partner(), 'webhooks')) {
      const media = operation.requestBody!.content['application/json']!
      const example = media.example as { event: string; data: unknown }
      expect(example.event, route).toBe(route.split(' ')[1])
      expect(example.data, route).toBeTruthy()
      expect((operation.parameters ?? []).map((parameter) => parameter.name)).toEqual(
        expect.arrayContaining(['x-rail-signature', 'webhook-signature', 'webhook-id']),
      )
    }
  })

  it('/docs shows the partner document', async () => {
    const page = await fetch(`${app.baseUrl}/docs/`)
    expect(page.status).toBe(200)
    const shown = (await (await fetch(`${app.baseUrl}/docs/json`)).json()) as Document
    expect(Object.keys(shown.paths).sort()).toEqual(Object.keys(partner().paths).sort())
    expect(shown.servers[0]!.url).toBe(app.baseUrl)
  })

  it('"Try it out" signs in the browser: the function the page runs makes a request the server accepts, without sending the secret', async () => {
    const script = await (await fetch(`${app.baseUrl}/docs/static/swagger-initializer.js`)).text()
    expect(script).toContain('requestInterceptor')
    expect(script).toContain('X-Rail-Signature')
    // The page has the function's source alone: rebuilt from it, it must work without this module.
    const standalone = new Function(`return ${signTryItRequest.toString()}`)() as typeof signTryItRequest
    const { credentials } = await app.newPartner()
    const body = JSON.stringify({ callbackUrl: 'https://partner.example.ng/hooks/rail' })
    const request: TryItRequest = {
      url: `${app.baseUrl}/api/v1/rail/settings`,
      method: 'patch',
      headers: {
        'X-Rail-Key-Id': credentials.keyId,
        'X-Rail-Timestamp': 'auto',
        'X-Rail-Signature': credentials.signingSecret,
        'Content-Type': 'application/json',
      },
      body,
    }
    const signed = await standalone(request)
    expect(signed.headers['X-Rail-Signature']).toMatch(/^v1=[0-9a-f]{64}$/)
    expect(Object.values(signed.headers)).not.toContain(credentials.signingSecret)
    const response = await fetch(signed.url, { method: 'PATCH', headers: signed.headers, body: signed.body as string })
    expect(response.status).toBe(200)
    expect(((await response.json()) as { callbackUrl: string }).callbackUrl).toBe(
      'https://partner.example.ng/hooks/rail',
    )
    // A request the page signed, sent with a body other than the one signed, is refused.
    const tampered = await fetch(signed.url, {
      method: 'PATCH',
      headers: signed.headers,
      body: JSON.stringify({ callbackUrl: null }),
    })
    expect(tampered.status).toBe(401)
  })

  it('"Try it out" leaves requests without signing credentials alone (the document itself, the escrow API)', async () => {
    const request: TryItRequest = {
      url: `${app.baseUrl}/api/v1/escrow/partner`,
      method: 'GET',
      headers: { 'X-API-Key': 'rk_test_x' },
    }
    expect(await signTryItRequest(structuredClone(request))).toEqual(request)
  })
})
