// What a real provider's adapter (Paystack, Monnify) is made with. Adapters are made per use by the
// registry (registry.ts); what must outlive one use (a bearer token) lives in `session`, which the
// registry keeps per provider profile.
import type { Clock } from '../../platform/clock.ts'
import type { Pool } from '../../platform/db.ts'
import type { ProviderProfile } from './capabilities.ts'
import type { ProviderHttp } from './http.ts'

/**
 * A profile's secrets, opened from their sealed form only to make calls: never printed, logged or
 * recorded. Paystack: `secretKey`. Monnify: `apiKey` and `secretKey` (the client secret).
 */
export interface ProviderSecrets {
  secretKey?: string
  apiKey?: string
}

/** What a profile's sealed secrets are bound to: a sealed blob copied onto another profile fails to open. */
export function secretsAssociatedData(name: string): string {
  return `provider:${name}`
}

export interface RealAdapterOptions {
  profile: ProviderProfile
  /** The provider's API root without a trailing slash, e.g. https://api.paystack.co or http://127.0.0.1:8080/sandbox-paystack. */
  baseUrl: string
  secrets: ProviderSecrets
  /** Makes and records every call (provider_calls). */
  http: ProviderHttp
  pool: Pool
  clock: Clock
  /** State kept by the registry for this profile across adapter instances (e.g. Monnify's bearer token and its expiry). */
  session: Map<string, unknown>
}
