// The per-URL limit on delivery attempts in flight in one process (docs/webhooks.md).

/**
 * How many attempts this process lets run at once to one URL. A URL whose last attempt answered
 * 2xx has no limit; any other (new, failing, or with an attempt running longer than slowAfterMs) gets
 * UNPROVEN_IN_FLIGHT_MAX, so that a receiver that hangs or fails cannot take every
 * worker slot from the healthy ones. A throttle held in memory, nothing more: losing it loses no
 * delivery.
 */
export class UrlThrottle {
  static readonly UNPROVEN_IN_FLIGHT_MAX = 2
  /** The default of slowAfterMs: half the 10 s limit, so a receiver is judged before its attempt times out. */
  static readonly SLOW_MS = 5_000
  /** A new URL's other deliveries wait this long for its first answers before being held back. */
  static readonly PROBE_WAIT_MS = 50
  private static readonly TRACKED_MAX = 10_000
  /** Start times (ms) of the attempts running now, per URL. */
  private readonly running = new Map<string, number[]>()
  private readonly healthy = new Set<string>()
  private readonly failing = new Set<string>()
  /** An attempt running longer than this makes its URL failing. A limit of wall time, as the attempt's own timeout is. */
  private readonly slowAfterMs: number

  constructor(options: { slowAfterMs?: number } = {}) {
    this.slowAfterMs = options.slowAfterMs ?? UrlThrottle.SLOW_MS
  }

  /**
   * healthy: the last attempt answered 2xx; failing: it did not, or one is running slowly; unknown: none seen yet.
   * Attempts are timed on the wall clock (Date.now()), as I/O is: no test clock makes a receiver slow.
   */
  stateOf(url: string, nowMs = Date.now()): 'healthy' | 'failing' | 'unknown' {
    const slowRunning = (this.running.get(url) ?? []).some((startedMs) => nowMs - startedMs > this.slowAfterMs)
    if (slowRunning || this.failing.has(url)) return 'failing'
    return this.healthy.has(url) ? 'healthy' : 'unknown'
  }

  /**
   * Takes a slot for an attempt to `url` (the slot is its start time, to give back to release),
   * or answers undefined when the URL is at its limit. For a URL not seen yet, waits briefly for
   * the attempts already running to tell what it is.
   */
  async admit(url: string): Promise<number | undefined> {
    const deadline = Date.now() + UrlThrottle.PROBE_WAIT_MS
    for (;;) {
      const state = this.stateOf(url)
      const starts = this.running.get(url) ?? []
      if (state === 'healthy' || starts.length < UrlThrottle.UNPROVEN_IN_FLIGHT_MAX) {
        const slot = Date.now()
        this.running.set(url, [...starts, slot])
        return slot
      }
      if (state === 'failing' || Date.now() >= deadline) return undefined
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  /** Gives the slot back and learns from the attempt (undefined: no attempt was made). */
  release(url: string, slot: number, attempt?: { success: boolean }): void {
    const starts = this.running.get(url) ?? []
    const index = starts.indexOf(slot)
    if (index >= 0) starts.splice(index, 1)
    if (starts.length === 0) this.running.delete(url)
    if (!attempt) return
    // Any 2xx makes a URL healthy: its duration says as much about this machine's load as about the receiver.
    const [add, remove] = attempt.success ? [this.healthy, this.failing] : [this.failing, this.healthy]
    remove.delete(url)
    if (add.size >= UrlThrottle.TRACKED_MAX) add.clear()
    add.add(url)
  }
}
