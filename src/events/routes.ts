// Partner API of events: list, read one with its delivery attempts, ask for redelivery.
import { Type, type Static } from '@sinclair/typebox'
import { callerOf, pageRequestOf } from '../partners/auth.ts'
import type { Clock } from '../platform/clock.ts'
import { withTransaction, type Pool } from '../platform/db.ts'
import { RailError } from '../platform/errors.ts'
import type { HttpServer } from '../platform/http.ts'
import { sendOnce } from '../platform/idempotency.ts'
import { withReadConnection } from '../platform/read-pool.ts'
import { getOne, operations, route, SIGNED, SIGNED_IN_TRANSACTION } from '../platform/routes.ts'
import { errorResponses, IdParamsSchema, PageQuerySchema } from '../platform/schemas.ts'
import type { Attempt, Delivery } from './deliveries-repo.ts'
import type { EventRecord } from './repo.ts'
import { EVENTS_PAGE_MAX, getEvent, listEvents, redeliverEvent, type EventView } from './service.ts'

const DeliveryStatusSchema = Type.Union(
  [Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('skipped')],
  {
    description:
      'pending: attempts continue; delivered: a 2xx arrived; failed: attempts exhausted or the URL answered 410; skipped: there was no callback URL',
  },
)

const AttemptSchema = Type.Object(
  {
    attemptNumber: Type.Integer(),
    url: Type.String(),
    startedAt: Type.String({ format: 'date-time' }),
    durationMs: Type.Integer(),
    statusCode: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    responseExcerpt: Type.Union([Type.String(), Type.Null()], { description: 'The first 1 KiB of the answer' }),
  },
  {
    title: 'DeliveryAttempt',
    description: 'One attempt to deliver an event: what the receiver answered, or why it did not',
  },
)
export type DeliveryAttemptJson = Static<typeof AttemptSchema>

const DeliverySchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attemptsMade: Type.Integer(),
    nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    deliveredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    failedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    attempts: Type.Array(AttemptSchema),
  },
  { title: 'Delivery', description: 'The delivery of an event to one callback URL, with every attempt' },
)
export type DeliveryJson = Static<typeof DeliverySchema>

const eventProperties = {
  id: Type.String({ format: 'uuid' }),
  type: Type.String({ description: 'e.g. transfer.confirmed' }),
  objectType: Type.String(),
  objectId: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  deliveryStatus: DeliveryStatusSchema,
  payload: Type.Unknown({ description: 'The delivered JSON body, exactly as signed' }),
}
const EventSchema = Type.Object(eventProperties, {
  title: 'Event',
  description: "Something that happened to one of the caller's objects, and whether it was delivered",
})
const EventWithDeliveriesSchema = Type.Object(
  { ...eventProperties, deliveries: Type.Array(DeliverySchema) },
  { title: 'EventWithDeliveries', description: 'An event with its deliveries and every attempt' },
)
export type EventJson = Static<typeof EventSchema>
export type EventWithDeliveriesJson = Static<typeof EventWithDeliveriesSchema>

const EventListSchema = Type.Object(
  {
    data: Type.Array(EventSchema),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next (older) page; null on the last page',
    }),
  },
  { title: 'EventList', description: "A page of the caller's events, newest first" },
)
export type EventListJson = Static<typeof EventListSchema>

const ListQuerySchema = PageQuerySchema(
  {
    type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    objectType: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    objectId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    deliveryStatus: Type.Optional(DeliveryStatusSchema),
  },
  EVENTS_PAGE_MAX,
)

function toEventJson(event: EventRecord): EventJson {
  return {
    id: event.id,
    type: event.type,
    objectType: event.objectType,
    objectId: event.objectId,
    createdAt: event.createdAt.toISOString(),
    deliveryStatus: event.deliveryStatus,
    payload: JSON.parse(event.body) as unknown,
  }
}

function toAttemptJson(attempt: Attempt): DeliveryAttemptJson {
  return {
    attemptNumber: attempt.attemptNumber,
    url: attempt.url,
    startedAt: attempt.startedAt.toISOString(),
    durationMs: attempt.durationMs,
    statusCode: attempt.statusCode,
    error: attempt.error,
    responseExcerpt: attempt.responseExcerpt,
  }
}

