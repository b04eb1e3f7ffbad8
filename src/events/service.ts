// Events (docs/design.md §9): every state change a partner hears about is recorded here, on the caller's
// transaction, together with its first delivery and the job that makes it. So an event exists,
// and is delivered, exactly when the change that caused it committed.
import {
  getPartner,
  setDefaultCallbackUrl,
  type CallbackUrls,
  type Partner,
  type PartnerEnvironment,
} from '../partners/service.ts'
import type { Clock } from '../platform/clock.ts'
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { fieldError, notFound, RailError } from '../platform/errors.ts'
import { uuidv7 } from '../platform/ids.ts'
import { addJob } from '../platform/jobs.ts'
import { pageQueryLimit, toPage } from '../platform/pagination.ts'
import { readPage } from '../platform/read-pool.ts'
import { claimKeyInTransaction, type IdempotencyKey } from '../platform/idempotency-keys.ts'
import { checkCallbackUrl, type CallbackPolicy } from '../platform/address-guard.ts'
import * as deliveries from './deliveries-repo.ts'
import * as repo from './repo.ts'

export const DELIVER_TASK = 'event_deliver'
export const EVENT_DELIVERY_FAILED = 'event.delivery_failed'
/** graphile-worker runs lower priorities first: first attempts before retries and held-back deliveries. */
export const FIRST_ATTEMPT_PRIORITY = 0
export const RETRY_PRIORITY = 1
/** A job set for when a claim lapses runs this long after, so that the claim has lapsed by the database's clock too. */
const CLAIM_LAPSE_MARGIN_MS = 1_000

/** How an event is signed: see docs/webhooks.md. */
export type EventSigning =
  | { kind: 'partner' } // the partner's newest callback-signing secret at delivery time
  | { kind: 'sealed'; secretSealed: Buffer; boundTo: string } // an emitter's own secret (an escrow webhookSecret), sealed with the master key
  | { kind: 'none' }

export interface NewEvent {
  partnerId: string
  /** e.g. `transfer.confirmed`. */
  type: string
  objectType: string
  objectId: string
  data: Record<string, unknown>
  /** Partner data returned beside `data` at the top of the body (escrow events); absent for other events. */
  metadata?: Record<string, unknown>
  /** The object's own callback URL; when absent, the partner's default callback URL. */
  callbackUrl?: string | null
  signing?: EventSigning
  /** Record only, deliver nowhere (records such as event.delivery_failed). */
  recordOnly?: boolean
}

/** The delivered JSON: `id` and `timestamp` are inside the signed body. */
export interface EventBody {
  id: string
  event: string
  /** The same name as `event`; FBO callbacks are named by this field (docs/contracts/collections-and-payouts.md §Callbacks). */
  eventKind: string
  timestamp: string
  data: Record<string, unknown>
  /** Only on events whose emitter gave it (escrow: the partner's metadata, as docs/contracts/escrow.md §Webhooks says). */
  metadata?: Record<string, unknown>
}

/** A delivery's job key is this and its id: one job per delivery at a time. */
export const DELIVERY_JOB_KEY_PREFIX = 'event_delivery:'

export function deliveryJobKey(deliveryId: string): string {
  return `${DELIVERY_JOB_KEY_PREFIX}${deliveryId}`
}

/**
 * The delivery job. It carries the URL so that a worker can hold back a busy URL before touching
 * the database. Retries and held-back deliveries run after first attempts (RETRY_PRIORITY), so
 * that a receiver that keeps failing does not queue ahead of healthy ones.
 */
export function deliveryJob(deliveryId: string, url: string, priority = FIRST_ATTEMPT_PRIORITY): repo.DeliveryJob {
  return { task: DELIVER_TASK, payload: { deliveryId, url }, jobKey: deliveryJobKey(deliveryId), priority }
}

/**
 * The delivery's job, to run at once or `dueInMs` from now: its next attempt is due by the
 * application's clock, the job's run_at by the database's, so the job is given the wait, not the time.
 */
