// The payment intent object (docs/contracts/collections-and-payouts.md §Payment intents): the schema
// the routes declare, and the type its mapper (service.ts) returns.
import { Type, type Static } from '@sinclair/typebox'
import { operations } from '../../platform/routes.ts'
import { Nullable } from '../../platform/schemas.ts'

export const StatusSchema = Type.Union([
  Type.Literal('pending'),
  Type.Literal('partially_paid'),
  Type.Literal('paid'),
  Type.Literal('overpaid'),
  Type.Literal('expired'),
])

export const PaymentIntentSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    trackingId: Type.String(),
    partnerId: Type.String({ format: 'uuid' }),
    reference: Type.String(),
    status: StatusSchema,
    direction: Type.Object(
      { type: Type.String(), channel: Type.String() },
      { description: 'Money flows in: payer → partner, by bank transfer' },
    ),
    provider: Type.String(),
    providerChannel: Type.String(),
    providerReference: Type.String(),
    amountKobo: Nullable(Type.Integer({ description: 'The expected amount; null when any amount pays it' })),
    currency: Type.String(),
    virtualAccount: Type.String({ description: 'The NUBAN the payer sends money to' }),
    virtualAccountName: Type.String(),
    virtualAccountBank: Type.String(),
    purposeTag: Nullable(Type.String()),
    creatorMetadata: Type.Object(
      {},
      { additionalProperties: true, description: 'Who created it: partnerId, credentialId, requestId' },
    ),
    expiresAt: Type.String({ format: 'date-time' }),
    createdAt: Type.String({ format: 'date-time' }),
    checkoutToken: Type.String({ description: 'Unguessable token of the hosted checkout page' }),
    checkoutUrl: Type.String({
      format: 'uri',
      description: 'The hosted checkout page for the payer: PUBLIC_URL + /checkout/{checkoutToken}',
    }),
    merchantDisplayName: Type.String(),
    returnUrl: Nullable(Type.String()),
  },
  {
    title: 'PaymentIntent',
    description: 'An expected payment: an amount, a virtual account to pay into, and what has been received',
  },
)
export type PaymentIntentJson = Static<typeof PaymentIntentSchema>

/** What the OpenAPI document says of the payment intent operations (routes.ts declares them). */
export const INTENT_OPERATIONS = operations('collections', {
  createPaymentIntent: {
    summary: 'Create a payment intent; its virtual account is allocated at the provider during the request',
    description:
      'Creates a payment intent: an amount expected by an expiry, with a virtual account allocated at the provider during the request and a hosted `checkoutUrl` for the payer. Credits move it to `partially_paid`, `paid` or `overpaid`; unpaid at expiry it becomes `expired`. Idempotent on `reference`.',
  },
  listPaymentIntents: {
    summary: "The caller's payment intents, newest first",
    description:
      "The caller's own payment intents, newest first (the intents behind invoices and escrows are read through those objects); filter by `status`, page with `cursor` and `limit`.",
  },
  getPaymentIntent: {
    summary: 'One payment intent, by its id, its trackingId or its reference',
    description:
      'One payment intent, named by its id, its tracking id or its reference, with what it has received so far.',
  },
})
