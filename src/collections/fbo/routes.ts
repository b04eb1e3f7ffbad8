// FBO pool virtual account routes (docs/contracts/collections-and-payouts.md §FBO pool accounts): provision (200, synchronous allocation) and reads.
import { Type } from '@sinclair/typebox'
import { callerOf, pageRequestOf } from '../../partners/auth.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import { getOne, getPage, route, SIGNED_BY_REFERENCE } from '../../platform/routes.ts'
import {
  CallbackUrlSchema,
  closedObject,
  errorResponses,
  IDEMPOTENT_CODES,
  PageQuerySchema,
  PurposeTagSchema,
  TrackingIdSchema,
} from '../../platform/schemas.ts'
import { ACCOUNT_PAGE_MAX, getAccount, listAccounts, type CollectionsDeps } from '../virtual-accounts/service.ts'
import { FBO_OPERATIONS as OPS, FboSchema } from './schemas.ts'
import { provisionFboAccount, toFboJson } from './service.ts'

export function registerFboRoutes(app: HttpServer, deps: CollectionsDeps): void {
  app.post(
    '/api/v1/rail/fbo/provision',
    route(SIGNED_BY_REFERENCE, OPS.provisionFboAccount, {
      body: closedObject({
        holderRef: Type.String({
          minLength: 1,
          maxLength: 128,
          pattern: '^[A-Za-z0-9._:-]+$',
          description: 'Opaque: letters, digits and . _ : - only',
        }),
        callbackUrl: Type.Optional(CallbackUrlSchema),
        purposeTag: Type.Optional(PurposeTagSchema),
      }),
      response: {
        200: FboSchema,
        ...errorResponses(...IDEMPOTENT_CODES, 'capability_disabled', 'provider_unavailable', 'unsupported_currency'),
      },
    }),
    async (request, reply) => {
      const { account, replayed } = await provisionFboAccount(deps, callerOf(request), request.body)
      return sendOnce(reply.code(200), replayed, toFboJson(account))
    },
  )
  app.get(
    '/api/v1/rail/fbo',
    getPage(OPS.listFboAccounts, PageQuerySchema({}, ACCOUNT_PAGE_MAX), FboSchema),
    async (request) => {
      const page = await listAccounts(deps.pool, { ...pageRequestOf(request), purpose: 'fbo' })
      return { data: page.accounts.map(toFboJson), nextCursor: page.nextCursor }
    },
  )
  const trackingParams = closedObject({ trackingId: TrackingIdSchema })
  app.get('/api/v1/rail/fbo/:trackingId', getOne(OPS.getFboAccount, trackingParams, FboSchema), async (request) =>
    toFboJson(await getAccount(deps.pool, callerOf(request).partner.id, request.params.trackingId, ['fbo'])),
  )
}
