// Sandbox test clocks over HTTP (sandbox partners only; a live partner gets 404, as from every
// sandbox route).
import { Type, type Static } from '@sinclair/typebox'
import { callerOf } from '../auth.ts'
import { assertSandboxPartner } from '../service.ts'
import type { HttpServer } from '../../platform/http.ts'
import { operations, route, SIGNED, SIGNED_IN_TRANSACTION } from '../../platform/routes.ts'
import { closedObject, errorResponses } from '../../platform/schemas.ts'
import { ADVANCE_SECONDS_MAX, advanceClock, readClock, type SandboxClockDeps } from './service.ts'

const ClockSchema = Type.Object(
  {
    now: Type.String({
      format: 'date-time',
      description: "The partner's time (RFC 3339): real time plus offsetSeconds",
    }),
    offsetSeconds: Type.Integer({
      minimum: 0,
      description: 'How far the clock is ahead of real time; only ever grows',
    }),
  },
  { title: 'SandboxClock', description: "The sandbox partner's test clock" },
)
export type SandboxClockJson = Static<typeof ClockSchema>

const AdvanceBodySchema = closedObject({
  seconds: Type.Integer({
    minimum: 1,
    maximum: ADVANCE_SECONDS_MAX,
    description: `Seconds to move the clock forward (at most ${ADVANCE_SECONDS_MAX}, 366 days, per call)`,
  }),
})

/** What the OpenAPI document says of the test clock's operations. */
const OPS = operations('sandbox', {
  getSandboxClock: {
    summary:
      "Sandbox: the caller's test clock — the time its intents, escrows, requeries and settlement cut-offs are judged by",
    description:
      "Sandbox partners only: the caller's test clock, the time its intents, escrows, requeries and settlement cut-offs are judged by, and how far it is ahead of real time.",
  },
  advanceSandboxClock: {
    summary:
      "Sandbox: move the caller's test clock forward; intents and escrows past their expiry expire, due requeries run and settlement cut-offs passed are paid, promptly. Other partners' time is unaffected",
    description:
      "Sandbox partners only: moves the caller's test clock forward by `seconds`. Intents and escrows past their expiry expire, due requeries run and settlement cut-offs passed are paid promptly. Other partners' time is unaffected.",
  },
})

export function registerSandboxClockRoutes(app: HttpServer, deps: SandboxClockDeps): void {
  app.get(
    '/api/v1/rail/sandbox/clock',
    route(SIGNED, OPS.getSandboxClock, { response: { 200: ClockSchema, ...errorResponses('not_found') } }),
    async (request) => {
      const partner = callerOf(request).partner
      assertSandboxPartner(partner)
      return readClock(deps, partner.id)
    },
  )
  app.post(
    '/api/v1/rail/sandbox/clock/advance',
    route(SIGNED_IN_TRANSACTION, OPS.advanceSandboxClock, {
      body: AdvanceBodySchema,
      response: { 200: ClockSchema, ...errorResponses('not_found') },
    }),
    async (request) => {
      const partner = callerOf(request).partner
      assertSandboxPartner(partner)
      return advanceClock(deps, partner.id, request.body.seconds, request.idempotencyKey)
    },
  )
}
