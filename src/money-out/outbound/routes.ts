// Outbound transfer routes (docs/contracts/collections-and-payouts.md §Outbound transfers): submit (202), reads, and the sandbox settlement simulator.
import { Type } from '@sinclair/typebox'
import { callerOf } from '../../partners/auth.ts'
import { assertSandboxPartner } from '../../partners/service.ts'
import { AmountKobo } from '../../platform/amounts.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import {
  CallbackUrlSchema,
  closedObject,
  CurrencySchema,
  documentOnly,
  errorResponses,
  IDEMPOTENT_CODES,
  NubanSchema,
  Nullable,
} from '../../platform/schemas.ts'
import { ORIGIN_TYPES, type OriginType } from './repo.ts'
import { OutboundSchema, StateSchema } from './schemas.ts'
import {
  getOutbound,
  listOutbound,
  OUTBOUND_PAGE_MAX,
  simulateSettlement,
  submitOutbound,
  toOutboundJson,
  type OutboundDeps,
} from './service.ts'

const SubmitSchema = closedObject({
  clientReference: Type.String({
    minLength: 1,
    maxLength: 64,
    description: "The partner's reference; a retry with the same body answers the same transfer",
  }),
  beneficiaryAccountNumber: NubanSchema('NUBAN'),
  beneficiaryBankCode: Type.String({ pattern: '^[0-9]{3,6}$', description: 'CBN bank code' }),
  beneficiaryAccountName: Type.String({ minLength: 1, maxLength: 100 }),
  amountKobo: AmountKobo(),
  currency: CurrencySchema(),
  narration: Type.Optional(Type.String({ maxLength: 100 })),
  consumerId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: "The partner's own customer id, returned as is" }),
  ),
  callbackUrl: Type.Optional(CallbackUrlSchema),
})

const ListQuerySchema = closedObject({
  clientReference: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  state: Type.Optional(StateSchema),
  origin: Type.Optional(
    Type.Unsafe<OriginType>({ type: 'string', enum: [...ORIGIN_TYPES], description: 'Only payouts of this origin' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: OUTBOUND_PAGE_MAX, default: 20 })),
  cursor: Type.Optional(Type.String({ format: 'uuid' })),
})

const SimulationSchema = closedObject(
  {
    transferId: Type.Optional(Type.String({ format: 'uuid' })),
    clientReference: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    outcome: Type.Union([Type.Literal('confirmed'), Type.Literal('failed')]),
  },
  documentOnly({
    oneOf: [{ required: ['transferId'] }, { required: ['clientReference'] }],
    description: 'Exactly one of transferId and clientReference names the transfer',
  }),
)

/** Outbound transfers, then the sandbox's simulation of their outcome at the bank. */
export function registerOutboundRoutes(app: HttpServer, deps: OutboundDeps): void {
  registerTransferRoutes(app, deps)
  registerSimulationRoute(app, deps)
}

/** Submitting a payout, and reading the caller's payouts. */
function registerTransferRoutes(app: HttpServer, deps: OutboundDeps): void {
  registerSubmit(app, deps)
  registerReads(app, deps)
}

function registerSubmit(app: HttpServer, deps: OutboundDeps): void {
  app.post(
    '/api/v1/rail/outbound',
    {
      config: { auth: 'signature', idempotencyKey: 'reference' },
      schema: {
        operationId: 'createOutboundTransfer',
        description:
          'Submits a payout of `amountKobo` from the float to a NUBAN at any bank. Answers 202 at once with the transfer `pending`; the pipeline name-checks the account, sends it to the bank and requeries until a final answer, then calls back `transfer.confirmed`, `transfer.failed` or `transfer.unknown`. Idempotent on `clientReference`. Refused before anything moves: 422 `insufficient_funds`, `amount_above_limit`, `unsupported_currency`.',
        tags: ['outbound'],
        summary: 'Submit a payout from the float to an account at any bank (asynchronous: 202)',
        body: SubmitSchema,
        response: {
          202: OutboundSchema,
          ...errorResponses(...IDEMPOTENT_CODES, 'capability_disabled', 'unsupported_currency', 'amount_above_limit'),
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request)
      const { transfer, replayed } = await submitOutbound(deps, caller, request.body)
      return sendOnce(reply.code(202), replayed, toOutboundJson(transfer))
    },
  )
}

function registerReads(app: HttpServer, deps: OutboundDeps): void {
  app.get(
    '/api/v1/rail/outbound/:id',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'getOutboundTransfer',
        description:
          "One outbound transfer by its id, with its state at the bank, the bank's last answer and, when it failed, why.",
        tags: ['outbound'],
        summary: 'One outbound transfer',
        params: closedObject({ id: Type.String({ format: 'uuid' }) }),
        response: { 200: OutboundSchema, ...errorResponses('not_found') },
      },
    },
    async (request) => toOutboundJson(await getOutbound(deps.pool, callerOf(request).partner.id, request.params.id)),
  )

  app.get(
    '/api/v1/rail/outbound',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'listOutboundTransfers',
        description:
          "The caller's outbound transfers, newest first, of every origin (partner payouts, refunds, escrow disbursements, settlements). Filter by `clientReference`, `state` or `origin`; page with `cursor` and `limit`.",
        tags: ['outbound'],
        summary: "The caller's outbound transfers, newest first (clientReference finds one)",
        querystring: ListQuerySchema,
        response: {
          200: Type.Object({ data: Type.Array(OutboundSchema), nextCursor: Nullable(Type.String()) }),
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const query = request.query
      const page = await listOutbound(deps.pool, {
        partnerId: callerOf(request).partner.id,
        clientReference: query.clientReference,
        state: query.state,
        originType: query.origin,
        limit: query.limit ?? 20,
        cursor: query.cursor,
      })
      return { data: page.transfers.map(toOutboundJson), nextCursor: page.nextCursor }
    },
  )
}

function registerSimulationRoute(app: HttpServer, deps: OutboundDeps): void {
  app.post(
    '/api/v1/rail/sandbox/simulate-outbound-settlement',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'simulateOutboundSettlement',
        description:
          "Sandbox partners only: registers at the sandbox bank the outcome (`confirmed` or `failed`) of one of the caller's submitted transfers, named by `transferId` or `clientReference`. The transfer then resolves through the real requery and callback path, not at once.",
        tags: ['sandbox'],
        summary:
          "Sandbox: register the outcome of one of the caller's submitted transfers; it resolves through the real requery and callback path",
        body: SimulationSchema,
        response: {
          200: Type.Object({
            transferId: Type.String(),
            clientReference: Type.String(),
            registeredOutcome: Type.String(),
            message: Type.String(),
          }),
          // 502: the sandbox bank's answer was lost or failed; nothing changed at Rail, ask again.
          ...errorResponses('not_found', 'invalid_state', 'provider_unavailable'),
        },
      },
    },
    async (request) => {
      const partner = callerOf(request).partner
      assertSandboxPartner(partner)
      return simulateSettlement(deps, partner, request.body)
    },
  )
}
