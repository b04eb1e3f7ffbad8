// Partner settings: who the caller is, and its default callback URL.
import { Type, type Static } from '@sinclair/typebox'
import type { Pool } from '../platform/db.ts'
import { RailError } from '../platform/errors.ts'
import type { HttpServer } from '../platform/http.ts'
import { operations, route, SIGNED, SIGNED_IN_TRANSACTION } from '../platform/routes.ts'
import { CallbackUrlSchema, closedObject, errorResponses } from '../platform/schemas.ts'
import { callerOf } from './auth.ts'
import { getPartner, type CallbackUrls, type Partner } from './service.ts'

const SettingsSchema = Type.Object(
  {
    partnerId: Type.String({ format: 'uuid' }),
    name: Type.String(),
    customerClass: Type.Union([
      Type.Literal('government'),
      Type.Literal('corporate'),
      Type.Literal('fintech'),
      Type.Literal('citizen'),
    ]),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('live')]),
    callbackUrl: Type.Union([Type.String(), Type.Null()]),
    callbackUrlDisabled: Type.Union(
      [Type.Object({ disabledAt: Type.String({ format: 'date-time' }), reason: Type.String() }), Type.Null()],
      {
        description: 'Set when the callback URL answered 410 Gone: deliveries to it stop until it is set again',
      },
    ),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'PartnerSettings', description: 'The calling partner and its settings' },
)
export type PartnerSettingsJson = Static<typeof SettingsSchema>

const SettingsPatchSchema = closedObject(
  {
    callbackUrl: Type.Union([CallbackUrlSchema, Type.Null()], {
      description: 'Default address for signed callbacks; null removes it',
    }),
  },
  { minProperties: 1 },
)

interface PartnerRoutesDeps {
  pool: Pool
  allowLoopbackCallbacks: boolean
  callbackUrls: CallbackUrls
}

async function settingsOf(deps: PartnerRoutesDeps, partner: Partner): Promise<PartnerSettingsJson> {
  const disabled =
    partner.callbackUrl === null
      ? undefined
      : await deps.callbackUrls.disabled(deps.pool, partner.id, partner.callbackUrl)
  return toSettings(partner, disabled ?? null)
}

function toSettings(partner: Partner, disabled: { disabledAt: Date; reason: string } | null): PartnerSettingsJson {
  return {
    partnerId: partner.id,
    name: partner.name,
    customerClass: partner.customerClass,
    environment: partner.environment,
    callbackUrl: partner.callbackUrl,
    callbackUrlDisabled: disabled && { disabledAt: disabled.disabledAt.toISOString(), reason: disabled.reason },
    createdAt: partner.createdAt.toISOString(),
  }
}

/** What the OpenAPI document says of the partner's operations. */
const OPS = operations('partner', {
  getSettings: {
    summary: 'The calling partner and its settings',
    description:
      'The calling partner: its id, name, class and environment, and its default callback URL with whether deliveries to it are disabled (after a 410) and why.',
  },
  updateSettings: {
    summary: 'Set the default callback URL (checked by the SSRF guard: docs/webhooks.md)',
    description:
      'Sets or clears (`null`) the default callback URL, the URL events go to when their object names none. The URL passes the SSRF guard (https for live partners). Setting it again re-enables a URL disabled by a 410.',
  },
})

export function registerPartnerRoutes(app: HttpServer, deps: PartnerRoutesDeps): void {
  app.get(
    '/api/v1/rail/settings',
    route(SIGNED, OPS.getSettings, { response: { 200: SettingsSchema, ...errorResponses() } }),
    async (request) => {
      const partner = await getPartner(deps.pool, callerOf(request).partner.id)
      if (!partner) throw new RailError('not_found', 'Partner not found')
      return settingsOf(deps, partner)
    },
  )
  app.patch(
    '/api/v1/rail/settings',
    route(SIGNED_IN_TRANSACTION, OPS.updateSettings, {
      body: SettingsPatchSchema,
      response: { 200: SettingsSchema, ...errorResponses() },
    }),
    async (request) => {
      const { allowLoopbackCallbacks, callbackUrls, pool } = deps
      const { callbackUrl } = request.body
      const partner = callerOf(request).partner
      const updated = await callbackUrls.set(pool, partner, callbackUrl, allowLoopbackCallbacks, request.idempotencyKey)
      return settingsOf(deps, updated)
    },
  )
}
