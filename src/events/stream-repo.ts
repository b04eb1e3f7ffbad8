// SQL of the event stream (stream.ts). Events are streamed in id order (UUIDv7: the time the
// event was made, then random bits). An id is taken before its transaction commits, so an event
// with a smaller id can still appear after a larger one has been read; the stream therefore reads
// only below a horizon no uncommitted event can be under: the start of the oldest transaction
// still open on this database, less a margin for the clocks of the API and the database.
import type { Queryable } from '../platform/db.ts'

export interface StreamedEvent {
  id: string
  type: string
  /** The delivered JSON body, exactly as signed. */
  body: string
}

// The horizon is the lists' own (platform/pagination.ts): one mechanism for every reader by id.
export { selectHorizonId, uuidv7Floor } from '../platform/pagination.ts'

/** The partner's events after a position that are visible now (a new stream leaves them out). */
export async function selectVisibleIdsAfter(db: Queryable, partnerId: string, afterId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM events WHERE partner_id = $1 AND id > $2 ORDER BY id`,
    [partnerId, afterId],
  )
  return rows.map((row) => row.id)
}

export async function eventBelongsTo(db: Queryable, partnerId: string, eventId: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM events WHERE id = $1 AND partner_id = $2`, [eventId, partnerId])
  return rows.length > 0
}

export interface StreamPosition {
  partnerId: string
  /** Events after this id are wanted. */
  afterId: string
}

/**
 * For each position, its partner's next events after it and below the horizon, oldest first, at
 * most `limit` each: one statement for every stream of the process.
 */
export async function selectEventsAfter(
  db: Queryable,
  positions: readonly StreamPosition[],
  horizonId: string,
  limit: number,
): Promise<Map<number, StreamedEvent[]>> {
  const { rows } = await db.query<{ position: string; id: string; type: string; body: string }>(
    `SELECT p.position, e.id, e.type, e.body
       FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS p(partner_id, after_id, position)
       CROSS JOIN LATERAL (
         SELECT id, type, body FROM events
          WHERE partner_id = p.partner_id AND id > p.after_id AND id < $3::uuid
          ORDER BY id
          LIMIT $4
       ) e
      ORDER BY p.position, e.id`,
    [positions.map((position) => position.partnerId), positions.map((position) => position.afterId), horizonId, limit],
  )
  const byPosition = new Map<number, StreamedEvent[]>()
  for (const row of rows) {
    const index = Number(row.position) - 1
    const list = byPosition.get(index) ?? []
    list.push({ id: row.id, type: row.type, body: row.body })
    byPosition.set(index, list)
  }
  return byPosition
}
