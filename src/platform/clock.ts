// Time is injected: services ask a Clock, so tests can move time instead of sleeping on it.
export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

export function unixSeconds(clock: Clock): number {
  return Math.floor(clock.now().getTime() / 1000)
}
