// Request authentication (docs/design.md §7). Every route declares its scheme in `config.auth`. The
// credential is checked when the request arrives, before its body is read, and the signature once
// the body is in, before validation: an unauthenticated caller learns nothing about its body (no
// 413, 415 or 422) and no handler (hence no table) is ever reached. Every failure gives the same
// 401 body, whether or not the key id it names exists: a signed request's declared size is judged
// before its key id is looked up, and its content type and body only once its signature holds.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { TIMESTAMP_TOLERANCE_S } from '../client/signing.ts'
import type { Clock } from '../platform/clock.ts'
import { sha256Hex } from '../platform/crypto.ts'
import type { Pool } from '../platform/db.ts'
import { RailError } from '../platform/errors.ts'
import { assertRequestInput, BODY_LIMIT_BYTES, type HttpServer } from '../platform/http.ts'
import { installIdempotencyKeys } from '../platform/idempotency-keys.ts'
import { PAGE_LIMIT_DEFAULT } from '../platform/pagination.ts'
import { timeStage } from '../platform/observability/stages.ts'
import type { RateLimiter } from '../platform/rate-limit.ts'
import {
  readSignatureHeaders,
  signatureMatches,
  type SignatureHeaders,
  type SignatureRefusal,
} from '../platform/request-signature.ts'
import { CredentialCache } from './credential-cache.ts'
import {
  findByEscrowApiKey,
  findSigningKey,
  type AuthenticatedPartner,
  type Caller,
  type FoundCredential,
} from './service.ts'

/** signature: X-Rail-Key-Id + HMAC (partner and wallet APIs); api-key: X-API-Key (escrow API). */
export type AuthScheme = 'signature' | 'api-key' | 'none'

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthScheme
  }
  interface FastifyRequest {
    /** The authenticated caller; set on every route whose scheme is not 'none'. */
    caller: AuthenticatedPartner | undefined
    /** A signed request's credential, found before its body is read; the signature is checked after. */
    signingKey: SigningKey | undefined
  }
}

/** Paths that hold partner data; a route there without a declared scheme is a start-up error. */
const PROTECTED_PREFIXES = ['/api/', '/wallet', '/transfer', '/transaction']
const KEY_ID_MAX_CHARS = 128
const API_KEY_MAX_CHARS = 256

interface AuthDeps {
  pool: Pool
  masterKey: Buffer
  clock: Clock
  credentials: CredentialCache<FoundCredential & { signingSecret?: string }>
}

export interface AuthenticationOptions {
  pool: Pool
  /** Where the credential cache LISTENs: a session of its own, so never through a transaction-mode pooler; `pool` when absent. */
  sessionPool?: Pool
  masterKey: Buffer
  clock: Clock
  /** Counts every request once it is known whose it is, and failed authentications by client address. */
  rateLimiter?: RateLimiter
}

const NO_RATE_LIMITS: RateLimiter = { count: async () => {}, refuseIfOverLimit: async () => {} }

export function installAuthentication(app: HttpServer, options: AuthenticationOptions): void {
  const deps: AuthDeps = {
    ...options,
    credentials: new CredentialCache(options.sessionPool ?? options.pool, { clock: options.clock }),
  }
  const limiter = options.rateLimiter ?? NO_RATE_LIMITS
  deps.credentials.start()
  app.addHook('onClose', async () => deps.credentials.stop())
  app.decorateRequest('caller', undefined)
  app.decorateRequest('signingKey', undefined)
  // A state-changing request's Idempotency-Key is its partner's: read once the caller is known.
  installIdempotencyKeys(app, { pool: options.pool, partnerIdOf: (request) => request.caller?.partner.id })
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth
    if (auth === undefined && PROTECTED_PREFIXES.some((prefix) => route.url.startsWith(prefix))) {
      throw new Error(`route ${route.method} ${route.url} declares no auth scheme`)
    }
  })
  // Credentials are checked before the body is read: an unauthenticated caller gets 401 before
  // any 413 or 415, and its body is never parsed. A client address already past its limit of
  // failures is refused before its credentials are looked up. The signature covers the body, so
  // it is checked once the body is in (preValidation); then the request counts against its
  // partner's rate (or its address's, unauthenticated), and only then is its input checked, so
  // that malformed requests count too.
  app.addHook('onRequest', async (request, reply) => {
    const scheme = request.routeOptions.config.auth ?? 'none'
    if (scheme === 'none') return
    await limiter.refuseIfOverLimit(request, reply)
    await timeStage('authentication', () =>
      countingFailures(request, reply, limiter, async () => {
        if (scheme === 'signature') request.signingKey = await findSignatureCredential(request, deps)
        if (scheme === 'api-key') request.caller = await authenticateApiKey(request, deps)
      }),
    )
  })
  // A signed request whose body could not be read is refused as an unknown key id is (see
  // findSignatureCredential), and counts as a failed authentication as that one does: else the
  // limit on failures would tell them apart.
  app.addHook('onError', async (request, reply) => {
    if (!request.unverifiedBodyAnswer) return
    const answer = request.unverifiedBodyAnswer
    await countingFailures(request, reply, limiter, async () => Promise.reject(answer)).catch((refusal: unknown) => {
      if (refusal instanceof RailError) request.unverifiedBodyAnswer = refusal
    })
  })
  app.addHook('preValidation', async (request, reply) => {
    if (request.signingKey) {
      request.unverifiedBodyAnswer = undefined
      const key = request.signingKey
      await timeStage('authentication', () =>
        countingFailures(request, reply, limiter, async () => {
          request.caller = verifySignature(request, key)
        }),
      )
    }
    await limiter.count(request, reply, request.caller?.partner.id)
    assertRequestInput(request)
  })
}

