// The invoice object as the API and its events show it (docs/contracts/collections-and-payouts.md
// §Invoices): the schemas the routes declare, and the type its mapper (service.ts) returns.
import { Type, type Static } from '@sinclair/typebox'
import { AmountKobo } from '../platform/amounts.ts'
import { operations } from '../platform/routes.ts'
import { closedObject, Nullable } from '../platform/schemas.ts'

export const StatusSchema = Type.Union([
  Type.Literal('draft'),
  Type.Literal('published'),
  Type.Literal('partially_paid'),
  Type.Literal('paid'),
  Type.Literal('cancelled'),
])

export const CustomerSchema = closedObject(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    phone: Type.Optional(Type.String({ pattern: '^\\+?[0-9]{7,15}$' })),
    customerId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: "The partner's own id of the customer" }),
    ),
  },
  { description: 'Who is billed; the name, when given, names the virtual account' },
)

export const LineItemSchema = closedObject(
  {
    description: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'What is billed on this line',
      examples: ['Website design, phase 1'],
    }),
    quantity: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'How many', examples: [2] }),
    unitAmountKobo: AmountKobo({ description: 'The price of one, in kobo', examples: [500_000] }),
  },
  { title: 'InvoiceLineItem', description: 'One billed line of an invoice' },
)

/**
 * The customer as an invoice shows it: the fields the request takes (CustomerSchema), listed in the
 * order the database keeps them (jsonb), and open so that nothing stored is ever left out.
 */
const InvoiceCustomerSchema = Type.Object(
  {
    name: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    phone: Type.Optional(Type.String()),
    customerId: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: 'Who is billed, as the request gave it' },
)

export const InvoiceSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    reference: Type.String(),
    partnerId: Type.String({ format: 'uuid' }),
    status: StatusSchema,
    title: Type.String(),
    description: Nullable(Type.String()),
    lineItems: Type.Array(LineItemSchema, {
      description: 'What the invoice bills, line by line (empty when none were given)',
    }),
    amountKobo: Type.Integer(),
    amountPaidKobo: Type.Integer(),
    currency: Type.String(),
    customer: Nullable(InvoiceCustomerSchema),
    dueAt: Nullable(Type.String({ format: 'date-time' })),
    publishedAt: Nullable(Type.String({ format: 'date-time' })),
    paidAt: Nullable(Type.String({ format: 'date-time' })),
    cancelledAt: Nullable(Type.String({ format: 'date-time' })),
    persistentVirtualAccountId: Nullable(
      Type.String({
        format: 'uuid',
        description: 'The id of the virtual account the invoice is paid into (from published on)',
      }),
    ),
    virtualAccount: Nullable(Type.String()),
    virtualAccountName: Nullable(Type.String()),
    virtualAccountBank: Nullable(Type.String()),
    trackingId: Nullable(Type.String()),
    checkoutToken: Nullable(Type.String()),
    checkoutUrl: Nullable(
      Type.String({
        format: 'uri',
        description:
          "The invoice's payment page for the payer: PUBLIC_URL + /pay/{checkoutToken}; null until published",
      }),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    creatorMetadata: Type.Object({}, { additionalProperties: true }),
  },
  { title: 'Invoice', description: 'An invoice: an amount a customer owes, paid into its own virtual account' },
)
export type InvoiceJson = Static<typeof InvoiceSchema>

/** What the OpenAPI document says of the invoice operations (routes.ts declares them). */
export const INVOICE_OPERATIONS = operations('invoices', {
  createInvoice: {
    summary:
      'Create an invoice: a draft, or published at once (publishOnCreate) with its virtual account allocated in the same request',
    description:
      'Creates an invoice for a customer: a draft, or published at once (`publishOnCreate`) with its virtual account allocated in the same request and a hosted `checkoutUrl`. Idempotent on `reference`.',
  },
  listInvoices: {
    summary: "The caller's invoices, newest first",
    description: "The caller's invoices, newest first; filter by `status`, page with `cursor` and `limit`.",
  },
  getInvoice: {
    summary: 'One invoice, by its reference',
    description: 'One invoice by its reference, with what has been paid and its payment account once published.',
  },
  publishInvoice: {
    summary:
      'Publish a draft: its virtual account is allocated (a composed payment intent). Not a draft: 409 with the current state in details',
    description:
      'Publishes a draft: its virtual account is allocated at the provider and the invoice starts collecting (`invoice.published`). An invoice that is not a draft is 409 `invalid_state` with its current state in `details`.',
  },
  cancelInvoice: {
    summary:
      'Cancel a draft, published or partially paid invoice; its account is archived and later credits go to unmatched triage',
    description:
      'Cancels a draft, published or partially paid invoice (`invoice.cancelled`); its account is archived, later credits go to unmatched triage, and partial payments can be refunded with `POST /api/v1/rail/refunds`.',
  },
})
