// The one verifier of signed requests. Partner requests (X-Rail-* headers), the requests Rail
// sends to the sandbox bank and the credit notices the bank sends back (X-Sandbox-* headers) are
// all signed the same way — HMAC-SHA256 of the canonical string of src/client/signing.ts, the
// signer every caller uses — so they are all checked here: each caller reads its own headers and
// maps the outcome to its own answer; the checks, their order and their outcomes are these.
// Time comes from the caller's clock, so a test can stand at either edge of the window.
import { canonicalRequest, computeSignature, TIMESTAMP_TOLERANCE_S } from '../client/signing.ts'
import { unixSeconds, type Clock } from './clock.ts'
import { constantTimeEqual } from './crypto.ts'

/**
 * Why a signed request is refused: a header is absent or empty (missing); a header is sent twice
 * or is not of its form (malformed); the timestamp is further than the tolerance from the clock,
 * either way (stale); the signature is not the one the secret gives for this request (bad_signature).
 */
export type SignatureRefusal = 'missing' | 'malformed' | 'stale' | 'bad_signature'

/** Unix seconds, as the signer writes them; twelve digits reach far past any clock we run. */
const TIMESTAMP_PATTERN = /^\d{1,12}$/
/** `v1=` and a hex HMAC-SHA256: the only version the signer writes. */
const SIGNATURE_PATTERN = /^v1=[0-9a-f]{64}$/

/** The two signature headers of a request, read and checked for form and freshness. */
export interface SignatureHeaders {
  timestampS: number
  signature: string
}

export type SignatureHeadersCheck =
  { ok: true; headers: SignatureHeaders } | { ok: false; refusal: Exclude<SignatureRefusal, 'bad_signature'> }

/** What the signature covers: the method, the path and query exactly as sent, and the raw body bytes. */
export interface SignedContent {
  method: string
  pathWithQuery: string
  body: string | Uint8Array
}

export type SignatureCheck = { ok: true; timestampS: number } | { ok: false; refusal: SignatureRefusal }

/**
 * Checks the timestamp and signature header values (as an HTTP server hands them: a string, an
 * array when sent more than once, undefined when absent) before anything else is looked at —
 * partner authentication does this before the body is read and the signing key is found.
 */
export function readSignatureHeaders(
  timestamp: unknown,
  signature: unknown,
  clock: Clock,
  toleranceS: number = TIMESTAMP_TOLERANCE_S,
): SignatureHeadersCheck {
  if (isAbsent(timestamp) || isAbsent(signature)) return { ok: false, refusal: 'missing' }
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return { ok: false, refusal: 'malformed' }
  if (!TIMESTAMP_PATTERN.test(timestamp) || !SIGNATURE_PATTERN.test(signature))
    return { ok: false, refusal: 'malformed' }
  const timestampS = Number(timestamp)
  if (Math.abs(unixSeconds(clock) - timestampS) > toleranceS) return { ok: false, refusal: 'stale' }
  return { ok: true, headers: { timestampS, signature } }
}

/** Whether the signature is the one `secret` gives for this content at this timestamp; compared in constant time. */
export function signatureMatches(secret: string, headers: SignatureHeaders, content: SignedContent): boolean {
  const expected = computeSignature(
    secret,
    canonicalRequest(headers.timestampS, content.method, content.pathWithQuery, content.body),
  )
  return constantTimeEqual(expected, headers.signature)
}

/** Both steps at once, for a caller that has the secret and the body in hand. */
export function verifyRequestSignature(
  input: SignedContent & { secret: string; timestamp: unknown; signature: unknown; clock: Clock; toleranceS?: number },
): SignatureCheck {
  const read = readSignatureHeaders(input.timestamp, input.signature, input.clock, input.toleranceS)
  if (!read.ok) return read
  if (!signatureMatches(input.secret, read.headers, input)) return { ok: false, refusal: 'bad_signature' }
  return { ok: true, timestampS: read.headers.timestampS }
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === ''
}
