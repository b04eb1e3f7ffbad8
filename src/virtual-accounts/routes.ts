// Persistent virtual account routes of seed 001: create (200, synchronous allocation), reads, archive.
import { Type } from '@sinclair/typebox'
import { callerOf } from '../partners/auth.ts'
import type { HttpServer } from '../platform/http.ts'
import { IDEMPOTENT_REPLAYED_HEADER } from '../platform/idempotency.ts'
import { CallbackUrlSchema, closedObject, errorResponses } from '../platform/schemas.ts'
import { ACCOUNT_PAGE_MAX, archivePersistentAccount, createPersistentAccount, getAccount, listAccounts, toPersistentAccountJson, type CollectionsDeps } from './service.ts'

export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

/** The holder of an account as the partner describes it (structure decided in docs/api.md). */
export const AccountHolderSchema = closedObject(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    firstName: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    lastName: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    phone: Type.Optional(Type.String({ pattern: '^\\+?[0-9]{7,15}$' })),
  },
  { description: 'Who the account collects for; its name (or first and last name) names the account at the bank' },
)

export const ReferenceSchema = Type.String({ minLength: 1, maxLength: 64, description: "The partner's reference; a retry with the same body answers the same object" })
export const PurposeTagSchema = Type.String({ minLength: 1, maxLength: 64, description: "The partner's label for what the account collects for" })
export const TrackingIdSchema = Type.String({ pattern: '^trk_[a-z0-9]{24}$', description: 'The stable public id of a virtual account' })

const PersistentAccountSchema = Type.Object({
  trackingId: Type.String(),
  partnerId: Type.String({ format: 'uuid' }),
  reference: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('archived')]),
  provider: Type.String(),
  providerChannel: Type.String(),
  bankCode: Type.String(),
  bankName: Type.String(),
  currency: Type.String(),
  virtualAccount: Type.String({ description: 'The NUBAN payers send money to' }),
  virtualAccountName: Type.String(),
  purposeTag: Nullable(Type.String()),
  creatorMetadata: Type.Object({}, { additionalProperties: true, description: 'Who created it: partnerId, credentialId, requestId' }),
  createdAt: Type.String({ format: 'date-time' }),
  brr: Nullable(Type.String({ description: 'BRR + 17 digits (Luhn) for government and corporate partners; null for reference-only accounts' })),
})

export function registerVirtualAccountRoutes(app: HttpServer, deps: CollectionsDeps): void {
  app.post(
    '/api/v1/rail/virtual-account',
    {
      config: { auth: 'signature' },
      schema: {
        tags: ['collections'],
        summary: 'Allocate a persistent virtual account at the provider (synchronous)',
        body: closedObject({
          reference: ReferenceSchema,
          virtualAccountHolder: Type.Optional(AccountHolderSchema),
          callbackUrl: Type.Optional(CallbackUrlSchema),
          purposeTag: Type.Optional(PurposeTagSchema),
        }),
        response: { 200: PersistentAccountSchema, ...errorResponses(403, 409, 502) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request)
      const { account, replayed } = await createPersistentAccount(deps, { partner: caller.partner, credentialId: caller.credentialId, requestId: request.id }, request.body)
      if (replayed) void reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true')
      return toPersistentAccountJson(account)
    },
  )

  app.get(
    '/api/v1/rail/virtual-account',
    {
      config: { auth: 'signature' },
      schema: {
        tags: ['collections'],
        summary: "The caller's persistent virtual accounts, newest first",
        querystring: closedObject({
          status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('archived')])),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: ACCOUNT_PAGE_MAX, default: 20 })),
          cursor: Type.Optional(Type.String({ format: 'uuid' })),
        }),
        response: { 200: Type.Object({ data: Type.Array(PersistentAccountSchema), nextCursor: Nullable(Type.String()) }), ...errorResponses() },
      },
    },
    async (request) => {
      const query = request.query
      const page = await listAccounts(deps.pool, { partnerId: callerOf(request).partner.id, purpose: 'persistent', status: query.status, limit: query.limit ?? 20, cursor: query.cursor })
      return { data: page.accounts.map(toPersistentAccountJson), nextCursor: page.nextCursor }
    },
  )

  app.get(
    '/api/v1/rail/virtual-account/:trackingId',
    {
      config: { auth: 'signature' },
      schema: {
        tags: ['collections'],
        summary: 'One persistent virtual account',
        params: closedObject({ trackingId: TrackingIdSchema }),
        response: { 200: PersistentAccountSchema, ...errorResponses(404) },
      },
    },
    async (request) => toPersistentAccountJson(await getAccount(deps.pool, callerOf(request).partner.id, request.params.trackingId, ['persistent'])),
  )

  app.post(
    '/api/v1/rail/virtual-account/:trackingId/archive',
    {
      config: { auth: 'signature' },
      schema: {
        tags: ['collections'],
        summary: 'Archive a persistent virtual account: it stops collecting, and later credits to it go to unmatched triage',
        params: closedObject({ trackingId: TrackingIdSchema }),
        response: { 200: PersistentAccountSchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => toPersistentAccountJson(await archivePersistentAccount(deps.pool, callerOf(request).partner.id, request.params.trackingId)),
  )
}
