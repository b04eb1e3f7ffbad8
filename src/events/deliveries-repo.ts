// SQL of deliveries, their attempts, and callback URLs stopped by a 410.
import { camelColumns, rowReaders, type Queryable } from '../platform/db.ts'
import { addJobsSql, jobSpecSql } from '../platform/jobs.ts'
import { EVENT_FIELDS, type DeliveryJob, type DeliveryStatus, type EventRecord, type NewDelivery } from './repo.ts'

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

const DELIVERY_COLUMN_NAMES =
  'id, event_id, partner_id, url, status, attempts_made, next_attempt_at, last_error, delivered_at, failed_at, created_at'
const DELIVERY_COLUMNS = camelColumns(DELIVERY_COLUMN_NAMES)

const { one, all } = rowReaders((row: Delivery) => row)

/** A delivery due at once: at `now`, the application's clock, which the workers judge it by. */
export async function insertDelivery(db: Queryable, delivery: NewDelivery, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO event_deliveries (id, event_id, partner_id, url, ordering_key, status, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6)`,
    [delivery.id, delivery.eventId, delivery.partnerId, delivery.url, delivery.orderingKey, now],
  )
}

export async function selectDeliveries(db: Queryable, eventId: string): Promise<Delivery[]> {
  return all(db, `SELECT ${DELIVERY_COLUMNS} FROM event_deliveries WHERE event_id = $1 ORDER BY seq`, [eventId])
}

/** A pending delivery of the event, if one is waiting. */
export async function selectPendingDelivery(db: Queryable, eventId: string): Promise<Delivery | undefined> {
  return one(
    db,
    `SELECT ${DELIVERY_COLUMNS} FROM event_deliveries WHERE event_id = $1 AND status = 'pending' ORDER BY seq LIMIT 1`,
    [eventId],
  )
}

/**
 * How many of a partner's events are being retried after a failed attempt (a pending delivery
 * whose last attempt failed), counting at most `limit`: webhooks failing now, before their
 * schedule runs out and the event is failed for good.
 */
export async function countRetryingEvents(db: Queryable, partnerId: string, limit: number): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM (
       SELECT DISTINCT event_id FROM event_deliveries
        WHERE status = 'pending' AND partner_id = $1 AND last_error IS NOT NULL
        LIMIT $2) retrying`,
    [partnerId, limit],
  )
  return rows[0]!.count
}

/** Moves a waiting delivery's next attempt to `now` (a redelivery request while one is pending). */
export async function advanceDelivery(db: Queryable, deliveryId: string, now: Date): Promise<void> {
  await db.query(
    `UPDATE event_deliveries SET next_attempt_at = $2, updated_at = now() WHERE id = $1 AND status = 'pending'`,
    [deliveryId, now],
  )
}

/** What a worker needs to make one attempt: the delivery, its event, and the attempt number it claimed. */
export interface ClaimedAttempt {
  delivery: Delivery
  attemptNumber: number
  event: EventRecord
  /** Set when the URL answered 410 earlier: no attempt is made. */
  urlDisabled: { disabledAt: Date; reason: string } | null
}

/**
 * Claims the next attempt of a delivery: due, not leased by another worker, and not behind an
 * earlier pending delivery of the same object to the same URL. Returns undefined when any of
 * those does not hold; whoever holds the lease (or, should it die, a job set for when the lease
 * lapses), or the earlier delivery's completion, or the sweep, brings the delivery back.
 */
export async function claimAttempt(
  db: Queryable,
  deliveryId: string,
  leaseMs: number,
  now: Date,
): Promise<ClaimedAttempt | undefined> {
  const { rows } = await db.query<
    Delivery & {
      event: EventRecord & { secretSealedHex: string | null }
      url_disabled: { disabled_at: string; reason: string } | null
    }
  >(
    `UPDATE event_deliveries d
        SET attempts_made = d.attempts_made + 1, lease_until = now() + make_interval(secs => $2::double precision / 1000), updated_at = now()
      WHERE d.id = $1
        AND d.status = 'pending'
        AND d.next_attempt_at <= $3::timestamptz -- due by the worker's clock (the lease is wall time: it bounds I/O)
        AND (d.lease_until IS NULL OR d.lease_until < now())
        AND NOT EXISTS (
          SELECT 1 FROM event_deliveries earlier
           WHERE earlier.url = d.url AND earlier.ordering_key = d.ordering_key AND earlier.status = 'pending' AND earlier.seq < d.seq)
      RETURNING ${camelColumns(DELIVERY_COLUMN_NAMES, 'd')},
        (SELECT row_to_json(e) FROM (
           SELECT ${EVENT_FIELDS}, encode(secret_sealed, 'hex') AS "secretSealedHex" FROM events WHERE id = d.event_id) e) AS event,
        (SELECT row_to_json(u) FROM (
           SELECT disabled_at, reason FROM disabled_callback_urls WHERE partner_id = d.partner_id AND url = d.url) u) AS url_disabled`,
    [deliveryId, leaseMs, now],
  )
  if (!rows[0]) return undefined
  const { event: eventJson, url_disabled: disabled, ...delivery } = rows[0]
  const { secretSealedHex, ...eventFields } = eventJson
  // row_to_json renders timestamps as text; the sealed secret travels as hex.
  const event: EventRecord = {
    ...eventFields,
    secretSealed: secretSealedHex === null ? null : Buffer.from(secretSealedHex, 'hex'),
    createdAt: new Date(eventFields.createdAt),
  }
  const urlDisabled = disabled && { disabledAt: new Date(disabled.disabled_at), reason: disabled.reason }
  return { delivery, attemptNumber: delivery.attemptsMade, event, urlDisabled }
}

