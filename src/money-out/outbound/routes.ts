// Outbound transfer routes (docs/contracts/collections-and-payouts.md §Outbound transfers): submit (202), reads, and the sandbox settlement simulator.
import { Type } from '@sinclair/typebox'
import { callerOf, pageRequestOf } from '../../partners/auth.ts'
import { assertSandboxPartner } from '../../partners/service.ts'
import { AmountKobo } from '../../platform/amounts.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import { getOne, getPage, route, SIGNED, SIGNED_BY_REFERENCE } from '../../platform/routes.ts'
import {
  CallbackUrlSchema,
  closedObject,
  CurrencySchema,
  documentOnly,
  errorResponses,
  IDEMPOTENT_CODES,
  IdParamsSchema,
  NubanSchema,
  PageQuerySchema,
} from '../../platform/schemas.ts'
import { ORIGIN_TYPES, type OriginType } from './repo.ts'
import { OUTBOUND_OPERATIONS as OPS, OutboundSchema, StateSchema } from './schemas.ts'
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

const ListQuerySchema = PageQuerySchema(
  {
    clientReference: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    state: Type.Optional(StateSchema),
    origin: Type.Optional(
      Type.Unsafe<OriginType>({ type: 'string', enum: [...ORIGIN_TYPES], description: 'Only payouts of this origin' }),
    ),
  },
  OUTBOUND_PAGE_MAX,
)

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
  app.post(
    '/api/v1/rail/outbound',
    route(SIGNED_BY_REFERENCE, OPS.createOutboundTransfer, {
      body: SubmitSchema,
      response: {
        202: OutboundSchema,
        ...errorResponses(...IDEMPOTENT_CODES, 'capability_disabled', 'unsupported_currency', 'amount_above_limit'),
      },
    }),
    async (request, reply) => {
      const { transfer, replayed } = await submitOutbound(deps, callerOf(request), request.body)
      return sendOnce(reply.code(202), replayed, toOutboundJson(transfer))
    },
  )
  app.get(
    '/api/v1/rail/outbound/:id',
    getOne(OPS.getOutboundTransfer, IdParamsSchema, OutboundSchema),
    async (request) => toOutboundJson(await getOutbound(deps.pool, callerOf(request).partner.id, request.params.id)),
  )
  app.get(
    '/api/v1/rail/outbound',
    getPage(OPS.listOutboundTransfers, ListQuerySchema, OutboundSchema),
    async (request) => {
      const { clientReference, state, origin } = request.query
      const page = await listOutbound(deps.pool, {
        ...pageRequestOf(request),
        clientReference,
        state,
        originType: origin,
      })
      return { data: page.transfers.map(toOutboundJson), nextCursor: page.nextCursor }
    },
  )
  app.post(
    '/api/v1/rail/sandbox/simulate-outbound-settlement',
    route(SIGNED, OPS.simulateOutboundSettlement, {
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
    }),
    async (request) => {
      const partner = callerOf(request).partner
      assertSandboxPartner(partner)
      return simulateSettlement(deps, partner, request.body)
    },
  )
}
