// The escrow objects of docs/contracts/escrow.md as the API shows them: the schemas the routes
// declare, and the types their mappers (views.ts) return.
import { Type, type Static } from '@sinclair/typebox'
import { operations } from '../platform/routes.ts'
import { closedObject, NubanSchema, Nullable } from '../platform/schemas.ts'
import type { EscrowType } from './repo.ts'
import { escrowStates, type EscrowStatus } from './states.ts'

// An enum (not a union of literals), so that a wrong value is one issue naming the field.
export const TypeSchema = Type.Unsafe<EscrowType>({
  type: 'string',
  enum: ['goods', 'services', 'property', 'conditional'],
})
export const StatusSchema = Type.Unsafe<EscrowStatus>({ type: 'string', enum: [...escrowStates.states] })
export const FundingSchema = Nullable(
  Type.Object(
    {
      virtualAccount: Type.String({ description: 'The NUBAN the payer pays into' }),
      virtualAccountName: Type.String(),
      bankCode: Type.String(),
      bankName: Type.String(),
      trackingId: Type.String(),
      checkoutToken: Type.String({ description: 'Token of the hosted checkout page' }),
      checkoutUrl: Type.String({
        format: 'uri',
        description: 'The hosted checkout page for the payer: PUBLIC_URL + /checkout/{checkoutToken}',
      }),
      amountKobo: Nullable(Type.Integer()),
      currency: Type.String(),
      expiresAt: Type.String({ format: 'date-time' }),
    },
    {
      description:
        'How the payer funds the escrow: the virtual account of a composed payment intent (docs/design.md §10)',
    },
  ),
)
export const MetadataSchema = Type.Object({}, { additionalProperties: true })

/** A bank account to pay the released amount to; checked as a NUBAN here, its name by the bank when paid. */
export const DestinationSchema = closedObject(
  {
    accountNumber: NubanSchema('NUBAN'),
    bankCode: Type.String({ pattern: '^[0-9]{3,6}$', description: 'CBN bank code' }),
    accountName: Type.String({
      minLength: 1,
      maxLength: 100,
      description: "The account holder's name; the bank's name enquiry must agree",
    }),
  },
  { description: "The recipient's bank account; without one the released amount goes to the partner's float" },
)
export const RefundSchema = Nullable(
  Type.Object({
    state: Type.Unsafe<string>({ type: 'string', enum: ['pending', 'refunded', 'failed'] }),
    amountKobo: Type.Integer({ description: 'Kobo paid back to the payer (each credit to the account it came from)' }),
    refunds: Type.Array(
      Type.Object({
        id: Type.String({ description: 'The refund in GET /api/v1/rail/refunds' }),
        creditId: Type.String(),
        amountKobo: Type.Integer(),
        state: Type.Unsafe<string>({ type: 'string', enum: ['pending', 'succeeded', 'failed'] }),
        outboundTransferId: Nullable(Type.String()),
      }),
    ),
  }),
)
export const DisbursementSchema = Nullable(
  Type.Object({
    destination: Type.Union([
      Type.Object({ accountNumber: Type.String(), bankCode: Type.String(), accountName: Type.String() }),
      Type.Literal('float'),
    ]),
    state: Type.Unsafe<string>({ type: 'string', enum: ['awaiting_release', 'pending', 'paid', 'failed'] }),
    outboundTransferId: Nullable(
      Type.String({ description: 'The payout in GET /api/v1/rail/outbound (origin escrow)' }),
    ),
    failureReason: Type.Optional(Type.Object({}, { additionalProperties: true })),
  }),
)

export const CreatedSchema = Type.Object(
  {
    success: Type.Boolean(),
    ref: Type.String(),
    status: StatusSchema,
    amount: Type.Integer(),
    currency: Type.String(),
    expiresAt: Type.String({ format: 'date-time' }),
    message: Type.String(),
    funding: FundingSchema,
  },
  { title: 'EscrowCreated', description: 'The escrow just created, with the virtual account its payer funds' },
)

