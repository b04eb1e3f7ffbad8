// One call over HTTP: send it, and retry what is safe to retry.
//
// A retry sends the same request again — the same body, the same idempotency reference or
// Idempotency-Key — signed anew with a fresh timestamp, so Rail recognises it by what names the
// call, not by its signature: a reference or a key it has seen answers the stored result
// (`Idempotent-Replayed: true`) and acts no twice. A retry may therefore come after the first
// signature's ±300 s window has passed.
import { apiError, RailConnectionError, type RailApiError } from './errors.ts'
import { signatureHeaders, type SigningKey } from './signing.ts'

export interface TransportSettings {
  baseUrl: string
  signingKey: SigningKey | undefined
  escrowApiKey: string | undefined
  /** Retries after the first attempt (0: none). */
  maxRetries: number
  /** Time for one attempt, answer and body included. */
  timeoutMs: number
  /** The first retry waits about this long, each next one twice as long (with jitter). */
  retryBaseDelayMs: number
  /** A `Retry-After` longer than this is not waited for: the error is thrown. */
  maxRetryDelayMs: number
  userAgent: string
}

export interface PreparedRequest {
  operationId: string
  method: string
  auth: 'signature' | 'apiKey'
  pathWithQuery: string
  /** JSON text; undefined for a request without a body. */
  body: string | undefined
  reference: string | undefined
  /** The Idempotency-Key of a state-changing call without a reference: one per call, the same on each retry. */
  idempotencyKey: string | undefined
  signal: AbortSignal | undefined
}

export interface RailResponse<T> {
  data: T
  status: number
  headers: Headers
  /** `Idempotent-Replayed: true`: the answer is the stored result of an earlier identical call. */
  replayed: boolean
  requestId: string | undefined
  /** The idempotency reference the call carried (given or generated). */
  reference: string | undefined
  /** The Idempotency-Key the call carried (given or generated); undefined on calls that take none. */
  idempotencyKey: string | undefined
  /** Attempts made (1 when the first one was answered). */
  attempts: number
}

/** Answers a client may safely ask again with the same request (its reference or key). */
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504])

export async function send<T>(settings: TransportSettings, request: PreparedRequest): Promise<RailResponse<T>> {
  for (let attempt = 1; ; attempt++) {
    // Each attempt is signed when it is sent: a retry after a long wait is not a stale request.
    const outcome = await attemptOnce(
      settings,
      request,
      requestHeaders(settings, request, Math.floor(Date.now() / 1000)),
    )
    if (outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300) {
      return {
        data: outcome.body as T,
        status: outcome.status,
        headers: outcome.headers,
        replayed: outcome.headers.get('idempotent-replayed') === 'true',
        requestId: outcome.headers.get('x-request-id') ?? undefined,
        reference: request.reference,
        idempotencyKey: request.idempotencyKey,
        attempts: attempt,
      }
    }
    const failure =
      outcome.kind === 'answered'
        ? apiError({
            ...outcome,
            operationId: request.operationId,
            reference: request.reference,
            idempotencyKey: request.idempotencyKey,
          })
        : outcome.error
    const delayMs = retryDelayMs(settings, failure, attempt)
    if (delayMs === undefined || attempt > settings.maxRetries) throw failure
    await sleep(delayMs, request.signal)
  }
}

function requestHeaders(
  settings: TransportSettings,
  request: PreparedRequest,
  signedAtS: number,
): Record<string, string> {
  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': settings.userAgent }
  if (request.body !== undefined) headers['Content-Type'] = 'application/json'
  if (request.idempotencyKey !== undefined) headers['Idempotency-Key'] = request.idempotencyKey
  if (request.auth === 'apiKey') {
    if (settings.escrowApiKey === undefined)
      throw new TypeError(`${request.operationId} needs the escrow API key: new Rail({ escrowApiKey })`)
    headers['X-API-Key'] = settings.escrowApiKey
  } else {
    if (settings.signingKey === undefined)
      throw new TypeError(`${request.operationId} is signed: new Rail({ keyId, signingSecret })`)
    Object.assign(
      headers,
      signatureHeaders(settings.signingKey, signedAtS, request.method, request.pathWithQuery, request.body ?? ''),
    )
  }
  return headers
}

type Outcome =
  | { kind: 'answered'; status: number; headers: Headers; body: unknown }
  | { kind: 'unanswered'; error: RailConnectionError }

async function attemptOnce(
  settings: TransportSettings,
  request: PreparedRequest,
  headers: Record<string, string>,
): Promise<Outcome> {
  const timeout = AbortSignal.timeout(settings.timeoutMs)
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout
  try {
    // Rail's API never redirects: a 3xx (from something in between) is an error, and the signed
    // request and its credentials are not sent on to wherever it points.
    const response = await fetch(settings.baseUrl + request.pathWithQuery, {
      method: request.method,
      headers,
      body: request.body,
      signal,
      redirect: 'manual',
    })
    const text = await response.text()
    return {
      kind: 'answered',
      status: response.status,
      headers: response.headers,
      body: parseBody(text, response.headers),
    }
  } catch (error) {
    // The caller's own abort is not a failure to retry: it ends the call as it is.
    if (request.signal?.aborted) throw request.signal.reason
    const what = timeout.aborted ? `no answer within ${settings.timeoutMs} ms` : 'the connection failed'
    return {
      kind: 'unanswered',
      error: new RailConnectionError(
        `${request.operationId}: ${what}`,
        request.operationId,
        request.reference,
        error,
        request.idempotencyKey,
      ),
    }
  }
}

function parseBody(text: string, headers: Headers): unknown {
  if (text === '') return undefined
  if (!(headers.get('content-type') ?? '').includes('json')) return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** How long to wait before the next attempt, or undefined when the failure is not worth another. */
function retryDelayMs(
  settings: TransportSettings,
  failure: RailApiError | RailConnectionError,
  attempt: number,
): number | undefined {
  if (failure instanceof RailConnectionError) return backoffMs(settings, attempt)
  const inProgress = failure.status === 409 && failure.error === 'request_in_progress'
  if (!RETRYABLE_STATUSES.has(failure.status) && !inProgress) return undefined
  if (failure.retryAfterS === undefined) return backoffMs(settings, attempt)
  const askedMs = failure.retryAfterS * 1000
  return askedMs > settings.maxRetryDelayMs ? undefined : askedMs
}

function backoffMs(settings: TransportSettings, attempt: number): number {
  const exponentialMs = settings.retryBaseDelayMs * 2 ** (attempt - 1)
  // ±25 % so that clients refused together do not come back together.
  return Math.round(exponentialMs * (0.75 + Math.random() * 0.5))
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
