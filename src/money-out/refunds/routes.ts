// Refund routes (issue 18, item 7): refund a confirmed credit, or the credits of a payment intent
// or invoice (201; a replay answers 201 too, with Idempotent-Replayed: like the other create
// routes, a replay keeps the original status), and read the caller's refunds.
import { Type } from '@sinclair/typebox'
import { callerOf, pageRequestOf } from '../../partners/auth.ts'
import { AmountKobo } from '../../platform/amounts.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import { getOne, getPage, route, SIGNED_BY_REFERENCE } from '../../platform/routes.ts'
import {
  closedObject,
  documentOnly,
  errorResponses,
  IDEMPOTENT_CODES,
  IdParamsSchema,
  PageQuerySchema,
} from '../../platform/schemas.ts'
import {
  createRefunds,
  getRefund,
  listRefunds,
  REFUNDS_PAGE_MAX,
  toRefundJson,
  type RefundsApiDeps,
} from './service.ts'
import { REFUND_OPERATIONS as OPS, RefundRequestSchema, RefundSchema, StateSchema } from './schemas.ts'

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

const ListQuerySchema = PageQuerySchema(
  {
    creditId: Type.Optional(Type.String({ format: 'uuid', description: 'Only refunds of this credit' })),
    state: Type.Optional(StateSchema),
  },
  REFUNDS_PAGE_MAX,
)

export function registerRefundRoutes(app: HttpServer, deps: RefundsApiDeps): void {
  app.post(
    '/api/v1/rail/refunds',
    route(SIGNED_BY_REFERENCE, OPS.createRefund, {
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
    }),
    async (request, reply) => {
      const { view, replayed } = await createRefunds(deps, callerOf(request), request.body)
      return sendOnce(reply.code(201), replayed, {
        reference: view.reference,
        amountKobo: view.amountKobo,
        refunds: view.refunds.map(toRefundJson),
      })
    },
  )
  app.get('/api/v1/rail/refunds/:id', getOne(OPS.getRefund, IdParamsSchema, RefundSchema), async (request) =>
    toRefundJson(await getRefund(deps.outbound.pool, callerOf(request).partner.id, request.params.id)),
  )
  app.get('/api/v1/rail/refunds', getPage(OPS.listRefunds, ListQuerySchema, RefundSchema), async (request) => {
    const { creditId, state } = request.query
    const page = await listRefunds(deps.outbound.pool, { ...pageRequestOf(request), creditId, state })
    return { data: page.refunds.map(toRefundJson), nextCursor: page.nextCursor }
  })
}
