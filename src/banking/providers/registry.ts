// Which adapter talks to which provider. Adapters are made per use, carrying the request id that
// caused the calls (recorded in provider_calls); the records of concurrent calls share one
// transaction and one INSERT (src/platform/coalescer.ts), each call still waiting for its own
// record's commit before its answer is acted on.
//
// A profile whose base URL is null is served by this Rail's own sandbox: the sandbox bank, or its
// Paystack and Monnify dialects, at the server's own address and with credentials derived from the
// sandbox bank's secret. Any other profile's secrets are sealed with the master key, opened here to
// make calls and nowhere else.
import type { Clock } from '../../platform/clock.ts'
import { systemClock } from '../../platform/clock.ts'
import { Coalescer } from '../../platform/coalescer.ts'
import { open } from '../../platform/crypto.ts'
import type { Pool } from '../../platform/db.ts'
import { RailError } from '../../platform/errors.ts'
import {
  monnifyMainAccountNumber,
  SANDBOX_BANK_CODE_DEFAULT,
  SANDBOX_MONNIFY_PREFIX,
  SANDBOX_PAYSTACK_PREFIX,
  sandboxMonnifyCredentials,
  sandboxPaystackSecretKey,
} from '../../sandbox/public.ts'
import { secretsAssociatedData, type ProviderSecrets, type RealAdapterOptions } from './adapter-options.ts'
import type { ProviderProfile } from './capabilities.ts'
import { cleanAnswers } from './clean.ts'
import { ProviderHealth } from './health.ts'
import { ProviderHttp } from './http.ts'
import { MonnifyAdapter } from './monnify/adapter.ts'
import { NameEnquiryBudget } from './name-enquiries.ts'
import { PaystackAdapter } from './paystack/adapter.ts'
import { insertCalls, selectSealedSecrets, type NewProviderCall } from './repo.ts'
import { SandboxAdapter } from './sandbox-adapter.ts'
import type { ProviderAdapter, SandboxControls } from './types.ts'

export interface ProviderSettings {
  /** The sandbox bank's base URL; a function because `rail serve` knows its own address only once listening. */
  sandboxBankUrl: () => string
  sandboxBankSecret: string
  timeoutMs?: number
  /**
   * The time Rail and the sandbox bank share: requests are signed by it and the bank checks them
   * by it (the system clock unless told; a test's clock when it moves time for both).
   */
  clock?: Clock
  /** The sandbox bank's request validity window as that bank is configured (TIMESTAMP_TOLERANCE_S unless told). */
  requestValidityS?: number
  /** The sandbox bank's code (SANDBOX_BANK_CODE_DEFAULT unless told): the sandbox Monnify merchant's main account is a NUBAN there. */
  sandboxBankCode?: string
}

/** How long opened secrets are kept before they are read again (a `rail provider set` reaches running processes within it). */
const SECRETS_TTL_MS = 60_000

export class ProviderRegistry {
  readonly #pool: Pool
  readonly #settings: ProviderSettings | undefined
  readonly #masterKey: Buffer | undefined
  readonly #recorder: Coalescer<NewProviderCall, null>
  readonly #secrets = new Map<string, { secrets: ProviderSecrets; sealed: Buffer; readAtMs: number }>()
  readonly #sessions = new Map<string, Map<string, unknown>>()
  /** What every route that may show a holder's name spends per partner (the payment pipeline's own enquiries show none). */
  readonly nameEnquiries: NameEnquiryBudget
  /** Each provider's recent no-answer and 5xx rate: routing sends new payouts to the first healthy provider of a route. */
  readonly health: ProviderHealth

