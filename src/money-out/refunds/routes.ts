// Refund routes (issue 18, item 7): refund a confirmed credit, or the credits of a payment intent
// or invoice (201; a replay answers 201 too, with Idempotent-Replayed: like the other create
// routes, a replay keeps the original status), and read the caller's refunds.
import { Type } from '@sinclair/typebox'
import { callerOf } from '../../partners/auth.ts'
import { AmountKobo } from '../../platform/amounts.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import { closedObject, documentOnly, errorResponses, IDEMPOTENT_CODES, Nullable } from '../../platform/schemas.ts'
import {
  createRefunds,
  getRefund,
  listRefunds,
  REFUNDS_PAGE_MAX,
  toRefundJson,
  type RefundsApiDeps,
} from './service.ts'
import { RefundRequestSchema, RefundSchema, StateSchema } from './schemas.ts'

/** Printable text: no control characters (they would reach the bank and the partner's logs). */
const PRINTABLE = '^[^\\u0000-\\u001f\\u007f]*$'

const CreateSchema = closedObject(
  {
    reference: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: PRINTABLE,
      description: "The partner's reference; a retry with the same body answers the same refunds",
    }),
    creditId: Type.Optional(Type.String({ format: 'uuid', description: 'A confirmed inbound credit' })),
    paymentIntentId: Type.Optional(
      Type.String({ format: 'uuid', description: 'A payment intent: its confirmed credits, newest first' }),
    ),
    invoiceReference: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: PRINTABLE,
        description: "An invoice (a cancelled one's partial payments too): its confirmed credits, newest first",
      }),
    ),
    amountKobo: Type.Optional(AmountKobo({ description: 'At most what is left to refund; all of it when absent' })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: PRINTABLE })),
  },
  documentOnly({
    oneOf: [{ required: ['creditId'] }, { required: ['paymentIntentId'] }, { required: ['invoiceReference'] }],
    description: 'Exactly one of creditId, paymentIntentId and invoiceReference names what is refunded',
  }),
)

const ListQuerySchema = closedObject({
  creditId: Type.Optional(Type.String({ format: 'uuid', description: 'Only refunds of this credit' })),
  state: Type.Optional(StateSchema),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: REFUNDS_PAGE_MAX, default: 20 })),
  cursor: Type.Optional(Type.String({ format: 'uuid' })),
})

export function registerRefundRoutes(app: HttpServer, deps: RefundsApiDeps): void {
  registerCreate(app, deps)
  registerReads(app, deps)
}

function registerCreate(app: HttpServer, deps: RefundsApiDeps): void {
  app.post(
    '/api/v1/rail/refunds',
    {
      config: { auth: 'signature', idempotencyKey: 'reference' },
      schema: {
        operationId: 'createRefund',
        description:
          'Refunds a confirmed credit, or the credits of a payment intent or invoice, to the account the money came from. Answers 201 with the refund `pending`; it is paid as an outbound transfer and ends with `refund.succeeded` or `refund.failed`. More than is left to refund is 422 `refund_exceeds_refundable`. Idempotent on `reference`.',
        tags: ['refunds'],
        summary:
          'Refund a confirmed credit, or the credits of a payment intent or invoice, to the account the money came from (201; paid asynchronously)',
        body: CreateSchema,
        response: {
          201: RefundRequestSchema,
          ...errorResponses(
            ...IDEMPOTENT_CODES,
            'not_found',
            'invalid_state',
            'insufficient_funds',
            'refund_destination_unknown',
            'refund_exceeds_refundable',
            'amount_above_limit',
          ),
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request)
      const { view, replayed } = await createRefunds(deps, caller, request.body)
      return sendOnce(reply.code(201), replayed, {
        reference: view.reference,
        amountKobo: view.amountKobo,
        refunds: view.refunds.map(toRefundJson),
      })
    },
  )
}

function registerReads(app: HttpServer, deps: RefundsApiDeps): void {
  app.get(
    '/api/v1/rail/refunds/:id',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'getRefund',
        description: 'One refund by its id, with its payout once made.',
        tags: ['refunds'],
        summary: 'One refund',
        params: closedObject({ id: Type.String({ format: 'uuid' }) }),
        response: { 200: RefundSchema, ...errorResponses('not_found') },
      },
    },
    async (request) =>
      toRefundJson(await getRefund(deps.outbound.pool, callerOf(request).partner.id, request.params.id)),
  )

  app.get(
    '/api/v1/rail/refunds',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'listRefunds',
        description:
          "The caller's refunds of every origin (partner, escrow, triage), newest first; page with `cursor` and `limit`.",
        tags: ['refunds'],
        summary: "The caller's refunds, newest first",
        querystring: ListQuerySchema,
        response: {
          200: Type.Object({ data: Type.Array(RefundSchema), nextCursor: Nullable(Type.String()) }),
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const query = request.query
      const page = await listRefunds(deps.outbound.pool, {
        partnerId: callerOf(request).partner.id,
        creditId: query.creditId,
        state: query.state,
        limit: query.limit ?? 20,
        cursor: query.cursor,
      })
      return { data: page.refunds.map(toRefundJson), nextCursor: page.nextCursor }
    },
  )
}
