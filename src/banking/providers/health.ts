// A provider's health, measured: the share of its calls over a recent window that got no readable
// answer (no answer at all, a reset, a 5xx), over all its calls and for each operation alike (a
// provider failing only its sends, while its name enquiries and requeries answer, is not healthy).
// Routing sends new payouts to the first healthy provider of a partner's route; `rail provider
// list`, /metrics and the dashboard show it.
import type { Pool } from '../../platform/db.ts'
import { selectCallCounts } from './repo.ts'

/** The window a provider's health is measured over. */
export const HEALTH_WINDOW_S = 300
/** Fewer calls than this in the window say nothing: the provider counts as healthy. */
export const HEALTH_MIN_CALLS = 10
/** At or past this share of unanswered calls, a provider is unhealthy. */
export const HEALTH_UNANSWERED_MAX = 0.5
/** How long one reading of every provider's counts serves routing decisions. */
const READING_TTL_MS = 5_000

export interface ProviderHealthReading {
  provider: string
  windowS: number
  calls: number
  unanswered: number
  /** unanswered / calls, 0 with no calls. */
  unansweredRate: number
  healthy: boolean
  /** When an operation alone makes the provider unhealthy (its sends, say): that operation. */
  failingOperation?: string
}

export interface CallCounts {
  calls: number
  unanswered: number
  /** The same counts for each operation (payout, requery, name_enquiry…). */
  byOperation?: Record<string, { calls: number; unanswered: number }>
}

/** Whether counts make a provider healthy: a pure rule, tested without a database. */
export function judgeHealth(provider: string, counts: CallCounts | undefined): ProviderHealthReading {
  const calls = counts?.calls ?? 0
  const unanswered = counts?.unanswered ?? 0
  const unansweredRate = calls === 0 ? 0 : unanswered / calls
  const reading = { provider, windowS: HEALTH_WINDOW_S, calls, unanswered, unansweredRate }
  if (!healthyCounts(calls, unanswered)) return { ...reading, healthy: false }
  const failing = Object.entries(counts?.byOperation ?? {}).find(
    ([, operation]) => !healthyCounts(operation.calls, operation.unanswered),
  )
  return failing ? { ...reading, healthy: false, failingOperation: failing[0] } : { ...reading, healthy: true }
}

function healthyCounts(calls: number, unanswered: number): boolean {
  return calls < HEALTH_MIN_CALLS || unanswered / calls < HEALTH_UNANSWERED_MAX
}

/**
 * The first healthy provider of a route, in its order; when none is healthy, the first (a payout
 * must go somewhere, and its pipeline retries and requeries what gets no answer).
 */
export function chooseProvider(
  route: readonly string[],
  healthOf: (provider: string) => ProviderHealthReading,
): string | undefined {
  return route.find((provider) => healthOf(provider).healthy) ?? route[0]
}

export class ProviderHealth {
  readonly #pool: Pool
  #reading: { counts: Map<string, CallCounts>; readAtMs: number } | undefined
  #inFlight: Promise<Map<string, CallCounts>> | undefined

  constructor(pool: Pool) {
    this.#pool = pool
  }

  /** Every provider's health now (read at most every few seconds per process: routing must not scan calls per payout). */
  async readings(): Promise<(provider: string) => ProviderHealthReading> {
    const counts = await this.#counts()
    return (provider) => judgeHealth(provider, counts.get(provider))
  }

  async #counts(): Promise<Map<string, CallCounts>> {
    if (this.#reading && performance.now() - this.#reading.readAtMs < READING_TTL_MS) return this.#reading.counts
    this.#inFlight ??= selectCallCounts(this.#pool, HEALTH_WINDOW_S).finally(() => (this.#inFlight = undefined))
    const counts = await this.#inFlight
    this.#reading = { counts, readAtMs: performance.now() }
    return counts
  }
}