export async function enqueueDelivery(
  db: Queryable,
  deliveryId: string,
  url: string,
  dueInMs?: number,
  priority = FIRST_ATTEMPT_PRIORITY,
): Promise<void> {
  const job = deliveryJob(deliveryId, url, priority)
  await addJob(db, job.task, job.payload, { jobKey: job.jobKey, runAfterMs: dueInMs, priority: job.priority })
}

/**
 * A job to run when another worker's claim on a delivery lapses. It has no job key, so it neither
 * replaces nor moves the job of the delivery's next attempt; if the holder recorded its attempt by
 * then, this job finds nothing to claim and ends.
 */
export async function enqueueAfterClaim(
  db: Queryable,
  deliveryId: string,
  url: string,
  leaseUntil: Date,
): Promise<void> {
  const job = deliveryJob(deliveryId, url, RETRY_PRIORITY)
  await addJob(db, job.task, job.payload, {
    runAt: new Date(leaseUntil.getTime() + CLAIM_LAPSE_MARGIN_MS),
    priority: job.priority,
  })
}

/** A sandbox partner's clock moved on (docs/sandbox.md): its pending deliveries' retries come as much earlier, and those due run now. */
export async function bringForwardDeliveries(
  tx: Queryable,
  clock: Clock,
  partnerId: string,
  seconds: number,
): Promise<void> {
  for (const due of await deliveries.bringForward(tx, partnerId, seconds, clock.now()))
    await enqueueDelivery(tx, due.id, due.url, undefined, RETRY_PRIORITY)
}

/**
 * Records an event on the caller's transaction and, when it has a target, enqueues its delivery.
 * `clock` is the caller's injected clock: it gives the event's time (its `timestamp`).
 */
export async function recordEvent(
  tx: Queryable,
  clock: Clock,
  input: NewEvent,
): Promise<{ id: string; body: EventBody }> {
  const prepared = await prepareEvent(tx, input, clock.now(), new Map())
  if (prepared.delivery === null) {
    await repo.insertEvent(tx, prepared.event)
  } else {
    // One round trip for the event, its delivery and the delivery's job: this runs inside every business transaction.
    await repo.insertEventWithDelivery(
      tx,
      prepared.event,
      prepared.delivery,
      deliveryJob(prepared.delivery.id, prepared.delivery.url),
    )
  }
  return { id: prepared.event.id, body: prepared.body }
}

/**
 * Records many events at once on the caller's transaction — one statement for all of them, their
 * deliveries and jobs — for a path that changes many objects in one transaction (credits applied
 * in a batch). Each event is what recordEvent would have recorded.
 */
export async function recordEvents(
  tx: Queryable,
  clock: Clock,
  inputs: readonly NewEvent[],
): Promise<{ id: string; body: EventBody }[]> {
  const defaultUrls = new Map<string, string | null>()
  const prepared: PreparedEvent[] = []
  const createdAt = clock.now()
  for (const input of inputs) prepared.push(await prepareEvent(tx, input, createdAt, defaultUrls))
  await repo.insertEventsWithDeliveries(tx, prepared, DELIVER_TASK)
  return prepared.map((event) => ({ id: event.event.id, body: event.body }))
}

interface PreparedEvent {
  event: repo.EventRecord
  body: EventBody
  delivery: repo.NewDelivery | null
}

/**
 * The event's row, body and first delivery (none without a URL); partners' default URLs are looked
 * up once each. Its id stays on wall time, as every id does: lists and streams read only below a
 * horizon of wall time (platform/pagination.ts), so an id from a clock moved ahead would hide the
 * event from them until that time came.
 */
