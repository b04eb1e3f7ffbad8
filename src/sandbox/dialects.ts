// The provider dialects the sandbox serves on its bank's books: /sandbox-paystack and
// /sandbox-monnify answer with the paths, shapes, statuses, webhooks and signatures of the real
// APIs, so that Rail's real adapters run end to end here (their base URL is the only difference).
import type { Clock } from '../platform/clock.ts'
import type { Pool } from '../platform/db.ts'
import type { HttpServer } from '../platform/http.ts'
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