/** Why a pending delivery was not claimed: another worker's claim (until it lapses), or its next attempt not due at `now`. */
export interface Unclaimed {
  url: string
  /** When the claim another worker holds lapses (wall time, as the lease is). */
  leaseUntil: Date | null
  /** When its next attempt is due, by the application's clock, when that is after `now`. */
  dueAt: Date | null
}

/** Why a pending delivery could not be claimed at `now`; undefined when it is not pending. */
export async function selectUnclaimed(db: Queryable, deliveryId: string, now: Date): Promise<Unclaimed | undefined> {
  const { rows } = await db.query<{ url: string; lease_until: Date | null; due_at: Date | null }>(
    `SELECT url, CASE WHEN lease_until >= now() THEN lease_until END AS lease_until, CASE WHEN next_attempt_at > $2 THEN next_attempt_at END AS due_at
       FROM event_deliveries WHERE id = $1 AND status = 'pending'`,
    [deliveryId, now],
  )
  return rows[0] && { url: rows[0].url, leaseUntil: rows[0].lease_until, dueAt: rows[0].due_at }
}

/**
 * A sandbox partner's clock moved `seconds` ahead: its pending deliveries are judged by the
 * workers' (real) clock, so their next attempt comes as many seconds earlier. Answers those now due.
 */
export async function bringForward(
  db: Queryable,
  partnerId: string,
  seconds: number,
  now: Date,
): Promise<{ id: string; url: string }[]> {
  const { rows } = await db.query<{ id: string; url: string; due: boolean }>(
    `UPDATE event_deliveries SET next_attempt_at = next_attempt_at - make_interval(secs => $2::double precision), updated_at = now()
      WHERE partner_id = $1 AND status = 'pending'
      RETURNING id, url, next_attempt_at <= $3::timestamptz AS due`,
    [partnerId, seconds, now],
  )
  return rows.filter((row) => row.due).map(({ id, url }) => ({ id, url }))
}

/**
 * Puts off a delivery that this worker will not attempt now (its URL is busy) to `delayMs` after
 * `now` (the application's clock), with its job `delayMs` after the database's now() (the clock
 * graphile-worker judges run_at by); no attempt is counted.
 */
export async function deferDelivery(
  db: Queryable,
  deliveryId: string,
  delayMs: number,
  job: DeliveryJob,
  now: Date,
): Promise<void> {
  await db.query(
    `WITH deferred AS (
             UPDATE event_deliveries SET next_attempt_at = $7::timestamptz + make_interval(secs => $2::double precision / 1000), updated_at = now()
              WHERE id = $1 AND status = 'pending' AND (lease_until IS NULL OR lease_until < now())
              RETURNING next_attempt_at)
           SELECT graphile_worker.add_job(identifier => $3::text, payload => $4::json, run_at => now() + make_interval(secs => $2::double precision / 1000),
                                          job_key => $5::text, priority => $6::int)
             FROM deferred`,
    [deliveryId, delayMs, job.task, JSON.stringify(job.payload), job.jobKey, job.priority, now],
  )
}

/**
 * Puts off every unclaimed pending delivery to a failing URL at once, to at least `delayMs` ×
 * 0.5–1.5 from `now` (the application's clock; a retry already due later keeps its time), without
 * counting attempts or adding jobs: the sweep brings each back when it is due.
 */
export async function deferDeliveriesToUrl(db: Queryable, url: string, delayMs: number, now: Date): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE event_deliveries
              SET next_attempt_at = greatest(next_attempt_at, $3::timestamptz + make_interval(secs => $2::double precision / 1000 * (0.5 + random()))),
                  updated_at = now()
            WHERE url = $1 AND status = 'pending' AND (lease_until IS NULL OR lease_until < now())`,
    [url, delayMs, now],
  )
  return rowCount ?? 0
}

/**
 * Brings back at once (at `now`, the application's clock), each with its job, the deliveries to
 * `url` that were put off untried (deferDeliveriesToUrl): the URL has answered 2xx since. Retries
 * of failed attempts keep their schedule. Answers how many came back.
 */
export async function resumeDeliveriesToUrl(
  db: Queryable,
  url: string,
  job: { task: string; jobKeyPrefix: string; priority: number },
  now: Date,
): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH resumed AS (
       UPDATE event_deliveries SET next_attempt_at = $5, updated_at = now()
        WHERE url = $1 AND status = 'pending' AND attempts_made = 0 AND next_attempt_at > $5
          AND (lease_until IS NULL OR lease_until < now())
       RETURNING id, url)
     SELECT count(*)::int AS n FROM ${addJobsSql(`
       SELECT ${jobSpecSql({ identifier: '$2::text', payload: "json_build_object('deliveryId', id, 'url', url)", jobKey: '$3::text || id', priority: '$4::int' })}
         FROM resumed`)}`,
    [url, job.task, job.jobKeyPrefix, job.priority, now],
  )
  return rows[0]!.n
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

