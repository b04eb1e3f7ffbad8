// SQL of events, their deliveries and delivery attempts.
import type { Queryable } from '../platform/db.ts'

export type Signing = 'partner' | 'sealed' | 'none'
export type DeliveryStatus = 'pending' | 'delivered' | 'failed'
export type EventDeliveryStatus = DeliveryStatus | 'skipped'

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

interface EventRow {
  id: string
  partner_id: string
  type: string
  object_type: string
  object_id: string
  body: string
  callback_url: string | null
  signing: Signing
  secret_sealed: Buffer | null
  secret_bound_to: string | null
  delivery_status: EventDeliveryStatus
  created_at: Date
}

const EVENT_COLUMNS = 'id, partner_id, type, object_type, object_id, body, callback_url, signing, secret_sealed, secret_bound_to, delivery_status, created_at'

function toEvent(row: EventRow): EventRecord {
  return {
    id: row.id,
    partnerId: row.partner_id,
    type: row.type,
    objectType: row.object_type,
    objectId: row.object_id,
    body: row.body,
    callbackUrl: row.callback_url,
    signing: row.signing,
    secretSealed: row.secret_sealed,
    secretBoundTo: row.secret_bound_to,
    deliveryStatus: row.delivery_status,
    createdAt: row.created_at,
  }
}

export async function insertEvent(db: Queryable, event: EventRecord): Promise<void> {
  await db.query(
    `INSERT INTO events (${EVENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
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
    ],
  )
}

export async function selectEvent(db: Queryable, partnerId: string, eventId: string): Promise<EventRecord | undefined> {
  const { rows } = await db.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE id = $1 AND partner_id = $2`, [eventId, partnerId])
  return rows[0] && toEvent(rows[0])
}

export async function updateEventDeliveryStatus(db: Queryable, eventId: string, status: EventDeliveryStatus): Promise<void> {
  await db.query(`UPDATE events SET delivery_status = $2 WHERE id = $1`, [eventId, status])
}

export interface EventFilter {
  partnerId: string
  type?: string
  objectType?: string
  objectId?: string
  deliveryStatus?: EventDeliveryStatus
  /** Only events older than this id (the cursor). */
  beforeId?: string
  limit: number
}

/** Newest first. */
export async function selectEvents(db: Queryable, filter: EventFilter): Promise<EventRecord[]> {
  const { rows } = await db.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events
      WHERE partner_id = $1
        AND ($2::text IS NULL OR type = $2)
        AND ($3::text IS NULL OR object_type = $3)
        AND ($4::text IS NULL OR object_id = $4)
        AND ($5::text IS NULL OR delivery_status = $5)
        AND ($6::uuid IS NULL OR id < $6)
      ORDER BY id DESC
      LIMIT $7`,
    [filter.partnerId, filter.type ?? null, filter.objectType ?? null, filter.objectId ?? null, filter.deliveryStatus ?? null, filter.beforeId ?? null, filter.limit],
  )
  return rows.map(toEvent)
}

export interface Delivery {
  id: string
  eventId: string
  partnerId: string
  url: string
  status: DeliveryStatus
  attemptsMade: number
  nextAttemptAt: Date
  lastError: string | null
  deliveredAt: Date | null
  failedAt: Date | null
  createdAt: Date
}

interface DeliveryRow {
  id: string
  event_id: string
  partner_id: string
  url: string
  status: DeliveryStatus
  attempts_made: number
  next_attempt_at: Date
  last_error: string | null
  delivered_at: Date | null
  failed_at: Date | null
  created_at: Date
}

const DELIVERY_COLUMNS = 'id, event_id, partner_id, url, status, attempts_made, next_attempt_at, last_error, delivered_at, failed_at, created_at'

function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    eventId: row.event_id,
    partnerId: row.partner_id,
    url: row.url,
    status: row.status,
    attemptsMade: row.attempts_made,
    nextAttemptAt: row.next_attempt_at,
    lastError: row.last_error,
    deliveredAt: row.delivered_at,
    failedAt: row.failed_at,
    createdAt: row.created_at,
  }
}

export interface NewDelivery {
  id: string
  eventId: string
  partnerId: string
  url: string
  orderingKey: string
}

export async function insertDelivery(db: Queryable, delivery: NewDelivery): Promise<void> {
  await db.query(
    `INSERT INTO event_deliveries (id, event_id, partner_id, url, ordering_key, status, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, 'pending', now())`,
    [delivery.id, delivery.eventId, delivery.partnerId, delivery.url, delivery.orderingKey],
  )
}

export async function selectDeliveries(db: Queryable, eventId: string): Promise<Delivery[]> {
  const { rows } = await db.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM event_deliveries WHERE event_id = $1 ORDER BY seq`, [eventId])
  return rows.map(toDelivery)
}

