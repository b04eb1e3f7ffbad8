// The dashboard's invoices (docs/dashboard.md): the list, the "New invoice" form, an invoice's page
// with its payment details, and publish and cancel. Every action calls the service function the
// invoice API route calls (createInvoice, publishInvoice, cancelInvoice) as the session's partner.
import { randomUUID } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import {
  cancelInvoice,
  createInvoice,
  getInvoice,
  getInvoiceById,
  listInvoices,
  publishInvoice,
} from '../../invoices/service.ts'
import { headers, notFound, ownObject, refusedAction, type DashboardRoutes, type FormHandler } from './http.ts'
import { cursorOf, LIST_PAGE, oneOf, queryOf } from './lists.ts'
import { dashboardCaller, runRecorded } from './actions.ts'
import { invoiceRequestOf } from './invoices-form.ts'
import { invoicePage, invoicesPage, newInvoicePage, INVOICE_STATUSES } from './invoices-page.ts'
import { noticeOf, plainPage } from './layout.ts'

const NOTICES: Record<string, string> = {
  created: 'Invoice created.',
  published: 'Invoice published: its account is open for the payer.',
  cancelled: 'Invoice cancelled: its account takes no more payments for it.',
}

export function registerInvoicePages(routes: DashboardRoutes): void {
  const { pool } = routes.deps
  routes.page('/dashboard/invoices', async (request, reply, visit) => {
    const status = oneOf(INVOICE_STATUSES, queryOf(request).status)
    const page = await listInvoices(pool, {
      partnerId: visit.partner.id,
      status,
      limit: LIST_PAGE,
      cursor: cursorOf(request),
    })
    return headers(reply).send(invoicesPage(visit.chrome, status ? { status } : {}, page.data, page.nextCursor))
  })
  // A fresh random reference in every form shown: the same form posted twice is one invoice.
  routes.page('/dashboard/invoices/new', async (_request, reply, visit) =>
    headers(reply).send(newInvoicePage(visit.chrome, randomUUID())),
  )
  routes.form('/dashboard/invoices', createHandler(routes))
  routes.page('/dashboard/invoices/:id', async (request, reply, visit) => {
    const view = await ownInvoice(routes, request, visit.partner.id)
    if (!view) return notFound(reply, 'invoice')
    return headers(reply).send(invoicePage(visit.chrome, view, noticeOf(NOTICES, request)))
  })
  routes.form('/dashboard/invoices/:id/publish', changeHandler(routes, 'publish'))
  routes.form('/dashboard/invoices/:id/cancel', changeHandler(routes, 'cancel'))
}

/** The session's partner's invoice named by the URL's id, with its payment. */
function ownInvoice(routes: DashboardRoutes, request: FastifyRequest, partnerId: string) {
  const { pool } = routes.deps
  return ownObject(request, async (id) => {
    const invoice = await getInvoiceById(pool, partnerId, id)
    return invoice ? getInvoice(pool, partnerId, invoice.reference) : undefined
  })
}

/** POST /dashboard/invoices: the form checked, the create recorded, then createInvoice as POST /api/v1/rail/invoice calls it. */
function createHandler(routes: DashboardRoutes): FormHandler {
  const { deps } = routes
  return async (request, reply, visit, body) => {
    const parsed = invoiceRequestOf(body, deps.maxAmountKobo)
    if (!parsed.ok) return headers(reply).code(422).send(plainPage('Invoice not created', parsed.message))
    const invoiceRequest = parsed.value
    const action = {
      name: 'invoice.create',
      objectId: null,
      detail: {
        reference: invoiceRequest.reference,
        amountKobo: invoiceRequest.amountKobo,
        publishOnCreate: invoiceRequest.publishOnCreate ?? false,
      },
    }
    try {
      const { view } = await runRecorded(
        deps,
        visit,
        action,
        () => createInvoice(deps.collections, dashboardCaller(visit, request), invoiceRequest),
        ({ view, replayed }) => ({
          invoiceId: view.invoice.id,
          status: view.invoice.status,
          replayed,
        }),
      )
      return headers(reply).redirect(`/dashboard/invoices/${view.invoice.id}?notice=created`, 303)
    } catch (error) {
      return refusedAction(reply, 'Invoice not created', error)
    }
  }
}

/** Publish or cancel, as POST /api/v1/rail/invoice/{reference}/publish and /cancel do; a wrong state gets the service's refusal. */
function changeHandler(routes: DashboardRoutes, change: 'publish' | 'cancel'): FormHandler {
  const { deps } = routes
  return async (request, reply, visit) => {
    const view = await ownInvoice(routes, request, visit.partner.id)
    if (!view) return notFound(reply, 'invoice')
    const { id, reference } = view.invoice
    const action = { name: `invoice.${change}`, objectId: id, detail: { reference } }
    const run = () =>
      change === 'publish'
        ? publishInvoice(deps.collections, dashboardCaller(visit, request), reference)
        : cancelInvoice(deps.collections, visit.partner.id, reference)
    try {
      await runRecorded(deps, visit, action, run, (changed) => ({ status: changed.invoice.status }))
    } catch (error) {
      return refusedAction(reply, change === 'publish' ? 'Invoice not published' : 'Invoice not cancelled', error)
    }
    return headers(reply).redirect(
      `/dashboard/invoices/${id}?notice=${change === 'publish' ? 'published' : 'cancelled'}`,
      303,
    )
  }
}
