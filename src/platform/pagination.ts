// Cursor pagination by id, newest first: lists read one row more than the page to know whether
// another page follows; the cursor is the last id shown (ids are UUIDv7, ordered by creation).

/** The row limit to ask the database for a page of `limit`. */
export function pageQueryLimit(limit: number): number {
  return limit + 1
}

/** The page out of rows read with pageQueryLimit, and the cursor of the next page (null on the last). */
export function toPage<T extends { id: string }>(rows: T[], limit: number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit)
  return { items, nextCursor: rows.length > limit ? items[items.length - 1]!.id : null }
}
