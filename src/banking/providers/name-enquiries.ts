// The one budget of name enquiries a partner may ask for, whatever route asks: a name enquiry
// costs money at a real bank and tells who holds an account, so every route that may show a
// holder's name to the partner (POST /banks/resolve, a settlement account, an escrow's
// disbursement at create or release) spends from the same per-partner count, and past it each
// answers the same 429 (docs/banking.md "Bank list and account-name check"). Counts are kept in
// this process's memory, as the general request limits are (src/platform/rate-limit.ts).
import { RailError } from '../../platform/errors.ts'

/**
 * Name enquiries one partner may make per minute and API process. They cost money at a real bank
 * and answer whether an account exists and who holds it, so they are held far below the general
 * request rate.
 */
export const NAME_ENQUIRIES_PER_MINUTE_DEFAULT = 60
const WINDOW_MS = 60_000
/** Partners remembered at once; the oldest window goes first (its count would have lapsed soonest). */
const PARTNERS_MAX = 10_000

interface Window {
  startMs: number
  count: number
}

export class NameEnquiryBudget {
  readonly perMinute: number
  readonly #windows = new Map<string, Window>()

  /** `perMinute` 0 turns the budget off. */
  constructor(perMinute = NAME_ENQUIRIES_PER_MINUTE_DEFAULT) {
    this.perMinute = perMinute
  }

  /**
   * Counts one enquiry for the partner, before the bank is asked; throws 429 rate_limited with
   * Retry-After (counting nothing more) once the minute's budget is spent.
   */
  spend(partnerId: string, nowMs = Date.now()): void {
    if (this.perMinute === 0) return
    const window = this.#windowOf(partnerId, nowMs)
    if (window.count >= this.perMinute) {
      const retryAfterS = Math.max(1, Math.ceil((window.startMs + WINDOW_MS - nowMs) / 1000))
      throw new RailError(
        'rate_limited',
        `More than ${this.perMinute} account-name checks in a minute; retry after the time in Retry-After`,
        { limit: this.perMinute, windowSeconds: WINDOW_MS / 1000 },
        { retryAfterS },
      )
    }
    window.count += 1
  }

  /** The partner's current fixed window, a new one when the last lapsed. */
  #windowOf(partnerId: string, nowMs: number): Window {
    const current = this.#windows.get(partnerId)
    if (current && nowMs - current.startMs < WINDOW_MS) return current
    this.#windows.delete(partnerId)
    if (this.#windows.size >= PARTNERS_MAX) this.#windows.delete(this.#windows.keys().next().value!)
    const fresh = { startMs: nowMs, count: 0 }
    this.#windows.set(partnerId, fresh)
    return fresh
  }
}
