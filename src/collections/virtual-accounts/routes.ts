// Persistent virtual account routes (docs/contracts/collections-and-payouts.md §Persistent virtual accounts): create (200, synchronous allocation), reads, archive.
import { Type } from '@sinclair/typebox'
import { callerOf, pageRequestOf } from '../../partners/auth.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import { getOne, getPage, route, SIGNED, SIGNED_BY_REFERENCE } from '../../platform/routes.ts'
import { PersistentAccountSchema, VIRTUAL_ACCOUNT_OPERATIONS as OPS } from './schemas.ts'
import {
  AccountHolderSchema,
  CallbackUrlSchema,
  closedObject,
  errorResponses,
  IDEMPOTENT_CODES,
  PageQuerySchema,
  PurposeTagSchema,
  ReferenceSchema,
  TrackingIdSchema,
} from '../../platform/schemas.ts'
import {
  ACCOUNT_PAGE_MAX,
  archivePersistentAccount,
  createPersistentAccount,
  getAccountByKey,
  listAccounts,
  toPersistentAccountJson,
  type CollectionsDeps,
} from './service.ts'

const ListQuerySchema = PageQuerySchema(
  { status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('archived')])) },
  ACCOUNT_PAGE_MAX,
)

/** Persistent virtual accounts: creating and listing them, then one account (read, archive). */
export function registerVirtualAccountRoutes(app: HttpServer, deps: CollectionsDeps): void {
  app.post(
    '/api/v1/rail/virtual-account',
    route(SIGNED_BY_REFERENCE, OPS.createVirtualAccount, {
      body: closedObject({
        reference: ReferenceSchema,
        virtualAccountHolder: Type.Optional(AccountHolderSchema),
        callbackUrl: Type.Optional(CallbackUrlSchema),
        purposeTag: Type.Optional(PurposeTagSchema),
      }),
      response: {
        200: PersistentAccountSchema,
        ...errorResponses(...IDEMPOTENT_CODES, 'capability_disabled', 'provider_unavailable', 'unsupported_currency'),
      },
    }),
    async (request, reply) => {
      const { account, replayed } = await createPersistentAccount(deps, callerOf(request), request.body)
      return sendOnce(reply.code(200), replayed, toPersistentAccountJson(account))
    },
  )
  app.get(
    '/api/v1/rail/virtual-account',
    getPage(OPS.listVirtualAccounts, ListQuerySchema, PersistentAccountSchema),
    async (request) => {
      const filter = { ...pageRequestOf(request), purpose: 'persistent' as const, status: request.query.status }
      const page = await listAccounts(deps.pool, filter)
      return { data: page.accounts.map(toPersistentAccountJson), nextCursor: page.nextCursor }
    },
  )
  const keyParams = closedObject({
    trackingId: Type.Union([
      TrackingIdSchema,
      Type.String({ format: 'uuid', description: "The account's id (an invoice's persistentVirtualAccountId)" }),
    ]),
  })
  app.get(
    '/api/v1/rail/virtual-account/:trackingId',
    getOne(OPS.getVirtualAccount, keyParams, PersistentAccountSchema),
    async (request) =>
      toPersistentAccountJson(
        await getAccountByKey(deps.pool, callerOf(request).partner.id, request.params.trackingId),
      ),
  )
  app.post(
    '/api/v1/rail/virtual-account/:trackingId/archive',
    route(SIGNED, OPS.archiveVirtualAccount, {
      params: closedObject({ trackingId: TrackingIdSchema }),
      response: { 200: PersistentAccountSchema, ...errorResponses('not_found', 'invalid_state') },
    }),
    async (request) =>
      toPersistentAccountJson(
        await archivePersistentAccount(deps, callerOf(request).partner.id, request.params.trackingId),
      ),
  )
}
