// Verifying Rail's callbacks (docs/design.md §9, docs/webhooks.md). Dependency-free so that a partner can
// copy this one file:
//
//   X-Rail-Signature: sha256=<lowercase hex HMAC-SHA256(UTF-8 bytes of the secret, raw body)>
//
// The secret is the partner's callback-signing secret exactly as issued (`whsec_…`, the whole
// string), or the escrow `webhookSecret` as registered. Verify the raw bytes as received, before
// any JSON parsing, and de-duplicate on the body's `id`.
import { createHmac, timingSafeEqual } from 'node:crypto'

export const RAIL_SIGNATURE_PREFIX = 'sha256='

/** The X-Rail-Signature header value for a body. */
export function railSignature(rawBody: string | Uint8Array, secret: string): string {
  return RAIL_SIGNATURE_PREFIX + createHmac('sha256', Buffer.from(secret, 'utf8')).update(rawBody).digest('hex')
}

/** True when `header` is the signature of `rawBody` under `secret`; compared in constant time. */
export function verifyRailSignature(
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secret: string,
): boolean {
  if (typeof header !== 'string' || !header.startsWith(RAIL_SIGNATURE_PREFIX)) return false
  const expected = Buffer.from(railSignature(rawBody, secret), 'utf8')
  const given = Buffer.from(header.trim().toLowerCase(), 'utf8')
  return expected.length === given.length && timingSafeEqual(expected, given)
}
