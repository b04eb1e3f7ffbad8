// Inbound credits as the API shows them: a credit, a triage item, a BRR's status. The schemas the
// routes declare, and the types their mappers (views.ts) return.
import { Type, type Static } from '@sinclair/typebox'
import { operations } from '../../platform/routes.ts'
import { Nullable, openObject } from '../../platform/schemas.ts'

export const PayerSchema = Type.Object({
  name: Nullable(Type.String()),
  accountNumber: Nullable(Type.String()),
  bankCode: Nullable(Type.String()),
})

export const CreditSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: Type.String({ description: 'received, confirmed, unmatched, refund_pending, refunded, assigned' }),
    brr: Nullable(Type.String()),
    amountKobo: Type.Integer(),
    currency: Type.String(),
    virtualAccount: Type.String(),
    sessionId: Type.String({ description: "The provider's (NIP) session id of the credit" }),
    payer: PayerSchema,
    narration: Nullable(Type.String()),
    creditedAt: Type.String({ format: 'date-time' }),
    receivedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'InboundCredit', description: "A credit paid into one of the caller's accounts" },
)

export const TriageSchema = Type.Object(
  {
    ...CreditSchema.properties,
    status: Type.Union([
      Type.Literal('unmatched'),
      Type.Literal('refund_pending'),
      Type.Literal('refunded'),
      Type.Literal('assigned'),
    ]),
    reason: Type.String({
      description:
        'Why it was unmatched: account_archived, payment_intent_expired, invoice_closed, escrow_closed, currency_mismatch',
    }),
    trackingId: Nullable(Type.String({ description: 'The account it was paid into' })),
    walletId: Nullable(
      Type.String({
        description:
          "The wallet whose account number it was paid into (a wallet's credit in another currency); null for a virtual account's credit",
      }),
    ),
    resolution: Nullable(
      openObject({ description: '{ action: "refund", outboundTransferId } or { action: "assign", trackingId }' }),
    ),
    resolvedAt: Nullable(Type.String({ format: 'date-time' })),
  },
  { title: 'UnmatchedCredit', description: 'A credit that could not be applied, and how it was resolved' },
)

export const BrrAccountSchema = Type.Object({
  trackingId: Type.String(),
  reference: Nullable(Type.String()),
  purpose: Type.String(),
  status: Type.String(),
  virtualAccount: Type.String(),
  virtualAccountName: Type.String(),
  bankCode: Type.String(),
  bankName: Type.String(),
  brr: Nullable(Type.String()),
})

export const BrrStatusSchema = Type.Object(
  {
    brr: Type.String(),
    kind: Type.Union([Type.Literal('transaction'), Type.Literal('account')]),
    status: Type.String({
      description:
        'transaction: received, confirmed, unmatched, refund_pending, refunded, assigned; account: active, archived',
    }),
    transaction: Nullable(CreditSchema),
    account: Nullable(BrrAccountSchema),
    transactions: Type.Array(CreditSchema, {
      description: "An account BRR: the account's latest transactions, newest first",
    }),
  },
  { title: 'BrrStatus', description: 'The lifecycle status of a collection by its BRR' },
)
export type InboundCreditJson = Static<typeof CreditSchema>
export type UnmatchedCreditJson = Static<typeof TriageSchema>
export type BrrAccountJson = Static<typeof BrrAccountSchema>
export type BrrStatusJson = Static<typeof BrrStatusSchema>

/** What the OpenAPI document says of the inbound credit operations (routes.ts and wallet-routes.ts declare them). */
export const CREDIT_OPERATIONS = operations('collections', {
  receiveProviderNotice: {
    tag: 'providers',
    summary: "A provider's signed notice of an inbound credit: stored once per session id, then applied by a job",
    description:
      "A provider's signed webhook, in the provider's own format (the sandbox bank's, Paystack's, Monnify's), verified by its adapter (a bad signature, or an address outside the profile's allowlist, is 401). A credit is stored once per session id (a repeat answers `duplicate: true`), then applied by a background job. A payout's news (success, failure, reversal) is a hint: Rail asks the provider about the payout (a requery) and acts on that answer, never on the webhook alone. Anything else verified is acknowledged and ignored.",
  },
  listUnmatchedCredits: {
    summary:
      'Credits that could not be applied (archived account, expired intent, closed invoice or escrow), newest first; resolved ones show how',
    description:
      "Credits that could not be applied (an archived account, an expired intent, a closed invoice or escrow, an overpayment's excess), newest first; resolved ones show how. Filter by status; page with `cursor` and `limit`.",
  },
  getUnmatchedCredit: {
    summary: 'One unmatched credit',
    description: 'One unmatched credit: what arrived, why it could not be applied, and how it was resolved.',
  },
  resolveUnmatchedCredit: {
    summary:
      'Settle an unmatched credit once: refund it to its sender (an outbound transfer from the float) or assign it to another of your accounts',
    description:
      "Settles an unmatched credit once: `refund` pays it back to its sender (an outbound transfer from the float, announced with `refund.*`), `assign` applies it to another of the caller's accounts. A credit already resolved is 409 `invalid_state`.",
  },
  getCollectionByBrr: {
    summary:
      "The lifecycle status of a collection transaction by its BRR (or of a BRR-bearing account, with its latest transactions); another partner's BRR is not found",
    description:
      "The lifecycle status of a collection by its BRR: a transaction's BRR gives that credit's status; an account's BRR gives the account and its latest transactions. Another partner's BRR is 404.",
  },
  requeryVirtualAccount: {
    summary: 'Ask the provider for credits to this account that Rail has not seen, and apply each once',
    description:
      'Asks the provider for credits into this account that Rail has not seen (a missed notice), and applies each once, as if it had been announced. Answers what was found and applied.',
  },
  simulateInboundCredit: {
    tag: 'sandbox',
    summary:
      "Sandbox: someone pays into one of your virtual accounts or wallets' account numbers; the sandbox bank announces it to Rail by its signed webhook, and the credit follows Rail's real path. The same request again with its Idempotency-Key pays nothing (Idempotent-Replayed: true)",
    description:
      "Sandbox partners only: someone pays `amountKobo` into one of the caller's virtual accounts or wallets' account numbers. The sandbox bank announces it to Rail by its signed webhook and the credit follows Rail's real path (applied, called back). The same request again with its `Idempotency-Key` pays nothing (`Idempotent-Replayed: true`).",
  },
  requeryWallet: {
    tag: 'wallets',
    summary:
      "Ask the provider for transfers into this wallet's account number that Rail has not seen, and apply each once",
    description:
      "Asks the provider for transfers into this wallet's account number that Rail has not seen, and applies each once (`wallet.funded`).",
  },
})
