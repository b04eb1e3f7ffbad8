// Outbound transfers: the list (filtered by state, reference and Lagos days), a transfer's page
// with its timeline, and in the sandbox the settlement simulator.
import type { FastifyRequest } from 'fastify'
import { listEvents } from '../../events/service.ts'
import { getOutbound, listOutbound, outboundStateHistory } from '../../money-out/outbound/service.ts'
import { providerCallsFor, providerHealth } from '../../banking/providers/service.ts'
import { lagosDayEnd, lagosDayStart } from './dates.ts'
import { headers, notFound, ownObject, type DashboardRoutes } from './http.ts'
import { cursorOf, LIST_PAGE, oneOf, queryOf } from './lists.ts'
import { noticeOf, plainPage } from './layout.ts'
import { settleFromDashboard, SETTLE_OUTCOMES, type SettleOutcome } from './simulator.ts'
import { OUTBOUND_STATES, timelineOf, transferPage, transfersPage, type TransferFilter } from './transfers-page.ts'

const NOTICES: Record<string, string> = {
  settled:
    'Outcome registered at the sandbox bank; the transfer resolves through requery within seconds. Reload to see it.',
}
/** The most bank calls and callbacks a timeline shows (a transfer makes a handful). */
const TIMELINE_MAX = 100

/** The filter a query asks for; a value that is not valid is left out (a filter link never errs). */
function filterOf(query: Record<string, string | undefined>): TransferFilter {
  const filter: TransferFilter = {}
  const state = oneOf(OUTBOUND_STATES, query.state)
  if (state) filter.state = state
  const reference = query.reference?.trim()
  if (reference) filter.reference = reference.slice(0, 100)
  if (lagosDayStart(query.from)) filter.from = query.from
  if (lagosDayStart(query.to)) filter.to = query.to
  return filter
}

export function registerTransferPages(routes: DashboardRoutes): void {
  const { pool } = routes.deps
  routes.page('/dashboard/transfers', async (request, reply, visit) => {
    const filter = filterOf(queryOf(request))
    const page = await listOutbound(pool, {
      partnerId: visit.partner.id,
      state: filter.state as (typeof OUTBOUND_STATES)[number] | undefined,
      clientReference: filter.reference,
      createdFrom: lagosDayStart(filter.from),
      createdBefore: lagosDayEnd(filter.to),
      limit: LIST_PAGE,
      cursor: cursorOf(request),
    })
    return headers(reply).send(transfersPage(visit.chrome, filter, page.transfers, page.nextCursor))
  })
  routes.page('/dashboard/transfers/:id', async (request, reply, visit) => {
    const transfer = await ownTransfer(routes, request, visit.partner.id)
    if (!transfer) return notFound(reply, 'transfer')
    const [states, calls, events, health] = await Promise.all([
      outboundStateHistory(pool, transfer.id),
      providerCallsFor(pool, transfer.id, TIMELINE_MAX),
      listEvents(pool, { partnerId: visit.partner.id, objectId: transfer.id, limit: TIMELINE_MAX }),
      providerHealth(pool),
    ])
    const callbacks = events.events.map((event) => ({
      eventId: event.id,
      type: event.type,
      deliveryStatus: event.deliveryStatus,
      createdAt: event.createdAt,
    }))
    const notice = noticeOf(NOTICES, request)
    return headers(reply).send(
      transferPage(visit.chrome, transfer, timelineOf(states, calls, callbacks), notice, health(transfer.provider)),
    )
  })
  routes.form('/dashboard/transfers/:id/settle', async (request, reply, visit, body) => {
    const transfer = await ownTransfer(routes, request, visit.partner.id)
    if (!transfer) return notFound(reply, 'transfer')
    if (!SETTLE_OUTCOMES.includes(body.outcome as SettleOutcome))
      return headers(reply).code(400).send(plainPage('Not settled', 'Choose confirmed or failed.'))
    const result = await settleFromDashboard(routes.deps, visit, transfer.id, body.outcome as SettleOutcome)
    if (!result.ok) return headers(reply).code(409).send(plainPage('Not settled', result.message))
    return headers(reply).redirect(`/dashboard/transfers/${transfer.id}?notice=settled`, 303)
  })
}

/** The session's partner's transfer by the URL's id. */
function ownTransfer(routes: DashboardRoutes, request: FastifyRequest, partnerId: string) {
  return ownObject(request, (id) => getOutbound(routes.deps.pool, partnerId, id))
}
