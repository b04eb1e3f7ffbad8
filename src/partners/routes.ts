// Partner settings: who the caller is, and its default callback URL.
import { Type } from '@sinclair/typebox'
import type { Pool } from '../platform/db.ts'
import { RailError } from '../platform/errors.ts'
import type { HttpServer } from '../platform/http.ts'
import { CallbackUrlSchema, closedObject, errorResponses } from '../platform/schemas.ts'
import { callerOf } from './auth.ts'
import { getPartner, setDefaultCallbackUrl, type Partner } from './service.ts'

const SettingsSchema = Type.Object({
  partnerId: Type.String({ format: 'uuid' }),
  name: Type.String(),
  customerClass: Type.Union([Type.Literal('government'), Type.Literal('corporate'), Type.Literal('fintech'), Type.Literal('citizen')]),
  environment: Type.Union([Type.Literal('sandbox'), Type.Literal('live')]),
  callbackUrl: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
})

const SettingsPatchSchema = closedObject(
  { callbackUrl: Type.Union([CallbackUrlSchema, Type.Null()], { description: 'Default address for signed callbacks; null removes it' }) },
  { minProperties: 1 },
)

function toSettings(partner: Partner) {
  return {
    partnerId: partner.id,
    name: partner.name,
    customerClass: partner.customerClass,
    environment: partner.environment,
    callbackUrl: partner.callbackUrl,
    createdAt: partner.createdAt.toISOString(),
  }
}

export function registerPartnerRoutes(app: HttpServer, deps: { pool: Pool }): void {
  app.get(
    '/api/v1/rail/settings',
    {
      config: { auth: 'signature' },
      schema: { tags: ['partner'], summary: 'The calling partner and its settings', response: { 200: SettingsSchema, ...errorResponses() } },
    },
    async (request) => {
      const partner = await getPartner(deps.pool, callerOf(request).partner.id)
      if (!partner) throw new RailError('not_found', 'Partner not found')
      return toSettings(partner)
    },
  )

  app.patch(
    '/api/v1/rail/settings',
    {
      config: { auth: 'signature' },
      schema: { tags: ['partner'], summary: 'Set the default callback URL', body: SettingsPatchSchema, response: { 200: SettingsSchema, ...errorResponses() } },
    },
    async (request) => {
      const partner = callerOf(request).partner
      const { callbackUrl } = request.body
      if (callbackUrl !== null && partner.environment === 'live' && !callbackUrl.startsWith('https://')) {
        throw new RailError('validation_error', 'callbackUrl: must use https for live partners', { fields: [{ field: 'callbackUrl', message: 'must use https for live partners' }] })
      }
      return toSettings(await setDefaultCallbackUrl(deps.pool, partner.id, callbackUrl))
    },
  )
}
