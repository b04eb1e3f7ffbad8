// Monnify's authentication: POST /api/v1/auth/login with HTTP Basic (apiKey:secretKey) answers a
// bearer token that every other route requires. Tokens are random, kept only as their SHA-256,
// and expire by the bank's clock (a test moves it instead of sleeping).
import { randomBytes } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../../platform/clock.ts'
import { constantTimeEqual, sha256Hex } from '../../platform/crypto.ts'
import type { Pool } from '../../platform/db.ts'
import { sandboxMonnifyCredentials } from '../dialect-credentials.ts'
import { refuse, success } from './wire.ts'

/** How long a token is good for, as Monnify's are: an hour, then the client logs in again. */
export const TOKEN_LIFETIME_S = 3_600
const TOKEN_BYTES = 32

/** Whether an Authorization header carries the merchant's API key and client secret as HTTP Basic. */
function basicCredentialsMatch(header: string | undefined, bankSecret: string): boolean {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/.exec(header ?? '')
  if (!match) return false
  const { apiKey, secretKey } = sandboxMonnifyCredentials(bankSecret)
  return constantTimeEqual(Buffer.from(match[1]!, 'base64').toString('utf8'), `${apiKey}:${secretKey}`)
}

/** The login route's handler: a new token, or 401 in Monnify's shape. */
export async function login(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: { pool: Pool; bankSecret: string; clock: Clock },
): Promise<FastifyReply> {
  const header = request.headers.authorization
  if (header === undefined) return refuse(reply, 401, 'Full authentication is required to access this resource')
  if (!basicCredentialsMatch(header, deps.bankSecret)) return refuse(reply, 401, 'Invalid client credentials')
  const accessToken = randomBytes(TOKEN_BYTES).toString('base64url')
  const now = deps.clock.now()
  // Expired tokens are forgotten as new ones are issued: the table holds about an hour of logins.
  await deps.pool.query(`DELETE FROM sandbox_bank.monnify_access_tokens WHERE expires_at < $1`, [now])
  await deps.pool.query(`INSERT INTO sandbox_bank.monnify_access_tokens (token_sha256, expires_at) VALUES ($1, $2)`, [
    sha256Hex(accessToken),
    new Date(now.getTime() + TOKEN_LIFETIME_S * 1000),
  ])
  return reply.code(200).send(success({ accessToken, expiresIn: TOKEN_LIFETIME_S }))
}

/**
 * The bearer check of every route but login: a token this dialect issued that has not expired.
 * Anything else is 401 in Monnify's shape, and the route does nothing.
 */
export function requireBearer(deps: { pool: Pool; clock: Clock }) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const match = /^Bearer\s+(\S+)\s*$/.exec(request.headers.authorization ?? '')
    if (!match) return refuse(reply, 401, 'Full authentication is required to access this resource')
    const found = await deps.pool.query<{ expires_at: Date }>(
      `SELECT expires_at FROM sandbox_bank.monnify_access_tokens WHERE token_sha256 = $1`,
      [sha256Hex(match[1]!)],
    )
    const token = found.rows[0]
    if (!token) return refuse(reply, 401, 'Invalid access token')
    if (token.expires_at <= deps.clock.now()) return refuse(reply, 401, 'Access token expired')
    return undefined
  }
}
