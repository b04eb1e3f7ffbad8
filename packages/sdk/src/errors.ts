// What a failed call throws. An answer from Rail with an error status is a RailApiError (or one
// of its subclasses, by status) carrying the one error body: `error` (a stable code),
// `message`, `details`, plus the status, `Retry-After` and the request id. A call that got no
// answer at all is a RailConnectionError. Each names the operation and the call's idempotency
// reference or Idempotency-Key, so the caller can retry it later as the same call.

/** The codes of docs/errors.md. A newer server may send a code this version does not know. */
export type RailErrorCode =
  | 'invalid_json'
  | 'invalid_escrow_status'
  | 'bad_request'
  | 'unauthorized'
  | 'capability_disabled'
  | 'cross_site_request'
  | 'not_found'
  | 'method_not_allowed'
  | 'idempotency_conflict'
  | 'request_in_progress'
  | 'invalid_state'
  | 'request_timeout'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'headers_too_large'
  | 'validation_error'
  | 'unsupported_currency'
  | 'insufficient_funds'
  | 'balance_limit_exceeded'
  | 'amount_above_limit'
  | 'refund_destination_unknown'
  | 'refund_exceeds_refundable'
  | 'provider_unavailable'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable'
  | 'overloaded'
  | (string & {})

/** Every error the SDK throws is a RailError. */
export class RailError extends Error {
  override name = 'RailError'
}

export interface ApiErrorInit {
  status: number
  body: unknown
  headers: Headers
  operationId: string
  reference: string | undefined
  idempotencyKey?: string | undefined
}

/** Rail answered with an error status. */
export class RailApiError extends RailError {
  override name = 'RailApiError'
  /** The HTTP status. */
  readonly status: number
  /** The stable code of the error body (`validation_error`, `insufficient_funds`, …). */
  readonly error: RailErrorCode
  /** What the error body's `details` says (fields, current state, limits…); empty when absent. */
  readonly details: Record<string, unknown>
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  readonly retryAfterS: number | undefined
  /** `X-Request-Id` of the answer: quote it when asking about a call. */
  readonly requestId: string | undefined
  readonly headers: Headers
  /** The body as received (an error body, or whatever a proxy sent). */
  readonly body: unknown
  readonly operationId: string
  /** The idempotency reference the call carried (given or generated), to retry it later. */
  readonly reference: string | undefined
  /** The Idempotency-Key the call carried (given or generated), to retry it later: `{ idempotencyKey }` as the call's option. */
  readonly idempotencyKey: string | undefined

  constructor(init: ApiErrorInit) {
    const body = isErrorBody(init.body) ? init.body : undefined
    super(body?.message ?? `HTTP ${init.status} from ${init.operationId}`)
    this.status = init.status
    this.error = body?.error ?? `http_${init.status}`
    this.details = body?.details ?? {}
    this.retryAfterS = retryAfterSeconds(init.headers.get('retry-after'))
    this.requestId = init.headers.get('x-request-id') ?? undefined
    this.headers = init.headers
    this.body = init.body
    this.operationId = init.operationId
    this.reference = init.reference
    this.idempotencyKey = init.idempotencyKey
  }
}

/** 400 and 422: the request itself was refused; `details.fields` names the fields. */
export class RailInvalidRequestError extends RailApiError {
  override name = 'RailInvalidRequestError'
}
/** 401: missing, unknown, expired or revoked credentials, or a bad signature. */
export class RailAuthenticationError extends RailApiError {
  override name = 'RailAuthenticationError'
}
/** 403: the operation is not allowed (a provider capability not approved). */
export class RailPermissionError extends RailApiError {
  override name = 'RailPermissionError'
}
/** 404: no such object for this caller. */
export class RailNotFoundError extends RailApiError {
  override name = 'RailNotFoundError'
}
/** 409: a reference or Idempotency-Key used with another request, a state that does not allow it, or a first call still in progress. */
export class RailConflictError extends RailApiError {
  override name = 'RailConflictError'
}
/** 429: too many requests; `retryAfterS` says when to come back. */
export class RailRateLimitError extends RailApiError {
  override name = 'RailRateLimitError'
}
/** 5xx: Rail or its bank could not serve the call now. */
export class RailServerError extends RailApiError {
  override name = 'RailServerError'
}

/** The call got no answer: the connection failed or the time ran out. It may or may not have taken effect. */
export class RailConnectionError extends RailError {
  override name = 'RailConnectionError'
  readonly operationId: string
  readonly reference: string | undefined
  readonly idempotencyKey: string | undefined

  constructor(
    message: string,
    operationId: string,
    reference: string | undefined,
    cause: unknown,
    idempotencyKey?: string,
  ) {
    super(message, { cause })
    this.operationId = operationId
    this.reference = reference
    this.idempotencyKey = idempotencyKey
  }
}

/** A webhook whose signature does not verify, is too old, or is not a Rail event. */
export class WebhookVerificationError extends RailError {
  override name = 'WebhookVerificationError'
}

export function apiError(init: ApiErrorInit): RailApiError {
  const status = init.status
  if (status === 400 || status === 422) return new RailInvalidRequestError(init)
  if (status === 401) return new RailAuthenticationError(init)
  if (status === 403) return new RailPermissionError(init)
  if (status === 404) return new RailNotFoundError(init)
  if (status === 409) return new RailConflictError(init)
  if (status === 429) return new RailRateLimitError(init)
  if (status >= 500) return new RailServerError(init)
  return new RailApiError(init)
}

interface ErrorBody {
  error: string
  message: string
  details?: Record<string, unknown>
}

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null) return false
  const candidate = body as Record<string, unknown>
  const details = candidate['details']
  return (
    typeof candidate['error'] === 'string' &&
    typeof candidate['message'] === 'string' &&
    (details === undefined || (typeof details === 'object' && details !== null))
  )
}

/** `Retry-After` as seconds: either whole seconds or an HTTP date. */
export function retryAfterSeconds(header: string | null, nowMs = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const dateMs = Date.parse(trimmed)
  if (Number.isNaN(dateMs)) return undefined
  return Math.max(0, Math.ceil((dateMs - nowMs) / 1000))
}
