// Which adapter talks to which provider. Adapters are made per use, carrying the request id that
// caused the calls (recorded in provider_calls); the records of concurrent calls share one
// transaction and one INSERT (src/platform/coalescer.ts), each call still waiting for its own
// record's commit before its answer is acted on.
import type { Clock } from '../platform/clock.ts'
import { Coalescer } from '../platform/coalescer.ts'
import type { Pool } from '../platform/db.ts'
import type { ProviderProfile } from './capabilities.ts'
import { NameEnquiryBudget } from './name-enquiries.ts'
import { insertCalls, type NewProviderCall } from './repo.ts'
import { SandboxAdapter } from './sandbox-adapter.ts'
import type { ProviderAdapter } from './types.ts'

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
}

export class ProviderRegistry {
  readonly #pool: Pool
  readonly #settings: ProviderSettings | undefined
  readonly #recorder: Coalescer<NewProviderCall, null>
  /** What every route that may show a holder's name spends per partner (the payment pipeline's own enquiries show none). */
  readonly nameEnquiries: NameEnquiryBudget

  /** `nameEnquiriesPerMinute`: RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE, NAME_ENQUIRIES_PER_MINUTE_DEFAULT when absent, 0 off. */
  constructor(pool: Pool, settings: ProviderSettings | undefined, nameEnquiriesPerMinute?: number) {
    this.#pool = pool
    this.#settings = settings
    this.nameEnquiries = new NameEnquiryBudget(nameEnquiriesPerMinute)
    this.#recorder = new Coalescer<NewProviderCall, null>(pool, async (tx, calls) => {
      await insertCalls(tx, calls)
      return calls.map(() => null)
    })
  }

  adapterFor(provider: ProviderProfile, requestId?: string): ProviderAdapter {
    if (provider.adapter === 'sandbox') {
      if (!this.#settings) throw new Error('the sandbox adapter is not configured on this server (SANDBOX_BANK_SECRET)')
      return new SandboxAdapter({
        provider: provider.name,
        baseUrl: this.#settings.sandboxBankUrl(),
        secret: this.#settings.sandboxBankSecret,
        pool: this.#pool,
        recorder: this.#recorder,
        timeoutMs: this.#settings.timeoutMs,
        clock: this.#settings.clock,
        requestValidityS: this.#settings.requestValidityS,
        requestId,
      })
    }
    throw new Error(`no adapter for ${provider.adapter}`)
  }
}
