// Wallet funding by transfer (docs/contracts/wallets.md §Funding): the requery for credits to a wallet's account number
// whose bank notice Rail missed. Credits themselves arrive by the provider's webhook, like every
// inbound credit (routes.ts), and are applied by the apply job and the stranded-credit sweep.
import { Type } from '@sinclair/typebox'
import { callerOf } from '../../partners/auth.ts'
import type { HttpServer } from '../../platform/http.ts'
import { route, SIGNED } from '../../platform/routes.ts'
import { closedObject, errorResponses, Nullable } from '../../platform/schemas.ts'
import { CREDIT_OPERATIONS } from './schemas.ts'
import { requeryWallet, type InboundDeps } from './service.ts'

const CreditSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.String({ description: 'received, confirmed, unmatched' }),
  amountKobo: Type.Integer(),
  currency: Type.String(),
  virtualAccount: Type.String({ description: "The wallet's account number" }),
  sessionId: Type.String({ description: "The provider's (NIP) session id of the credit" }),
  payer: Type.Object({
    name: Nullable(Type.String()),
    accountNumber: Nullable(Type.String()),
    bankCode: Nullable(Type.String()),
  }),
  narration: Nullable(Type.String()),
  creditedAt: Type.String({ format: 'date-time' }),
  receivedAt: Type.String({ format: 'date-time' }),
})

export function registerWalletFundingRoutes(app: HttpServer, deps: InboundDeps): void {
  app.post(
    '/wallet/requery',
    route(SIGNED, CREDIT_OPERATIONS.requeryWallet, {
      body: closedObject({
        customerId: Type.String({ minLength: 1, maxLength: 64, description: 'The wallet handle (walletId)' }),
      }),
      response: {
        200: Type.Object({
          walletId: Type.String(),
          accountNumber: Type.String(),
          creditsFound: Type.Integer(),
          creditsRecorded: Type.Integer(),
          credits: Type.Array(CreditSchema),
        }),
        ...errorResponses('not_found', 'provider_unavailable'),
      },
    }),
    async (request) => requeryWallet(deps, callerOf(request).partner.id, request.body.customerId),
  )
}
