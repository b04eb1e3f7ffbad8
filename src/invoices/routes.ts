// Invoice routes (docs/contracts/collections-and-payouts.md §Invoices): create, read, list, publish, cancel.
import { Type } from '@sinclair/typebox'
import { callerOf } from '../partners/auth.ts'
import { AmountKobo } from '../platform/amounts.ts'
import type { HttpServer } from '../platform/http.ts'
import { sendOnce } from '../platform/idempotency.ts'
import {
  CallbackUrlSchema,
  closedObject,
  CurrencySchema,
  errorResponses,
  IDEMPOTENT_CODES,
  Nullable,
  ReferenceSchema,
} from '../platform/schemas.ts'
import type { CollectionsDeps } from '../collections/virtual-accounts/service.ts'
import { CustomerSchema, InvoiceSchema, LineItemSchema, StatusSchema } from './schemas.ts'
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

/** The invoice API: creating and reading invoices, then publishing and cancelling them. */
export function registerInvoiceRoutes(app: HttpServer, deps: CollectionsDeps): void {
  registerCreateAndReadRoutes(app, deps)
  registerChangeRoutes(app, deps)
}

function registerCreateAndReadRoutes(app: HttpServer, deps: CollectionsDeps): void {
  registerCreate(app, deps)
  registerReads(app, deps)
}

function registerCreate(app: HttpServer, deps: CollectionsDeps): void {
  app.post(
    '/api/v1/rail/invoice',
    {
      config: { auth: 'signature', idempotencyKey: 'reference' },
      schema: {
        operationId: 'createInvoice',
        description:
          'Creates an invoice for a customer: a draft, or published at once (`publishOnCreate`) with its virtual account allocated in the same request and a hosted `checkoutUrl`. Idempotent on `reference`.',
        tags: ['invoices'],
        summary:
          'Create an invoice: a draft, or published at once (publishOnCreate) with its virtual account allocated in the same request',
        body: CreateSchema,
        response: {
          200: InvoiceSchema,
          ...errorResponses(...IDEMPOTENT_CODES, 'capability_disabled', 'provider_unavailable', 'amount_above_limit'),
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request)
      const { view, replayed } = await createInvoice(deps, caller, request.body)
      return sendOnce(reply.code(200), replayed, toInvoiceJson(view))
    },
  )
}

function registerReads(app: HttpServer, deps: CollectionsDeps): void {
  app.get(
    '/api/v1/rail/invoice',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'listInvoices',
        description: "The caller's invoices, newest first; filter by `status`, page with `cursor` and `limit`.",
        tags: ['invoices'],
        summary: "The caller's invoices, newest first",
        querystring: closedObject({
          status: Type.Optional(StatusSchema),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: INVOICE_PAGE_MAX, default: 20 })),
          cursor: Type.Optional(Type.String({ format: 'uuid' })),
        }),
        response: {
          200: Type.Object({ data: Type.Array(InvoiceSchema), nextCursor: Nullable(Type.String()) }),
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const query = request.query
      return listInvoices(deps.pool, {
        partnerId: callerOf(request).partner.id,
        status: query.status,
        limit: query.limit ?? 20,
        cursor: query.cursor,
      })
    },
  )

  app.get(
    '/api/v1/rail/invoice/:reference',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'getInvoice',
        description: 'One invoice by its reference, with what has been paid and its payment account once published.',
        tags: ['invoices'],
        summary: 'One invoice, by its reference',
        params: ReferenceParams,
        response: { 200: InvoiceSchema, ...errorResponses('not_found') },
      },
    },
    async (request) =>
      toInvoiceJson(await getInvoice(deps.pool, callerOf(request).partner.id, request.params.reference)),
  )
}

/** Publishing a draft and cancelling an invoice. */
function registerChangeRoutes(app: HttpServer, deps: CollectionsDeps): void {
  app.post(
    '/api/v1/rail/invoice/:reference/publish',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'publishInvoice',
        description:
          'Publishes a draft: its virtual account is allocated at the provider and the invoice starts collecting (`invoice.published`). An invoice that is not a draft is 409 `invalid_state` with its current state in `details`.',
        tags: ['invoices'],
        summary:
          'Publish a draft: its virtual account is allocated (a composed payment intent). Not a draft: 409 with the current state in details',
        params: ReferenceParams,
        response: {
          200: InvoiceSchema,
          ...errorResponses('not_found', 'invalid_state', 'capability_disabled', 'provider_unavailable'),
        },
      },
    },
    async (request) => {
      const caller = callerOf(request)
      return toInvoiceJson(await publishInvoice(deps, caller, request.params.reference))
    },
  )

  app.post(
    '/api/v1/rail/invoice/:reference/cancel',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'cancelInvoice',
        description:
          'Cancels a draft, published or partially paid invoice (`invoice.cancelled`); its account is archived, later credits go to unmatched triage, and partial payments can be refunded with `POST /api/v1/rail/refunds`.',
        tags: ['invoices'],
        summary:
          'Cancel a draft, published or partially paid invoice; its account is archived and later credits go to unmatched triage',
        params: ReferenceParams,
        response: { 200: InvoiceSchema, ...errorResponses('not_found', 'invalid_state') },
      },
    },
    async (request) => toInvoiceJson(await cancelInvoice(deps, callerOf(request).partner.id, request.params.reference)),
  )
}
