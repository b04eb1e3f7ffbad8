// FBO pool virtual account routes (docs/contracts/collections-and-payouts.md §FBO pool accounts): provision (200, synchronous allocation) and reads.
import { Type } from '@sinclair/typebox'
import { callerOf } from '../../partners/auth.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import {
  CallbackUrlSchema,
  closedObject,
  errorResponses,
  IDEMPOTENT_CODES,
  Nullable,
  PurposeTagSchema,
  TrackingIdSchema,
} from '../../platform/schemas.ts'
import { ACCOUNT_PAGE_MAX, getAccount, listAccounts, type CollectionsDeps } from '../virtual-accounts/service.ts'
import { FboSchema } from './schemas.ts'
import { provisionFboAccount, toFboJson } from './service.ts'

export function registerFboRoutes(app: HttpServer, deps: CollectionsDeps): void {
  registerProvision(app, deps)
  registerReads(app, deps)
}

function registerProvision(app: HttpServer, deps: CollectionsDeps): void {
  app.post(
    '/api/v1/rail/fbo/provision',
    {
      config: { auth: 'signature', idempotencyKey: 'reference' },
      schema: {
        operationId: 'provisionFboAccount',
        description:
          'Provisions an identity-blind FBO pool virtual account for an opaque holder reference and purpose tag: no name, phone, email or BVN is accepted. Credits are attributed to the holder reference and announced with `fbo.funding`. Idempotent on `holderRef` and `purposeTag`.',
        tags: ['collections'],
        summary:
          'Provision an identity-blind FBO pool virtual account for an opaque holder reference (synchronous; no name, phone, email or BVN accepted)',
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
      },
    },
    async (request, reply) => {
      const caller = callerOf(request)
      const { account, replayed } = await provisionFboAccount(deps, caller, request.body)
      return sendOnce(reply.code(200), replayed, toFboJson(account))
    },
  )
}

function registerReads(app: HttpServer, deps: CollectionsDeps): void {
  app.get(
    '/api/v1/rail/fbo',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'listFboAccounts',
        description: "The caller's FBO pool virtual accounts, newest first; page with `cursor` and `limit`.",
        tags: ['collections'],
        summary: "The caller's FBO pool virtual accounts, newest first",
        querystring: closedObject({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: ACCOUNT_PAGE_MAX, default: 20 })),
          cursor: Type.Optional(Type.String({ format: 'uuid' })),
        }),
        response: {
          200: Type.Object({ data: Type.Array(FboSchema), nextCursor: Nullable(Type.String()) }),
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const page = await listAccounts(deps.pool, {
        partnerId: callerOf(request).partner.id,
        purpose: 'fbo',
        limit: request.query.limit ?? 20,
        cursor: request.query.cursor,
      })
      return { data: page.accounts.map(toFboJson), nextCursor: page.nextCursor }
    },
  )

  app.get(
    '/api/v1/rail/fbo/:trackingId',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'getFboAccount',
        description: 'One FBO pool virtual account by its tracking id.',
        tags: ['collections'],
        summary: 'One FBO pool virtual account',
        params: closedObject({ trackingId: TrackingIdSchema }),
        response: { 200: FboSchema, ...errorResponses('not_found') },
      },
    },
    async (request) =>
      toFboJson(await getAccount(deps.pool, callerOf(request).partner.id, request.params.trackingId, ['fbo'])),
  )
}
