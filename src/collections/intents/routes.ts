// Payment intent routes (docs/contracts/collections-and-payouts.md §Payment intents): create (200, synchronous allocation) and reads.
import { Type } from '@sinclair/typebox'
import { callerOf, pageRequestOf } from '../../partners/auth.ts'
import { AmountKobo } from '../../platform/amounts.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import { getOne, getPage, route, SIGNED_BY_REFERENCE } from '../../platform/routes.ts'
import {
  AccountHolderSchema,
  CallbackUrlSchema,
  closedObject,
  CurrencySchema,
  errorResponses,
  IDEMPOTENT_CODES,
  PageQuerySchema,
  PurposeTagSchema,
  ReferenceSchema,
} from '../../platform/schemas.ts'
import type { CollectionsDeps } from '../virtual-accounts/service.ts'
import { INTENT_OPERATIONS as OPS, PaymentIntentSchema, StatusSchema } from './schemas.ts'
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

const ListQuerySchema = PageQuerySchema({ status: Type.Optional(StatusSchema) }, INTENT_PAGE_MAX)

export function registerPaymentIntentRoutes(app: HttpServer, deps: CollectionsDeps): void {
  app.post(
    '/api/v1/rail/payment/intent',
    route(SIGNED_BY_REFERENCE, OPS.createPaymentIntent, {
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
    }),
    async (request, reply) => {
      const created = await createPaymentIntent(deps, callerOf(request), request.body)
      return sendOnce(reply.code(200), created.replayed, toIntentJson(created))
    },
  )
  app.get(
    '/api/v1/rail/payment/intent',
    getPage(OPS.listPaymentIntents, ListQuerySchema, PaymentIntentSchema),
    async (request) => {
      const page = await listIntents(deps.pool, { ...pageRequestOf(request), status: request.query.status })
      return { data: page.intents.map(toIntentJson), nextCursor: page.nextCursor }
    },
  )
  const idParams = closedObject({ id: Type.String({ minLength: 1, maxLength: 64 }) })
  app.get(
    '/api/v1/rail/payment/intent/:id',
    getOne(OPS.getPaymentIntent, idParams, PaymentIntentSchema),
    async (request) => toIntentJson(await getIntent(deps.pool, callerOf(request).partner.id, request.params.id)),
  )
}
