// Settlement settings and bank settlements as the API shows them (docs/settlement.md): the schemas
// the routes declare, and the types their mappers (settings.ts, views.ts) return.
import { Type, type Static } from '@sinclair/typebox'
import { operations } from '../platform/routes.ts'
import { Nullable } from '../platform/schemas.ts'
import { settlementStates, type SettlementState } from './states.ts'

export const ModeSchema = Type.Union([Type.Literal('float'), Type.Literal('bank')], {
  description:
    'float (default): collections move to the float after each credit; bank: once a day after the cut-off, to the registered bank account',
})
export const StateSchema = Type.Unsafe<SettlementState>({ type: 'string', enum: [...settlementStates.states] })

export const SettingsSchema = Type.Object(
  {
    mode: ModeSchema,
    bankAccount: Nullable(
      Type.Object({
        accountNumber: Type.String(),
        bankCode: Type.String(),
        bankName: Type.String(),
        accountName: Type.String(),
        verifiedAccountName: Nullable(
          Type.String({ description: "The name the bank's name enquiry gave at registration" }),
        ),
      }),
    ),
    cutoffTime: Type.String({ description: 'Daily cut-off, HH:MM in timeZone' }),
    timeZone: Type.String(),
    nextCutoffAt: Nullable(Type.String({ format: 'date-time', description: 'The next cut-off (bank mode)' })),
    updatedAt: Nullable(Type.String({ format: 'date-time' })),
  },
  {
    title: 'SettlementSettings',
    description: 'How collections settle: to the float after each credit, or daily to a bank account',
  },
)

export const SettlementSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    state: StateSchema,
    cycle: Type.String({
      description: "The cycle: the Africa/Lagos date of its cut-off, or 'sandbox-…' for a run on request",
    }),
    cutoffAt: Type.String({ format: 'date-time' }),
    amountKobo: Type.Integer({ description: 'What the payout pays' }),
    currency: Type.String(),
    creditCount: Type.Integer(),
    creditsTotalKobo: Type.Integer(),
    destination: Type.Object({
      bankCode: Type.String(),
      bankName: Type.String(),
      accountNumber: Type.String(),
      accountName: Type.String(),
    }),
    outboundTransferId: Nullable(
      Type.String({ format: 'uuid', description: 'The payout (GET /api/v1/rail/outbound/{id}, origin settlement)' }),
    ),
    failureReason: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
    createdAt: Type.String({ format: 'date-time' }),
    stateChangedAt: Type.String({ format: 'date-time' }),
  },
  {
    title: 'Settlement',
    description: 'A bank settlement: the credits of one cycle paid out to the registered account',
  },
)

export const SettlementWithReportSchema = Type.Intersect([
  SettlementSchema,
  Type.Object({
    report: Type.Object({
      creditCount: Type.Integer(),
      creditsTotalKobo: Type.Integer(),
      paidKobo: Type.Integer(),
      adjustmentKobo: Type.Integer({
        description:
          'paidKobo − creditsTotalKobo: negative when a refund held or paid from collections kept part back; positive when money given back to collections (a voided hold) was paid with the cycle',
      }),
      credits: Type.Array(
        Type.Object({
          creditId: Type.String({ format: 'uuid' }),
          amountKobo: Type.Integer(),
          collectedAt: Type.String({ format: 'date-time' }),
        }),
      ),
      creditsShown: Type.Integer({ description: 'At most 1000 credits are listed; creditCount has them all' }),
    }),
  }),
])

export type SettlementSettingsJson = Static<typeof SettingsSchema>
export type SettlementJson = Static<typeof SettlementSchema>
export type SettlementWithReportJson = Static<typeof SettlementWithReportSchema>

/** What the OpenAPI document says of the settlement operations (routes.ts declares them). */
export const SETTLEMENT_OPERATIONS = operations('settlement', {
  getSettlementSettings: {
    summary: "The caller's settlement settings (float unless set)",
    description:
      "How the caller's collections settle: `float` (after each credit, the default) or `bank` (daily at a cut-off to a registered account).",
  },
  setSettlementSettings: {
    summary:
      'Set how collections settle: float, or bank with a registered account (NUBAN, name-checked) and a daily cut-off. Replaces the settings whole',
    description:
      'Replaces the settlement settings whole: `float`, or `bank` with a NUBAN (name-checked at the bank during the request) and a daily cut-off.',
  },
  listSettlements: {
    summary: "The caller's bank settlements, newest first",
    description: "The caller's bank settlements, newest first; page with `cursor` and `limit`.",
  },
  getSettlement: {
    summary: 'One settlement with its report: the credits it included, the total, the payout',
    description:
      'One settlement with its report: the credits it included, their total, what was paid and why it differs.',
  },
  runSandboxSettlement: {
    tag: 'sandbox',
    summary:
      "Sandbox: run the caller's settlement cycle now, with now as its cut-off (the same request again with its Idempotency-Key pays nothing twice)",
    description:
      "Sandbox partners only: runs the caller's settlement cycle now, with now as its cut-off. The same request again with its `Idempotency-Key` pays nothing twice.",
  },
})