/** A pending delivery of the event, if one is waiting. */
export async function selectPendingDelivery(db: Queryable, eventId: string): Promise<Delivery | undefined> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM event_deliveries WHERE event_id = $1 AND status = 'pending' ORDER BY seq LIMIT 1`,
    [eventId],
  )
  return rows[0] && toDelivery(rows[0])
}

/** Moves a waiting delivery's next attempt to now (a redelivery request while one is pending). */
export async function advanceDelivery(db: Queryable, deliveryId: string): Promise<void> {
  await db.query(`UPDATE event_deliveries SET next_attempt_at = now(), updated_at = now() WHERE id = $1 AND status = 'pending'`, [deliveryId])
}

/** What a worker needs to make one attempt: the delivery, its event, and the attempt number it claimed. */
export interface ClaimedAttempt {
  delivery: Delivery
  attemptNumber: number
  event: EventRecord
}

/**
 * Claims the next attempt of a delivery: due, not leased by another worker, and not behind an
 * earlier pending delivery of the same object to the same URL. Returns undefined when any of
 * those does not hold; whoever holds the lease, or the earlier delivery's completion, or the
 * sweep, brings the delivery back.
 */
export async function claimAttempt(db: Queryable, deliveryId: string, leaseMs: number): Promise<ClaimedAttempt | undefined> {
  const { rows } = await db.query<DeliveryRow & { event: EventRow }>(
    `UPDATE event_deliveries d
        SET attempts_made = d.attempts_made + 1, lease_until = now() + make_interval(secs => $2::double precision / 1000), updated_at = now()
      WHERE d.id = $1
        AND d.status = 'pending'
        AND d.next_attempt_at <= now()
        AND (d.lease_until IS NULL OR d.lease_until < now())
        AND NOT EXISTS (
          SELECT 1 FROM event_deliveries earlier
           WHERE earlier.url = d.url AND earlier.ordering_key = d.ordering_key AND earlier.status = 'pending' AND earlier.seq < d.seq)
      RETURNING d.id, d.event_id, d.partner_id, d.url, d.status, d.attempts_made, d.next_attempt_at, d.last_error, d.delivered_at, d.failed_at, d.created_at,
        (SELECT row_to_json(e) FROM (SELECT ${EVENT_COLUMNS} FROM events WHERE id = d.event_id) e) AS event`,
    [deliveryId, leaseMs],
  )
  const row = rows[0]
  if (!row) return undefined
  const eventRow = row.event
  const event = toEvent({
    ...eventRow,
    // row_to_json renders bytea as "\x…" hex text and timestamps as text.
    secret_sealed: eventRow.secret_sealed === null ? null : Buffer.from(String(eventRow.secret_sealed).slice(2), 'hex'),
    created_at: new Date(eventRow.created_at),
  })
  return { delivery: toDelivery(row), attemptNumber: row.attempts_made, event }
}

export interface Attempt {
  deliveryId: string
  attemptNumber: number
  url: string
  startedAt: Date
  durationMs: number
  statusCode: number | null
  error: string | null
  responseExcerpt: string | null
}

export async function insertAttempt(db: Queryable, attempt: Attempt): Promise<void> {
  await db.query(
    `INSERT INTO event_delivery_attempts (delivery_id, attempt_number, url, started_at, duration_ms, status_code, error, response_excerpt)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [attempt.deliveryId, attempt.attemptNumber, attempt.url, attempt.startedAt, attempt.durationMs, attempt.statusCode, attempt.error, attempt.responseExcerpt],
  )
}

export async function selectAttempts(db: Queryable, deliveryIds: string[]): Promise<Attempt[]> {
  const { rows } = await db.query<{
    delivery_id: string
    attempt_number: number
    url: string
    started_at: Date
    duration_ms: number
    status_code: number | null
    error: string | null
    response_excerpt: string | null
  }>(
    `SELECT delivery_id, attempt_number, url, started_at, duration_ms, status_code, error, response_excerpt
       FROM event_delivery_attempts WHERE delivery_id = ANY($1::uuid[]) ORDER BY delivery_id, attempt_number`,
    [deliveryIds],
  )
  return rows.map((r) => ({
    deliveryId: r.delivery_id,
    attemptNumber: r.attempt_number,
    url: r.url,
    startedAt: r.started_at,
    durationMs: r.duration_ms,
    statusCode: r.status_code,
    error: r.error,
    responseExcerpt: r.response_excerpt,
  }))
}

