// The provider dialects the sandbox serves on its bank's books: /sandbox-paystack and
// /sandbox-monnify answer with the paths, shapes, statuses, webhooks and signatures of the real
// APIs, so that Rail's real adapters run end to end here (their base URL is the only difference).
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Clock } from '../platform/clock.ts'
import type { Pool } from '../platform/db.ts'
import type { HttpServer } from '../platform/http.ts'
import { injectBankFault, type FaultSubject } from './routes.ts'
import type { SandboxBank } from './service.ts'

/** What a dialect's routes are registered with: the bank whose books it keeps, and the secret its credentials derive from. */
export interface SandboxDialectDeps {
  app: HttpServer
  bank: SandboxBank
  pool: Pool
  /** The sandbox bank's secret: the dialect's credentials derive from it (dialect-credentials.ts). */
  bankSecret: string
  clock: Clock
}

/** What a dialect's background work (its webhooks) is given. */
export interface SandboxDialectJobDeps {
  pool: Pool
  bankSecret: string
  /** Where the dialect's client (Rail) listens. */
  clientBaseUrl: () => string
  bankCode?: string
  clock: Clock
}

/** The provider profile each dialect's accounts and webhooks belong to. */
export const SANDBOX_PAYSTACK_PROFILE = 'sandbox-paystack'
export const SANDBOX_MONNIFY_PROFILE = 'sandbox-monnify'
export const SANDBOX_PAYSTACK_PREFIX = '/sandbox-paystack'
export const SANDBOX_MONNIFY_PREFIX = '/sandbox-monnify'

/**
 * Every dialect route's: no Rail authentication (the dialect checks the provider's own
 * credentials), no admission or rate limit of Rail's (the dialect is another system), and hidden
 * from Rail's OpenAPI documents (the provider's own describe it).
 */
export const DIALECT_ROUTE_OPTIONS = {
  config: { auth: 'none' as const, admission: false as const, rateLimited: false as const },
  schema: { hide: true },
}

/** A dialect route's handler: it answers every outcome itself, in the provider's shape. */
export type DialectHandler = (
  deps: SandboxDialectDeps,
  request: FastifyRequest,
  reply: FastifyReply,
) => Promise<FastifyReply>

/** Registers one business route of a dialect: its path under the prefix, its handler, and what its request means to fault injection. */
export type DialectRoute = (
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  handler: DialectHandler,
  faultSubject?: (request: FastifyRequest) => FaultSubject,
) => void

/**
 * The route table of a dialect's business: each route checks the provider's credentials
 * (`checkCredentials`, which answers a refusal itself), then the bank's fault injection and magic
 * amounts apply to it; only an injected fault is answered otherwise (a dropped connection, a 500).
 */
export function dialectRoutes(
  deps: SandboxDialectDeps,
  prefix: string,
  checkCredentials: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>,
): DialectRoute {
  return (method, path, handler, faultSubject = () => ({})) => {
    deps.app.route({
      method,
      url: `${prefix}${path}`,
      ...DIALECT_ROUTE_OPTIONS,
      preValidation: checkCredentials,
      preHandler: async (request, reply) =>
        injectBankFault(deps.pool, deps.bank, request, reply, faultSubject(request)),
      handler: async (request, reply) => handler(deps, request, reply),
    })
  }
}
