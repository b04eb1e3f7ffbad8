// The outbound transfer object as the API and its callbacks show it (docs/contracts/collections-and-payouts.md
// §Outbound transfers): the schema the routes declare, and the type its mapper (callbacks.ts) returns.
import { Type, type Static } from '@sinclair/typebox'
import { operations } from '../../platform/routes.ts'
import { Nullable } from '../../platform/schemas.ts'
import { ORIGIN_TYPES, type OriginType } from './repo.ts'

export const StateSchema = Type.Union([
  Type.Literal('pending'),
  Type.Literal('submitted'),
  Type.Literal('confirmed'),
  Type.Literal('failed'),
  Type.Literal('unknown'),
  Type.Literal('reversed'),
])

export const OutboundSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    clientReference: Type.String(),
    consumerId: Nullable(Type.String()),
    partnerId: Type.String({ format: 'uuid' }),
    state: StateSchema,
    provider: Type.String(),
    brr: Nullable(
      Type.String({ description: 'BRR + 17 digits (Luhn), for government and corporate partners; null otherwise' }),
    ),
    providerSessionId: Nullable(Type.String()),
    providerResponseCode: Nullable(Type.String()),
    providerResponseMessage: Nullable(Type.String()),
    failureReason: Nullable(
      Type.Object(
        { code: Type.String(), message: Type.String(), providerResponseCode: Type.Optional(Type.String()) },
        { description: 'Why the transfer failed' },
      ),
    ),
    rail: Nullable(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description: 'How the payout travels, e.g. { scheme: "NIP", destinationBankCode }',
        },
      ),
    ),
    settlementAccountName: Nullable(
      Type.String({ description: "The beneficiary's name as the bank's name enquiry gave it" }),
    ),
    beneficiaryAccountNumber: Type.String(),
    beneficiaryBankCode: Type.String(),
    beneficiaryAccountName: Type.String(),
    amountKobo: Type.Integer(),
    currency: Type.String(),
    narration: Nullable(Type.String()),
    creatorMetadata: Type.Object(
      {},
      { additionalProperties: true, description: 'Who created it: partnerId, credentialId, requestId' },
    ),
    origin: Type.Object(
      {
        type: Type.Unsafe<OriginType>({ type: 'string', enum: [...ORIGIN_TYPES] }),
        id: Nullable(
          Type.String({
            description: 'The object behind it: the refund, the escrow, the settlement; null for a partner payout',
          }),
        ),
        reference: Nullable(
          Type.String({
            description:
              "The handle you know it by: the escrow's ref, the refund's reference, the settlement's id; null for a partner payout",
          }),
        ),
      },
      {
        description:
          'Why Rail made this payout: partner (the partner submitted it), refund, escrow (a disbursement), settlement',
      },
    ),
    createdAt: Type.String({ format: 'date-time' }),
    stateChangedAt: Type.String({ format: 'date-time' }),
    terminalAt: Nullable(Type.String({ format: 'date-time' })),
  },
  {
    title: 'OutboundTransfer',
    description: 'A payout from Rail to an account at any bank, with its state at the bank',
  },
)
export type OutboundTransferJson = Static<typeof OutboundSchema>

/** What the OpenAPI document says of the outbound operations (routes.ts and float-routes.ts declare them). */
export const OUTBOUND_OPERATIONS = operations('outbound', {
  createOutboundTransfer: {
    summary: 'Submit a payout from the float to an account at any bank (asynchronous: 202)',
    description:
      'Submits a payout of `amountKobo` from the float to a NUBAN at any bank. Answers 202 at once with the transfer `pending`; the pipeline name-checks the account, sends it to the bank and requeries until a final answer, then calls back `transfer.confirmed`, `transfer.failed` or `transfer.unknown`. Idempotent on `clientReference`. Refused before anything moves: 422 `insufficient_funds`, `amount_above_limit`, `unsupported_currency`.',
  },
  getOutboundTransfer: {
    summary: 'One outbound transfer',
    description:
      "One outbound transfer by its id, with its state at the bank, the bank's last answer and, when it failed, why.",
  },
  listOutboundTransfers: {
    summary: "The caller's outbound transfers, newest first (clientReference finds one)",
    description:
      "The caller's outbound transfers, newest first, of every origin (partner payouts, refunds, escrow disbursements, settlements). Filter by `clientReference`, `state` or `origin`; page with `cursor` and `limit`.",
  },
  simulateOutboundSettlement: {
    tag: 'sandbox',
    summary:
      "Sandbox: register the outcome of one of the caller's submitted transfers; it resolves through the real requery and callback path",
    description:
      "Sandbox partners only: registers at the sandbox bank the outcome (`confirmed` or `failed`) of one of the caller's submitted transfers, named by `transferId` or `clientReference`. The transfer then resolves through the real requery and callback path, not at once.",
  },
  getFloat: {
    summary: "The caller's float: what outbound transfers draw on",
    description:
      "The partner's float: its available and booked balance in kobo. Outbound transfers, refunds and settlements draw on it; an outbound transfer holds its amount until the bank's answer is final.",
  },
  fundSandboxFloat: {
    tag: 'sandbox',
    summary:
      'Sandbox: fund the float from the provider settlement account (a balanced ledger transfer), once per reference',
    description:
      "Sandbox partners only (404 for live ones): moves money from the provider's settlement account into the float with a balanced ledger transfer. Idempotent on the required `reference`: the same body again answers the same funding with `Idempotent-Replayed: true`.",
  },
})
