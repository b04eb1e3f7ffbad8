// Escrow routes (docs/contracts/escrow.md), under /api/v1/escrow/partner, authenticated by X-API-Key.
import { Type } from '@sinclair/typebox'
import { callerOf, pageRequestOf } from '../partners/auth.ts'
import { AmountKobo } from '../platform/amounts.ts'
import type { HttpServer } from '../platform/http.ts'
import { sendOnce } from '../platform/idempotency.ts'
import { route } from '../platform/routes.ts'
import {
  CallbackUrlSchema,
  closedObject,
  CurrencySchema,
  errorResponses,
  IDEMPOTENT_CODES,
  Nullable,
  PageQuerySchema,
  PageSchema,
} from '../platform/schemas.ts'
import {
  AMOUNT_MIN_KOBO,
  cancelEscrow,
  createEscrow,
  DESCRIPTION_MAX_CHARS,
  ESCROW_PAGE_MAX,
  getEscrow,
  listEscrows,
  REASON_MAX_CHARS,
  REFERENCE_MAX_CHARS,
  registerWebhook,
  releaseEscrow,
  retryRefund,
  toCreatedJson,
  escrowView,
  TTL_HOURS_DEFAULT,
  TTL_HOURS_MAX,
  WEBHOOK_SECRET_MAX_CHARS,
  WEBHOOK_SECRET_MIN_CHARS,
  type EscrowDeps,
} from './service.ts'
import {
  ChangedSchema,
  CreatedSchema,
  ESCROW_OPERATIONS as OPS,
  DestinationSchema,
  EscrowSchema,
  StatusSchema,
  TypeSchema,
} from './schemas.ts'

const PREFIX = '/api/v1/escrow/partner'
const EMAIL_MAX_CHARS = 254
const REF_MAX_CHARS = 64

const CreateSchema = closedObject({
  type: TypeSchema,
  amount: AmountKobo({ minimum: AMOUNT_MIN_KOBO, description: 'kobo' }),
  currency: CurrencySchema(),
  payerEmail: Type.String({ format: 'email', maxLength: EMAIL_MAX_CHARS }),
  recipientEmail: Type.String({ format: 'email', maxLength: EMAIL_MAX_CHARS }),
  description: Type.String({ minLength: 1, maxLength: DESCRIPTION_MAX_CHARS }),
  ttlHours: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: TTL_HOURS_MAX,
      default: TTL_HOURS_DEFAULT,
      description: 'Hours until an unfunded escrow expires',
    }),
  ),
  webhookUrl: Type.Optional(CallbackUrlSchema),
  metadata: Type.Optional(
    Type.Object({}, { additionalProperties: true, description: 'Returned on every event; at most 4096 bytes of JSON' }),
  ),
  reference: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: REFERENCE_MAX_CHARS,
      description: 'Idempotency: a retry with the same body answers the same escrow',
    }),
  ),
  disbursement: Type.Optional(DestinationSchema),
})

const RefParams = closedObject({ ref: Type.String({ minLength: 1, maxLength: REF_MAX_CHARS }) })
const ReleaseSchema = closedObject({
  reason: Type.Optional(Type.String({ maxLength: REASON_MAX_CHARS })),
  disbursement: Type.Optional(DestinationSchema),
})
const CancelSchema = closedObject({ reason: Type.String({ minLength: 1, maxLength: REASON_MAX_CHARS }) })
const WebhookSchema = closedObject({
  webhookUrl: CallbackUrlSchema,
  webhookSecret: Type.Optional(
    Nullable(
      Type.String({
        minLength: WEBHOOK_SECRET_MIN_CHARS,
        maxLength: WEBHOOK_SECRET_MAX_CHARS,
        description: 'Signs events (X-Rail-Signature); omit to keep the registered one, null to remove it',
      }),
    ),
  ),
})
const ListQuerySchema = PageQuerySchema({ status: Type.Optional(StatusSchema) }, ESCROW_PAGE_MAX)

/** The escrow API is authenticated by X-API-Key. */
const API_KEY = { auth: 'api-key' } as const

// A release may come without a body: it is then an empty object, validated as such.
async function emptyBodyAsObject(request: { body: unknown }): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {}
}

/** The escrow API, one group of routes per resource (registered in this order, as the docs list them). */
export function registerEscrowRoutes(app: HttpServer, deps: EscrowDeps): void {
  registerCreateAndReadRoutes(app, deps)
  registerChangeRoutes(app, deps)
}