  /** `nameEnquiriesPerMinute`: RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE, NAME_ENQUIRIES_PER_MINUTE_DEFAULT when absent, 0 off. */
  constructor(pool: Pool, settings: ProviderSettings | undefined, nameEnquiriesPerMinute?: number, masterKey?: Buffer) {
    this.#pool = pool
    this.#settings = settings
    this.#masterKey = masterKey
    this.nameEnquiries = new NameEnquiryBudget(nameEnquiriesPerMinute)
    this.health = new ProviderHealth(pool)
    this.#recorder = new Coalescer<NewProviderCall, null>(pool, async (tx, calls) => {
      await insertCalls(tx, calls)
      return calls.map(() => null)
    })
  }

  /** Whether this server can reach the profile's provider: a real one always; the sandbox's only where the sandbox is served. */
  serves(provider: ProviderProfile): boolean {
    return provider.baseUrl !== null || this.#settings !== undefined
  }

  /** Refuses, before anything is written, a profile this server cannot reach (see #sandbox). */
  assertServes(provider: ProviderProfile): void {
    if (!this.serves(provider)) this.#sandbox(provider)
  }

  /**
   * The adapter of a profile, its answers made storable (clean.ts). Only a real provider's profile
   * with sealed secrets needs a read (cached a minute).
   */
  async adapterFor(provider: ProviderProfile, requestId?: string): Promise<ProviderAdapter> {
    if (provider.adapter === 'sandbox') return cleanAnswers(this.#sandboxAdapter(provider, requestId))
    const options = await this.#realOptions(provider, requestId)
    return cleanAnswers(provider.adapter === 'paystack' ? new PaystackAdapter(options) : new MonnifyAdapter(options))
  }

  /**
   * The sandbox's controls for a profile this Rail's sandbox serves (whatever dialect it speaks):
   * they act on the sandbox bank's books. A real provider has none: 403 capability_disabled.
   */
  sandboxControlsFor(provider: ProviderProfile): SandboxControls {
    if (provider.baseUrl !== null || !this.#settings) {
      throw new RailError(
        'capability_disabled',
        `Provider ${provider.name} is a real provider: only the sandbox can simulate`,
        { provider: provider.name, capability: 'sandbox' },
      )
    }
    return this.#sandboxAdapter(provider)
  }

  #sandboxAdapter(provider: ProviderProfile, requestId?: string): SandboxAdapter {
    const settings = this.#sandbox(provider)
    return new SandboxAdapter({
      provider: provider.name,
      baseUrl: settings.sandboxBankUrl(),
      secret: settings.sandboxBankSecret,
      pool: this.#pool,
      recorder: this.#recorder,
      timeoutMs: settings.timeoutMs,
      clock: settings.clock,
      requestValidityS: settings.requestValidityS,
      requestId,
    })
  }

  /**
   * The sandbox's settings, for a profile it serves. A server without a sandbox (production) refuses
   * such a profile before any call or write: 403 capability_disabled, naming the fix (a partner with
   * no route goes through the sandbox, so a live partner is routed to a real provider first).
   */
  #sandbox(provider: ProviderProfile): ProviderSettings {
    if (!this.#settings) {
      throw new RailError(
        'capability_disabled',
        `Provider ${provider.name} is the sandbox's, which this server does not serve: an operator routes the partner to a real provider (rail partners providers)`,
        { provider: provider.name, capability: 'sandbox' },
      )
    }
    return this.#settings
  }

  async #realOptions(provider: ProviderProfile, requestId?: string): Promise<RealAdapterOptions> {
    const http = new ProviderHttp({
      provider: provider.name,
      pool: this.#pool,
      recorder: this.#recorder,
      timeoutMs: this.#settings?.timeoutMs,
      requestId,
    })
    let session = this.#sessions.get(provider.name)
    if (!session) this.#sessions.set(provider.name, (session = new Map()))
    const clock = this.#settings?.clock ?? systemClock
    if (provider.baseUrl === null) {
      // Served by this sandbox: its dialect at the server's own address, its credentials derived.
      const settings = this.#sandbox(provider)
      if (provider.adapter === 'paystack') {
        const secrets = { secretKey: sandboxPaystackSecretKey(settings.sandboxBankSecret) }
        return {
          profile: provider,
          baseUrl: `${settings.sandboxBankUrl()}${SANDBOX_PAYSTACK_PREFIX}`,
          secrets,
          http,
          pool: this.#pool,
          clock,
          session,
        }
      }
      const { apiKey, secretKey, contractCode } = sandboxMonnifyCredentials(settings.sandboxBankSecret)
      const sourceAccountNumber = monnifyMainAccountNumber(settings.sandboxBankCode ?? SANDBOX_BANK_CODE_DEFAULT)
      const profile = { ...provider, settings: { contractCode, sourceAccountNumber, ...provider.settings } }
      return {
        profile,
        baseUrl: `${settings.sandboxBankUrl()}${SANDBOX_MONNIFY_PREFIX}`,
        secrets: { apiKey, secretKey },
        http,
        pool: this.#pool,
        clock,
        session,
      }
    }
    return {
      profile: provider,
      baseUrl: provider.baseUrl.replace(/\/+$/, ''),
      secrets: await this.#openSecrets(provider.name),
      http,
      pool: this.#pool,
      clock,
      session,
    }
  }

  async #openSecrets(name: string): Promise<ProviderSecrets> {
    const cached = this.#secrets.get(name)
    if (cached && performance.now() - cached.readAtMs < SECRETS_TTL_MS) return cached.secrets
    const sealed = await selectSealedSecrets(this.#pool, name)
    if (!sealed)
      throw new Error(
        `provider ${name} has no secrets: add them with \`rail provider set ${name} --secret-key-file …\``,
      )
    if (cached && cached.sealed.equals(sealed)) {
      cached.readAtMs = performance.now()
      return cached.secrets
    }
    if (!this.#masterKey) throw new Error(`provider ${name}: this process has no master key to open its secrets`)
    const secrets = JSON.parse(open(this.#masterKey, sealed, secretsAssociatedData(name))) as ProviderSecrets
    this.#secrets.set(name, { secrets, sealed, readAtMs: performance.now() })
    return secrets
  }
}
