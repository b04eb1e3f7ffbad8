// Unmatched credits on the dashboard (/dashboard/unmatched): the triage list the overview links
// to (listTriage, as GET /api/v1/rail/unmatched reads it; awaiting triage unless another status
// is chosen), a credit's triage page, and its two actions: assign and refund.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { getTriageItem, listTriage, type CreditStatus } from '../../collections/credits/service.ts'
import { listIntents } from '../../collections/intents/service.ts'
import { listAccounts } from '../../collections/virtual-accounts/service.ts'
import { cursorOf, LIST_PAGE, oneOf, queryOf } from './lists.ts'
import {
  headers,
  isUuid,
  notFound,
  ownObject,
  refusedAction,
  type DashboardRoutes,
  type FormBody,
  type Visit,
} from './http.ts'
import { noticeOf, plainPage } from './layout.ts'
import { resolveFromDashboard } from './unmatched-actions.ts'
import {
  NOTICES,
  TRIAGE_STATUSES,
  triageItemPage,
  triageListPage,
  UNMATCHED_PATH,
  type AssignTarget,
} from './unmatched-page.ts'

const TRACKING_ID = /^trk_[a-z0-9]{24}$/
/** How many of the partner's accounts the assign form suggests. */
const SUGGESTED = 25

export function registerUnmatchedPages(routes: DashboardRoutes): void {
  const { pool } = routes.deps
  routes.page(UNMATCHED_PATH, async (request, reply, visit) => {
    const chosen = queryOf(request).status
    // Awaiting triage by default (what the overview counts); "all" shows resolved ones too.
    const status: CreditStatus | undefined =
      chosen === 'all' ? undefined : (oneOf(TRIAGE_STATUSES, chosen) ?? 'unmatched')
    const page = await listTriage(pool, {
      partnerId: visit.partner.id,
      status,
      limit: LIST_PAGE,
      cursor: cursorOf(request),
    })
    return headers(reply).send(triageListPage(visit.chrome, status ?? 'all', page.data, page.nextCursor))
  })
  routes.page(`${UNMATCHED_PATH}/:id`, async (request, reply, visit) => {
    const item = await ownItem(routes, request, visit)
    if (!item) return notFound(reply, 'unmatched credit')
    const targets = item.status === 'unmatched' ? await assignTargets(routes, visit.partner.id) : []
    return headers(reply).send(triageItemPage(visit.chrome, item, targets, noticeOf(NOTICES, request)))
  })
  routes.form(`${UNMATCHED_PATH}/:id/assign`, async (request, reply, visit, body) => {
    const item = await ownItem(routes, request, visit)
    if (!item) return notFound(reply, 'unmatched credit')
    if (!isUuid(body.reference)) return badForm(reply)
    const trackingId = trackingIdOf(body)
    if (!trackingId)
      return headers(reply)
        .code(422)
        .send(
          plainPage(
            'Not assigned',
            'Enter the tracking id of one of your virtual accounts: trk_ and 24 lowercase letters or digits.',
          ),
        )
    return resolve(routes, request, reply, visit, item.id, body.reference, { action: 'assign', target: trackingId })
  })
  routes.form(`${UNMATCHED_PATH}/:id/refund`, async (request, reply, visit, body) => {
    const item = await ownItem(routes, request, visit)
    if (!item) return notFound(reply, 'unmatched credit')
    if (!isUuid(body.reference)) return badForm(reply)
    return resolve(routes, request, reply, visit, item.id, body.reference, { action: 'refund' })
  })
}

/** The session's partner's unmatched credit by the URL's id. */
function ownItem(routes: DashboardRoutes, request: FastifyRequest, visit: Visit) {
  return ownObject(request, (id) => getTriageItem(routes.deps.pool, visit.partner.id, id))
}

/** The tracking id typed into the assign form, if it is one (surrounding spaces aside). */
function trackingIdOf(body: FormBody): string | undefined {
  const typed = typeof body.trackingId === 'string' ? body.trackingId.trim() : ''
  return TRACKING_ID.test(typed) ? typed : undefined
}

function badForm(reply: FastifyReply): FastifyReply {
  return headers(reply)
    .code(400)
    .send(
      plainPage(
        'Not done',
        'This form is missing its reference. Reload the page and send it again. Nothing was changed.',
      ),
    )
}

async function resolve(
  routes: DashboardRoutes,
  request: FastifyRequest,
  reply: FastifyReply,
  visit: Visit,
  creditId: string,
  reference: string,
  resolution: { action: 'refund' } | { action: 'assign'; target: string },
): Promise<FastifyReply> {
  const outcome = await resolveFromDashboard(routes.deps, visit, request.id, creditId, reference, resolution)
  const title = resolution.action === 'assign' ? 'Not assigned' : 'Not refunded'
  if (outcome.kind === 'refused') return refusedAction(reply, title, outcome.error)
  const notice =
    outcome.kind === 'replayed' ? 'replayed' : resolution.action === 'assign' ? 'assigned' : 'refund_started'
  return headers(reply).redirect(`${UNMATCHED_PATH}/${creditId}?notice=${notice}`, 303)
}

/** Accounts the credit could be assigned to, suggested in the form: open payment intents and active persistent accounts. */
async function assignTargets(routes: DashboardRoutes, partnerId: string): Promise<AssignTarget[]> {
  const { pool } = routes.deps
  const [intents, accounts] = await Promise.all([
    listIntents(pool, { partnerId, status: 'pending', limit: SUGGESTED }),
    listAccounts(pool, { partnerId, purpose: 'persistent', status: 'active', limit: SUGGESTED }),
  ])
  return [
    ...intents.intents.map(({ intent, account }) => ({
      trackingId: account.trackingId,
      label: `Payment intent ${intent.reference}`,
    })),
    ...accounts.accounts.map((account) => ({
      trackingId: account.trackingId,
      label: `Account ${account.reference ?? account.accountNumber}`,
    })),
  ]
}