function toDeliveryJson(delivery: Delivery & { attempts: Attempt[] }): DeliveryJson {
  return {
    id: delivery.id,
    url: delivery.url,
    status: delivery.status,
    attemptsMade: delivery.attemptsMade,
    nextAttemptAt: delivery.status === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
    lastError: delivery.lastError,
    deliveredAt: delivery.deliveredAt?.toISOString() ?? null,
    failedAt: delivery.failedAt?.toISOString() ?? null,
    createdAt: delivery.createdAt.toISOString(),
    attempts: delivery.attempts.map(toAttemptJson),
  }
}

function toEventViewJson(view: EventView): EventWithDeliveriesJson {
  return { ...toEventJson(view.event), deliveries: view.deliveries.map(toDeliveryJson) }
}

/** Redelivery takes no options: no body, or an empty JSON object. */
function assertNoBody(body: unknown): void {
  if (body === undefined || body === null) return
  const fields = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : ['(body)']
  if (fields.length > 0) {
    const issues = fields.map((field) => ({ field, message: 'is not an accepted field' }))
    throw new RailError('validation_error', issues.map((issue) => `${issue.field}: ${issue.message}`).join('; '), {
      fields: issues,
    })
  }
}

/** What the OpenAPI document says of the event operations. */
const OPS = operations('events', {
  listEvents: {
    summary: "The caller's events, newest first",
    description:
      "The caller's events, newest first, each with its payload exactly as delivered and its delivery status. Filter by `type`, `objectType`, `objectId` or `deliveryStatus`; page with `cursor` and `limit`.",
  },
  getEvent: {
    summary: 'One event with its deliveries and every attempt',
    description:
      "One event with each of its deliveries (one per callback URL and redelivery) and every attempt: when, to which URL, how long it took, the status or error, and the first 1 KiB of the answer. Another partner's event is 404.",
  },
  redeliverEvent: {
    summary:
      'Deliver an event again (at once if a retry is waiting; else a new delivery). The same request again with its Idempotency-Key starts nothing (Idempotent-Replayed: true)',
    description:
      "Delivers the event again: a delivery waiting for its next retry is attempted at once, otherwise a new delivery starts to the object's own URL, else the partner's current default, over the whole retry schedule. No body. No URL anywhere is 409 `invalid_state`. The same request again with its `Idempotency-Key` starts nothing and answers 202 with `Idempotent-Replayed: true`.",
  },
})

export function registerEventRoutes(app: HttpServer, deps: { pool: Pool; clock: Clock }): void {
  app.get(
    '/api/v1/rail/events',
    route(SIGNED, OPS.listEvents, {
      querystring: ListQuerySchema,
      response: { 200: EventListSchema, ...errorResponses() },
    }),
    async (request) => {
      const { type, objectType, objectId, deliveryStatus } = request.query
      const filter = { ...pageRequestOf(request), type, objectType, objectId, deliveryStatus }
      const page = await listEvents(deps.pool, filter)
      return { data: page.events.map(toEventJson), nextCursor: page.nextCursor }
    },
  )
  app.get(
    '/api/v1/rail/events/:id',
    getOne(OPS.getEvent, IdParamsSchema, EventWithDeliveriesSchema),
    async (request) => {
      const partnerId = callerOf(request).partner.id
      return toEventViewJson(
        await withReadConnection(deps.pool, (reader) => getEvent(reader, partnerId, request.params.id)),
      )
    },
  )
  app.post(
    '/api/v1/rail/events/:id/redeliver',
    route(SIGNED_IN_TRANSACTION, OPS.redeliverEvent, {
      params: IdParamsSchema,
      response: {
        202: EventWithDeliveriesSchema,
        ...errorResponses('not_found', 'invalid_state', 'request_in_progress'),
      },
    }),
    async (request, reply) => {
      assertNoBody(request.body)
      const partnerId = callerOf(request).partner.id
      const { view, replayed } = await withTransaction(deps.pool, (tx) =>
        redeliverEvent(tx, deps.clock, partnerId, request.params.id, request.idempotencyKey),
      )
      return sendOnce(reply.code(202), replayed, toEventViewJson(view))
    },
  )
}
