// Daily cycles in Africa/Lagos time. Nigeria keeps West Africa Time, UTC+1, all year (no daylight
// saving), so a local cut-off is a fixed UTC instant: 17:00 in Lagos is 16:00 UTC.
const LAGOS_OFFSET_MS = 60 * 60 * 1000
const DAY_MS = 24 * 60 * 60 * 1000
export const SETTLEMENT_TIME_ZONE = 'Africa/Lagos'
export const CUTOFF_PATTERN = '^([01][0-9]|2[0-3]):[0-5][0-9]$'

export interface Cycle {
  /** The cycle's key: the Lagos date of its cut-off, e.g. '2026-11-25'. */
  key: string
  cutoffAt: Date
}

/** The cycle whose cut-off ('HH:MM' in Lagos) is the latest at or before `now`. */
export function latestCycle(now: Date, cutoffTime: string): Cycle {
  const cutoffAt = cutoffOn(now, cutoffTime)
  return cycleAt(cutoffAt.getTime() > now.getTime() ? new Date(cutoffAt.getTime() - DAY_MS) : cutoffAt)
}

/** The first cut-off after `now`. */
export function nextCutoff(now: Date, cutoffTime: string): Date {
  const cutoffAt = cutoffOn(now, cutoffTime)
  return cutoffAt.getTime() > now.getTime() ? cutoffAt : new Date(cutoffAt.getTime() + DAY_MS)
}

/** The cut-off on the Lagos date of `now`. */
function cutoffOn(now: Date, cutoffTime: string): Date {
  const [hours, minutes] = cutoffTime.split(':').map(Number) as [number, number]
  const local = new Date(now.getTime() + LAGOS_OFFSET_MS)
  return new Date(
    Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), hours, minutes) - LAGOS_OFFSET_MS,
  )
}

function cycleAt(cutoffAt: Date): Cycle {
  return { key: new Date(cutoffAt.getTime() + LAGOS_OFFSET_MS).toISOString().slice(0, 10), cutoffAt }
}
