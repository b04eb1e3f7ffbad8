// The one catalogue of error codes. Each code is named after the rule that was broken and maps
// to exactly one HTTP status. Services throw RailError; the HTTP layer renders it once, in the
// one body shape { statusCode, error, message, details? }. docs/errors.md lists the same table
// (a test keeps the two in step).

export const ERROR_CATALOGUE = {
  invalid_json: { status: 400, why: 'The body is not well-formed JSON.' },
  invalid_escrow_status: {
    status: 400,
    why: 'The escrow is not in the status the operation needs (docs/contracts/escrow.md).',
  },
  bad_request: {
    status: 400,
    why: 'The request is malformed in a way no schema names (for example an empty JSON body).',
  },
  unauthorized: {
    status: 401,
    why: 'Missing, unknown, expired or revoked credential; bad signature; stale timestamp.',
  },
  capability_disabled: {
    status: 403,
    why: 'The provider has not been approved for the capability the operation needs; nothing was attempted.',
  },
  cross_site_request: {
    status: 403,
    why: "A browser form was posted from another site, or not from the page it belongs to (the dashboard's Sign in); nothing was changed.",
  },
  not_found: { status: 404, why: 'No such object for this caller (another partner\'s object is also "not found").' },
  method_not_allowed: {
    status: 405,
    why: 'The path exists but not with this method; the Allow header (and details.allowedMethods) lists the methods it takes.',
  },
  idempotency_conflict: {
    status: 409,
    why: 'The reference, or the Idempotency-Key, was already used with a different request.',
  },
  request_in_progress: {
    status: 409,
    why: 'The first request with this reference or Idempotency-Key is still being processed; retry after Retry-After for its stored result.',
  },
  invalid_state: { status: 409, why: 'The object is not in a state that allows the operation.' },
  request_timeout: {
    status: 408,
    why: 'The request (headers or body) did not arrive in time; the connection is closed.',
  },
  payload_too_large: { status: 413, why: 'The body exceeds the 1 MiB limit.' },
  unsupported_media_type: { status: 415, why: 'Bodies must be application/json.' },
  headers_too_large: { status: 431, why: 'The request headers exceed the server limit; the connection is closed.' },
  validation_error: { status: 422, why: 'The body, query or path violates the schema; details name each field.' },
  unsupported_currency: { status: 422, why: 'Only NGN is served.' },
  insufficient_funds: { status: 422, why: 'The available balance is smaller than the amount; nothing moved.' },
  balance_limit_exceeded: {
    status: 422,
    why: "The account's lifetime credits would leave the range every balance is exact in (2^53 − 1 kobo); nothing moved.",
  },
  amount_above_limit: { status: 422, why: 'The amount exceeds the maximum of one instruction; nothing moved.' },
  refund_destination_unknown: {
    status: 422,
    why: 'A credit cannot be refunded: the bank gave no valid sender account (an unmatched one can be assigned instead).',
  },
  refund_exceeds_refundable: {
    status: 422,
    why: 'The refund is more than the credit has left to refund (what it brought less its refunds pending or succeeded); details.refundableKobo says how much is left; nothing moved.',
  },
  provider_unavailable: {
    status: 502,
    why: 'The provider gave no usable answer to a synchronous request; nothing was created, retry with the same reference.',
  },
  rate_limited: { status: 429, why: 'Too many requests; retry after the time in Retry-After.' },
  internal_error: {
    status: 500,
    why: 'A bug or an unexpected failure; the body carries the request id and no internals.',
  },
  service_unavailable: {
    status: 503,
    why: 'The instance is not ready (its database unreachable or migrations pending); retry later.',
  },
  overloaded: {
    status: 503,
    why: 'Rail is at capacity or its database could not serve in time; retry after Retry-After with the same request (refused at admission, it did nothing; cut short later, the retry answers what was recorded).',
  },
} as const satisfies Record<string, { status: number; why: string }>

export type ErrorCode = keyof typeof ERROR_CATALOGUE

/** What a refused caller is told to wait: long enough for a queue to drain, short enough to retry soon. */
export const OVERLOADED_RETRY_AFTER_S = 1

export class RailError extends Error {
  readonly code: ErrorCode
  readonly statusCode: number
  readonly details: Record<string, unknown> | undefined
  /** Sent as the Retry-After header (whole seconds) when set: 429, 503 and request_in_progress. */
  readonly retryAfterS: number | undefined

  constructor(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    options: { retryAfterS?: number } = {},
  ) {
    super(message)
    this.name = 'RailError'
    this.code = code
    this.statusCode = ERROR_CATALOGUE[code].status
    this.details = details
    this.retryAfterS = options.retryAfterS
  }
}

export interface ErrorBody {
  statusCode: number
  error: ErrorCode
  message: string
  details?: Record<string, unknown>
}

export function errorBody(error: RailError): ErrorBody {
  const body: ErrorBody = { statusCode: error.statusCode, error: error.code, message: error.message }
  if (error.details !== undefined) body.details = error.details
  return body
}

/** A 422 naming one field, in the shape schema violations have (`details.fields`). */
export function fieldError(field: string, message: string): RailError {
  return new RailError('validation_error', `${field}: ${message}`, { fields: [{ field, message }] })
}

/**
 * For `.catch()` on a look-up: its not_found becomes the caller's own error (a validation error
 * naming the field, say); any other failure — the database busy or away — passes unchanged, so
 * that an outage is never reported as bad input.
 */
export function onNotFound(replacement: () => RailError): (error: unknown) => never {
  return (error) => {
    throw error instanceof RailError && error.code === 'not_found' ? replacement() : error
  }
}

export function notFound(what: string): RailError {
  return new RailError('not_found', `${what} not found`)
}