/** Runs one authentication step; a failure counts against the client's address (which may answer 429 instead) and is rethrown. */
async function countingFailures(
  request: FastifyRequest,
  reply: FastifyReply,
  limiter: RateLimiter,
  step: () => Promise<void>,
): Promise<void> {
  try {
    await step()
  } catch (error) {
    if (error instanceof RailError && error.code === 'unauthorized') await limiter.count(request, reply, undefined)
    throw error
  }
}

/**
 * A signed request whose body is declared larger than the limit is refused before its key id is
 * looked up: judged after, it would be 413 for a known key id and 401 for an unknown one. (Its
 * signature cannot be checked without a body that will not be read.)
 */
function refuseDeclaredOversize(request: FastifyRequest): void {
  const declaredBytes = Number(request.headers['content-length'])
  if (declaredBytes > BODY_LIMIT_BYTES) {
    throw new RailError('payload_too_large', `The body exceeds ${BODY_LIMIT_BYTES} bytes`, {
      limitBytes: BODY_LIMIT_BYTES,
    })
  }
}

function unauthorized(request: FastifyRequest, reason: string): RailError {
  // The reason is logged for operators, never returned: a prober learns nothing from the body.
  request.log.info({ reason }, 'authentication failed')
  return new RailError('unauthorized', 'Missing or invalid credentials')
}

/** The signed request's credential, its headers well-formed and its timestamp fresh; the signature is checked later. */
interface SigningKey {
  found: FoundCredential & { signingSecret: string }
  headers: SignatureHeaders
}

/** What operators read in the log for each refusal of the verifier. */
const REFUSAL_REASONS: Record<SignatureRefusal, string> = {
  missing: 'missing authentication header',
  malformed: 'malformed timestamp or signature',
  stale: `timestamp outside ±${TIMESTAMP_TOLERANCE_S}s`,
  bad_signature: 'signature mismatch',
}

async function findSignatureCredential(request: FastifyRequest, deps: AuthDeps): Promise<SigningKey> {
  const keyId = singleHeader(request, 'x-rail-key-id')
  if (!keyId) throw unauthorized(request, REFUSAL_REASONS.missing)
  const read = readSignatureHeaders(
    request.headers['x-rail-timestamp'],
    request.headers['x-rail-signature'],
    deps.clock,
  )
  if (!read.ok) throw unauthorized(request, REFUSAL_REASONS[read.refusal])
  if (keyId.length > KEY_ID_MAX_CHARS) throw unauthorized(request, 'key id too long')
  refuseDeclaredOversize(request)

  const found = await deps.credentials.get(`signing:${keyId}`, () => findSigningKey(deps.pool, deps.masterKey, keyId))
  if (!found?.signingSecret) throw unauthorized(request, 'unknown, expired or revoked key id')
  // Until the signature is checked, a body that cannot be read in full (over the limit without a
  // Content-Length, shorter than declared) is answered as an unknown key id is.
  request.unverifiedBodyAnswer = new RailError('unauthorized', 'Missing or invalid credentials')
  return { found: { ...found, signingSecret: found.signingSecret }, headers: read.headers }
}

function verifySignature(request: FastifyRequest, key: SigningKey): AuthenticatedPartner {
  // request.raw.url is the path and query exactly as the client sent them.
  const content = { method: request.method, pathWithQuery: request.raw.url ?? '', body: request.rawBody ?? '' }
  if (!signatureMatches(key.found.signingSecret, key.headers, content))
    throw unauthorized(request, REFUSAL_REASONS.bad_signature)
  return { partner: key.found.partner, credentialId: key.found.credentialId }
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

/** The authenticated caller of a route that declared a scheme, with the request's id; a missing one is a programming error. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error(`route ${request.routeOptions.url} used callerOf without authentication`)
  return { ...request.caller, requestId: request.id }
}

/** The page of a list the caller asks for: its partner, the query's `limit` (20 unless given) and `cursor`. */
export function pageRequestOf(request: FastifyRequest & { query: { limit?: number; cursor?: string } }) {
  return {
    partnerId: callerOf(request).partner.id,
    limit: request.query.limit ?? PAGE_LIMIT_DEFAULT,
    cursor: request.query.cursor,
  }
}
