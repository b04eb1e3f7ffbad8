// The FBO pool account object (docs/contracts/collections-and-payouts.md §FBO pool accounts): the
// schema the routes declare, and the type its mapper (service.ts) returns.
import { Type, type Static } from '@sinclair/typebox'
import { operations } from '../../platform/routes.ts'
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

/** What the OpenAPI document says of the FBO pool account operations (routes.ts declares them). */
export const FBO_OPERATIONS = operations('collections', {
  provisionFboAccount: {
    summary:
      'Provision an identity-blind FBO pool virtual account for an opaque holder reference (synchronous; no name, phone, email or BVN accepted)',
    description:
      'Provisions an identity-blind FBO pool virtual account for an opaque holder reference and purpose tag: no name, phone, email or BVN is accepted. Credits are attributed to the holder reference and announced with `fbo.funding`. Idempotent on `holderRef` and `purposeTag`.',
  },
  listFboAccounts: {
    summary: "The caller's FBO pool virtual accounts, newest first",
    description: "The caller's FBO pool virtual accounts, newest first; page with `cursor` and `limit`.",
  },
  getFboAccount: {
    summary: 'One FBO pool virtual account',
    description: 'One FBO pool virtual account by its tracking id.',
  },
})
