// Settlement routes (docs/settlement.md): the caller's settlement settings, its bank settlements
// with their reports, and a sandbox cycle on request.
import { Type } from '@sinclair/typebox'
import { callerOf, pageRequestOf } from '../partners/auth.ts'
import { assertSandboxPartner } from '../partners/service.ts'
import type { HttpServer } from '../platform/http.ts'
import { getOne, getPage, route, SIGNED, SIGNED_IN_TRANSACTION } from '../platform/routes.ts'
import {
  closedObject,
  documentOnly,
  errorResponses,
  IdParamsSchema,
  NubanSchema,
  Nullable,
  PageQuerySchema,
} from '../platform/schemas.ts'
import { partnerClock } from '../partners/sandbox-clock/service.ts'
import { CUTOFF_PATTERN } from './cycles.ts'
import { DEFAULT_CUTOFF } from './repo.ts'
import { runSettlementNow, SETTLEMENTS_PAGE_MAX, type SettlementDeps } from './service.ts'
import { getSettlementSettings, putSettlementSettings, toSettingsJson } from './settings.ts'
import { getSettlement, listSettlements } from './views.ts'
import {
  ModeSchema,
  SETTLEMENT_OPERATIONS as OPS,
  SettingsSchema,
  SettlementSchema,
  SettlementWithReportSchema,
  StateSchema,
} from './schemas.ts'

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
}

/** GET and PUT /api/v1/rail/settlement: the caller's settlement settings. */
function registerSettingsRoutes(app: HttpServer, deps: SettlementDeps): void {
  app.get(
    '/api/v1/rail/settlement',
    route(SIGNED, OPS.getSettlementSettings, { response: { 200: SettingsSchema, ...errorResponses() } }),
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
    route(SIGNED_IN_TRANSACTION, OPS.setSettlementSettings, {
      body: SettingsPutSchema,
      response: { 200: SettingsSchema, ...errorResponses('capability_disabled', 'provider_unavailable') },
    }),
    async (request) => {
      const partner = callerOf(request).partner
      const settings = await putSettlementSettings(deps, partner, request.body, request.idempotencyKey)
      return toSettingsJson(settings, (await partnerClock(deps.pool, deps.clock, partner)).now())
    },
  )
}

/** The caller's bank settlements: the list, and one with its report; then the sandbox's cycle on request. */
function registerSettlementReadRoutes(app: HttpServer, deps: SettlementDeps): void {
  const listQuery = PageQuerySchema({ state: Type.Optional(StateSchema) }, SETTLEMENTS_PAGE_MAX)
  app.get('/api/v1/rail/settlements', getPage(OPS.listSettlements, listQuery, SettlementSchema), async (request) =>
    listSettlements(deps.pool, { ...pageRequestOf(request), state: request.query.state }),
  )
  app.get(
    '/api/v1/rail/settlements/:id',
    getOne(OPS.getSettlement, IdParamsSchema, SettlementWithReportSchema),
    async (request) => getSettlement(deps.pool, callerOf(request).partner.id, request.params.id),
  )
  app.post(
    '/api/v1/rail/sandbox/run-settlement',
    route(SIGNED, OPS.runSandboxSettlement, {
      response: {
        200: Type.Object({
          mode: ModeSchema,
          settlement: Nullable(SettlementSchema),
          sweptToFloatKobo: Type.Integer(),
          message: Type.String(),
        }),
        ...errorResponses('not_found'),
      },
    }),
    async (request) => {
      const partner = callerOf(request).partner
      assertSandboxPartner(partner)
      return runSettlementNow(deps, partner, request.idempotencyKey)
    },
  )
}
