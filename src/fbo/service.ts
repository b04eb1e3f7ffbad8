// FBO pool virtual accounts (seed 001): identity-blind collection accounts attributed to an
// opaque holder reference. No name, phone, email or BVN is accepted or stored: the account is
// named after the partner's pool, and it bears no BRR (reference-only).
import { withKeyLock } from '../platform/db.ts'
import { RailError } from '../platform/errors.ts'
import { requestHash } from '../platform/idempotency.ts'
import {
  allocateAtProvider,
  assertCallbackUrl,
  collectionProvider,
  COLLECTION_CURRENCY,
  newAccountRow,
  type Caller,
  type CollectionsDeps,
  type VirtualAccount,
} from '../virtual-accounts/service.ts'
import { insertVirtualAccount, selectFboByHolder } from '../virtual-accounts/repo.ts'

export interface FboRequest {
  holderRef: string
  callbackUrl?: string
  purposeTag?: string
}

/** The FBO pool virtual account object of seed 001: exactly its fields. */
export function toFboJson(account: VirtualAccount) {
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
export async function provisionFboAccount(deps: CollectionsDeps, caller: Caller, request: FboRequest): Promise<{ account: VirtualAccount; replayed: boolean }> {
  const partner = caller.partner
  const purposeTag = request.purposeTag ?? null
  const hash = requestHash(request)
  const replay = (known: VirtualAccount) => {
    if (known.requestHash !== hash) {
      throw new RailError('idempotency_conflict', `holderRef ${request.holderRef} with this purposeTag was already provisioned with a different request`, { trackingId: known.trackingId })
    }
    return { account: known, replayed: true }
  }
  const known = await selectFboByHolder(deps.pool, partner.id, request.holderRef, purposeTag)
  if (known) return replay(known)
  await assertCallbackUrl(deps, partner, request.callbackUrl)
  const provider = await collectionProvider(deps.pool)
  const allocated = await allocateAtProvider(deps, provider, {
    partnerId: partner.id,
    uniqueKey: `fbo\n${request.holderRef}\n${purposeTag ?? ''}`,
    accountName: poolAccountName(partner.name),
    requestId: caller.requestId,
  })
  return withKeyLock(deps.pool, `fbo:${partner.id}:${request.holderRef}\n${purposeTag ?? ''}`, async (tx) => {
    const raced = await selectFboByHolder(tx, partner.id, request.holderRef, purposeTag)
    if (raced) return replay(raced)
    const account = await insertVirtualAccount(
      tx,
      newAccountRow(caller, provider, allocated, {
        purpose: 'fbo',
        reference: null,
        requestHash: hash,
        currency: COLLECTION_CURRENCY,
        purposeTag,
        callbackUrl: request.callbackUrl ?? null,
        holder: null,
        holderRef: request.holderRef,
        brr: null,
      }),
    )
    return { account, replayed: false }
  })
}