/** Creating an escrow and the webhook its events go to; then the caller's escrows, the list and one by its ref. */
function registerCreateAndReadRoutes(app: HttpServer, deps: EscrowDeps): void {
  app.post(
    `${PREFIX}/create`,
    route({ ...API_KEY, idempotencyKey: 'reference' }, OPS.createEscrow, {
      body: CreateSchema,
      response: {
        201: CreatedSchema,
        ...errorResponses(...IDEMPOTENT_CODES, 'not_found', 'unsupported_currency', 'amount_above_limit'),
      },
    }),
    async (request, reply) => {
      const { escrow, funding, replayed } = await createEscrow(deps, callerOf(request), request.body)
      return sendOnce(reply.code(201), replayed, toCreatedJson(escrow, funding))
    },
  )
  app.post(
    `${PREFIX}/webhook`,
    route(API_KEY, OPS.registerEscrowWebhook, {
      body: WebhookSchema,
      response: {
        200: Type.Object({
          success: Type.Boolean(),
          webhookUrl: Type.String(),
          hasSecret: Type.Boolean(),
          message: Type.String(),
        }),
        ...errorResponses(),
      },
    }),
    async (request) => registerWebhook(deps, callerOf(request).partner, request.body),
  )
  app.get(
    PREFIX,
    route(API_KEY, OPS.listEscrows, {
      querystring: ListQuerySchema,
      response: {
        200: Type.Object({ success: Type.Boolean(), ...PageSchema(EscrowSchema).properties }),
        ...errorResponses(),
      },
    }),
    async (request) => {
      const page = await listEscrows(deps.pool, { ...pageRequestOf(request), status: request.query.status })
      const data = await Promise.all(page.escrows.map((escrow) => escrowView(deps.pool, escrow)))
      return { success: true, data, nextCursor: page.nextCursor }
    },
  )
  app.get(
    `${PREFIX}/:ref`,
    route(API_KEY, OPS.getEscrow, {
      params: RefParams,
      response: {
        200: Type.Object({ success: Type.Boolean(), escrow: EscrowSchema }),
        ...errorResponses('not_found'),
      },
    }),
    async (request) => {
      const escrow = await getEscrow(deps.pool, callerOf(request).partner.id, request.params.ref)
      return { success: true, escrow: await escrowView(deps.pool, escrow) }
    },
  )
}

/** What the partner does to an escrow: release it, cancel it, retry its refund. */
function registerChangeRoutes(app: HttpServer, deps: EscrowDeps): void {
  const changed = {
    params: RefParams,
    response: { 200: ChangedSchema, ...errorResponses('not_found', 'invalid_escrow_status') },
  }
  app.patch(
    `${PREFIX}/:ref/release`,
    { ...route(API_KEY, OPS.releaseEscrow, { ...changed, body: ReleaseSchema }), preValidation: emptyBodyAsObject },
    async (request) => {
      const { escrow, retried } = await releaseEscrow(deps, callerOf(request), request.params.ref, request.body)
      const message =
        escrow.destination === null
          ? "Escrow released; the amount is credited to your float for the recipient's payment"
          : retried
            ? 'Disbursement retried; the recipient is being paid'
            : 'Escrow released; the recipient is being paid'
      return { success: true, ref: escrow.ref, status: escrow.status, message }
    },
  )
  app.patch(
    `${PREFIX}/:ref/cancel`,
    { ...route(API_KEY, OPS.cancelEscrow, { ...changed, body: CancelSchema }), preValidation: emptyBodyAsObject },
    async (request) => {
      const escrow = await cancelEscrow(deps, callerOf(request), request.params.ref, request.body.reason)
      const message =
        escrow.fundedAmountKobo > 0 ? 'Escrow cancelled; the refund to the payer is initiated' : 'Escrow cancelled'
      return { success: true, ref: escrow.ref, status: escrow.status, message }
    },
  )
  app.patch(
    `${PREFIX}/:ref/refund`,
    {
      ...route(API_KEY, OPS.retryEscrowRefund, {
        params: RefParams,
        body: closedObject({}),
        response: {
          200: Type.Object({
            success: Type.Boolean(),
            ref: Type.String(),
            status: StatusSchema,
            refundState: Type.String(),
            message: Type.String(),
          }),
          ...errorResponses('not_found', 'invalid_escrow_status'),
        },
      }),
      preValidation: emptyBodyAsObject,
    },
    async (request) => {
      const escrow = await retryRefund(deps, callerOf(request), request.params.ref)
      const message =
        escrow.refundState === 'pending'
          ? 'Refund retried; the payer is being refunded'
          : 'Refund retried; a credit still cannot be refunded (no valid sender account)'
      return { success: true, ref: escrow.ref, status: escrow.status, refundState: escrow.refundState!, message }
    },
  )
}
