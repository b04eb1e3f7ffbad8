// Helpers for event tests: record an event the way a module would, and read its delivery rows.
import { recordEvent, type NewEvent } from '../../src/events/service.ts'
import { systemClock, type Clock } from '../../src/platform/clock.ts'
import { withTransaction, type Pool } from '../../src/platform/db.ts'

/** Records an event on its own transaction, stamped by `clock` (the system clock unless told); answers its id. */
export async function record(pool: Pool, event: Partial<NewEvent> & { partnerId: string }, clock: Clock = systemClock): Promise<string> {
  const recorded = await withTransaction(pool, (tx) =>
    recordEvent(tx, clock, { type: 'test.happened', objectType: 'test_object', objectId: 'obj_1', data: { n: 1 }, ...event }),
  )
  return recorded.id
}

export async function deliveryOf(pool: Pool, eventId: string): Promise<{ id: string; status: string; attempts_made: number; last_error: string | null }> {
  const { rows } = await pool.query(`SELECT id, status, attempts_made, last_error FROM event_deliveries WHERE event_id = $1 ORDER BY seq LIMIT 1`, [eventId])
  return rows[0]
}

export async function attemptsOf(pool: Pool, eventId: string): Promise<{ attempt_number: number; status_code: number | null; error: string | null; response_excerpt: string | null }[]> {
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
