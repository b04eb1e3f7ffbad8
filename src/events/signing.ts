// The headers of one delivery attempt (docs/design.md §9): Rail's own signature, which the escrow contract
// names (docs/contracts/escrow.md §Webhooks), and the Standard Webhooks headers, so that partners can verify with its libraries.
import { createHmac } from 'node:crypto'
import { railSignature } from '../client/webhooks.ts'

export interface DeliveryHeadersInput {
  eventId: string
  eventType: string
  /** The exact body sent. */
  body: string
  /** The attempt's time, unix seconds. */
  timestampS: number
  /** No secret: no signature headers at all. */
  secret: string | undefined
}

export function deliveryHeaders(input: DeliveryHeadersInput): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Rail-Webhooks/1',
    'x-rail-event-id': input.eventId,
    'x-rail-event-type': input.eventType,
    'x-rail-timestamp': String(input.timestampS),
    'webhook-id': input.eventId,
    'webhook-timestamp': String(input.timestampS),
  }
  if (input.secret !== undefined) {
    headers['x-rail-signature'] = railSignature(input.body, input.secret)
    headers['webhook-signature'] = standardWebhooksSignature(input.eventId, input.timestampS, input.body, input.secret)
  }
  return headers
}

/**
 * `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>` as the Standard Webhooks spec says.
 * The key: for a `whsec_…` secret, the base64 bytes after the prefix (the spec's own form, so
 * `new Webhook(secret)` works as is); for any other secret (an escrow webhookSecret), its UTF-8
 * bytes (`new Webhook(secret, { format: 'raw' })`).
 */
export function standardWebhooksSignature(eventId: string, timestampS: number, body: string, secret: string): string {
  const digest = createHmac('sha256', standardWebhooksKey(secret))
    .update(`${eventId}.${timestampS}.${body}`)
    .digest('base64')
  return `v1,${digest}`
}

function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith('whsec_')
    ? Buffer.from(secret.slice('whsec_'.length), 'base64')
    : Buffer.from(secret, 'utf8')
}
