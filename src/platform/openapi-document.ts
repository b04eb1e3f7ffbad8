// What the routes' schemas leave to the document: named schemas under components, real response
// descriptions, the error answers of each operation (openapi-errors.ts) and the headers Rail sends,
// descriptions of common parameters, examples, and the callbacks under `webhooks`.
import { exampleOf, PARAMETER_EXAMPLES, REQUEST_EXAMPLES } from './openapi-examples.ts'
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_KEPT_S, IDEMPOTENCY_KEY_MAX_CHARS } from './idempotency-keys.ts'
import { finishErrors, ROUTE_FACTS_KEYWORD, sharedErrorResponses, type RouteFacts } from './openapi-errors.ts'
import { stateDocumentedRules, stateRefusedCharacters, type DocumentSettings } from './openapi-statements.ts'
import { partnerWebhooks } from './openapi-webhooks.ts'

export type DocumentKind = 'partner' | 'bank'

type Json = Record<string, unknown>
export interface OpenApiDocument extends Json {
  paths: Record<string, Record<string, Operation>>
  components: {
    schemas?: Record<string, Json>
    headers?: Record<string, Json>
    parameters?: Record<string, Json>
    responses?: Record<string, Json>
    securitySchemes?: Json
  }
  webhooks?: Record<string, Record<string, Operation>>
}
interface Operation extends Json {
  operationId?: string
  summary?: string
  parameters?: Json[]
  requestBody?: { content: Record<string, Json> }
  responses: Record<string, Json>
}

const SCHEMAS = '#/components/schemas/'

/** Statements answer CSV when asked with Accept: text/csv. */
const CSV_OPERATIONS = new Set(['getWalletStatement', 'getFloatStatement', 'getCollectionsStatement'])

function describeCsv(operation: Operation): void {
  const success = operation.responses['200'] as { content?: Record<string, Json>; headers?: Json } | undefined
  if (!success?.content) return
  success.content['text/csv'] = {
    schema: { type: 'string', description: 'A header line, then one line per movement (RFC 4180 quoting)' },
    example:
      'id,postedAt,cause,direction,amountKobo,balanceAfterKobo,objectType,objectId,objectReference,narration\r\n' +
      '0193b7e2-4c1a-7d3e-9f20-6a5b8c7d1e42,2026-11-25T09:30:00.000Z,payout,debit,2500000,97500000,outbound_transfer,0193b7e2-5d2b-7e4f-8a31-7b6c9d8e2f53,payout-2026-11-25-0007,November rent\r\n',
  }
  success.headers = {
    ...success.headers,
    'X-Next-Cursor': {
      description: 'CSV answers only: the cursor of the next page; absent on the last page',
      schema: { type: 'string' },
    },
  }
}

/** The header every state-changing operation takes (docs/api.md, "Replays and idempotency"). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    `A key of the client's choosing (a UUID, say) that makes a retry safe: the first answer is kept for ${IDEMPOTENCY_KEY_KEPT_S / 3600} hours, and the same request sent again with the key ` +
    'answers it again with `Idempotent-Replayed: true` and does nothing twice. The same key with another method, path or body is 409 `idempotency_conflict`; while the first ' +
    'request is still being worked, 409 `request_in_progress` (retry). An error that did nothing keeps nothing: the key may be sent again. ' +
    'Send one key per logical request and the same key on each of its retries; without a key a request is run each time it arrives.',
  schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_CHARS, pattern: '^[ -~]+$' },
  example: '5f0c7d3e-9a41-4b8e-8c2d-1e6f3a9b7c05',
}

/** Descriptions of the parameters many routes share, where a route gives none. */
const COMMON_PARAMETERS: Record<string, string> = {
  limit: 'How many items a page holds',
  cursor: 'The `nextCursor` of the previous page; absent for the first (newest) page',
  id: "The object's id",
  reference: 'The reference the object was created with',
  trackingId: "The virtual account's tracking id (`trk_…`)",
  ref: "The escrow's ref, as returned at creation",
  brr: 'A BRR: `BRR` + 17 digits, the last a Luhn check digit',
  status: 'Only objects in this status',
  state: 'Only objects in this state',
  clientReference: 'Only the object with this reference',
  customerReference: 'Only the wallet with this customer reference',
  customerId: 'The wallet handle (`walletId`)',
  from: 'Only movements posted at or after this time',
  to: 'Only movements posted before this time',
  type: 'Only events of this type, e.g. `transfer.confirmed`',
  objectType: 'Only events of this kind of object, e.g. `outbound_transfer`',
  objectId: 'Only events of this object',
  deliveryStatus: 'Only events whose delivery is in this status',
  origin: 'Only payouts of this origin',
  provider: "The provider's name, e.g. `sandbox`",
  accountNumber: 'A 10-digit NUBAN',
}

