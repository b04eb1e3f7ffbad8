// Escrow routes (docs/contracts/escrow.md), under /api/v1/escrow/partner, authenticated by X-API-Key.
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
import { ChangedSchema, CreatedSchema, DestinationSchema, EscrowSchema, StatusSchema, TypeSchema } from './schemas.ts'

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
const ListQuerySchema = closedObject({
  status: Type.Optional(StatusSchema),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: ESCROW_PAGE_MAX, default: 20 })),
  cursor: Type.Optional(Type.String({ format: 'uuid' })),
})

const config = { auth: 'api-key' as const }

// A release may come without a body: it is then an empty object, validated as such.
async function emptyBodyAsObject(request: { body: unknown }): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {}
}

/** The escrow API, one group of routes per resource (registered in this order, as the docs list them). */
export function registerEscrowRoutes(app: HttpServer, deps: EscrowDeps): void {
  registerCreateRoutes(app, deps)
  registerReadRoutes(app, deps)
  registerChangeRoutes(app, deps)
}

/** Creating an escrow, and the webhook its events go to. */
function registerCreateRoutes(app: HttpServer, deps: EscrowDeps): void {
  app.post(
    `${PREFIX}/create`,
    {
      config: { ...config, idempotencyKey: 'reference' as const },
      schema: {
        operationId: 'createEscrow',
        description:
          'Creates an escrow of `amount` kobo from a payer to a recipient, with a funding virtual account (and `checkoutUrl`) the payer pays into. Answers 201; a replayed `reference` answers the same escrow. Funding, release, cancel and expiry are announced to the escrow webhook.',
        tags: ['escrow'],
        summary: 'Create an escrow (201; a replayed reference answers the same escrow)',
        body: CreateSchema,
        response: {
          201: CreatedSchema,
          ...errorResponses(...IDEMPOTENT_CODES, 'not_found', 'unsupported_currency', 'amount_above_limit'),
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request)
      const { escrow, funding, replayed } = await createEscrow(deps, caller, request.body)
      return sendOnce(reply.code(201), replayed, toCreatedJson(escrow, funding))
    },
  )

  app.post(
    `${PREFIX}/webhook`,
    {
      config,
      schema: {
        operationId: 'registerEscrowWebhook',
        description:
          'Registers or replaces the URL escrow events go to, and the secret that signs them (`X-Rail-Signature` and Standard Webhooks).',
        tags: ['escrow'],
        summary: 'Register or update the escrow webhook',
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
      },
    },
    async (request) => registerWebhook(deps, callerOf(request).partner, request.body),
  )
}

/** The caller's escrows: the list and one by its ref. */
function registerReadRoutes(app: HttpServer, deps: EscrowDeps): void {
  app.get(
    PREFIX,
    {
      config,
      schema: {
        operationId: 'listEscrows',
        description: "The caller's escrows, newest first; filter by `status`, page with `cursor` and `limit`.",
        tags: ['escrow'],
        summary: "The caller's escrows, newest first",
        querystring: ListQuerySchema,
        response: {
          200: Type.Object({
            success: Type.Boolean(),
            data: Type.Array(EscrowSchema),
            nextCursor: Nullable(Type.String()),
          }),
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const query = request.query
      const page = await listEscrows(deps.pool, {
        partnerId: callerOf(request).partner.id,
        status: query.status,
        limit: query.limit ?? 20,
        cursor: query.cursor,
      })
      const data = await Promise.all(page.escrows.map((escrow) => escrowView(deps.pool, escrow)))
      return { success: true, data, nextCursor: page.nextCursor }
    },
  )

  app.get(
    `${PREFIX}/:ref`,
    {
      config,
      schema: {
        operationId: 'getEscrow',
        description: 'One escrow by its ref, with its funding and, once released, its disbursement.',
        tags: ['escrow'],
        summary: 'One escrow of the caller',
        params: RefParams,
        response: {
          200: Type.Object({ success: Type.Boolean(), escrow: EscrowSchema }),
          ...errorResponses('not_found'),
        },
      },
    },
    async (request) => {
      const escrow = await getEscrow(deps.pool, callerOf(request).partner.id, request.params.ref)
      return { success: true, escrow: await escrowView(deps.pool, escrow) }
    },
  )
}

/** What the partner does to an escrow: release it, cancel it, retry its refund. */
function registerChangeRoutes(app: HttpServer, deps: EscrowDeps): void {
  registerReleaseAndCancel(app, deps)
  registerRefundRetry(app, deps)
}

function registerReleaseAndCancel(app: HttpServer, deps: EscrowDeps): void {
  app.patch(
    `${PREFIX}/:ref/release`,
    {
      config,
      preValidation: emptyBodyAsObject,
      schema: {
        operationId: 'releaseEscrow',
        description:
          "Releases a funded escrow to the recipient's bank account (a payout) or the partner's float. After a failed disbursement the same call releases it again. Not funded: 400 `invalid_escrow_status`.",
        tags: ['escrow'],
        summary: 'Release a funded escrow to the recipient (or, after a failed disbursement, release it again)',
        params: RefParams,
        body: ReleaseSchema,
        response: { 200: ChangedSchema, ...errorResponses('not_found', 'invalid_escrow_status') },
      },
    },
    async (request) => {
      const caller = callerOf(request)
      const { escrow, retried } = await releaseEscrow(deps, caller, request.params.ref, request.body)
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
    {
      config,
      preValidation: emptyBodyAsObject,
      schema: {
        operationId: 'cancelEscrow',
        description:
          "Cancels an initiated or funded escrow with a reason; money already funded is refunded to each payer's account. Another status: 400 `invalid_escrow_status`.",
        tags: ['escrow'],
        summary: 'Cancel an initiated or funded escrow; the payer is refunded',
        params: RefParams,
        body: CancelSchema,
        response: { 200: ChangedSchema, ...errorResponses('not_found', 'invalid_escrow_status') },
      },
    },
    async (request) => {
      const caller = callerOf(request)
      const escrow = await cancelEscrow(deps, caller, request.params.ref, request.body.reason)
      return {
        success: true,
        ref: escrow.ref,
        status: escrow.status,
        message:
          escrow.fundedAmountKobo > 0 ? 'Escrow cancelled; the refund to the payer is initiated' : 'Escrow cancelled',
      }
    },
  )
}

function registerRefundRetry(app: HttpServer, deps: EscrowDeps): void {
  app.patch(
    `${PREFIX}/:ref/refund`,
    {
      config,
      preValidation: emptyBodyAsObject,
      schema: {
        operationId: 'retryEscrowRefund',
        description:
          'Retries a failed refund: each funding credit whose refund failed is refunded again to the account it came from. No body, or an empty object.',
        tags: ['escrow'],
        summary: 'Retry a failed refund: each credit whose refund failed is refunded again to the account it came from',
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
      },
    },
    async (request) => {
      const caller = callerOf(request)
      const escrow = await retryRefund(deps, caller, request.params.ref)
      const message =
        escrow.refundState === 'pending'
          ? 'Refund retried; the payer is being refunded'
          : 'Refund retried; a credit still cannot be refunded (no valid sender account)'
      return { success: true, ref: escrow.ref, status: escrow.status, refundState: escrow.refundState!, message }
    },
  )
}
