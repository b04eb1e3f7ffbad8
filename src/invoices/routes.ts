// Invoice routes (docs/contracts/collections-and-payouts.md §Invoices): create, read, list, publish, cancel.
import { Type } from '@sinclair/typebox'
import { callerOf, pageRequestOf } from '../partners/auth.ts'
import { AmountKobo } from '../platform/amounts.ts'
import type { HttpServer } from '../platform/http.ts'
import { sendOnce } from '../platform/idempotency.ts'
import { getOne, getPage, route, SIGNED, SIGNED_BY_REFERENCE } from '../platform/routes.ts'
import {
  CallbackUrlSchema,
  closedObject,
  CurrencySchema,
  errorResponses,
  IDEMPOTENT_CODES,
  PageQuerySchema,
  ReferenceSchema,
} from '../platform/schemas.ts'
import type { CollectionsDeps } from '../collections/virtual-accounts/service.ts'
import { CustomerSchema, INVOICE_OPERATIONS as OPS, InvoiceSchema, LineItemSchema, StatusSchema } from './schemas.ts'
import {
  cancelInvoice,
  createInvoice,
  getInvoice,
  INVOICE_PAGE_MAX,
  listInvoices,
  publishInvoice,
  toInvoiceJson,
} from './service.ts'

const ReferenceParams = closedObject({ reference: ReferenceSchema })

const CreateSchema = closedObject({
  reference: ReferenceSchema,
  title: Type.String({ minLength: 1, maxLength: 200 }),
  amountKobo: AmountKobo({ description: 'The total to collect, at most the maximum of one instruction' }),
  currency: Type.Optional(
    CurrencySchema('ISO 4217; only NGN (the default) is served (another code is 422 `unsupported_currency`)'),
  ),
  customer: Type.Optional(CustomerSchema),
  callbackUrl: Type.Optional(CallbackUrlSchema),
  publishOnCreate: Type.Optional(Type.Boolean({ default: false })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  dueAt: Type.Optional(
    Type.String({ format: 'date-time', description: 'When payment is due (informational; invoices do not expire)' }),
  ),
  lineItems: Type.Optional(
    Type.Array(LineItemSchema, {
      minItems: 1,
      maxItems: 100,
      description:
        "What is billed, line by line, shown on the payment page: the lines' quantity × unitAmountKobo must add up to amountKobo (422 naming lineItems otherwise)",
    }),
  ),
})

const ListQuerySchema = PageQuerySchema({ status: Type.Optional(StatusSchema) }, INVOICE_PAGE_MAX)

/** The invoice API: creating and reading invoices, then publishing and cancelling them. */
export function registerInvoiceRoutes(app: HttpServer, deps: CollectionsDeps): void {
  app.post(
    '/api/v1/rail/invoice',
    route(SIGNED_BY_REFERENCE, OPS.createInvoice, {
      body: CreateSchema,
      response: {
        200: InvoiceSchema,
        ...errorResponses(...IDEMPOTENT_CODES, 'capability_disabled', 'provider_unavailable', 'amount_above_limit'),
      },
    }),
    async (request, reply) => {
      const { view, replayed } = await createInvoice(deps, callerOf(request), request.body)
      return sendOnce(reply.code(200), replayed, toInvoiceJson(view))
    },
  )
  app.get('/api/v1/rail/invoice', getPage(OPS.listInvoices, ListQuerySchema, InvoiceSchema), async (request) =>
    listInvoices(deps.pool, { ...pageRequestOf(request), status: request.query.status }),
  )
  app.get('/api/v1/rail/invoice/:reference', getOne(OPS.getInvoice, ReferenceParams, InvoiceSchema), async (request) =>
    toInvoiceJson(await getInvoice(deps.pool, callerOf(request).partner.id, request.params.reference)),
  )
  app.post(
    '/api/v1/rail/invoice/:reference/publish',
    route(SIGNED, OPS.publishInvoice, {
      params: ReferenceParams,
      response: {
        200: InvoiceSchema,
        ...errorResponses('not_found', 'invalid_state', 'capability_disabled', 'provider_unavailable'),
      },
    }),
    async (request) => toInvoiceJson(await publishInvoice(deps, callerOf(request), request.params.reference)),
  )
  app.post(
    '/api/v1/rail/invoice/:reference/cancel',
    route(SIGNED, OPS.cancelInvoice, {
      params: ReferenceParams,
      response: { 200: InvoiceSchema, ...errorResponses('not_found', 'invalid_state') },
    }),
    async (request) => toInvoiceJson(await cancelInvoice(deps, callerOf(request).partner.id, request.params.reference)),
  )
}