/**
 * Ends or reschedules the attempt this worker claimed. Guarded by the attempt number: if this
 * worker's lease lapsed and another worker claimed a later attempt, this late outcome changes
 * nothing (the attempt row is still kept).
 */
export async function finishAttempt(
  db: Queryable,
  deliveryId: string,
  attemptNumber: number,
  outcome: { status: DeliveryStatus; error: string | null; nextAttemptAt?: Date },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE event_deliveries
        SET status = $3,
            last_error = $4,
            next_attempt_at = coalesce($5, next_attempt_at),
            lease_until = NULL,
            delivered_at = CASE WHEN $3 = 'delivered' THEN now() ELSE delivered_at END,
            failed_at = CASE WHEN $3 = 'failed' THEN now() ELSE failed_at END,
            updated_at = now()
      WHERE id = $1 AND attempts_made = $2 AND status = 'pending'`,
    [deliveryId, attemptNumber, outcome.status, outcome.error, outcome.nextAttemptAt ?? null],
  )
  return rowCount === 1
}

/** Fails a pending delivery without an attempt (its URL is disabled). */
export async function failWithoutAttempt(db: Queryable, deliveryId: string, error: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE event_deliveries SET status = 'failed', last_error = $2, failed_at = now(), lease_until = NULL, updated_at = now()
      WHERE id = $1 AND status = 'pending'`,
    [deliveryId, error],
  )
  return rowCount === 1
}

/** The first pending delivery of an object to a URL: the one to attempt next. */
export async function selectNextInOrder(db: Queryable, url: string, orderingKey: string): Promise<{ id: string; nextAttemptAt: Date } | undefined> {
  const { rows } = await db.query<{ id: string; next_attempt_at: Date }>(
    `SELECT id, next_attempt_at FROM event_deliveries
      WHERE url = $1 AND ordering_key = $2 AND status = 'pending' ORDER BY seq LIMIT 1`,
    [url, orderingKey],
  )
  return rows[0] && { id: rows[0].id, nextAttemptAt: rows[0].next_attempt_at }
}

export async function selectOrderingKey(db: Queryable, deliveryId: string): Promise<{ url: string; orderingKey: string } | undefined> {
  const { rows } = await db.query<{ url: string; ordering_key: string }>(`SELECT url, ordering_key FROM event_deliveries WHERE id = $1`, [deliveryId])
  return rows[0] && { url: rows[0].url, orderingKey: rows[0].ordering_key }
}

/**
 * Pending deliveries that nobody is working on although they are due: their job was lost with a
 * killed worker, or their claim lapsed. Only the first of each object and URL is returned.
 */
export async function selectStalledDeliveries(db: Queryable, graceMs: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT d.id FROM event_deliveries d
      WHERE d.status = 'pending'
        AND d.next_attempt_at < now() - make_interval(secs => $1::double precision / 1000)
        AND (d.lease_until IS NULL OR d.lease_until < now())
        AND NOT EXISTS (
          SELECT 1 FROM event_deliveries earlier
           WHERE earlier.url = d.url AND earlier.ordering_key = d.ordering_key AND earlier.status = 'pending' AND earlier.seq < d.seq)
      ORDER BY d.next_attempt_at
      LIMIT $2`,
    [graceMs, limit],
  )
  return rows.map((r) => r.id)
}

export async function selectUrlDisabled(db: Queryable, partnerId: string, url: string): Promise<{ disabledAt: Date; reason: string } | undefined> {
  const { rows } = await db.query<{ disabled_at: Date; reason: string }>(
    `SELECT disabled_at, reason FROM disabled_callback_urls WHERE partner_id = $1 AND url = $2`,
    [partnerId, url],
  )
  return rows[0] && { disabledAt: rows[0].disabled_at, reason: rows[0].reason }
}

export async function insertDisabledUrl(db: Queryable, partnerId: string, url: string, reason: string): Promise<void> {
  await db.query(
    `INSERT INTO disabled_callback_urls (partner_id, url, disabled_at, reason) VALUES ($1, $2, now(), $3)
     ON CONFLICT (partner_id, url) DO UPDATE SET disabled_at = excluded.disabled_at, reason = excluded.reason`,
    [partnerId, url, reason],
  )
}

export async function deleteDisabledUrl(db: Queryable, partnerId: string, url: string): Promise<void> {
  await db.query(`DELETE FROM disabled_callback_urls WHERE partner_id = $1 AND url = $2`, [partnerId, url])
}
