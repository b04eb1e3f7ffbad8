// The FBO pool account object (docs/contracts/collections-and-payouts.md §FBO pool accounts): the
// schema the routes declare, and the type its mapper (service.ts) returns.
import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from '../../platform/schemas.ts'

export const FboSchema = Type.Object(
  {
    trackingId: Type.String(),
    virtualAccount: Type.String({ description: 'The NUBAN payers send money to' }),
    holderRef: Type.String(),
    bankCode: Type.String(),
    provider: Type.String(),
    providerChannel: Type.String(),
    purposeTag: Nullable(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
  },
  {
    title: 'FboAccount',
    description: 'An identity-blind FBO pool virtual account, attributed to an opaque holder reference',
  },
)
export type FboAccountJson = Static<typeof FboSchema>
