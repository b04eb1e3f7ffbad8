// Move routes, at exactly the paths of docs/contracts/wallets.md §Endpoints: credit, debit, wallet transfer, external send, requery.
import { Type, type Static, type TProperties } from '@sinclair/typebox'
import { callerOf } from '../partners/auth.ts'
import { AmountKobo } from '../platform/amounts.ts'
import type { HttpServer } from '../platform/http.ts'
import { sendOnce } from '../platform/idempotency.ts'
import { getOne, operations, route, SIGNED_BY_REFERENCE, type Operation } from '../platform/routes.ts'
import { closedObject, CurrencySchema, errorResponses, IDEMPOTENT_CODES, NubanSchema } from '../platform/schemas.ts'
import { moveByReference, submitMove, type Move, type MovesDeps } from './moves.ts'
import type { MoveType } from './states.ts'

const Reference = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'Idempotent reference of the move, unique per partner',
})
const MoveFields = {
  walletId: Type.String({ minLength: 1, maxLength: 64, description: 'The wallet handle from wallet creation' }),
  reference: Reference,
  amountKobo: AmountKobo({ description: 'Integer kobo, at most the maximum of one instruction (docs/api.md)' }),
  currency: CurrencySchema(),
  narration: Type.Optional(Type.String({ maxLength: 100, description: 'Applied where the provider supports it' })),
} satisfies TProperties

const MoveSchema = Type.Object(
  {
    reference: Type.String(),
    type: Type.Union([
      Type.Literal('credit'),
      Type.Literal('debit'),
      Type.Literal('wallet_transfer'),
      Type.Literal('bank_payout'),
    ]),
    status: Type.Union([
      Type.Literal('successful'),
      Type.Literal('failed'),
      Type.Literal('pending'),
      Type.Literal('unknown'),
    ]),
    walletId: Type.String(),
    destinationWalletId: Type.Optional(Type.String()),
    destinationAccountNumber: Type.Optional(Type.String()),
    destinationBankCode: Type.Optional(Type.String()),
    destinationAccountName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    amountKobo: Type.Integer(),
    currency: Type.String(),
    narration: Type.Union([Type.String(), Type.Null()]),
    provider: Type.String(),
    providerReference: Type.Union([Type.String(), Type.Null()]),
    responseCode: Type.Union([Type.String(), Type.Null()]),
    responseMessage: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    completedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  {
    title: 'WalletMove',
    description: 'A wallet move: a credit, debit, transfer between wallets or payout to a bank, with its outcome',
  },
)
export type WalletMoveJson = Static<typeof MoveSchema>

export function toMoveJson(move: Move): WalletMoveJson {
  return {
    reference: move.reference,
    type: move.type,
    status: move.status,
    walletId: move.walletId,
    ...(move.destinationWalletId ? { destinationWalletId: move.destinationWalletId } : {}),
    ...(move.type === 'bank_payout'
      ? {
          destinationAccountNumber: move.destinationAccountNumber!,
          destinationBankCode: move.destinationBankCode!,
          destinationAccountName: move.destinationAccountName,
        }
      : {}),
    amountKobo: move.amountKobo,
    currency: move.currency,
    narration: move.narration,
    provider: move.provider,
    providerReference: move.providerReference,
    responseCode: move.responseCode,
    responseMessage: move.responseMessage,
    createdAt: move.createdAt.toISOString(),
    completedAt: move.completedAt?.toISOString() ?? null,
  }
}

/** What the OpenAPI document says of the move operations. */
const OPS = operations('wallets', {
  creditWallet: {
    summary: 'Fund a wallet (merchant-initiated credit, where the provider supports it)',
    description:
      'Funds a wallet with a merchant-initiated credit where the provider supports it (403 `capability_disabled` otherwise, nothing attempted). Idempotent on `reference`.',
  },
  debitWallet: {
    summary: 'Spend from a wallet (approval-gated)',
    description:
      'Spends from a wallet (approval-gated: 403 `capability_disabled` where the provider is not approved). More than the available balance is 422 `insufficient_funds`. Idempotent on `reference`.',
  },
  transferBetweenWallets: {
    summary: 'Move value between two wallets at the same provider',
    description: 'Moves value from one wallet to another at the same provider. Idempotent on `reference`.',
  },
  transferWalletToBank: {
    summary: 'Pay out from a wallet to an account at any bank (the outcome may come later: requery)',
    description:
      "Pays out from a wallet to an account at any bank. The amount is held until the bank's outcome is final, which may come later: read it with `GET /transaction/batch/{reference}`. Idempotent on `reference`.",
  },
  getWalletTransaction: {
    summary: 'What happened to a move, by its reference (asks the provider when the outcome is not final)',
    description:
      'What happened to a wallet move, by its reference; when the outcome is not final Rail asks the provider first.',
  },
})

export function registerMoveRoutes(app: HttpServer, deps: MovesDeps): void {
  registerMoveRoute(app, deps, '/wallet/credit', 'credit', OPS.creditWallet)
  registerMoveRoute(app, deps, '/wallet/debit', 'debit', OPS.debitWallet)
  registerMoveRoute(app, deps, '/transfer/wallet', 'wallet_transfer', OPS.transferBetweenWallets, {
    destinationWalletId: Type.String({ minLength: 1, maxLength: 64, description: 'The wallet receiving the value' }),
  })
  registerMoveRoute(app, deps, '/transfer/bank/customer', 'bank_payout', OPS.transferWalletToBank, {
    destinationAccountNumber: NubanSchema('NUBAN of the account to pay'),
    destinationBankCode: Type.String({ pattern: '^[0-9]{3}$', description: 'CBN code of its bank' }),
    destinationAccountName: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'Checked by name enquiry where the provider requires a name check',
      }),
    ),
  })
  app.get(
    '/transaction/batch/:reference',
    getOne(OPS.getWalletTransaction, closedObject({ reference: Reference }), MoveSchema),
    async (request) =>
      toMoveJson(await moveByReference(deps, callerOf(request).partner.id, request.params.reference, request.id)),
  )
}

/** One move route: the same fields, checks and answer for each type, with the type's own extra fields. */
function registerMoveRoute(
  app: HttpServer,
  deps: MovesDeps,
  path: string,
  type: MoveType,
  operation: Operation,
  extra: TProperties = {},
): void {
  app.post(
    path,
    route(SIGNED_BY_REFERENCE, operation, {
      body: closedObject({ ...MoveFields, ...extra }),
      response: {
        200: MoveSchema,
        ...errorResponses(
          ...IDEMPOTENT_CODES,
          'not_found',
          'capability_disabled',
          'insufficient_funds',
          'unsupported_currency',
          'amount_above_limit',
          'provider_unavailable',
        ),
      },
    }),
    async (request, reply) => {
      const submitted = await submitMove(
        deps,
        callerOf(request).partner,
        type,
        request.body as Parameters<typeof submitMove>[3],
        request.id,
      )
      return sendOnce(reply.code(200), submitted.replayed, toMoveJson(submitted.move))
    },
  )
}
