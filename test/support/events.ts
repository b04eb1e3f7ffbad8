// Helpers for event tests: record an event the way a module would, and read its delivery rows.
import { recordEvent, type NewEvent } from '../../src/events/service.ts'
import { systemClock, type Clock } from '../../src/platform/clock.ts'
import { withTransaction, type Pool } from '../../src/platform/db.ts'

/** Records an event on its own transaction, stamped by `clock` (the system clock unless told); answers its id. */
export async function record(
  pool: Pool,
  event: Partial<NewEvent> & { partnerId: string },
  clock: Clock = systemClock,
): Promise<string> {
  const recorded = await withTransaction(pool, (tx) =>
    recordEvent(tx, clock, {
      type: 'test.happened',
      objectType: 'test_object',
      objectId: 'obj_1',
      data: { n: 1 },
      ...event,
    }),
  )
  return recorded.id
}

export async function deliveryOf(
  pool: Pool,
  eventId: string,
): Promise<{ id: string; status: string; attempts_made: number; last_error: string | null }> {
  const { rows } = await pool.query(
    `SELECT id, status, attempts_made, last_error FROM event_deliveries WHERE event_id = $1 ORDER BY seq LIMIT 1`,
    [eventId],
  )
  return rows[0]
}

export async function attemptsOf(
  pool: Pool,
  eventId: string,
): Promise<
  { attempt_number: number; status_code: number | null; error: string | null; response_excerpt: string | null }[]
> {
  const { rows } = await pool.query(
    `SELECT a.attempt_number, a.status_code, a.error, a.response_excerpt FROM event_delivery_attempts a
       JOIN event_deliveries d ON d.id = a.delivery_id WHERE d.event_id = $1 ORDER BY d.seq, a.attempt_number`,
    [eventId],
  )
  return rows
}

export async function eventStatus(pool: Pool, eventId: string): Promise<string> {
  const { rows } = await pool.query(`SELECT delivery_status FROM events WHERE id = $1`, [eventId])
  return rows[0]?.delivery_status
}

/**
 * The deliveries of an object's events, with their attempts and the database's time: what a test
 * prints when the callbacks it waits for do not come, so that a failure on CI explains itself.
 */
export async function describeDeliveries(pool: Pool, objectId: string): Promise<string> {
  const { rows } = await pool.query(
    `SELECT e.type, d.status, d.attempts_made, d.next_attempt_at, d.lease_until, now() AS db_now,
            (SELECT json_agg(a ORDER BY a.attempt_number) FROM event_delivery_attempts a WHERE a.delivery_id = d.id) AS attempts
       FROM events e LEFT JOIN event_deliveries d ON d.event_id = e.id WHERE e.object_id = $1 ORDER BY e.id, d.seq`,
    [objectId],
  )
  return JSON.stringify(rows, null, 1)
}
