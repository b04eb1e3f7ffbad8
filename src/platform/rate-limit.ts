// Rate limits, on @fastify/rate-limit's store and counting: a fixed one-second window per
// authenticated partner (RAIL_RATE_LIMIT_RPS), and per client address for everything
// unauthenticated — routes that take no credentials and requests whose credentials failed
// (RAIL_RATE_LIMIT_UNAUTHENTICATED_RPS; IPv6 addresses by their /56, so that one network's many
// addresses are one client). Authentication calls this module at its own points rather than the
// library hooking a phase of its own: a request is counted as soon as it is known whose it is,
// before its input is checked, so that malformed requests count too; and a client over its limit
// for failed credentials is refused before its credentials are looked up in the database. Counts
// are kept in this process's memory: with several API processes a partner may make up to that
// many times the limit, which is stated as such in docs/operations.md.
import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { RailError } from './errors.ts'
import type { HttpServer } from './http.ts'

export interface RateLimits {
  /** Requests per second per partner; 0 turns the limit off. */
  partnerRps: number
  /** Requests per second per client address without valid credentials; 0 turns the limit off. */
  unauthenticatedRps: number
  /** Name enquiries (which cost money at a bank and may show a holder's name) per minute per partner, one budget for every route that asks one; the default of src/banking/providers/name-enquiries.ts when absent, 0 off. */
  nameEnquiriesPerMinute?: number
}

/** Far above any benchmark here (about 2,600 requests/s on this machine's two cores). */
export const PARTNER_RPS_DEFAULT = 10_000
/** Enough for a browser or a probe, far below a flood of guessed signatures. */
export const UNAUTHENTICATED_RPS_DEFAULT = 200
const WINDOW_MS = 1_000
/** Buckets remembered at once (least recently used go first). */
const BUCKETS_MAX = 10_000
/** One client's IPv6 network: providers hand out /56s and /64s. */
const IPV6_SUBNET_BITS = 56

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route is not rate-limited (health, metrics, providers' signed notices, the sandbox bank's own API). */
    rateLimited?: boolean
  }
}

export interface RateLimiter {
  /** Counts a request against its partner (when authenticated) or its client address; throws rate_limited past the limit. */
  count(request: FastifyRequest, reply: FastifyReply, partnerId: string | undefined): Promise<void>
  /** Throws rate_limited, counting nothing, when the client address is already past its limit. */
  refuseIfOverLimit(request: FastifyRequest, reply: FastifyReply): Promise<void>
}

export async function installRateLimits(app: HttpServer, limits: RateLimits): Promise<RateLimiter> {
  const keyOf = (request: FastifyRequest & { rateLimitPartnerId?: string }) =>
    request.rateLimitPartnerId
      ? `partner:${request.rateLimitPartnerId}`
      : `address:${normalizeIP(request.ip, IPV6_SUBNET_BITS)}`
  const limitOf = (key: string) => (key.startsWith('partner:') ? limits.partnerRps : limits.unauthenticatedRps)
  // global: false — the library counts only where this module asks it to.
  await app.register(rateLimit, {
    global: false,
    timeWindow: WINDOW_MS,
    cache: BUCKETS_MAX,
    keyGenerator: keyOf,
    max: (_request, key) => limitOf(key),
  })
  const counter = app.createRateLimit()
  const apply = async (
    request: FastifyRequest,
    reply: FastifyReply,
    partnerId: string | undefined,
    increment: boolean,
  ) => {
    if (request.routeOptions.config.rateLimited === false) return
    const keyed = Object.assign(request, { rateLimitPartnerId: partnerId })
    if (limitOf(keyOf(keyed)) === 0) return
    const counted = await counter(keyed, { increment })
    if (counted.isAllowed) return
    const exceeded = increment ? counted.isExceeded : counted.remaining === 0
    if (increment || exceeded)
      void reply
        .header('RateLimit-Limit', counted.max)
        .header('RateLimit-Remaining', counted.remaining)
        .header('RateLimit-Reset', counted.ttlInSeconds)
    if (exceeded)
      throw new RailError('rate_limited', 'Too many requests; retry after the time in Retry-After', undefined, {
        retryAfterS: Math.max(1, counted.ttlInSeconds),
      })
  }
  return {
    count: (request, reply, partnerId) => apply(request, reply, partnerId, true),
    refuseIfOverLimit: (request, reply) => apply(request, reply, undefined, false),
  }
}
