// What every provider's webhook is checked with before its adapter reads it: the profile's address
// allowlist (when it keeps one) and a signature that is an HMAC of the raw body as received.
import { constantTimeEqual, hmacSha512Hex } from '../../platform/crypto.ts'
import { objectOf } from './json.ts'
import type { ProviderWebhook, WebhookRequest } from './types.ts'

/** An IPv4 address as a socket may give it (`::ffff:1.2.3.4`), written plainly. */
function plainAddress(address: string): string {
  return address.toLowerCase().startsWith('::ffff:') && address.includes('.')
    ? address.slice('::ffff:'.length)
    : address
}

/** Whether a webhook's sender may send one: any address without an allowlist, else only those listed. */
export function isAllowedSource(sourceAddress: string | undefined, allowlist: readonly string[] | null): boolean {
  if (allowlist === null) return true
  return sourceAddress !== undefined && allowlist.map(plainAddress).includes(plainAddress(sourceAddress))
}

/** Whether `signature` is the hex HMAC-SHA512 of the raw body keyed with `key` (Paystack's and Monnify's scheme), compared in constant time. */
export function signedWithHmacSha512(rawBody: string, signature: string | string[] | undefined, key: string): boolean {
  if (typeof signature !== 'string' || !/^[0-9a-fA-F]{128}$/.test(signature)) return false
  return constantTimeEqual(hmacSha512Hex(key, rawBody), signature.toLowerCase())
}

/**
 * A webhook signed by that scheme (the signature in `signatureHeader`) from an allowed sender, its
 * body read as JSON: the body's object (undefined when it is no object), or the answer that ends it.
 */
export function verifiedBody(
  request: WebhookRequest,
  signatureHeader: string,
  key: string,
  allowlist: readonly string[] | null,
): { body: Record<string, unknown> | undefined } | ProviderWebhook {
  if (!isAllowedSource(request.sourceAddress, allowlist)) return { kind: 'unauthorized' }
  if (!signedWithHmacSha512(request.rawBody, request.headers[signatureHeader], key)) return { kind: 'unauthorized' }
  try {
    return { body: objectOf(JSON.parse(request.rawBody)) }
  } catch {
    return { kind: 'invalid', message: 'the body is not JSON' }
  }
}
