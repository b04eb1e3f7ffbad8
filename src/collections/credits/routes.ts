// Inbound credit routes: the provider's webhook (signed by the provider, not the partner), the
// unmatched triage, the status by BRR, the requery for missed credits, and the sandbox simulator.
import { Type } from '@sinclair/typebox'
import { callerOf, pageRequestOf } from '../../partners/auth.ts'
import { assertSandboxPartner } from '../../partners/service.ts'
import { notFound, onNotFound, RailError } from '../../platform/errors.ts'
import { AmountKobo } from '../../platform/amounts.ts'
import type { HttpServer } from '../../platform/http.ts'
import { sendOnce } from '../../platform/idempotency.ts'
import { getOne, getPage, route, SIGNED, SIGNED_IN_TRANSACTION } from '../../platform/routes.ts'
import {
  closedObject,
  DOCUMENTED_BODY_KEYWORD,
  documentOnly,
  errorResponses,
  IdParamsSchema,
  NubanSchema,
  Nullable,
  PageQuerySchema,
  TrackingIdSchema,
} from '../../platform/schemas.ts'
import { payoutNews } from '../../money-out/pipeline/service.ts'
import { getProvider } from '../../banking/providers/service.ts'
import { BrrStatusSchema, CREDIT_OPERATIONS as OPS, CreditSchema, TriageSchema } from './schemas.ts'
import {
  getTriageItem,
  listTriage,
  lookupBrr,
  recordCredit,
  requeryAccount,
  resolveUnmatchedRequest,
  simulateInboundCredit,
  TRIAGE_PAGE_MAX,
  type InboundDeps,
} from './service.ts'

const AccountNumber = NubanSchema('NUBAN')

/** The route table of inbound credits, by resource: the provider's webhook, triage, lookups, the sandbox simulator. */
export function registerInboundCreditRoutes(app: HttpServer, deps: InboundDeps): void {
  registerProviderWebhookRoute(app, deps)
  registerTriageRoutes(app, deps)
  registerLookupRoutes(app, deps)
  registerSimulatorRoute(app, deps)
}

/**
 * How an unmatched credit is settled. `target` is also taken as `{ trackingId }`; the document
 * shows one form, so that the body is a flat choice of two objects told apart by `action` (a
 * generator drops a variant whose field is itself a choice).
 */
const RefundResolution = closedObject(
  { action: Type.Literal('refund') },
  { description: 'Pay the credit back to its sender' },
)
const AssignTarget = {
  ...TrackingIdSchema,
  description:
    'The account to apply the credit to: one of the caller\'s tracking ids (`{ "trackingId": … }` is accepted too)',
}
const ResolveSchema = Type.Union(
  [
    RefundResolution,
    closedObject({
      action: Type.Literal('assign'),
      target: Type.Union([TrackingIdSchema, closedObject({ trackingId: TrackingIdSchema })]),
    }),
  ],
  documentOnly({
    anyOf: null,
    oneOf: [
      RefundResolution,
      closedObject(
        { action: Type.Literal('assign'), target: AssignTarget },
        { description: "Apply the credit to another of the caller's accounts" },
      ),
    ],
  }),
)

const TriageQuerySchema = PageQuerySchema(
  {
    status: Type.Optional(
      Type.Union([
        Type.Literal('unmatched'),
        Type.Literal('refund_pending'),
        Type.Literal('refunded'),
        Type.Literal('assigned'),
      ]),
    ),
  },
  TRIAGE_PAGE_MAX,
)

/** A provider's notice of a credit, as the sandbox provider sends it (src/sandbox/inbound.ts); the adapter reads and checks it. */
const ProviderNoticeSchema = Type.Object(
  {
    type: Type.Literal('credit.received'),
    sessionId: Type.String({ description: 'The NIP session id: a notice is stored once per session id' }),
    accountNumber: Type.String({ description: 'The account credited (a virtual account or a wallet)' }),
    bankCode: Type.String(),
    amountKobo: Type.Integer({ minimum: 1 }),
    currency: Type.Literal('NGN'),
    payerName: Nullable(Type.String()),
    payerAccountNumber: Nullable(Type.String()),
    payerBankCode: Nullable(Type.String()),
    narration: Nullable(Type.String()),
    creditedAt: Type.String({ format: 'date-time' }),
    clientReference: Type.String({ description: "The provider's client the account belongs to" }),
  },
  { title: 'ProviderCreditNotice', description: "A provider's signed notice of an inbound credit" },
)

