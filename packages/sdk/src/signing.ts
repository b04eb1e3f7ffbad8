// Request signing, as docs/authentication.md specifies it:
//
//   canonical = timestamp + "\n" + METHOD + "\n" + path-with-query + "\n" + hex(SHA-256(raw body))
//   X-Rail-Signature: v1=<lowercase hex HMAC-SHA256(UTF-8 bytes of the signing secret, canonical)>
//
// The SDK signs the exact bytes it sends; a retry sends the same bytes, signed again with a fresh timestamp.
import { createHash, createHmac } from 'node:crypto'

/** The server accepts a timestamp this far from its clock, either way. */
export const SIGNATURE_WINDOW_S = 300

export interface SigningKey {
  keyId: string
  signingSecret: string
}

export function canonicalRequest(
  timestampS: number,
  method: string,
  pathWithQuery: string,
  body: string | Uint8Array,
): string {
  const bodySha256 = createHash('sha256').update(body).digest('hex')
  return `${timestampS}\n${method.toUpperCase()}\n${pathWithQuery}\n${bodySha256}`
}

/** The three authentication headers of one signed request. */
export function signatureHeaders(
  key: SigningKey,
  timestampS: number,
  method: string,
  pathWithQuery: string,
  body: string | Uint8Array,
): Record<string, string> {
  const canonical = canonicalRequest(timestampS, method, pathWithQuery, body)
  const signature = createHmac('sha256', Buffer.from(key.signingSecret, 'utf8')).update(canonical).digest('hex')
  return {
    'X-Rail-Key-Id': key.keyId,
    'X-Rail-Timestamp': String(timestampS),
    'X-Rail-Signature': `v1=${signature}`,
  }
}
