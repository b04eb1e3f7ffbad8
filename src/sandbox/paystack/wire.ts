// How the sandbox's Paystack dialect speaks: Paystack's `status`/`message`/`data` envelope, its
// error bodies and HTTP statuses, its bearer-key check, its codes (RCP_…, TRF_…, CUS_…) and its
// webhook signature (HMAC-SHA512 of the raw body, keyed with the secret key).
import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { constantTimeEqual, hmacSha512Hex } from '../../platform/crypto.ts'

/** Paystack's integration id and domain on every object: one sandbox integration, in test mode. */
export const SANDBOX_INTEGRATION_ID = 100_032
export const SANDBOX_DOMAIN = 'test'

/** A successful answer: Paystack's envelope around the data. */
export function sendData(
  reply: FastifyReply,
  statusCode: number,
  message: string,
  data: unknown,
  extra: Record<string, unknown> = {},
): FastifyReply {
  return reply.code(statusCode).send({ status: true, message, data, ...extra })
}

/**
 * Paystack's error body: status false, a message, the next step and the error's type. `code`
 * is left out: the published description allows only a few values there, none of them Paystack's
 * finer codes.
 */
export function sendError(
  reply: FastifyReply,
  statusCode: number,
  message: string,
  nextStep: string,
  type: 'validation_error' | 'api_error' = 'validation_error',
): FastifyReply {
  return reply.code(statusCode).send({ status: false, message, meta: { nextStep }, type })
}

/**
 * The bearer check every dialect route makes: Paystack answers 401 to a missing or malformed
 * Authorization header and to a key that is not the integration's.
 */
export function checkSecretKey(
  request: FastifyRequest,
  reply: FastifyReply,
  secretKey: string,
): FastifyReply | undefined {
  const header = request.headers.authorization
  const match = typeof header === 'string' ? /^Bearer (\S+)$/.exec(header) : null
  if (!match)
    return sendError(
      reply,
      401,
      'Format is Authorization: Bearer [secret key]',
      'Provide your secret key as a Bearer token in the Authorization header',
    )
  if (!constantTimeEqual(match[1]!, secretKey)) {
    return sendError(reply, 401, 'Invalid key', 'Ensure that you provide the correct authorization key for the request')
  }
  return undefined
}

const CODE_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'
/** Paystack's codes have 15 lowercase letters and digits after their prefix. */
const CODE_LENGTH = 15

export function newCode(prefix: 'RCP' | 'TRF' | 'CUS' | 'AUTH'): string {
  const bytes = randomBytes(CODE_LENGTH)
  let code = ''
  for (const byte of bytes) code += CODE_ALPHABET[byte % CODE_ALPHABET.length]
  return `${prefix}_${code}`
}

/** x-paystack-signature: HMAC-SHA512 hex of the raw body, keyed with the secret key. */
export function paystackSignature(secretKey: string, rawBody: string): string {
  return hmacSha512Hex(secretKey, rawBody)
}

/** Reads a JSON body field as a trimmed string, or undefined. */
export function stringField(body: unknown, field: string): string | undefined {
  const value = (body as Record<string, unknown> | undefined)?.[field]
  if (typeof value === 'string') return value.trim()
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return undefined
}

/** The bank's slug as Paystack spells it: lowercase, words joined by hyphens. */
export function bankSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
}
