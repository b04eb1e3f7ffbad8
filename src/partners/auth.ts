// Request authentication (DESIGN §7). Every route declares its scheme in `config.auth`; the hook
// runs before validation, so an unauthenticated caller learns nothing about its body and no
// handler (hence no table) is ever reached. Every failure gives the same 401 body.
import type { FastifyRequest } from 'fastify'
import { canonicalRequest, computeSignature, TIMESTAMP_TOLERANCE_S } from '../client/signing.ts'
import type { Clock } from '../platform/clock.ts'
import { constantTimeEqual, sha256Hex } from '../platform/crypto.ts'
import type { Pool } from '../platform/db.ts'
import { RailError } from '../platform/errors.ts'
import { assertJsonParsed, type HttpServer } from '../platform/http.ts'
import { CredentialCache } from './credential-cache.ts'
import { findByEscrowApiKey, findSigningKey, type AuthenticatedPartner, type FoundCredential } from './service.ts'

/** signature: X-Rail-Key-Id + HMAC (partner and wallet APIs); api-key: X-API-Key (escrow API). */
export type AuthScheme = 'signature' | 'api-key' | 'none'

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthScheme
  }
  interface FastifyRequest {
    /** The authenticated caller; set on every route whose scheme is not 'none'. */
    caller: AuthenticatedPartner | undefined
  }
}

/** Paths that hold partner data; a route there without a declared scheme is a start-up error. */
const PROTECTED_PREFIXES = ['/api/', '/wallet', '/transfer', '/transaction']
const KEY_ID_MAX_CHARS = 128
const API_KEY_MAX_CHARS = 256
const SIGNATURE_PATTERN = /^v1=[0-9a-f]{64}$/
const TIMESTAMP_PATTERN = /^\d{1,12}$/

interface AuthDeps {
  pool: Pool
  masterKey: Buffer
  clock: Clock
  credentials: CredentialCache<FoundCredential & { signingSecret?: string }>
}

export function installAuthentication(app: HttpServer, options: { pool: Pool; masterKey: Buffer; clock: Clock }): void {
  const deps: AuthDeps = { ...options, credentials: new CredentialCache(options.pool) }
  deps.credentials.start()
  app.addHook('onClose', async () => deps.credentials.stop())
  app.decorateRequest('caller', undefined)
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth
    if (auth === undefined && PROTECTED_PREFIXES.some((prefix) => route.url.startsWith(prefix))) {
      throw new Error(`route ${route.method} ${route.url} declares no auth scheme`)
    }
  })
  app.addHook('preValidation', async (request) => {
    const scheme = request.routeOptions.config.auth ?? 'none'
    if (scheme === 'signature') request.caller = await authenticateSignature(request, deps)
    if (scheme === 'api-key') request.caller = await authenticateApiKey(request, deps)
    assertJsonParsed(request)
  })
}

function unauthorized(request: FastifyRequest, reason: string): RailError {
  // The reason is logged for operators, never returned: a prober learns nothing from the body.
  request.log.info({ reason }, 'authentication failed')
  return new RailError('unauthorized', 'Missing or invalid credentials')
}

async function authenticateSignature(request: FastifyRequest, deps: AuthDeps): Promise<AuthenticatedPartner> {
  const keyId = singleHeader(request, 'x-rail-key-id')
  const timestamp = singleHeader(request, 'x-rail-timestamp')
  const signature = singleHeader(request, 'x-rail-signature')
  if (!keyId || !timestamp || !signature) throw unauthorized(request, 'missing authentication header')
  if (keyId.length > KEY_ID_MAX_CHARS) throw unauthorized(request, 'key id too long')
  if (!TIMESTAMP_PATTERN.test(timestamp)) throw unauthorized(request, 'malformed timestamp')
  if (!SIGNATURE_PATTERN.test(signature)) throw unauthorized(request, 'malformed signature')
  const skewS = Math.abs(Math.floor(deps.clock.now().getTime() / 1000) - Number(timestamp))
  if (skewS > TIMESTAMP_TOLERANCE_S) throw unauthorized(request, `timestamp outside ±${TIMESTAMP_TOLERANCE_S}s`)

  const found = await deps.credentials.get(`signing:${keyId}`, () => findSigningKey(deps.pool, deps.masterKey, keyId))
  if (!found?.signingSecret) throw unauthorized(request, 'unknown, expired or revoked key id')
  // request.raw.url is the path and query exactly as the client sent them.
  const canonical = canonicalRequest(Number(timestamp), request.method, request.raw.url ?? '', request.rawBody ?? '')
  const expected = computeSignature(found.signingSecret, canonical)
  if (!constantTimeEqual(expected, signature)) throw unauthorized(request, 'signature mismatch')
  return { partner: found.partner, credentialId: found.credentialId }
}

async function authenticateApiKey(request: FastifyRequest, deps: AuthDeps): Promise<AuthenticatedPartner> {
  const apiKey = singleHeader(request, 'x-api-key')
  if (!apiKey || apiKey.length > API_KEY_MAX_CHARS) throw unauthorized(request, 'missing or oversized API key')
  // Remembered under the key's hash, as it is stored: the cache holds no API key in the clear.
  const found = await deps.credentials.get(`api-key:${sha256Hex(apiKey)}`, () => findByEscrowApiKey(deps.pool, apiKey))
  if (!found) throw unauthorized(request, 'unknown, expired or revoked API key')
  return { partner: found.partner, credentialId: found.credentialId }
}

function singleHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' && value.length > 0 ? value : undefined
}

/** The authenticated caller of a route that declared a scheme; a missing one is a programming error. */
export function callerOf(request: FastifyRequest): AuthenticatedPartner {
  if (!request.caller) throw new Error(`route ${request.routeOptions.url} used callerOf without authentication`)
  return request.caller
}