export const EscrowSchema = Type.Object(
  {
    id: Type.String({
      format: 'uuid',
      description: "Rail's id of the escrow: the origin id of its disbursement payout and its refunds",
    }),
    ref: Type.String({ description: 'EPT-<digits>-<alphanumerics>' }),
    reference: Nullable(Type.String()),
    type: TypeSchema,
    status: StatusSchema,
    amount: Type.Integer(),
    fundedAmount: Type.Integer({ description: 'Kobo credited so far' }),
    currency: Type.String(),
    description: Type.String(),
    payerEmail: Type.String(),
    recipientEmail: Type.String(),
    metadata: MetadataSchema,
    webhookUrl: Nullable(Type.String()),
    funding: FundingSchema,
    disbursement: DisbursementSchema,
    refund: RefundSchema,
    createdAt: Type.String({ format: 'date-time' }),
    expiresAt: Type.String({ format: 'date-time' }),
    fundedAt: Nullable(Type.String({ format: 'date-time' })),
    releasedAt: Nullable(Type.String({ format: 'date-time' })),
    cancelledAt: Nullable(Type.String({ format: 'date-time' })),
    expiredAt: Nullable(Type.String({ format: 'date-time' })),
  },
  {
    title: 'Escrow',
    description: 'An escrow: money a payer funds, held until the partner releases it to the recipient or cancels it',
  },
)

export const ChangedSchema = Type.Object(
  { success: Type.Boolean(), ref: Type.String(), status: StatusSchema, message: Type.String() },
  { title: 'EscrowChange', description: "An escrow's status after a release or cancel" },
)

export type EscrowFundingJson = Static<typeof FundingSchema>
export type EscrowDisbursementJson = Static<typeof DisbursementSchema>
export type EscrowRefundJson = Static<typeof RefundSchema>
export type EscrowCreatedJson = Static<typeof CreatedSchema>
export type EscrowJson = Static<typeof EscrowSchema>
export type EscrowChangeJson = Static<typeof ChangedSchema>

/** What the OpenAPI document says of the escrow operations (routes.ts declares them). */
export const ESCROW_OPERATIONS = operations('escrow', {
  createEscrow: {
    summary: 'Create an escrow (201; a replayed reference answers the same escrow)',
    description:
      'Creates an escrow of `amount` kobo from a payer to a recipient, with a funding virtual account (and `checkoutUrl`) the payer pays into. Answers 201; a replayed `reference` answers the same escrow. Funding, release, cancel and expiry are announced to the escrow webhook.',
  },
  registerEscrowWebhook: {
    summary: 'Register or update the escrow webhook',
    description:
      'Registers or replaces the URL escrow events go to, and the secret that signs them (`X-Rail-Signature` and Standard Webhooks).',
  },
  listEscrows: {
    summary: "The caller's escrows, newest first",
    description: "The caller's escrows, newest first; filter by `status`, page with `cursor` and `limit`.",
  },
  getEscrow: {
    summary: 'One escrow of the caller',
    description: 'One escrow by its ref, with its funding and, once released, its disbursement.',
  },
  releaseEscrow: {
    summary: 'Release a funded escrow to the recipient (or, after a failed disbursement, release it again)',
    description:
      "Releases a funded escrow to the recipient's bank account (a payout) or the partner's float. After a failed disbursement the same call releases it again. Not funded: 400 `invalid_escrow_status`.",
  },
  cancelEscrow: {
    summary: 'Cancel an initiated or funded escrow; the payer is refunded',
    description:
      "Cancels an initiated or funded escrow with a reason; money already funded is refunded to each payer's account. Another status: 400 `invalid_escrow_status`.",
  },
  retryEscrowRefund: {
    summary: 'Retry a failed refund: each credit whose refund failed is refunded again to the account it came from',
    description:
      'Retries a failed refund: each funding credit whose refund failed is refunded again to the account it came from. No body, or an empty object.',
  },
})
