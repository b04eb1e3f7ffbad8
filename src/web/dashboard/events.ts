// The dashboard's events pages (docs/dashboard.md): the partner's events newest first, filtered by
// kind and delivery status as GET /api/v1/rail/events filters them; an event's page with its
// payload and every delivery attempt; and the Redeliver button, which asks what
// POST /api/v1/rail/events/{id}/redeliver asks (events-redeliver.ts).
import type { FastifyRequest } from 'fastify'
import { getEvent, listEvents } from '../../events/service.ts'
import { headers, isUuid, notFound, ownObject, refusedAction, type DashboardRoutes } from './http.ts'
import { cursorOf, LIST_PAGE, oneOf, queryOf } from './lists.ts'
import { noticeOf, plainPage } from './layout.ts'
import { EVENT_DELIVERY_FILTERS, eventPage, eventsPage, type EventFilter } from './events-page.ts'
import { redeliverFromDashboard } from './events-redeliver.ts'

/** An event kind as Rail names them (`credit.confirmed`); anything else in the query is ignored. */
const EVENT_KIND = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$/
const EVENT_KIND_MAX = 100

const NOTICES: Record<string, string> = {
  redelivered: 'Redelivery scheduled: the new attempt is made within seconds. Reload to see it.',
  'already-redelivered':
    'This Redeliver press was already taken; nothing more was scheduled. Reload to see the attempts.',
}

/** The list's filters from the query string; an invalid value is ignored (the list is then unfiltered by it), as on every dashboard list. */
export function eventFilterOf(query: Record<string, string | undefined>): EventFilter {
  const filter: EventFilter = {}
  const kind = query.kind?.trim()
  if (kind && kind.length <= EVENT_KIND_MAX && EVENT_KIND.test(kind)) filter.kind = kind
  const delivery = oneOf(EVENT_DELIVERY_FILTERS, query.delivery)
  if (delivery) filter.delivery = delivery
  return filter
}

export function registerEventPages(routes: DashboardRoutes): void {
  const { pool } = routes.deps
  routes.page('/dashboard/events', async (request, reply, visit) => {
    const filter = eventFilterOf(queryOf(request))
    const delivery = filter.delivery === 'retrying' ? { retrying: true } : { deliveryStatus: filter.delivery }
    const page = await listEvents(pool, {
      partnerId: visit.partner.id,
      type: filter.kind,
      ...delivery,
      limit: LIST_PAGE,
      cursor: cursorOf(request),
    })
    return headers(reply).send(eventsPage(visit.chrome, filter, page.events, page.nextCursor))
  })
  routes.page('/dashboard/events/:id', async (request, reply, visit) => {
    const view = await ownEvent(routes, request, visit.partner.id)
    if (!view) return notFound(reply, 'event')
    return headers(reply).send(eventPage(visit.chrome, view, noticeOf(NOTICES, request)))
  })
  routes.form('/dashboard/events/:id/redeliver', async (request, reply, visit, body) => {
    const view = await ownEvent(routes, request, visit.partner.id)
    if (!view) return notFound(reply, 'event')
    // The hidden reference makes a double-submitted form one redelivery, as a repeated signed request is.
    if (!isUuid(body.reference))
      return headers(reply)
        .code(400)
        .send(plainPage('Not redelivered', 'The form was incomplete: reload the event page and press Redeliver again.'))
    const result = await redeliverFromDashboard(routes.deps, visit, view.event.id, body.reference)
    if (!result.ok) return refusedAction(reply, 'Not redelivered', result.error)
    return headers(reply).redirect(
      `/dashboard/events/${view.event.id}?notice=${result.replayed ? 'already-redelivered' : 'redelivered'}`,
      303,
    )
  })
}

/** The session's partner's event by the URL's id. */
function ownEvent(routes: DashboardRoutes, request: FastifyRequest, partnerId: string) {
  return ownObject(request, (id) => getEvent(routes.deps.pool, partnerId, id))
}
