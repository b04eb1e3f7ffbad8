// The error answers of each operation in the OpenAPI documents: the codes its route declares
// (schemas.ts errorResponses) and the refusals the HTTP edge gives wherever they apply
// (docs/errors.md, "Order of checks"), grouped by status, each status described by its codes
// (also listed in `x-rail-error-codes`) and answered with ErrorBody, so that a generated client
// parses every error a route can give.
import { ERROR_CATALOGUE, type ErrorCode } from './errors.ts'
import type { IdempotencyKeyMode } from './idempotency-keys.ts'
import { codesOfStatus, ERROR_CODES_KEYWORD } from './schemas.ts'

type Json = Record<string, unknown>

/** On an operation while the document is built: what decides the edge's refusals (openapi.ts sets it, finishErrors removes it). */
export const ROUTE_FACTS_KEYWORD = 'x-rail-route'

export interface RouteFacts {
  /** The route checks credentials (a partner's signature or API key, the sandbox bank's signature). */
  authenticated: boolean
  /** The route runs Rail's shared input rules after credentials (every partner route does). */
  sharedInputRules: boolean
  /** The route counts against a rate limit. */
  rateLimited: boolean
  /** A state-changing route of the partner API: how it takes the Idempotency-Key header (idempotency-keys.ts). */
  idempotencyKey?: IdempotencyKeyMode
}

/** Methods whose requests Fastify reads a body for, whatever the route's schema says. */
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete'])

const STATUS_TEXT: Record<string, string> = {
  400: 'Malformed request',
  401: 'Missing or invalid credentials',
  403: 'Not allowed',
  404: 'No such object for this caller',
  408: 'Request timeout',
  409: 'Conflict with the stored state',
  413: 'Body too large',
  415: 'Unsupported media type',
  422: 'The request breaks a rule',
  429: 'Too many requests',
  500: 'Internal error',
  502: 'The provider gave no usable answer',
  503: 'Unavailable or overloaded',
}

const ref = (kind: 'headers' | 'responses' | 'schemas', name: string) => ({ $ref: `#/components/${kind}/${name}` })

/** The refusals the edge gives an operation, before or around its handler. */
function edgeCodes(method: string, operation: Json, facts: RouteFacts): ErrorCode[] {
  // A malformed URL, a failure of Rail's own, and a database that cannot serve in time (or no room at admission).
  const codes: ErrorCode[] = ['bad_request', 'internal_error', 'overloaded']
  if (facts.authenticated) codes.push('unauthorized')
  // Credentials are checked before the body is read: a declared oversize is refused on any method.
  if (facts.sharedInputRules) codes.push('payload_too_large', 'validation_error')
  if (facts.rateLimited) codes.push('rate_limited')
  // A key with another request is a conflict; one claimed before the handler may still be worked.
  if (facts.idempotencyKey !== undefined && facts.idempotencyKey !== 'reference') codes.push('idempotency_conflict')
  if (facts.idempotencyKey === 'claimed-before') codes.push('request_in_progress')
  if (operation.parameters || operation.requestBody) codes.push('validation_error')
  if (BODY_METHODS.has(method))
    codes.push('invalid_json', 'payload_too_large', 'unsupported_media_type', 'request_timeout')
  return codes
}

/** The codes an error response's schema names; a response without them stands for every code of its status. */
function declaredCodes(status: string, response: Json): ErrorCode[] {
  const schema = ((response.content as Record<string, Json> | undefined)?.['application/json']?.schema ?? {}) as Json
  const codes = schema[ERROR_CODES_KEYWORD]
  return Array.isArray(codes) ? (codes as ErrorCode[]) : codesOfStatus(Number(status))
}

/**
 * Replaces an operation's error responses with one per status its codes have: the route's own,
 * not_found for a path naming an object, and the edge's.
 */
export function finishErrors(
  method: string,
  path: string,
  operation: { responses: Record<string, Json> } & Json,
): void {
  const facts = operation[ROUTE_FACTS_KEYWORD] as RouteFacts | undefined
  delete operation[ROUTE_FACTS_KEYWORD]
  const codes = new Set<ErrorCode>()
  for (const [status, response] of Object.entries(operation.responses)) {
    if (/^[45]/.test(status)) {
      for (const code of declaredCodes(status, response)) codes.add(code)
      delete operation.responses[status]
    }
  }
  // A path naming an object answers 404 for an unknown one (or another partner's).
  if (path.includes('{')) codes.add('not_found')
  for (const code of edgeCodes(
    method,
    operation,
    facts ?? { authenticated: true, sharedInputRules: true, rateLimited: true },
  ))
    codes.add(code)
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of Object.keys(ERROR_CATALOGUE) as ErrorCode[]) {
    if (codes.has(code))
      byStatus.set(ERROR_CATALOGUE[code].status, [...(byStatus.get(ERROR_CATALOGUE[code].status) ?? []), code])
  }
  for (const status of [...byStatus.keys()].sort())
    operation.responses[String(status)] = errorResponse(status, byStatus.get(status)!)
}

/** The shared responses whose codes never vary, referred to where an operation's codes for the status are exactly theirs. */
const SHARED: Record<string, { status: number; codes: ErrorCode[] }> = {
  RateLimited: { status: 429, codes: ['rate_limited'] },
  NotFound: { status: 404, codes: ['not_found'] },
  InternalError: { status: 500, codes: ['internal_error'] },
  Unavailable: { status: 503, codes: ['overloaded'] },
}

function errorResponse(status: number, codes: ErrorCode[]): Json {
  const shared = Object.entries(SHARED).find(
    ([, entry]) => entry.status === status && entry.codes.join() === codes.join(),
  )
  return shared ? ref('responses', shared[0]) : describedError(status, codes)
}

export function sharedErrorResponses(): Record<string, Json> {
  return Object.fromEntries(
    Object.entries(SHARED).map(([name, entry]) => [name, describedError(entry.status, entry.codes)]),
  )
}

function describedError(status: number, codes: ErrorCode[]): Json {
  const headers: Json = { 'X-Request-Id': ref('headers', 'XRequestId') }
  if (status === 429)
    Object.assign(headers, {
      'Retry-After': ref('headers', 'RetryAfter'),
      'RateLimit-Limit': ref('headers', 'RateLimitLimit'),
      'RateLimit-Remaining': ref('headers', 'RateLimitRemaining'),
      'RateLimit-Reset': ref('headers', 'RateLimitReset'),
    })
  if (status === 503) headers['Retry-After'] = ref('headers', 'RetryAfter')
  if (codes.includes('request_in_progress')) {
    headers['Retry-After'] = {
      description: 'On `request_in_progress` only: seconds before asking again',
      schema: { type: 'integer', minimum: 1 },
    }
  }
  return {
    description: `${STATUS_TEXT[status] ?? 'Error'}: \`ErrorBody\` with \`error\` ${codes.map((code) => `\`${code}\``).join(', ')}`,
    headers,
    content: { 'application/json': { schema: ref('schemas', 'ErrorBody'), example: errorExample(status, codes[0]!) } },
    [ERROR_CODES_KEYWORD]: codes,
  }
}

function errorExample(status: number, code: ErrorCode): Json {
  const body: Json = { statusCode: status, error: code, message: ERROR_CATALOGUE[code].why }
  if (code === 'validation_error') body.details = { fields: [{ field: 'amountKobo', message: 'must be >= 1' }] }
  if (code === 'internal_error') body.details = { requestId: '6f1c2a9e-3b7d-4e58-9a01-2c4b8d7e5f60' }
  return body
}
