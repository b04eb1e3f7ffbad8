// Payment intent routes (docs/contracts/collections-and-payouts.md §Payment intents): create (200, synchronous allocation) and reads.
import { Type } from '@sinclair/typebox'
import { callerOf } from '../../partners/auth.ts'
import { AmountKobo } from '../../platform/amounts.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import {
  AccountHolderSchema,
  CallbackUrlSchema,
  closedObject,
  CurrencySchema,
  errorResponses,
  IDEMPOTENT_CODES,
  Nullable,
  PurposeTagSchema,
  ReferenceSchema,
} from '../../platform/schemas.ts'
import type { CollectionsDeps } from '../virtual-accounts/service.ts'
import { PaymentIntentSchema, StatusSchema } from './schemas.ts'
import { createPaymentIntent, getIntent, INTENT_PAGE_MAX, listIntents, toIntentJson } from './service.ts'

export const PaymentIntentRequestSchema = closedObject({
  reference: ReferenceSchema,
  currency: Type.Optional(
    CurrencySchema('ISO 4217; only NGN (the default) is served (another code is 422 `unsupported_currency`)'),
  ),
  amountKobo: Type.Optional(AmountKobo({ description: 'The expected amount; without it any credit pays the intent' })),
  callbackUrl: Type.Optional(CallbackUrlSchema),
  purposeTag: Type.Optional(PurposeTagSchema),
  virtualAccountHolder: Type.Optional(AccountHolderSchema),
  expiresAt: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'Default: 24 hours after creation; between 1 minute and 90 days ahead',
    }),
  ),
  merchantDisplayName: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: "Shown to the payer; default: the partner's name" }),
  ),
  returnUrl: Type.Optional(
    Type.String({
      format: 'uri',
      pattern: '^https?://',
      maxLength: 2048,
      description: 'Where the hosted checkout page sends the payer back',
    }),
  ),
})

export function registerPaymentIntentRoutes(app: HttpServer, deps: CollectionsDeps): void {
  registerCreate(app, deps)
  registerReads(app, deps)
}

function registerCreate(app: HttpServer, deps: CollectionsDeps): void {
  app.post(
    '/api/v1/rail/payment/intent',
    {
      config: { auth: 'signature', idempotencyKey: 'reference' },
      schema: {
        operationId: 'createPaymentIntent',
        description:
          'Creates a payment intent: an amount expected by an expiry, with a virtual account allocated at the provider during the request and a hosted `checkoutUrl` for the payer. Credits move it to `partially_paid`, `paid` or `overpaid`; unpaid at expiry it becomes `expired`. Idempotent on `reference`.',
        tags: ['collections'],
        summary: 'Create a payment intent; its virtual account is allocated at the provider during the request',
        body: PaymentIntentRequestSchema,
        response: {
          200: PaymentIntentSchema,
          ...errorResponses(
            ...IDEMPOTENT_CODES,
            'capability_disabled',
            'provider_unavailable',
            'unsupported_currency',
            'amount_above_limit',
          ),
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request)
      const created = await createPaymentIntent(deps, caller, request.body)
      return sendOnce(reply.code(200), created.replayed, toIntentJson(created))
    },
  )
}

function registerReads(app: HttpServer, deps: CollectionsDeps): void {
  app.get(
    '/api/v1/rail/payment/intent',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'listPaymentIntents',
        description:
          "The caller's own payment intents, newest first (the intents behind invoices and escrows are read through those objects); filter by `status`, page with `cursor` and `limit`.",
        tags: ['collections'],
        summary: "The caller's payment intents, newest first",
        querystring: closedObject({
          status: Type.Optional(StatusSchema),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: INTENT_PAGE_MAX, default: 20 })),
          cursor: Type.Optional(Type.String({ format: 'uuid' })),
        }),
        response: {
          200: Type.Object({ data: Type.Array(PaymentIntentSchema), nextCursor: Nullable(Type.String()) }),
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const query = request.query
      const page = await listIntents(deps.pool, {
        partnerId: callerOf(request).partner.id,
        status: query.status,
        limit: query.limit ?? 20,
        cursor: query.cursor,
      })
      return { data: page.intents.map(toIntentJson), nextCursor: page.nextCursor }
    },
  )

  app.get(
    '/api/v1/rail/payment/intent/:id',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'getPaymentIntent',
        description:
          'One payment intent, named by its id, its tracking id or its reference, with what it has received so far.',
        tags: ['collections'],
        summary: 'One payment intent, by its id, its trackingId or its reference',
        params: closedObject({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: PaymentIntentSchema, ...errorResponses('not_found') },
      },
    },
    async (request) => toIntentJson(await getIntent(deps.pool, callerOf(request).partner.id, request.params.id)),
  )
}
