// SQL of events (deliveries and attempts: deliveries-repo.ts).
import { camelColumns, rowReaders, type Queryable } from '../platform/db.ts'
import { addJobsSql, jobSpecSql } from '../platform/jobs.ts'
import type { EventDeliveryStatus } from './states.ts'

export type Signing = 'partner' | 'sealed' | 'none'
export type { DeliveryStatus, EventDeliveryStatus } from './states.ts'

export interface EventRecord {
  id: string
  partnerId: string
  type: string
  objectType: string
  objectId: string
  body: string
  callbackUrl: string | null
  signing: Signing
  secretSealed: Buffer | null
  secretBoundTo: string | null
  deliveryStatus: EventDeliveryStatus
  createdAt: Date
}

export const EVENT_COLUMNS =
  'id, partner_id, type, object_type, object_id, body, callback_url, signing, secret_sealed, secret_bound_to, delivery_status, created_at'
/** The columns as an event's fields, for a select list. */
export const EVENT_FIELDS = camelColumns(EVENT_COLUMNS)

const { one, all } = rowReaders((row: EventRecord) => row)

function eventValues(event: EventRecord): unknown[] {
  return [
    event.id,
    event.partnerId,
    event.type,
    event.objectType,
    event.objectId,
    event.body,
    event.callbackUrl,
    event.signing,
    event.secretSealed,
    event.secretBoundTo,
    event.deliveryStatus,
    event.createdAt,
  ]
}

export async function insertEvent(db: Queryable, event: EventRecord): Promise<void> {
  await db.query(
    `INSERT INTO events (${EVENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    eventValues(event),
  )
}

/** A delivery's graphile-worker job. */
export interface DeliveryJob {
  task: string
  payload: unknown
  jobKey: string
  priority: number
}

/**
 * The event, its first delivery, and the graphile-worker job that makes it, in one statement (the
 * job exists only if the caller's transaction commits, like the rows). This first job has no job
 * key: a key costs a look-up in every business transaction, and a second job for one delivery is
 * harmless (the claim lets one attempt through).
 */
export async function insertEventWithDelivery(
  db: Queryable,
  event: EventRecord,
  delivery: NewDelivery,
  job: DeliveryJob,
): Promise<void> {
  await db.query(
    `WITH event AS (
       INSERT INTO events (${EVENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id
     ),
     delivery AS (
       INSERT INTO event_deliveries (id, event_id, partner_id, url, ordering_key, status, next_attempt_at)
       SELECT $13, event.id, $2, $14, $15, 'pending', $12 FROM event -- due at once by the recording clock (the event's time)
       RETURNING id
     )
     SELECT graphile_worker.add_job(identifier => $16::text, payload => $17::json) FROM delivery -- no job key: see above`,
    [...eventValues(event), delivery.id, delivery.url, delivery.orderingKey, job.task, JSON.stringify(job.payload)],
  )
}

/**
 * Many events, their first deliveries (for those with one) and the deliveries' jobs, in one
 * statement — as insertEventWithDelivery does for one (its first job has no job key either).
 */
export async function insertEventsWithDeliveries(
  db: Queryable,
  events: readonly { event: EventRecord; delivery: NewDelivery | null }[],
  task: string,
): Promise<void> {
  if (events.length === 0) return
  const column = <T>(pick: (item: { event: EventRecord; delivery: NewDelivery | null }) => T) => events.map(pick)
  await db.query(
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bytea[], $10::uuid[], $11::text[],
                            $12::timestamptz[], $13::uuid[], $14::text[], $15::text[])
         AS t(id, partner_id, type, object_type, object_id, body, callback_url, signing, secret_sealed, secret_bound_to, delivery_status, created_at,
              delivery_id, url, ordering_key)
     ),
     event AS (
       INSERT INTO events (${EVENT_COLUMNS})
       SELECT id, partner_id, type, object_type, object_id, body, callback_url, signing, secret_sealed, secret_bound_to, delivery_status, created_at FROM input
       RETURNING id
     ),
     delivery AS (
       INSERT INTO event_deliveries (id, event_id, partner_id, url, ordering_key, status, next_attempt_at)
       SELECT input.delivery_id, event.id, input.partner_id, input.url, input.ordering_key, 'pending', input.created_at -- due at once by the recording clock
         FROM input JOIN event ON event.id = input.id
        WHERE input.delivery_id IS NOT NULL
       RETURNING id, url
     )
     -- One add_jobs call for all the deliveries: add_job scans the queue once per call.
     SELECT count(*) FROM ${addJobsSql(`
       SELECT ${jobSpecSql({ identifier: '$16::text', payload: "json_build_object('deliveryId', delivery.id, 'url', delivery.url)" })}
         FROM delivery`)}`,
    [
      column((item) => item.event.id),
      column((item) => item.event.partnerId),
      column((item) => item.event.type),
      column((item) => item.event.objectType),
      column((item) => item.event.objectId),
      column((item) => item.event.body),
      column((item) => item.event.callbackUrl),
      column((item) => item.event.signing),
      column((item) => item.event.secretSealed),
      column((item) => item.event.secretBoundTo),
      column((item) => item.event.deliveryStatus),
      column((item) => item.event.createdAt),
      column((item) => item.delivery?.id ?? null),
      column((item) => item.delivery?.url ?? null),
      column((item) => item.delivery?.orderingKey ?? null),
      task,
    ],
  )
}

export async function selectEvent(db: Queryable, partnerId: string, eventId: string): Promise<EventRecord | undefined> {
  return one(db, `SELECT ${EVENT_FIELDS} FROM events WHERE id = $1 AND partner_id = $2`, [eventId, partnerId])
}

export async function updateEventDeliveryStatus(
  db: Queryable,
  eventId: string,
  status: EventDeliveryStatus,
): Promise<void> {
  await db.query(`UPDATE events SET delivery_status = $2 WHERE id = $1`, [eventId, status])
}

export interface EventFilter {
  partnerId: string
  type?: string
  objectType?: string
  objectId?: string
  deliveryStatus?: EventDeliveryStatus
  /** Only events with a delivery still pending after a failed attempt (being retried). */
  retrying?: boolean
  /** Only events older than this id (the cursor). */
  beforeId?: string
  limit: number
}

/** Newest first. */
export async function selectEvents(db: Queryable, filter: EventFilter): Promise<EventRecord[]> {
  return all(
    db,
    `SELECT ${EVENT_FIELDS} FROM events
      WHERE partner_id = $1
        AND ($2::text IS NULL OR type = $2)
        AND ($3::text IS NULL OR object_type = $3)
        AND ($4::text IS NULL OR object_id = $4)
        AND ($5::text IS NULL OR delivery_status = $5)
        AND ($6::uuid IS NULL OR id < $6)
        AND (NOT $8::boolean OR EXISTS (
              SELECT 1 FROM event_deliveries d WHERE d.event_id = events.id AND d.status = 'pending' AND d.last_error IS NOT NULL))
      ORDER BY id DESC
      LIMIT $7`,
    [
      filter.partnerId,
      filter.type ?? null,
      filter.objectType ?? null,
      filter.objectId ?? null,
      filter.deliveryStatus ?? null,
      filter.beforeId ?? null,
      filter.limit,
      filter.retrying ?? false,
    ],
  )
}

export interface NewDelivery {
  id: string
  eventId: string
  partnerId: string
  url: string
  orderingKey: string
}
