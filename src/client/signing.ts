// Request signing for Rail's partner and wallet APIs (docs/design.md §7). Dependency-free on purpose:
// tests, the CLI and partners' own code use this one implementation.
//
//   canonical = timestamp + "\n" + METHOD + "\n" + path-with-query + "\n" + hex(SHA-256(raw body))
//   X-Rail-Signature: v1=<hex HMAC-SHA256(UTF-8 bytes of the signing secret, canonical)>
import { createHash, createHmac } from 'node:crypto'

export const SIGNATURE_VERSION = 'v1'
/** A request whose timestamp is further than this from the server's clock is refused. */
export const TIMESTAMP_TOLERANCE_S = 300

export interface SigningInput {
  keyId: string
  signingSecret: string
  method: string
  /** The path and query exactly as sent, e.g. `/wallet/customer?customerId=w_1`. */
  pathWithQuery: string
  /** The raw body bytes as sent; empty for a request without a body. */
  body?: string | Uint8Array
  /** Unix seconds; defaults to now. */
  timestampS?: number
}

export function canonicalRequest(
  timestampS: number,
  method: string,
  pathWithQuery: string,
  body: string | Uint8Array = '',
): string {
  const bodyHash = createHash('sha256').update(body).digest('hex')
  return `${timestampS}\n${method.toUpperCase()}\n${pathWithQuery}\n${bodyHash}`
}

export function computeSignature(signingSecret: string, canonical: string): string {
  return `${SIGNATURE_VERSION}=${createHmac('sha256', Buffer.from(signingSecret, 'utf8')).update(canonical).digest('hex')}`
}

/** The three authentication headers for one request. */
export function signRequest(input: SigningInput): Record<string, string> {
  const timestampS = input.timestampS ?? Math.floor(Date.now() / 1000)
  const canonical = canonicalRequest(timestampS, input.method, input.pathWithQuery, input.body ?? '')
  return {
    'X-Rail-Key-Id': input.keyId,
    'X-Rail-Timestamp': String(timestampS),
    'X-Rail-Signature': computeSignature(input.signingSecret, canonical),
  }
}