const HEADERS = {
  XRequestId: {
    description:
      "The request's id: the caller's `X-Request-Id` when it looks like an id, else a new UUID. Quote it when reporting a problem.",
    schema: { type: 'string' },
  },
  RetryAfter: {
    description: 'Whole seconds to wait before retrying the same request',
    schema: { type: 'integer', minimum: 1 },
  },
  IdempotentReplayed: {
    description:
      '`true` when this answer replays the result of an earlier request with the same reference or `Idempotency-Key`; absent on the first answer',
    schema: { type: 'string', enum: ['true'] },
  },
  RateLimitLimit: { description: 'Requests allowed per window for this caller', schema: { type: 'integer' } },
  RateLimitRemaining: { description: 'Requests left in the current window', schema: { type: 'integer' } },
  RateLimitReset: { description: 'Seconds until the window resets', schema: { type: 'integer' } },
}
const ref = (kind: 'headers' | 'responses' | 'schemas', name: string) => ({ $ref: `#/components/${kind}/${name}` })

export function finishDocument(
  document: OpenApiDocument,
  kind: DocumentKind,
  settings: DocumentSettings,
): OpenApiDocument {
  const schemas = (document.components.schemas ??= {})
  // What the service enforces beyond the validation schemas, before titled schemas become components.
  stateDocumentedRules(document.paths, settings)
  // The shared input rules are the partner API's; the sandbox bank takes what it is sent.
  if (kind === 'partner')
    for (const item of Object.values(document.paths))
      for (const operation of Object.values(item)) stateRefusedCharacters(operation)
  hoistTitled(document.paths, schemas)
  const webhooks = kind === 'partner' ? webhooksWithExamples(schemas) : undefined
  const streamed = eventStreamExample(webhooks)
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      // Every state-changing operation may answer a replay; those without a reference take the key.
      const idempotency = (operation[ROUTE_FACTS_KEYWORD] as RouteFacts | undefined)?.idempotencyKey
      if (idempotency !== undefined && idempotency !== 'reference')
        operation.parameters = [...(operation.parameters ?? []), { $ref: '#/components/parameters/IdempotencyKey' }]
      finishOperation(operation, `${method} ${path}`, document, streamed, idempotency !== undefined)
      finishErrors(method, path, operation)
    }
  }
  // Only the responses and headers a document uses: an unused component is a lint warning.
  const usedByPaths = JSON.stringify(document.paths)
  document.components.responses = Object.fromEntries(
    Object.entries(sharedErrorResponses()).filter(([name]) => usedByPaths.includes(`#/components/responses/${name}"`)),
  )
  const used = JSON.stringify(document)
  document.components.headers = Object.fromEntries(
    Object.entries(HEADERS).filter(([name]) => used.includes(`#/components/headers/${name}"`)),
  )
  if (used.includes('#/components/parameters/IdempotencyKey"'))
    document.components.parameters = { IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER }
  if (webhooks) document.webhooks = webhooks
  return document
}

/** The callbacks, each body with an example made from its schema. */
function webhooksWithExamples(schemas: Record<string, Json>): OpenApiDocument['webhooks'] {
  const webhooks = partnerWebhooks() as unknown as NonNullable<OpenApiDocument['webhooks']>
  for (const item of Object.values(webhooks)) {
    for (const operation of Object.values(item)) {
      const media = operation.requestBody?.content['application/json']
      if (media) media.example = exampleOf(media.schema as Json, schemas)
    }
  }
  return webhooks
}

/** A server-sent event as the event stream sends it: the event's id, and the body a delivery sends. */
function eventStreamExample(webhooks: OpenApiDocument['webhooks']): string {
  const body = webhooks?.['transfer.confirmed']?.post?.requestBody?.content['application/json']?.example as
    { id?: string } | undefined
  return body ? `id: ${body.id}\ndata: ${JSON.stringify(body)}\n\n` : ': heartbeat\n\n'
}

function finishOperation(
  operation: Operation,
  route: string,
  document: OpenApiDocument,
  streamed: string,
  replayable: boolean,
): void {
  const name = pascal(operation.operationId ?? route)
  const schemas = document.components.schemas!
  const body = operation.requestBody?.content['application/json']
  if (body) {
    body.schema = nameSchema(body.schema as Json, `${name}Request`, schemas, `The body of ${operation.operationId}`)
    body.example ??= REQUEST_EXAMPLES[operation.operationId ?? ''] ?? exampleOf(body.schema as Json, schemas)
  }
  for (const parameter of operation.parameters ?? []) {
    if ('$ref' in parameter) continue
    const parameterName = String(parameter.name)
    parameter.description ??= COMMON_PARAMETERS[parameterName]
    parameter.example ??=
      PARAMETER_EXAMPLES[parameterName] ?? exampleOf(parameter.schema as Json, schemas, parameterName)
  }
  for (const [status, response] of Object.entries(operation.responses)) {
    if (/^2/.test(status)) finishSuccess(operation, name, status, response, schemas, streamed, replayable)
  }
  if (CSV_OPERATIONS.has(operation.operationId ?? '')) describeCsv(operation)
}

