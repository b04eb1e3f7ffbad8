// Cursor pagination by id, newest first: lists read one row more than the page to know whether
// another page follows; the cursor is the last id shown (ids are UUIDv7, ordered by creation).
//
// An id is made before its transaction commits, and ids from several processes (or several
// requests of one) commit in no particular order: a row with a smaller id can become visible after
// a larger one was served. A page that served both neighbours of such a row would have skipped it
// for good. So every list — and the event stream — serves only rows below the horizon: the start of
// the oldest transaction still open on this database, less a margin for the clocks of the hosts
// and the time between making an id and beginning its transaction. Every row below the horizon is
// visible now or never will be, so a page and the pages after it (all below it) skip nothing. A
// row newer than the horizon appears in lists as soon as the transactions begun before it end.
import type { Queryable } from './db.ts'

/** A page's length when the query gives no `limit`. */
export const PAGE_LIMIT_DEFAULT = 20

/** The row limit to ask the database for a page of `limit`. */
export function pageQueryLimit(limit: number): number {
  return limit + 1
}

/** The page out of rows read with pageQueryLimit, and the cursor of the next page (null on the last). */
export function toPage<T extends { id: string }>(rows: T[], limit: number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit)
  return { items, nextCursor: rows.length > limit ? items[items.length - 1]!.id : null }
}

/** The lists' margin (RAIL_LIST_CLOCK_MARGIN_MS), set once at start; 0 until then. */
let listClockMarginMs = 0

export function setListClockMarginMs(marginMs: number): void {
  listClockMarginMs = marginMs
}

export function listClockMargin(): number {
  return listClockMarginMs
}

/**
 * The id a list page reads below (`id < $before`): the cursor, or the horizon when that is lower
 * (always, on a first page). Read in a statement of its own, before the page's (selectHorizonId).
 */
export async function pageBefore(db: Queryable, cursor: string | undefined): Promise<string> {
  return pageBelow(cursor, await selectHorizonId(db, listClockMarginMs))
}

/** The cursor, or the horizon when that is lower. */
export function pageBelow(cursor: string | undefined, horizonId: string): string {
  const cursorId = cursor?.toLowerCase()
  return cursorId !== undefined && cursorId < horizonId ? cursorId : horizonId
}

/**
 * The lowest id that may still be committed: every row below it is visible now or never will be.
 * Only client sessions count (autovacuum's long transactions do not hold it back); all of Rail's
 * sessions must use one role, or one with pg_read_all_stats, to see each other's. Read in a
 * statement of its own, before the rows are read in another: a transaction that ends between the
 * two is then visible to the second. Read on the primary: a replica's sessions are not the
 * writers' (platform/read-pool.ts).
 */
export async function selectHorizonId(db: Queryable, marginMs: number): Promise<string> {
  const { rows } = await db.query<{ horizon_ms: string }>(HORIZON_SQL, [marginMs])
  return uuidv7Floor(Number(rows[0]!.horizon_ms))
}

/** The horizon in milliseconds, less the margin ($1). */
export const HORIZON_SQL = `SELECT floor(extract(epoch FROM least(clock_timestamp(), min(xact_start))) * 1000)::bigint - $1::bigint AS horizon_ms
       FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`

/** The smallest UUIDv7 of a millisecond: ids below it were made earlier. */
export function uuidv7Floor(ms: number): string {
  const hex = Math.max(0, ms).toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`
}
