// Verifying a delivery from Rail (docs/webhooks.md). Every signed delivery carries two
// signatures over the same raw body; either proves it came from Rail:
//
//   X-Rail-Signature: sha256=<hex HMAC-SHA256(UTF-8 bytes of the secret, raw body)>
//   webhook-signature: v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<raw body>")>
//
// Standard Webhooks' key is the base64 part after `whsec_` for a partner's callback-signing
// secret, and the UTF-8 bytes of any other secret (an escrow webhookSecret). Only the Standard
// Webhooks signature covers a timestamp, so only it can refuse an old delivery replayed: it is
// the one checked when present. De-duplicate on the event's `id` either way.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { WebhookVerificationError } from './errors.ts'
import type { RailWebhookEvent } from './types.ts'

/** The shape every event Rail POSTs has; RailWebhookEvent is each documented event's own. */
export interface RailEvent<Data = Record<string, unknown>> {
  id: string
  event: string
  eventKind: string
  timestamp: string
  data: Data
  /** Escrow events carry the escrow's metadata at the top level. */
  [field: string]: unknown
}

/** Fetch's Headers, Node's `request.headers`, or a plain object (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

export interface VerifyWebhookOptions {
  /** `auto` (default): Standard Webhooks when its headers are there, else X-Rail-Signature. */
  scheme?: 'auto' | 'standard' | 'rail'
  /** Standard Webhooks: a timestamp further than this from now is refused. Default 300 s. */
  toleranceS?: number
  /** Now, in unix seconds (for replaying stored deliveries in a test). */
  nowS?: number
}

const DEFAULT_TOLERANCE_S = 300

/**
 * Checks a delivery's signature against the secret (or any of several, during a rotation) and
 * returns the parsed event, typed as any documented event (narrow it on `event`); throws
 * WebhookVerificationError when it does not verify. Pass the raw body exactly as received,
 * before any JSON parsing.
 */
export function verifyWebhook<Event extends { id: string; event: string } = RailWebhookEvent>(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Event {
  const secrets = typeof secret === 'string' ? [secret] : [...secret]
  if (secrets.length === 0 || secrets.some((candidate) => typeof candidate !== 'string' || candidate === ''))
    throw new TypeError('verifyWebhook needs the secret')
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody)
  const scheme = options.scheme ?? 'auto'
  const useStandard =
    scheme === 'standard' || (scheme === 'auto' && headerOf(headers, 'webhook-signature') !== undefined)
  if (useStandard) verifyStandard(body, headers, secrets, options)
  else verifyRail(body, headers, secrets)
  return parseEvent(body) as unknown as Event
}

function verifyRail(body: Buffer, headers: WebhookHeaders, secrets: string[]): void {
  const header = headerOf(headers, 'x-rail-signature')
  if (header === undefined)
    throw new WebhookVerificationError('No signature: neither webhook-signature nor X-Rail-Signature is present')
  const given = Buffer.from(header.trim().toLowerCase(), 'utf8')
  const matches = secrets.some((secret) =>
    sameBytes(
      given,
      Buffer.from(`sha256=${createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')}`, 'utf8'),
    ),
  )
  if (!matches) throw new WebhookVerificationError('X-Rail-Signature does not match the body')
}

function verifyStandard(body: Buffer, headers: WebhookHeaders, secrets: string[], options: VerifyWebhookOptions): void {
  const id = headerOf(headers, 'webhook-id')
  const timestamp = headerOf(headers, 'webhook-timestamp')
  const signatures = headerOf(headers, 'webhook-signature')
  if (id === undefined || timestamp === undefined || signatures === undefined)
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature')
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not unix seconds')
  const nowS = options.nowS ?? Math.floor(Date.now() / 1000)
  if (Math.abs(nowS - Number(timestamp)) > (options.toleranceS ?? DEFAULT_TOLERANCE_S))
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance')
  // The header may list several signatures ("v1,… v1,…"); one valid v1 is enough.
  const given = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'))
  const matches = secrets.some((secret) => {
    const expected = createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.`).update(body).digest()
    return given.some((signature) => sameBytes(signature, expected))
  })
  if (!matches) throw new WebhookVerificationError('webhook-signature does not match')
}

function standardKey(secret: string): Buffer {
  return secret.startsWith('whsec_')
    ? Buffer.from(secret.slice('whsec_'.length), 'base64')
    : Buffer.from(secret, 'utf8')
}

function sameBytes(given: Buffer, expected: Buffer): boolean {
  return given.length === expected.length && timingSafeEqual(given, expected)
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue
    return Array.isArray(value) ? value.join(' ') : value
  }
  return undefined
}

function parseEvent(body: Buffer): RailEvent {
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch {
    throw new WebhookVerificationError('The body is not JSON')
  }
  const event = parsed as Partial<RailEvent> | null
  if (typeof event !== 'object' || event === null || typeof event.id !== 'string' || typeof event.event !== 'string')
    throw new WebhookVerificationError('The body is not a Rail event')
  return event as RailEvent
}
