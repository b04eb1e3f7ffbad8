// The dashboard's escrows (docs/dashboard.md): the list, an escrow's page, and release and cancel.
// The escrow API authenticates by API key; here the session's partner is the owner, and each
// action calls the service function the API route calls (releaseEscrow, cancelEscrow).
import type { FastifyRequest } from 'fastify'
import {
  cancelEscrow,
  escrowView,
  getEscrowById,
  listEscrows,
  REASON_MAX_CHARS,
  releaseEscrow,
  type ReleaseRequest,
} from '../../escrow/service.ts'
import {
  headers,
  notFound,
  ownObject,
  refusedAction,
  type DashboardRoutes,
  type FormBody,
  type FormHandler,
} from './http.ts'
import { cursorOf, LIST_PAGE, oneOf, queryOf } from './lists.ts'
import { dashboardCaller, runRecorded } from './actions.ts'
import { FormError, parseForm, textField, type Parsed } from './invoices-form.ts'
import { escrowPage, escrowsPage, ESCROW_STATUSES } from './escrows-page.ts'
import { noticeOf, plainPage } from './layout.ts'

const NOTICES: Record<string, string> = {
  released: 'Escrow released: its amount is being paid out.',
  cancelled: 'Escrow cancelled: anything funded goes back to the payer.',
}

export function registerEscrowPages(routes: DashboardRoutes): void {
  const { pool } = routes.deps
  routes.page('/dashboard/escrows', async (request, reply, visit) => {
    const status = oneOf(ESCROW_STATUSES, queryOf(request).status)
    const page = await listEscrows(pool, {
      partnerId: visit.partner.id,
      status,
      limit: LIST_PAGE,
      cursor: cursorOf(request),
    })
    return headers(reply).send(escrowsPage(visit.chrome, status ? { status } : {}, page.escrows, page.nextCursor))
  })
  routes.page('/dashboard/escrows/:id', async (request, reply, visit) => {
    const escrow = await ownEscrow(routes, request, visit.partner.id)
    if (!escrow) return notFound(reply, 'escrow')
    const notice = noticeOf(NOTICES, request)
    return headers(reply).send(escrowPage(visit.chrome, escrow, await escrowView(pool, escrow), notice))
  })
  routes.form('/dashboard/escrows/:id/release', releaseHandler(routes))
  routes.form('/dashboard/escrows/:id/cancel', cancelHandler(routes))
}

/** The session's partner's escrow named by the URL's id. */
function ownEscrow(routes: DashboardRoutes, request: FastifyRequest, partnerId: string) {
  return ownObject(request, (id) => getEscrowById(routes.deps.pool, partnerId, id))
}

/** The release form: an optional reason, and optionally another bank account to pay (all three fields, or none). */
export function releaseRequestOf(body: FormBody): Parsed<ReleaseRequest> {
  return parseForm(() => {
    const request: ReleaseRequest = {}
    const reason = textField(body, 'reason', { label: 'Reason', max: REASON_MAX_CHARS })
    const accountNumber = textField(body, 'accountNumber', { label: 'Account number', max: 10 })
    const bankCode = textField(body, 'bankCode', { label: 'Bank code', max: 6 })
    const accountName = textField(body, 'accountName', { label: 'Account name', max: 100 })
    if (reason !== undefined) request.reason = reason
    const given = [accountNumber, bankCode, accountName].filter((value) => value !== undefined).length
    if (given === 0) return request
    if (accountNumber === undefined || bankCode === undefined || accountName === undefined) {
      throw new FormError(
        'Another destination needs its account number, bank code and account name; leave all three empty to pay where the escrow says.',
      )
    }
    if (!/^[0-9]{10}$/.test(accountNumber)) throw new FormError('Account number must be the 10 digits of a NUBAN.')
    if (!/^[0-9]{3,6}$/.test(bankCode)) throw new FormError('Bank code must be 3 to 6 digits.')
    request.disbursement = { accountNumber, bankCode, accountName }
    return request
  })
}

/** PATCH /api/v1/escrow/partner/{ref}/release, from the escrow's page; a wrong state gets the service's refusal. */
function releaseHandler(routes: DashboardRoutes): FormHandler {
  const { deps } = routes
  return async (request, reply, visit, body) => {
    const escrow = await ownEscrow(routes, request, visit.partner.id)
    if (!escrow) return notFound(reply, 'escrow')
    const parsed = releaseRequestOf(body)
    if (!parsed.ok) return headers(reply).code(422).send(plainPage('Escrow not released', parsed.message))
    const release = parsed.value
    const action = { name: 'escrow.release', objectId: escrow.id, detail: { ref: escrow.ref, ...release } }
    try {
      await runRecorded(
        deps,
        visit,
        action,
        () => releaseEscrow(deps, dashboardCaller(visit, request), escrow.ref, release),
        (released) => ({
          status: released.escrow.status,
          disbursementState: released.escrow.disbursementState,
          retried: released.retried,
        }),
      )
    } catch (error) {
      return refusedAction(reply, 'Escrow not released', error)
    }
    return headers(reply).redirect(`/dashboard/escrows/${escrow.id}?notice=released`, 303)
  }
}

/** PATCH /api/v1/escrow/partner/{ref}/cancel, with its required reason; a wrong state gets the service's refusal. */
function cancelHandler(routes: DashboardRoutes): FormHandler {
  const { deps } = routes
  return async (request, reply, visit, body) => {
    const escrow = await ownEscrow(routes, request, visit.partner.id)
    if (!escrow) return notFound(reply, 'escrow')
    const parsed = parseForm(() =>
      textField(body, 'reason', { label: 'Reason', max: REASON_MAX_CHARS, required: true })!,
    )
    if (!parsed.ok) return headers(reply).code(422).send(plainPage('Escrow not cancelled', parsed.message))
    const reason = parsed.value
    const action = { name: 'escrow.cancel', objectId: escrow.id, detail: { ref: escrow.ref, reason } }
    try {
      await runRecorded(
        deps,
        visit,
        action,
        () => cancelEscrow(deps, dashboardCaller(visit, request), escrow.ref, reason),
        (cancelled) => ({
          status: cancelled.status,
          refundState: cancelled.refundState,
        }),
      )
    } catch (error) {
      return refusedAction(reply, 'Escrow not cancelled', error)
    }
    return headers(reply).redirect(`/dashboard/escrows/${escrow.id}?notice=cancelled`, 303)
  }
}
