// Time is injected: every decision that depends on time (expiry, deadlines, cut-offs, retry
// schedules, signature windows, cache lifetimes) asks a Clock, so tests move time instead of
// sleeping on it. `Date.now()` stays only where elapsed wall time is measured for metrics or I/O
// timeouts, which no clock should bend.
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

export function unixSeconds(clock: Clock): number {
  return Math.floor(clock.now().getTime() / 1000)
}

/** A clock this many seconds ahead of another (a sandbox partner's test clock over the real one). */
export function offsetClock(clock: Clock, offsetSeconds: number): Clock {
  if (offsetSeconds === 0) return clock
  return { now: () => new Date(clock.now().getTime() + offsetSeconds * 1000) }
}