async function prepareEvent(
  tx: Queryable,
  input: NewEvent,
  createdAt: Date,
  defaultUrls: Map<string, string | null>,
): Promise<PreparedEvent> {
  const id = uuidv7()
  const body: EventBody = {
    id,
    event: input.type,
    eventKind: input.type,
    timestamp: createdAt.toISOString(),
    data: input.data,
  }
  if (input.metadata !== undefined) body.metadata = input.metadata
  let url: string | null = null
  if (!input.recordOnly) {
    url = input.callbackUrl ?? null
    if (url === null) {
      if (!defaultUrls.has(input.partnerId))
        defaultUrls.set(input.partnerId, (await getPartner(tx, input.partnerId))?.callbackUrl ?? null)
      url = defaultUrls.get(input.partnerId)!
    }
  }
  const signing = input.signing ?? { kind: 'partner' }
  const event: repo.EventRecord = {
    id,
    partnerId: input.partnerId,
    type: input.type,
    objectType: input.objectType,
    objectId: input.objectId,
    body: JSON.stringify(body),
    callbackUrl: input.callbackUrl ?? null,
    signing: signing.kind,
    secretSealed: signing.kind === 'sealed' ? signing.secretSealed : null,
    secretBoundTo: signing.kind === 'sealed' ? signing.boundTo : null,
    deliveryStatus: url === null ? 'skipped' : 'pending',
    createdAt,
  }
  const delivery =
    url === null
      ? null
      : {
          id: uuidv7(),
          eventId: id,
          partnerId: input.partnerId,
          url,
          orderingKey: orderingKey(input.objectType, input.objectId),
        }
  return { event, body, delivery }
}

function orderingKey(objectType: string, objectId: string): string {
  return `${objectType}:${objectId}`
}

async function addDelivery(tx: Queryable, clock: Clock, delivery: Omit<repo.NewDelivery, 'id'>): Promise<string> {
  const id = uuidv7()
  await deliveries.insertDelivery(tx, { id, ...delivery }, clock.now())
  await enqueueDelivery(tx, id, delivery.url)
  return id
}

export interface EventView {
  event: repo.EventRecord
  deliveries: (deliveries.Delivery & { attempts: deliveries.Attempt[] })[]
}

export async function getEvent(db: Queryable, partnerId: string, eventId: string): Promise<EventView> {
  const event = await repo.selectEvent(db, partnerId, eventId)
  if (!event) throw notFound('Event')
  const rows = await deliveries.selectDeliveries(db, event.id)
  const attempts = await deliveries.selectAttempts(
    db,
    rows.map((d) => d.id),
  )
  return { event, deliveries: rows.map((d) => ({ ...d, attempts: attempts.filter((a) => a.deliveryId === d.id) })) }
}

export const EVENTS_PAGE_MAX = 100

export async function listEvents(
  db: Queryable,
  filter: Omit<repo.EventFilter, 'limit' | 'beforeId'> & { limit: number; cursor?: string },
) {
  const rows = await readPage(db, filter.cursor, (reader, before) =>
    repo.selectEvents(reader, { ...filter, beforeId: before, limit: pageQueryLimit(filter.limit) }),
  )
  const page = toPage(rows, filter.limit)
  return { events: page.items, nextCursor: page.nextCursor }
}

/** Events being retried after a failed attempt, at most `limit` counted (the dashboard's "needs attention"). */
export async function countRetryingEvents(db: Queryable, partnerId: string, limit: number): Promise<number> {
  return deliveries.countRetryingEvents(db, partnerId, limit)
}

/**
 * Delivers an event again. A delivery still waiting for its next attempt is attempted now; else a
 * new delivery starts over the retry schedule, to the event's own URL or, when it had none, the
 * partner's current default. Asking explicitly also lifts a 410 stop on that URL. `clock` is the
 * application's: the workers judge the delivery due by it.
 */