export interface Outcome {
  status: DeliveryStatus
  error: string | null
  /** When it ended or was rescheduled, by the application's clock (delivered_at, failed_at). */
  at: Date
  /** For a retry (status pending): when. */
  nextAttemptAt?: Date
}

/** What ending an attempt changed: nothing (a stale claim), or the delivery, and the next one of its object. */
export interface Finished {
  finished: boolean
  /** The first pending delivery of the same object to the same URL, to be woken now that this one has ended. */
  next: { id: string; url: string; nextAttemptAt: Date } | null
}

/**
 * Records an attempt and ends or reschedules its delivery, in one statement: the attempt row;
 * the delivery (guarded by the attempt number: if this worker's claim lapsed and another worker
 * claimed a later attempt, this late outcome changes nothing but its attempt row); the event's
 * delivery status when the delivery ended; and the next pending delivery of the same object.
 * Without an attempt (a disabled URL), only the delivery changes.
 */
export async function finishAttempt(
  db: Queryable,
  deliveryId: string,
  attemptNumber: number,
  outcome: Outcome,
  attempt?: Attempt,
): Promise<Finished> {
  const { rows } = await db.query<{ next: { id: string; url: string; next_attempt_at: string } | null }>(
    `WITH attempt AS (
       INSERT INTO event_delivery_attempts (delivery_id, attempt_number, url, started_at, duration_ms, status_code, error, response_excerpt)
       SELECT $1, $2, $6, $7, $8, $9, $10, $11 WHERE $6::text IS NOT NULL
     ),
     finished AS (
       UPDATE event_deliveries
          SET status = $3,
              last_error = $4,
              attempts_made = CASE WHEN $6::text IS NULL THEN attempts_made - 1 ELSE attempts_made END, -- ended without an attempt
              next_attempt_at = coalesce($5, next_attempt_at),
              lease_until = NULL,
              delivered_at = CASE WHEN $3 = 'delivered' THEN $12::timestamptz ELSE delivered_at END,
              failed_at = CASE WHEN $3 = 'failed' THEN $12::timestamptz ELSE failed_at END,
              updated_at = now()
        WHERE id = $1 AND attempts_made = $2 AND status = 'pending'
        RETURNING event_id, url, ordering_key, seq, status
     ),
     event_status AS (
       UPDATE events SET delivery_status = f.status FROM finished f WHERE events.id = f.event_id AND f.status <> 'pending'
     )
     SELECT CASE WHEN f.status = 'pending' THEN NULL ELSE (
              SELECT row_to_json(n) FROM (
                SELECT next.id, next.url, next.next_attempt_at FROM event_deliveries next
                 WHERE next.url = f.url AND next.ordering_key = f.ordering_key AND next.status = 'pending' AND next.seq > f.seq
                 ORDER BY next.seq LIMIT 1) n) END AS next
       FROM finished f`,
    [
      deliveryId,
      attemptNumber,
      outcome.status,
      outcome.error,
      outcome.nextAttemptAt ?? null,
      attempt?.url ?? null,
      attempt?.startedAt ?? null,
      attempt?.durationMs ?? null,
      attempt?.statusCode ?? null,
      attempt?.error ?? null,
      attempt?.responseExcerpt ?? null,
      outcome.at,
    ],
  )
  const row = rows[0]
  if (!row) return { finished: false, next: null }
  return {
    finished: true,
    next: row.next && { id: row.next.id, url: row.next.url, nextAttemptAt: new Date(row.next.next_attempt_at) },
  }
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
 * Pending deliveries that nobody is working on although they are due by `graceMs` at `now` (the
 * application's clock, which scheduled them): their job was lost with a killed worker, or their
 * claim lapsed (the lease is wall time: it bounds I/O). Only the first of each object and URL is returned.
 */
export async function selectStalledDeliveries(
  db: Queryable,
  graceMs: number,
  limit: number,
  now: Date,
): Promise<{ id: string; url: string }[]> {
  const { rows } = await db.query<{ id: string; url: string }>(
    `SELECT d.id, d.url FROM event_deliveries d
      WHERE d.status = 'pending'
        AND d.next_attempt_at < $3::timestamptz - make_interval(secs => $1::double precision / 1000)
        AND (d.lease_until IS NULL OR d.lease_until < now())
        AND NOT EXISTS (
          SELECT 1 FROM event_deliveries earlier
           WHERE earlier.url = d.url AND earlier.ordering_key = d.ordering_key AND earlier.status = 'pending' AND earlier.seq < d.seq)
      ORDER BY d.next_attempt_at
      LIMIT $2`,
    [graceMs, limit, now],
  )
  return rows
}

export async function selectUrlDisabled(
  db: Queryable,
  partnerId: string,
  url: string,
): Promise<{ disabledAt: Date; reason: string } | undefined> {
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