function finishSuccess(
  operation: Operation,
  name: string,
  status: string,
  response: Json,
  schemas: Record<string, Json>,
  streamed: string,
  replayable: boolean,
): void {
  const content = response.content as Record<string, Json> | undefined
  const stream = content?.['text/event-stream']
  if (stream) stream.example ??= streamed
  const media = content?.['application/json']
  if (media) {
    media.schema = nameSchema(media.schema as Json, `${name}Response`, schemas, undefined)
    media.example ??= exampleOf(media.schema as Json, schemas)
  }
  const named = media ? schemas[String((media.schema as Json).$ref ?? '').slice(SCHEMAS.length)] : undefined
  if (response.description === 'Default Response' || response.description === undefined) {
    response.description = successDescription(operation, status, named, schemas)
    if (named && named.description === undefined) named.description = response.description
  }
  const headers: Json = { 'X-Request-Id': ref('headers', 'XRequestId') }
  if (replayable) headers['Idempotent-Replayed'] = ref('headers', 'IdempotentReplayed')
  response.headers = { ...headers, ...(response.headers as Json | undefined) }
}

function successDescription(
  operation: Operation,
  status: string,
  schema: Json | undefined,
  schemas: Record<string, Json>,
): string {
  if (typeof schema?.description === 'string') return schema.description
  const properties = (schema?.properties ?? {}) as Record<string, Json>
  const itemName = componentName((properties.data?.items as Json | undefined)?.$ref)
  if (itemName && 'nextCursor' in properties)
    return `A page of ${itemName} objects, newest first; \`nextCursor\` is the \`cursor\` of the next page (null on the last)`
  const wrapped = Object.entries(properties).find(([, property]) => componentName(property.$ref))
  const wrappedDescription = wrapped && schemas[componentName(wrapped[1].$ref)!]?.description
  if (typeof wrappedDescription === 'string') return `${wrappedDescription} (in \`${wrapped![0]}\`)`
  const prefix =
    status === '201' ? 'Created: ' : status === '202' ? 'Accepted (the outcome follows asynchronously): ' : ''
  const fields = Object.keys(properties)
    .map((field) => `\`${field}\``)
    .join(', ')
  return `${prefix}${operation.summary ?? operation.operationId}${fields ? `. The answer: ${fields}` : ''}`
}

function componentName(reference: unknown): string | undefined {
  return typeof reference === 'string' && reference.startsWith(SCHEMAS) ? reference.slice(SCHEMAS.length) : undefined
}

/** A body or answer without a title of its own is named after its operation, so that every one is a component. */
function nameSchema(schema: Json, name: string, schemas: Record<string, Json>, description: string | undefined): Json {
  if (!schema || typeof schema.$ref === 'string') return schema
  if (schema.type !== 'object' && !schema.anyOf && !schema.oneOf) return schema
  schemas[name] = { title: name, ...(description && !schema.description ? { description } : {}), ...schema }
  return { $ref: `${SCHEMAS}${name}` }
}

function pascal(text: string): string {
  return text
    .replace(/[^A-Za-z0-9]+(.)?/g, (_match, next: string | undefined) => (next ?? '').toUpperCase())
    .replace(/^./, (first) => first.toUpperCase())
}

const NOT_SCHEMAS = new Set(['example', 'examples', 'enum', 'const', 'default'])

/**
 * Every schema with a title becomes components.schemas[title], referred to by $ref, children
 * first. A title already taken by a different schema is left inline (a test refuses that).
 */
function hoistTitled(node: unknown, schemas: Record<string, Json>): unknown {
  if (Array.isArray(node)) return node.map((child) => hoistTitled(child, schemas))
  if (typeof node !== 'object' || node === null) return node
  const object = node as Json
  for (const [key, value] of Object.entries(object)) {
    if (!NOT_SCHEMAS.has(key)) object[key] = hoistTitled(value, schemas)
  }
  const title = object.title
  if (typeof title !== 'string' || !isSchema(object)) return object
  const existing = schemas[title]
  if (existing && JSON.stringify(existing) !== JSON.stringify(object)) return object
  schemas[title] = object
  return { $ref: `${SCHEMAS}${title}` }
}

function isSchema(object: Json): boolean {
  return 'type' in object || 'properties' in object || 'anyOf' in object || 'oneOf' in object
}
