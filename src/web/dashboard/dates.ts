// Days as people in Nigeria read them: Africa/Lagos is UTC+1 all year (no daylight saving), so a
// Lagos day starts at 23:00 UTC the day before. Filters take days as YYYY-MM-DD.
const LAGOS_OFFSET_MS = 60 * 60_000
const DAY_MS = 24 * 60 * 60_000

/** The instant a Lagos day (YYYY-MM-DD) starts; undefined for anything that is not a real date. */
export function lagosDayStart(day: unknown): Date | undefined {
  if (typeof day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined
  const midnightUtc = new Date(`${day}T00:00:00Z`)
  if (Number.isNaN(midnightUtc.getTime()) || midnightUtc.toISOString().slice(0, 10) !== day) return undefined
  return new Date(midnightUtc.getTime() - LAGOS_OFFSET_MS)
}

/** The instant the Lagos day after `day` starts (the end of `day`, exclusive). */
export function lagosDayEnd(day: unknown): Date | undefined {
  const start = lagosDayStart(day)
  return start && new Date(start.getTime() + DAY_MS)
}

/** Today in Lagos as YYYY-MM-DD. */
export function lagosToday(now: Date): string {
  return new Date(now.getTime() + LAGOS_OFFSET_MS).toISOString().slice(0, 10)
}
