// The float over HTTP: its balance, and sandbox funding (docs/design.md §10; sandbox partners only, 404 for live ones).
import { Type, type Static } from '@sinclair/typebox'
import { callerOf } from '../../partners/auth.ts'
import { assertSandboxPartner } from '../../partners/service.ts'
import type { Pool } from '../../platform/db.ts'
import { AmountKobo } from '../../platform/amounts.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import { route, SIGNED, SIGNED_BY_REFERENCE } from '../../platform/routes.ts'
import { closedObject, errorResponses, IDEMPOTENT_CODES } from '../../platform/schemas.ts'
import { fundFloat, getFloat } from './float.ts'
import { OUTBOUND_OPERATIONS } from './schemas.ts'

const FloatSchema = Type.Object(
  {
    partnerId: Type.String({ format: 'uuid' }),
    currency: Type.String(),
    availableBalanceKobo: Type.Integer({
      description: 'What outbound transfers can draw on now (booked minus amounts held by transfers in flight)',
    }),
    bookedBalanceKobo: Type.Integer(),
  },
  { title: 'Float', description: "The partner's float: the account outbound transfers draw on" },
)
export type FloatJson = Static<typeof FloatSchema>

const FundFloatBodySchema = closedObject({
  amountKobo: AmountKobo(),
  reference: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Required: one reference funds once, so a retry or a replayed request moves no money again',
  }),
})

const FundingSchema = Type.Object(
  {
    transferId: Type.String({
      format: 'uuid',
      description: 'The ledger transfer from the provider settlement account to the float',
    }),
    amountKobo: Type.Integer(),
    currency: Type.String(),
    float: FloatSchema,
  },
  { title: 'FloatFunding', description: 'A sandbox funding of the float' },
)
export type FloatFundingJson = Static<typeof FundingSchema>

export function registerFloatRoutes(app: HttpServer, deps: { pool: Pool; maxAmountKobo: number }): void {
  app.get(
    '/api/v1/rail/float',
    route(SIGNED, OUTBOUND_OPERATIONS.getFloat, { response: { 200: FloatSchema, ...errorResponses() } }),
    async (request) => getFloat(deps.pool, callerOf(request).partner.id),
  )
  app.post(
    '/api/v1/rail/sandbox/fund-float',
    route(SIGNED_BY_REFERENCE, OUTBOUND_OPERATIONS.fundSandboxFloat, {
      body: FundFloatBodySchema,
      response: {
        200: FundingSchema,
        ...errorResponses('not_found', ...IDEMPOTENT_CODES, 'amount_above_limit', 'balance_limit_exceeded'),
      },
    }),
    async (request, reply) => {
      const partner = callerOf(request).partner
      assertSandboxPartner(partner)
      const { amountKobo, reference } = request.body
      const funding = await fundFloat(deps.pool, partner.id, amountKobo, reference, deps.maxAmountKobo)
      return sendOnce(reply.code(200), funding.replayed, {
        transferId: funding.transferId,
        amountKobo: funding.amountKobo,
        currency: funding.float.currency,
        float: funding.float,
      })
    },
  )
}
