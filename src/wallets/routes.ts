// Wallet routes (docs/contracts/wallets.md §Wallets): creation (docs/design.md §10) and balance. Signed requests (docs/design.md §7).
import { Type, type Static } from '@sinclair/typebox'
import { findBank } from '../banking/nip/banks.ts'
import { callerOf, pageRequestOf } from '../partners/auth.ts'
import type { HttpServer } from '../platform/http.ts'
import { sendOnce } from '../platform/idempotency.ts'
import { getPage, operations, route, SIGNED, SIGNED_BY_REFERENCE } from '../platform/routes.ts'
import { closedObject, errorResponses, IDEMPOTENT_CODES } from '../platform/schemas.ts'
import { createWallet, listWallets, walletBalance, WALLETS_PAGE_MAX, type Wallet, type WalletsDeps } from './service.ts'

const WalletSchema = Type.Object(
  {
    walletId: Type.String({
      description: 'The wallet handle: walletId in move bodies, customerId in the balance query',
    }),
    customerReference: Type.String(),
    name: Type.String(),
    provider: Type.String(),
    currency: Type.String(),
    accountNumber: Type.String({ description: 'NUBAN of the account backing the wallet at the provider' }),
    bankCode: Type.String(),
    bankName: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Wallet', description: "A customer's wallet at a provider, backed by an account number" },
)
export type WalletJson = Static<typeof WalletSchema>

const BalanceSchema = Type.Object(
  {
    walletId: Type.String(),
    availableBalanceKobo: Type.Integer(),
    bookedBalanceKobo: Type.Integer(),
    currency: Type.String(),
  },
  { title: 'WalletBalance', description: "A wallet's balances in kobo" },
)
export type WalletBalanceJson = Static<typeof BalanceSchema>

const ListedWalletSchema = Type.Object(
  {
    ...WalletSchema.properties,
    availableBalanceKobo: Type.Integer(),
    bookedBalanceKobo: Type.Integer(),
  },
  { title: 'ListedWallet', description: 'A wallet with its balances' },
)
export type ListedWalletJson = Static<typeof ListedWalletSchema>

const ListQuerySchema = closedObject({
  customerReference: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'Only the wallet of this customer reference' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: WALLETS_PAGE_MAX, default: 20 })),
  cursor: Type.Optional(Type.String({ format: 'uuid', description: 'nextCursor of the previous page' })),
})

function toWalletJson(wallet: Wallet): WalletJson {
  return {
    walletId: wallet.id,
    customerReference: wallet.customerReference,
    name: wallet.name,
    provider: wallet.provider,
    currency: wallet.currency,
    accountNumber: wallet.accountNumber,
    bankCode: wallet.bankCode,
    bankName: findBank(wallet.bankCode)?.name ?? wallet.bankCode,
    createdAt: wallet.createdAt.toISOString(),
  }
}

/** What the OpenAPI document says of the wallet operations (the moves' are in moves-routes.ts). */
const OPS = operations('wallets', {
  createWallet: {
    summary: 'Create a wallet for a customer at a provider (idempotent on customerReference)',
    description:
      'Creates a wallet for a customer at a provider, backed by an account number at that provider. Idempotent on `customerReference`: the same body again answers the same wallet with `Idempotent-Replayed: true`.',
  },
  listWallets: {
    summary: "The caller's wallets with their balances, newest first (customerReference finds one)",
    description:
      "The caller's wallets with their balances, newest first; `customerReference` finds one; page with `cursor` and `limit`.",
  },
  getWalletBalance: {
    summary: 'Available and booked balance of a wallet, in kobo',
    description: "A wallet's available and booked balance in kobo, named by `customerId` (the wallet's `walletId`).",
  },
})

export function registerWalletRoutes(app: HttpServer, deps: WalletsDeps): void {
  app.post(
    '/wallet',
    route(SIGNED_BY_REFERENCE, OPS.createWallet, {
      body: closedObject({
        customerReference: Type.String({ minLength: 1, maxLength: 64 }),
        name: Type.String({ minLength: 1, maxLength: 100 }),
        provider: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9-]{1,31}$' })),
      }),
      response: {
        201: WalletSchema,
        ...errorResponses(...IDEMPOTENT_CODES, 'capability_disabled', 'provider_unavailable'),
      },
    }),
    async (request, reply) => {
      const created = await createWallet(deps, callerOf(request).partner.id, request.body, request.id)
      return sendOnce(reply.code(201), created.replayed, toWalletJson(created.value))
    },
  )
  app.get('/wallet', getPage(OPS.listWallets, ListQuerySchema, ListedWalletSchema), async (request) => {
    const filter = { ...pageRequestOf(request), customerReference: request.query.customerReference }
    const page = await listWallets(deps.pool, filter)
    const data = page.wallets.map(({ wallet, ...balances }): ListedWalletJson => ({
      ...toWalletJson(wallet),
      ...balances,
    }))
    return { data, nextCursor: page.nextCursor }
  })
  app.get(
    '/wallet/customer',
    route(SIGNED, OPS.getWalletBalance, {
      querystring: closedObject({
        customerId: Type.String({ minLength: 1, maxLength: 64, description: 'The wallet handle (walletId)' }),
      }),
      response: { 200: BalanceSchema, ...errorResponses('not_found') },
    }),
    async (request) => walletBalance(deps.pool, callerOf(request).partner.id, request.query.customerId),
  )
}
