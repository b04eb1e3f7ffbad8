// What every dashboard area registers its pages and forms through: the session check, the CSRF
// check on every post, the page headers, the 404 page for anything not the partner's, and the
// record of each action (dashboard_actions: the session's partner, what, on which object).
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Pool } from 'pg'
import type { Clock } from '../../platform/clock.ts'
import type { Queryable } from '../../platform/db.ts'
import { RailError } from '../../platform/errors.ts'
import { pageHeaders } from '../../platform/html.ts'
import type { HttpServer } from '../../platform/http.ts'
import type { InboundDeps } from '../../collections/credits/service.ts'
import type { OutboundDeps } from '../../money-out/outbound/service.ts'
import { getPartner, type Partner } from '../../partners/service.ts'
import { plainPage, type Chrome } from './layout.ts'
import { csrfMatches, sessionFor, type DashboardSession } from './service.ts'

export interface DashboardDeps {
  pool: Pool
  clock: Clock
  masterKey: Buffer
  allowLoopbackCallbacks: boolean
  /** The largest amount one instruction may carry (RAIL_MAX_AMOUNT_KOBO). */
  maxAmountKobo: number
  outbound: OutboundDeps
  collections: InboundDeps
  /** `rail serve`'s data directory: a rotation of the sandbox partner's credentials is saved to its file there. */
  sandboxPartnerDataDir?: string
}

export const COOKIE = 'rail_dashboard'
/** No script at all, styles only from Rail, never framed, forms posted only to Rail. */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A signed-in request: its session, the partner, and the page frame. */
export interface Visit {
  session: DashboardSession
  partner: Partner
  chrome: Chrome
}

export type FormBody = Record<string, string>
export type PageHandler = (request: FastifyRequest, reply: FastifyReply, visit: Visit) => Promise<FastifyReply>
export type FormHandler = (
  request: FastifyRequest,
  reply: FastifyReply,
  visit: Visit,
  body: FormBody,
) => Promise<FastifyReply>

export interface DashboardRoutes {
  deps: DashboardDeps
  /** A GET page for a signed-in partner. */
  page(path: string, handler: PageHandler): void
  /** A POST form for a signed-in partner; the CSRF token is checked before the handler runs. */
  form(path: string, handler: FormHandler): void
}

export function headers(reply: FastifyReply): FastifyReply {
  return pageHeaders(reply, CONTENT_SECURITY_POLICY).type('text/html; charset=utf-8')
}

export function cookieOf(request: FastifyRequest): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=')
    if (name === COOKIE) return value.join('=')
  }
  return undefined
}

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value)
}

/**
 * What the URL's :id names, read by `read` as the session's partner's; undefined for a malformed id
 * (never read), an unknown one or another partner's (a service's 404 included).
 */
export async function ownObject<T>(
  request: FastifyRequest,
  read: (id: string) => Promise<T | undefined>,
): Promise<T | undefined> {
  const id = (request.params as { id: string }).id
  return isUuid(id) ? read(id).catch(notFoundAsUndefined) : undefined
}

/** The one answer for an object that does not exist or is another partner's. */
export function notFound(reply: FastifyReply, what: string): FastifyReply {
  return headers(reply)
    .code(404)
    .send(plainPage('Not found', `There is no such ${what}.`))
}

/** A service's 404 read as "not there", for lookups by id. */
export function notFoundAsUndefined(error: unknown): undefined {
  if (error instanceof RailError && error.statusCode === 404) return undefined
  throw error
}

/** A refused action: the service's own message on a plain page, with its status (409, 422, …). */
export function refusedAction(reply: FastifyReply, title: string, error: unknown): FastifyReply {
  if (!(error instanceof RailError) || error.statusCode >= 500) throw error
  return headers(reply).code(error.statusCode).send(plainPage(title, error.message))
}

export function signedOut(reply: FastifyReply): FastifyReply {
  return headers(reply)
    .code(401)
    .send(
      plainPage(
        'Signed out',
        'You are not signed in. Ask for a new sign-in link: npx rail dashboard link --partner ID',
      ),
    )
}

function csrfRefused(reply: FastifyReply): FastifyReply {
  return headers(reply)
    .code(403)
    .send(plainPage('Refused', 'This form was not sent from your dashboard session. Nothing was changed.'))
}

/** Records what the session's partner (and its operator, when the link named one) did from the dashboard. */
export async function recordAction(
  db: Queryable,
  clock: Clock,
  visit: Visit,
  action: string,
  objectId: string | null,
  detail: Record<string, unknown> = {},
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO dashboard_actions (partner_id, operator, action, object_id, detail, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
    [visit.partner.id, visit.session.operator, action, objectId, JSON.stringify(detail), clock.now()],
  )
  return rows[0]!.id
}

/** Adds to an action's record what came of it (a refusal, the id of what it made). */
export async function recordOutcome(db: Queryable, actionId: string, outcome: Record<string, unknown>): Promise<void> {
  await db.query('UPDATE dashboard_actions SET detail = detail || $2 WHERE id = $1', [
    actionId,
    JSON.stringify(outcome),
  ])
}

/** The routes of one area, registered on a scope that parses urlencoded form bodies. */
export function dashboardRoutes(scope: HttpServer, deps: DashboardDeps): DashboardRoutes {
  const open = { config: { auth: 'none' as const }, schema: { hide: true } }
  const visitOf = async (request: FastifyRequest): Promise<Visit | undefined> => {
    const session = await sessionFor(deps.pool, deps.clock, cookieOf(request))
    const partner = session ? await getPartner(deps.pool, session.partnerId) : undefined
    if (!session || !partner) return undefined
    return {
      session,
      partner,
      chrome: {
        partnerName: partner.name,
        operator: session.operator,
        csrfToken: session.csrfToken,
        sandbox: partner.environment === 'sandbox',
      },
    }
  }
  return {
    deps,
    page(path, handler) {
      scope.get(path, open, async (request, reply) => {
        const visit = await visitOf(request)
        return visit ? handler(request, reply, visit) : signedOut(reply)
      })
    },
    form(path, handler) {
      scope.post(path, open, async (request, reply) => {
        const visit = await visitOf(request)
        if (!visit) return signedOut(reply)
        const body = (request.body ?? {}) as FormBody
        if (!csrfMatches(visit.session, body.csrf)) return csrfRefused(reply)
        return handler(request, reply, visit, body)
      })
    },
  }
}
