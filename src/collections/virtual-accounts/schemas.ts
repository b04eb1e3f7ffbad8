// The persistent virtual account object (docs/contracts/collections-and-payouts.md §Persistent virtual
// accounts): the schema the routes declare, and the type its mapper (service.ts) returns.
import { Type, type Static } from '@sinclair/typebox'
import { operations } from '../../platform/routes.ts'
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

/** What the OpenAPI document says of the persistent virtual account operations (routes.ts declares them). */
export const VIRTUAL_ACCOUNT_OPERATIONS = operations('collections', {
  createVirtualAccount: {
    summary: 'Allocate a persistent virtual account at the provider (synchronous)',
    description:
      'Allocates a persistent virtual account (a NUBAN) at the provider during the request; credits into it are applied and announced with `credit.confirmed`. Idempotent on `reference`. A provider that gives no usable answer is 502 `provider_unavailable`: nothing was created, retry with the same reference.',
  },
  listVirtualAccounts: {
    summary: "The caller's persistent virtual accounts, newest first",
    description: "The caller's persistent virtual accounts, newest first; page with `cursor` and `limit`.",
  },
  getVirtualAccount: {
    summary: 'One persistent virtual account',
    description:
      "One virtual account: a persistent account by its tracking id (`trk_…`) or its id, or the account an invoice is paid into by the invoice's `persistentVirtualAccountId`.",
  },
  archiveVirtualAccount: {
    summary:
      'Archive a persistent virtual account: it stops collecting, and later credits to it go to unmatched triage',
    description:
      'Archives a persistent virtual account: it stops collecting, and later credits into it go to unmatched triage. Archiving an archived account is 409 `invalid_state`.',
  },
})
