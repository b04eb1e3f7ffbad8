// Settlement routes (docs/settlement.md): the caller's settlement settings, its bank settlements
// with their reports, and a sandbox cycle on request.
import { Type } from '@sinclair/typebox'
import { callerOf } from '../partners/auth.ts'
import { assertSandboxPartner } from '../partners/service.ts'
import type { HttpServer } from '../platform/http.ts'
import { closedObject, documentOnly, errorResponses, NubanSchema, Nullable } from '../platform/schemas.ts'
import { partnerClock } from '../partners/sandbox-clock/service.ts'
import { CUTOFF_PATTERN } from './cycles.ts'
import { DEFAULT_CUTOFF } from './repo.ts'
import { runSettlementNow, SETTLEMENTS_PAGE_MAX, type SettlementDeps } from './service.ts'
import { getSettlementSettings, putSettlementSettings, toSettingsJson } from './settings.ts'
import { getSettlement, listSettlements } from './views.ts'
import { ModeSchema, SettingsSchema, SettlementSchema, SettlementWithReportSchema, StateSchema } from './schemas.ts'

const SettingsPutSchema = closedObject(
  {
    mode: ModeSchema,
    bankAccount: Type.Optional(
      closedObject(
        {
          accountNumber: NubanSchema('NUBAN'),
          bankCode: Type.String({ pattern: '^[0-9]{3,6}$', description: 'CBN bank code' }),
          accountName: Type.String({
            minLength: 1,
            maxLength: 100,
            description: "Checked against the bank's name enquiry",
          }),
        },
        { description: 'The settlement bank account; required for mode bank' },
      ),
    ),
    cutoffTime: Type.Optional(
      Type.String({
        pattern: CUTOFF_PATTERN,
        description: `Daily cut-off, HH:MM Africa/Lagos; default ${DEFAULT_CUTOFF}`,
      }),
    ),
  },
  documentOnly({
    oneOf: [
      { properties: { mode: { const: 'float' } }, required: ['mode'] },
      { properties: { mode: { const: 'bank' } }, required: ['mode', 'bankAccount'] },
    ],
    description: 'Mode bank requires bankAccount',
  }),
)

export function registerSettlementRoutes(app: HttpServer, deps: SettlementDeps): void {
  registerSettingsRoutes(app, deps)
  registerSettlementReadRoutes(app, deps)
  registerSandboxSettlementRoute(app, deps)
}

/** GET and PUT /api/v1/rail/settlement: the caller's settlement settings. */
function registerSettingsRoutes(app: HttpServer, deps: SettlementDeps): void {
  app.get(
    '/api/v1/rail/settlement',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'getSettlementSettings',
        description:
          "How the caller's collections settle: `float` (after each credit, the default) or `bank` (daily at a cut-off to a registered account).",
        tags: ['settlement'],
        summary: "The caller's settlement settings (float unless set)",
        response: { 200: SettingsSchema, ...errorResponses() },
      },
    },
    async (request) => {
      const partner = callerOf(request).partner
      // The next cut-off by the partner's time (its sandbox test clock, if moved): the one its cycles are judged by.
      return toSettingsJson(
        await getSettlementSettings(deps.pool, partner.id),
        (await partnerClock(deps.pool, deps.clock, partner)).now(),
      )
    },
  )

  app.put(
    '/api/v1/rail/settlement',
    {
      config: { auth: 'signature', idempotencyKey: 'in-transaction' },
      schema: {
        operationId: 'setSettlementSettings',
        description:
          'Replaces the settlement settings whole: `float`, or `bank` with a NUBAN (name-checked at the bank during the request) and a daily cut-off.',
        tags: ['settlement'],
        summary:
          'Set how collections settle: float, or bank with a registered account (NUBAN, name-checked) and a daily cut-off. Replaces the settings whole',
        body: SettingsPutSchema,
        response: { 200: SettingsSchema, ...errorResponses('capability_disabled', 'provider_unavailable') },
      },
    },
    async (request) => {
      const partner = callerOf(request).partner
      const settings = await putSettlementSettings(deps, partner, request.body, request.idempotencyKey)
      return toSettingsJson(settings, (await partnerClock(deps.pool, deps.clock, partner)).now())
    },
  )
}

/** The caller's bank settlements: the list, and one with its report. */
function registerSettlementReadRoutes(app: HttpServer, deps: SettlementDeps): void {
  app.get(
    '/api/v1/rail/settlements',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'listSettlements',
        description: "The caller's bank settlements, newest first; page with `cursor` and `limit`.",
        tags: ['settlement'],
        summary: "The caller's bank settlements, newest first",
        querystring: closedObject({
          state: Type.Optional(StateSchema),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: SETTLEMENTS_PAGE_MAX, default: 20 })),
          cursor: Type.Optional(Type.String({ format: 'uuid' })),
        }),
        response: {
          200: Type.Object({ data: Type.Array(SettlementSchema), nextCursor: Nullable(Type.String()) }),
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const query = request.query
      return listSettlements(deps.pool, {
        partnerId: callerOf(request).partner.id,
        state: query.state,
        limit: query.limit ?? 20,
        cursor: query.cursor,
      })
    },
  )

  app.get(
    '/api/v1/rail/settlements/:id',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'getSettlement',
        description:
          'One settlement with its report: the credits it included, their total, what was paid and why it differs.',
        tags: ['settlement'],
        summary: 'One settlement with its report: the credits it included, the total, the payout',
        params: closedObject({ id: Type.String({ format: 'uuid' }) }),
        response: { 200: SettlementWithReportSchema, ...errorResponses('not_found') },
      },
    },
    async (request) => getSettlement(deps.pool, callerOf(request).partner.id, request.params.id),
  )
}

/** Sandbox: a settlement cycle now. */
function registerSandboxSettlementRoute(app: HttpServer, deps: SettlementDeps): void {
  app.post(
    '/api/v1/rail/sandbox/run-settlement',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'runSandboxSettlement',
        description:
          "Sandbox partners only: runs the caller's settlement cycle now, with now as its cut-off. The same request again with its `Idempotency-Key` pays nothing twice.",
        tags: ['sandbox'],
        summary:
          "Sandbox: run the caller's settlement cycle now, with now as its cut-off (the same request again with its Idempotency-Key pays nothing twice)",
        response: {
          200: Type.Object({
            mode: ModeSchema,
            settlement: Nullable(SettlementSchema),
            sweptToFloatKobo: Type.Integer(),
            message: Type.String(),
          }),
          ...errorResponses('not_found'),
        },
      },
    },
    async (request) => {
      const partner = callerOf(request).partner
      assertSandboxPartner(partner)
      return runSettlementNow(deps, partner, request.idempotencyKey)
    },
  )
}
