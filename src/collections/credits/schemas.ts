// Inbound credits as the API shows them: a credit, a triage item, a BRR's status. The schemas the
// routes declare, and the types their mappers (views.ts) return.
import { Type, type Static } from '@sinclair/typebox'
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
