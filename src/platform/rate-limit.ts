// Rate limits, on @fastify/rate-limit: a fixed one-second window per authenticated partner
// (RAIL_RATE_LIMIT_RPS), and per client IP for everything unauthenticated — routes that take no
// credentials and requests whose credentials failed (RAIL_RATE_LIMIT_UNAUTHENTICATED_RPS). Counts
// are kept in this process's memory: with several API processes a partner may make up to that many
// times the limit, which is stated as such in docs/operations.md.
import rateLimit from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { RailError } from './errors.ts'
import type { HttpServer } from './http.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The partner a request authenticated as, for its rate-limit bucket; unset when unauthenticated. */
    rateLimitPartnerId: string | undefined
  }
}

export interface RateLimits {
  /** Requests per second per partner; 0 turns the limit off. */
  partnerRps: number
  /** Requests per second per client IP without valid credentials; 0 turns the limit off. */
  unauthenticatedRps: number
}

/** Far above any benchmark here (about 2,600 requests/s on this machine's two cores). */
export const PARTNER_RPS_DEFAULT = 10_000
/** Enough for a browser or a probe, far below a flood of guessed signatures. */
export const UNAUTHENTICATED_RPS_DEFAULT = 200
const WINDOW_MS = 1_000
/** Buckets remembered at once (least recently used go first). */
const BUCKETS_MAX = 10_000

export interface RateLimiter {
  /** Counts a failed authentication against the client's IP; throws rate_limited past the limit. */
  countUnauthenticated(request: FastifyRequest, reply: FastifyReply): Promise<void>
}

export async function installRateLimits(app: HttpServer, limits: RateLimits): Promise<RateLimiter> {
  app.decorateRequest('rateLimitPartnerId', undefined)
  const keyOf = (request: FastifyRequest) => (request.rateLimitPartnerId ? `partner:${request.rateLimitPartnerId}` : `ip:${request.ip}`)
  const limitOf = (key: string) => (key.startsWith('partner:') ? limits.partnerRps : limits.unauthenticatedRps)
  await app.register(rateLimit, {
    global: true,
    // After authentication, so that a signed request counts against its partner, not its IP.
    hook: 'preHandler',
    timeWindow: WINDOW_MS,
    cache: BUCKETS_MAX,
    keyGenerator: keyOf,
    max: (_request, key) => limitOf(key),
    allowList: (_request, key) => limitOf(key) === 0,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) => rateLimited(context.ttl),
  })
  const countFailure = app.createRateLimit()
  return {
    async countUnauthenticated(request, reply) {
      if (limits.unauthenticatedRps === 0) return
      const counted = await countFailure(request)
      if (counted.isAllowed) return
      void reply.header('RateLimit-Limit', counted.max).header('RateLimit-Remaining', counted.remaining).header('RateLimit-Reset', counted.ttlInSeconds)
      if (counted.isExceeded) throw rateLimited(counted.ttl)
    },
  }
}

function rateLimited(ttlMs: number): RailError {
  return new RailError('rate_limited', 'Too many requests; retry after the time in Retry-After', undefined, { retryAfterS: Math.max(1, Math.ceil(ttlMs / 1000)) })
}
