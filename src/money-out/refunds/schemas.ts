// The refund object as the API and refund.* events show it: the schemas the routes declare, and
// the types its mapper (core.ts) returns.
import { Type, type Static } from '@sinclair/typebox'
import { operations } from '../../platform/routes.ts'
import { Nullable } from '../../platform/schemas.ts'
import { refundStates, type RefundState } from './states.ts'

export const StateSchema = Type.Unsafe<RefundState>({ type: 'string', enum: [...refundStates.states] })

export const RefundSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    partnerId: Type.String({ format: 'uuid' }),
    reference: Type.String(),
    creditId: Type.String({ format: 'uuid' }),
    amountKobo: Type.Integer(),
    currency: Type.String(),
    state: StateSchema,
    origin: Type.Object(
      {
        type: Type.Unsafe<'partner' | 'escrow' | 'triage'>({ type: 'string', enum: ['partner', 'escrow', 'triage'] }),
        id: Nullable(Type.String({ description: 'The escrow, for an escrow refund; null otherwise' })),
      },
      { description: 'Who asked: the partner (this API), an escrow (its cancel or expiry), triage' },
    ),
    outboundTransferId: Nullable(
      Type.String({
        format: 'uuid',
        description: 'The payout, listed in GET /api/v1/rail/outbound with origin { type: "refund", id }',
      }),
    ),
    reason: Nullable(Type.String()),
    failureReason: Nullable(
      Type.Object(
        {},
        { additionalProperties: true, description: "Why the payout failed: the outbound transfer's failureReason" },
      ),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    completedAt: Nullable(Type.String({ format: 'date-time' })),
  },
  { title: 'Refund', description: 'A refund of a confirmed credit to the account the money came from' },
)

export const RefundRequestSchema = Type.Object({
  reference: Type.String(),
  amountKobo: Type.Integer({ description: 'The sum of the refunds' }),
  refunds: Type.Array(RefundSchema, { description: 'One refund per credit, newest credit first' }),
})
export type RefundJson = Static<typeof RefundSchema>
export type RefundRequestJson = Static<typeof RefundRequestSchema>

/** What the OpenAPI document says of the refund operations (routes.ts declares them). */
export const REFUND_OPERATIONS = operations('refunds', {
  createRefund: {
    summary:
      'Refund a confirmed credit, or the credits of a payment intent or invoice, to the account the money came from (201; paid asynchronously)',
    description:
      'Refunds a confirmed credit, or the credits of a payment intent or invoice, to the account the money came from. Answers 201 with the refund `pending`; it is paid as an outbound transfer and ends with `refund.succeeded` or `refund.failed`. More than is left to refund is 422 `refund_exceeds_refundable`. Idempotent on `reference`.',
  },
  getRefund: { summary: 'One refund', description: 'One refund by its id, with its payout once made.' },
  listRefunds: {
    summary: "The caller's refunds, newest first",
    description:
      "The caller's refunds of every origin (partner, escrow, triage), newest first; page with `cursor` and `limit`.",
  },
})
