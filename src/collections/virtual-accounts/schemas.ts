// The persistent virtual account object (docs/contracts/collections-and-payouts.md §Persistent virtual
// accounts): the schema the routes declare, and the type its mapper (service.ts) returns.
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../../platform/schemas.ts'

export const PersistentAccountSchema = Type.Object(
  {
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
    creatorMetadata: Type.Object(
      {},
      { additionalProperties: true, description: 'Who created it: partnerId, credentialId, requestId' },
    ),
    createdAt: Type.String({ format: 'date-time' }),
    brr: Nullable(
      Type.String({
        description: 'BRR + 17 digits (Luhn) for government and corporate partners; null for reference-only accounts',
      }),
    ),
  },
  {
    title: 'VirtualAccount',
    description: 'A persistent virtual account: a NUBAN that collects for the partner for as long as it is active',
  },
)
export type VirtualAccountJson = Static<typeof PersistentAccountSchema>
