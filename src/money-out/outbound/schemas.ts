// The outbound transfer object as the API and its callbacks show it (docs/contracts/collections-and-payouts.md
// §Outbound transfers): the schema the routes declare, and the type its mapper (callbacks.ts) returns.
import { Type, type Static } from '@sinclair/typebox'
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