function registerProviderWebhookRoute(app: HttpServer, deps: InboundDeps): void {
  app.post(
    '/providers/:provider/webhooks',
    route(
      // The provider signs; the adapter verifies with the provider's secret. Not rate-limited by
      // address: a bank announces credits as fast as they come. Admitted once the body is in, so
      // that a client trickling a body holds no place meanwhile.
      { auth: 'none', rateLimited: false, admission: 'after-body', providerWebhook: true },
      OPS.receiveProviderNotice,
      {
        params: closedObject({ provider: Type.String({ pattern: '^[a-z][a-z0-9-]{1,31}$' }) }),
        // Read by the provider's adapter from the raw bytes it verifies, so shown, not validated here.
        [DOCUMENTED_BODY_KEYWORD]: ProviderNoticeSchema,
        response: {
          200: Type.Object({
            received: Type.Boolean(),
            creditId: Type.Optional(Type.String()),
            duplicate: Type.Optional(Type.Boolean()),
            /** For a payout's news: whether Rail asked the provider about it (false: no payout of this provider has the reference). */
            requeried: Type.Optional(Type.Boolean()),
            ignored: Type.Optional(Type.String({ description: 'The event, verified, that Rail does not act on' })),
          }),
          ...errorResponses('not_found'),
        },
      },
    ),
    async (request) => {
      const provider = await getProvider(deps.pool, request.params.provider).catch(
        onNotFound(() => notFound('Provider')),
      )
      const read = (await deps.providers.adapterFor(provider)).readWebhook({
        pathWithQuery: request.raw.url ?? '',
        headers: request.headers,
        rawBody: request.rawBody?.toString('utf8') ?? '',
        sourceAddress: request.ip,
      })
      if (read.kind === 'unauthorized') throw new RailError('unauthorized', 'Missing or invalid provider signature')
      if (read.kind === 'invalid') throw new RailError('bad_request', read.message)
      if (read.kind === 'ignored') return { received: true, ignored: read.event }
      if (read.kind === 'transfer')
        return { received: true, requeried: await payoutNews(deps.pool, provider.name, read.reference, read.event) }
      const { creditId, duplicate } = await recordCredit(deps.pool, provider.name, read.credit)
      return { received: true, creditId, duplicate }
    },
  )
}

/** Unmatched credits: the list, one, and its resolution. */
function registerTriageRoutes(app: HttpServer, deps: InboundDeps): void {
  app.get(
    '/api/v1/rail/unmatched',
    getPage(OPS.listUnmatchedCredits, TriageQuerySchema, TriageSchema),
    async (request) => listTriage(deps.pool, { ...pageRequestOf(request), status: request.query.status }),
  )
  app.get('/api/v1/rail/unmatched/:id', getOne(OPS.getUnmatchedCredit, IdParamsSchema, TriageSchema), async (request) =>
    getTriageItem(deps.pool, callerOf(request).partner.id, request.params.id),
  )
  app.post(
    '/api/v1/rail/unmatched/:id/resolve',
    route(SIGNED_IN_TRANSACTION, OPS.resolveUnmatchedCredit, {
      params: IdParamsSchema,
      body: ResolveSchema,
      response: {
        200: TriageSchema,
        ...errorResponses('not_found', 'invalid_state', 'insufficient_funds', 'refund_destination_unknown'),
      },
    }),
    async (request, reply) => {
      const caller = callerOf(request)
      const { credit, replayed } = await resolveUnmatchedRequest(
        deps,
        caller,
        request.params.id,
        request.body,
        request.idempotencyKey,
      )
      return sendOnce(reply.code(200), replayed, credit)
    },
  )
}

/** The status behind a BRR, and the requery of an account's credits Rail missed. */
function registerLookupRoutes(app: HttpServer, deps: InboundDeps): void {
  const brrParams = closedObject({ brr: Type.String({ minLength: 1, maxLength: 32 }) })
  app.get(
    '/api/v1/rail/collections/brr/:brr',
    getOne(OPS.getCollectionByBrr, brrParams, BrrStatusSchema),
    async (request) => lookupBrr(deps.pool, callerOf(request).partner.id, request.params.brr),
  )
  app.post(
    '/api/v1/rail/virtual-account/:trackingId/requery',
    route(SIGNED, OPS.requeryVirtualAccount, {
      params: closedObject({ trackingId: TrackingIdSchema }),
      response: {
        200: Type.Object({
          trackingId: Type.String(),
          virtualAccount: Type.String(),
          creditsFound: Type.Integer(),
          creditsRecorded: Type.Integer(),
          credits: Type.Array(CreditSchema),
        }),
        ...errorResponses('not_found', 'provider_unavailable'),
      },
    }),
    async (request) => requeryAccount(deps, callerOf(request).partner.id, request.params.trackingId),
  )
}

function registerSimulatorRoute(app: HttpServer, deps: InboundDeps): void {
  app.post(
    '/api/v1/rail/sandbox/simulate-inbound-credit',
    route(SIGNED, OPS.simulateInboundCredit, {
      body: closedObject({
        virtualAccount: NubanSchema(
          'NUBAN of one of your virtual accounts, or of one of your wallets (wallet funding by transfer)',
        ),
        amountKobo: AmountKobo(),
        payerName: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        payerAccountNumber: Type.Optional(AccountNumber),
        payerBankCode: Type.Optional(Type.String({ pattern: '^[0-9]{3,6}$' })),
      }),
      response: {
        200: Type.Object({
          virtualAccount: Type.String(),
          trackingId: Nullable(Type.String({ description: "The virtual account's; null for a wallet" })),
          walletId: Nullable(Type.String({ description: 'The wallet paid into; null for a virtual account' })),
          amountKobo: Type.Integer(),
          sessionId: Type.String(),
          notified: Type.Boolean(),
          message: Type.String(),
        }),
        ...errorResponses('not_found', 'provider_unavailable', 'amount_above_limit'),
      },
    }),
    async (request) => {
      const partner = callerOf(request).partner
      assertSandboxPartner(partner)
      return simulateInboundCredit(deps, partner, request.body)
    },
  )
}