export async function redeliverEvent(
  tx: Queryable,
  clock: Clock,
  partnerId: string,
  eventId: string,
  key?: IdempotencyKey,
): Promise<{ view: EventView; replayed: boolean }> {
  const event = await repo.selectEvent(tx, partnerId, eventId)
  if (!event || event.type === EVENT_DELIVERY_FAILED) throw notFound('Event')
  // Redelivery has no reference: the request's Idempotency-Key, if sent, is claimed with it. The
  // same request again with the key (a client's retry, a replay) starts nothing.
  if ((await claimKeyInTransaction(tx, key)) === 'replayed')
    return { view: await getEvent(tx, partnerId, eventId), replayed: true }
  return { view: await startRedelivery(tx, clock, partnerId, event), replayed: false }
}

async function startRedelivery(
  tx: Queryable,
  clock: Clock,
  partnerId: string,
  event: repo.EventRecord,
): Promise<EventView> {
  const waiting = await deliveries.selectPendingDelivery(tx, event.id)
  if (waiting) {
    await deliveries.advanceDelivery(tx, waiting.id, clock.now())
    await enqueueDelivery(tx, waiting.id, waiting.url)
  } else {
    const url = event.callbackUrl ?? (await getPartner(tx, partnerId))?.callbackUrl ?? null
    if (url === null)
      throw new RailError(
        'invalid_state',
        'There is no callback URL to deliver to: set one with PATCH /api/v1/rail/settings',
        { eventId: event.id },
      )
    await deliveries.deleteDisabledUrl(tx, partnerId, url)
    await addDelivery(tx, clock, {
      eventId: event.id,
      partnerId,
      url,
      orderingKey: orderingKey(event.objectType, event.objectId),
    })
    await repo.updateEventDeliveryStatus(tx, event.id, 'pending')
  }
  return getEvent(tx, partnerId, event.id)
}

/** Live partners: https and public addresses only. Sandbox: http too, and loopback when allowed. */
export function callbackPolicyFor(environment: PartnerEnvironment, allowLoopbackInSandbox: boolean): CallbackPolicy {
  return environment === 'live'
    ? { requireHttps: true, allowLoopback: false }
    : { requireHttps: false, allowLoopback: allowLoopbackInSandbox }
}

/**
 * Refuses a callback URL being set that the guard would refuse (422 naming `field`). A name that
 * does not resolve yet is accepted: it is checked again, and must resolve, at every delivery.
 */
export async function assertCallbackUrlAllowed(
  url: string,
  environment: PartnerEnvironment,
  allowLoopbackInSandbox: boolean,
  field = 'callbackUrl',
): Promise<void> {
  const check = await checkCallbackUrl(url, callbackPolicyFor(environment, allowLoopbackInSandbox), {
    allowUnresolved: true,
  })
  if (!check.ok) throw fieldError(field, check.reason)
}

/**
 * Sets a partner's default callback URL (API and CLI) once the guard allows it. Setting a URL
 * again is how a partner says that a receiver which answered 410 is back. A request sent again
 * with its Idempotency-Key changes nothing (docs/api.md, "Replays and idempotency").
 */
export async function setPartnerCallbackUrl(
  pool: Pool,
  partner: Pick<Partner, 'id' | 'environment'>,
  url: string | null,
  allowLoopbackInSandbox: boolean,
  key?: IdempotencyKey,
): Promise<Partner> {
  if (url !== null) await assertCallbackUrlAllowed(url, partner.environment, allowLoopbackInSandbox)
  return withTransaction(pool, async (tx) => {
    const set = await setDefaultCallbackUrl(tx, partner.id, url, key)
    if (set.changed && url !== null) await deliveries.deleteDisabledUrl(tx, partner.id, url)
    return set.partner
  })
}

export async function callbackUrlDisabled(db: Queryable, partnerId: string, url: string) {
  return deliveries.selectUrlDisabled(db, partnerId, url)
}

/** What the partner routes and commands use to check and set a callback URL (given to them by the composition root). */
export const partnerCallbackUrls: CallbackUrls = {
  assertAllowed: assertCallbackUrlAllowed,
  set: setPartnerCallbackUrl,
  disabled: callbackUrlDisabled,
}
