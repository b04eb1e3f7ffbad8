// Persistent virtual account routes (docs/contracts/collections-and-payouts.md §Persistent virtual accounts): create (200, synchronous allocation), reads, archive.
import { Type } from '@sinclair/typebox'
import { callerOf } from '../../partners/auth.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import { PersistentAccountSchema } from './schemas.ts'
import {
  AccountHolderSchema,
  CallbackUrlSchema,
  closedObject,
  errorResponses,
  IDEMPOTENT_CODES,
  Nullable,
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

/** Persistent virtual accounts: creating and listing them, then one account (read, archive). */
export function registerVirtualAccountRoutes(app: HttpServer, deps: CollectionsDeps): void {
  registerCreateAndListRoutes(app, deps)
  registerAccountRoutes(app, deps)
}

function registerCreateAndListRoutes(app: HttpServer, deps: CollectionsDeps): void {
  app.post(
    '/api/v1/rail/virtual-account',
    {
      config: { auth: 'signature', idempotencyKey: 'reference' },
      schema: {
        operationId: 'createVirtualAccount',
        description:
          'Allocates a persistent virtual account (a NUBAN) at the provider during the request; credits into it are applied and announced with `credit.confirmed`. Idempotent on `reference`. A provider that gives no usable answer is 502 `provider_unavailable`: nothing was created, retry with the same reference.',
        tags: ['collections'],
        summary: 'Allocate a persistent virtual account at the provider (synchronous)',
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
      },
    },
    async (request, reply) => {
      const caller = callerOf(request)
      const { account, replayed } = await createPersistentAccount(deps, caller, request.body)
      return sendOnce(reply.code(200), replayed, toPersistentAccountJson(account))
    },
  )

  app.get(
    '/api/v1/rail/virtual-account',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'listVirtualAccounts',
        description: "The caller's persistent virtual accounts, newest first; page with `cursor` and `limit`.",
        tags: ['collections'],
        summary: "The caller's persistent virtual accounts, newest first",
        querystring: closedObject({
          status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('archived')])),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: ACCOUNT_PAGE_MAX, default: 20 })),
          cursor: Type.Optional(Type.String({ format: 'uuid' })),
        }),
        response: {
          200: Type.Object({ data: Type.Array(PersistentAccountSchema), nextCursor: Nullable(Type.String()) }),
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const query = request.query
      const page = await listAccounts(deps.pool, {
        partnerId: callerOf(request).partner.id,
        purpose: 'persistent',
        status: query.status,
        limit: query.limit ?? 20,
        cursor: query.cursor,
      })
      return { data: page.accounts.map(toPersistentAccountJson), nextCursor: page.nextCursor }
    },
  )
}

function registerAccountRoutes(app: HttpServer, deps: CollectionsDeps): void {
  app.get(
    '/api/v1/rail/virtual-account/:trackingId',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'getVirtualAccount',
        description:
          "One virtual account: a persistent account by its tracking id (`trk_…`) or its id, or the account an invoice is paid into by the invoice's `persistentVirtualAccountId`.",
        tags: ['collections'],
        summary: 'One persistent virtual account',
        params: closedObject({
          trackingId: Type.Union([
            TrackingIdSchema,
            Type.String({ format: 'uuid', description: "The account's id (an invoice's persistentVirtualAccountId)" }),
          ]),
        }),
        response: { 200: PersistentAccountSchema, ...errorResponses('not_found') },
      },
    },
    async (request) =>
      toPersistentAccountJson(
        await getAccountByKey(deps.pool, callerOf(request).partner.id, request.params.trackingId),
      ),
  )

  app.post(
    '/api/v1/rail/virtual-account/:trackingId/archive',
    {
      config: { auth: 'signature' },
      schema: {
        operationId: 'archiveVirtualAccount',
        description:
          'Archives a persistent virtual account: it stops collecting, and later credits into it go to unmatched triage. Archiving an archived account is 409 `invalid_state`.',
        tags: ['collections'],
        summary:
          'Archive a persistent virtual account: it stops collecting, and later credits to it go to unmatched triage',
        params: closedObject({ trackingId: TrackingIdSchema }),
        response: { 200: PersistentAccountSchema, ...errorResponses('not_found', 'invalid_state') },
      },
    },
    async (request) =>
      toPersistentAccountJson(
        await archivePersistentAccount(deps, callerOf(request).partner.id, request.params.trackingId),
      ),
  )
}
