// FBO pool virtual accounts (docs/contracts/collections-and-payouts.md §FBO pool accounts): identity-blind collection accounts attributed to an
// opaque holder reference. No name, phone, email or BVN is accepted or stored: the account is
// named after the partner's pool, and it bears no BRR (reference-only).
import type { Caller } from '../../partners/service.ts'
import { withTransaction, type Queryable } from '../../platform/db.ts'
import { claimReference, findReplay, requestHash, type ReferenceKind } from '../../platform/idempotency.ts'
import {
  allocateAtProvider,
  assertCallbackUrl,
  collectionProvider,
  COLLECTION_CURRENCY,
  insertVirtualAccount,
  newAccountRow,
  selectFboByHolder,
  type CollectionsDeps,
  type VirtualAccount,
} from '../virtual-accounts/service.ts'
import type { FboAccountJson } from './schemas.ts'

export interface FboRequest {
  holderRef: string
  callbackUrl?: string
  purposeTag?: string
}

/** The FBO pool virtual account object of docs/contracts/collections-and-payouts.md §FBO pool accounts: exactly its fields. */
export function toFboJson(account: VirtualAccount): FboAccountJson {
  return {
    trackingId: account.trackingId,
    virtualAccount: account.accountNumber,
    holderRef: account.holderRef ?? '',
    bankCode: account.bankCode,
    provider: account.provider,
    providerChannel: account.providerChannel,
    purposeTag: account.purposeTag,
    createdAt: account.createdAt.toISOString(),
  }
}

/** The pool's account name at the bank: the partner's, never the holder's. */
function poolAccountName(partnerName: string): string {
  return `${partnerName.slice(0, 90)} FBO POOL`
}

/** Provisions the account of a holder reference and purpose tag, once (same body: it again; another: 409). */
export async function provisionFboAccount(
  deps: CollectionsDeps,
  caller: Caller,
  request: FboRequest,
): Promise<{ account: VirtualAccount; replayed: boolean }> {
  const partner = caller.partner
  const purposeTag = request.purposeTag ?? null
  // The holder reference and purpose tag together are the reference an FBO account is taken by.
  const key = { reference: request.holderRef, requestHash: requestHash(request) }
  const stored = (db: Queryable) => () => selectFboByHolder(db, partner.id, request.holderRef, purposeTag)
  const known = await findReplay(FBO_REFERENCE, key, stored(deps.pool))
  if (known) return { account: known.replayed, replayed: true }
  await assertCallbackUrl(deps, partner, request.callbackUrl)
  const provider = await collectionProvider(deps.pool, partner.id)
  const allocated = await allocateAtProvider(deps, provider, {
    partnerId: partner.id,
    uniqueKey: `fbo\n${request.holderRef}\n${purposeTag ?? ''}`,
    accountName: poolAccountName(partner.name),
    requestId: caller.requestId,
  })
  const row = newAccountRow(caller, provider, allocated, {
    purpose: 'fbo',
    reference: null,
    requestHash: key.requestHash,
    currency: COLLECTION_CURRENCY,
    purposeTag,
    callbackUrl: request.callbackUrl ?? null,
    holder: null,
    holderRef: request.holderRef,
    brr: null,
  })
  const claimed = await withTransaction(deps.pool, (tx) =>
    claimReference(FBO_REFERENCE, key, () => insertVirtualAccount(tx, row), stored(tx)),
  )
  return claimed.created ? { account: claimed.created, replayed: false } : { account: claimed.replayed, replayed: true }
}

/** How an FBO account takes its holder reference (platform/idempotency.ts); the API knows it by its tracking id. */
const FBO_REFERENCE: ReferenceKind<VirtualAccount> = {
  field: 'holderRef',
  hashOf: (account) => account.requestHash ?? '',
  idOf: (account) => account.trackingId,
}
