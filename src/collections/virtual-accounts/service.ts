// Virtual accounts (docs/contracts/collections-and-payouts.md): NUBANs allocated synchronously at the provider — persistent
// accounts here, and the allocation every kind of collection account shares (payment intents and
// FBO pool accounts compose it). Each account is recorded with its owner partner, and a BRR when
// the partner's class bears one.
import { createHash, randomBytes } from 'node:crypto'
import { assertCallbackUrlAllowed } from '../../events/service.ts'
import { findBank } from '../../banking/nip/banks.ts'
import { generateBrr } from '../../banking/nip/brr.ts'
import { creatorMetadata, type Caller, type Partner } from '../../partners/service.ts'
import type { Clock } from '../../platform/clock.ts'
import { withTransaction, type Pool, type Queryable } from '../../platform/db.ts'
import { notFound, RailError } from '../../platform/errors.ts'
import { claimReference, findReplay, requestHash, type ReferenceKind } from '../../platform/idempotency.ts'
import { uuidv7 } from '../../platform/ids.ts'
import { addJob } from '../../platform/jobs.ts'
import { pageQueryLimit, toPage } from '../../platform/pagination.ts'
import { readPage } from '../../platform/read-pool.ts'
import {
  getProvider,
  providerFor,
  requireCapability,
  type ProviderProfile,
  type ProviderRegistry,
} from '../../banking/providers/service.ts'
import type { ProviderAccount } from '../../banking/providers/types.ts'
import * as repo from './repo.ts'
import type { VirtualAccountJson } from './schemas.ts'

export type { AccountHolder, VirtualAccount, VirtualAccountPurpose } from './repo.ts'
// The rows other features record on their own transaction (an intent's account, an FBO account).
export {
  insertVirtualAccount,
  lockById,
  lockByNumber,
  lockByNumbers,
  lockFreeByIds,
  selectByBrr,
  selectById,
  selectByPartnerAndNumber,
  selectFboByHolder,
  selectIdByTrackingId,
} from './repo.ts'
export type { ReceivingAccount } from './repo.ts'

/** Collections are in naira; another currency is refused with unsupported_currency. */
export const COLLECTION_CURRENCY = 'NGN'

/**
 * The accounts the credit sweep asks the provider about (src/collections/credits/account-sweep.ts):
 * every active one and those archived since `archivedSince`, in (provider, account number) order after `after`.
 */
export function receivingAccountsAfter(
  db: Queryable,
  after: repo.ReceivingAccount | null,
  archivedSince: Date,
  limit: number,
): Promise<repo.ReceivingAccount[]> {
  return repo.selectReceivingAfter(db, after, archivedSince, limit)
}
/** How the payer reaches a virtual account: a bank transfer (NIP) to its NUBAN. */
export const PROVIDER_CHANNEL = 'bank_transfer'
export const ACCOUNT_PAGE_MAX = 100

export interface CollectionsDeps {
  pool: Pool
  /** The real clock; a partner's objects are judged by its own (partners/sandbox-clock/service.ts partnerClock). */
  clock: Clock
  providers: ProviderRegistry
  allowLoopbackCallbacks: boolean
}

/** Government and corporate partners receive BRR-bearing accounts; fintech and citizen partners reference-only ones. */
export function bearsBrr(partner: Partner): boolean {
  return partner.customerClass === 'government' || partner.customerClass === 'corporate'
}

/** A stable public id: `trk_` and 24 characters of base 36 from 15 random bytes. */
export function newTrackingId(): string {
  return `trk_${BigInt(`0x${randomBytes(15).toString('hex')}`)
    .toString(36)
    .padStart(24, '0')
    .slice(-24)}`
}

export function bankName(bankCode: string): string {
  return findBank(bankCode)?.name ?? bankCode
}

export function assertCollectionCurrency(currency: string): void {
  if (currency !== COLLECTION_CURRENCY)
    throw new RailError('unsupported_currency', `Only ${COLLECTION_CURRENCY} is served`, { currency })
}

export async function assertCallbackUrl(
  deps: CollectionsDeps,
  partner: Partner,
  callbackUrl: string | undefined,
): Promise<void> {
  if (callbackUrl !== undefined)
    await assertCallbackUrlAllowed(callbackUrl, partner.environment, deps.allowLoopbackCallbacks)
}

/** The provider a partner's collections use (its collections route, else the sandbox), approved for virtual accounts (else 403 capability_disabled, nothing called). */
export async function collectionProvider(db: Queryable, partnerId: string): Promise<ProviderProfile> {
  const provider = await providerFor(db, partnerId, 'collections')
  requireCapability(provider, 'virtualAccounts')
  return provider
}

/**
 * Allocates a NUBAN at the provider, during the request and outside any transaction (no
 * connection is held while the provider answers). The reference the provider sees is derived
 * from what makes the account unique (a partner's reference, where the object has one), so a
 * concurrent duplicate, a retry after a lost answer or a crash gets the same account back; an
 * account allocated for a request that then fails is never recorded by Rail (a credit to it goes
 * to the partner's triage). Objects without a reference of their own (an invoice published on
 * create, an escrow) derive it from their new id: a retried create allocates anew, and the
 * earlier account stays unused. No usable answer: 502
 * provider_unavailable, and nothing is recorded.
 */
export async function allocateAtProvider(
  deps: CollectionsDeps,
  provider: ProviderProfile,
  input: { partnerId: string; uniqueKey: string; accountName: string; requestId?: string },
): Promise<ProviderAccount & { providerReference: string }> {
  const reference = allocationReference(input.partnerId, input.uniqueKey)
  const allocated = await (
    await deps.providers.adapterFor(provider, input.requestId)
  ).allocateVirtualAccount({ reference, accountName: input.accountName })
  if (allocated.outcome !== 'successful') {
    throw new RailError(
      'provider_unavailable',
      `Provider ${provider.name} did not allocate the virtual account; retry with the same reference`,
    )
  }
  return { ...allocated.value, providerReference: allocated.providerReference }
}

/**
 * The reference the provider keeps for an allocation: the partner's id and a digest of what
 * makes the account unique — so a credit to an account Rail has no record of (an allocation
 * whose request then failed) can still be put in that partner's triage.
 */
export function allocationReference(partnerId: string, uniqueKey: string): string {
  return `${partnerId}.${createHash('sha256').update(`${partnerId}\n${uniqueKey}`).digest('hex').slice(0, 27)}`
}

/** The partner an allocation reference names, if it names one. */
export function partnerOfAllocation(reference: string | null): string | undefined {
  const match =
    reference === null
      ? null
      : /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.[0-9a-f]{27}$/.exec(reference)
  return match?.[1]
}

/** What an account's own kind decides; the rest of its row comes from the allocation and the caller. */
export type AccountFields = Pick<
  repo.NewVirtualAccount,
  'purpose' | 'reference' | 'requestHash' | 'currency' | 'purposeTag' | 'callbackUrl' | 'holder' | 'holderRef' | 'brr'
>

/** The row of a newly allocated account: a new id and tracking id, the provider's answer, who created it. */
export function newAccountRow(
  caller: Caller,
  provider: ProviderProfile,
  allocated: ProviderAccount & { providerReference: string },
  fields: AccountFields,
): repo.NewVirtualAccount {
  return {
    id: uuidv7(),
    partnerId: caller.partner.id,
    trackingId: newTrackingId(),
    provider: provider.name,
    providerChannel: PROVIDER_CHANNEL,
    providerReference: allocated.providerReference,
    bankCode: allocated.bankCode,
    accountNumber: allocated.accountNumber,
    accountName: allocated.accountName,
    creatorMetadata: creatorMetadata(caller),
    ...fields,
  }
}

/** The name on an account: the holder's, as the partner gave it, else the fallback (the partner's). */
export function holderName(holder: repo.AccountHolder | undefined, fallback: string): string {
  const given = holder?.name ?? [holder?.firstName, holder?.lastName].filter(Boolean).join(' ')
  return (given || fallback).slice(0, 100)
}

export interface PersistentAccountRequest {
  reference: string
  virtualAccountHolder?: repo.AccountHolder
  callbackUrl?: string
  purposeTag?: string
  currency?: string
}

/** Allocates a long-lived account, once per reference (same body: the account; another body: 409). */
export async function createPersistentAccount(
  deps: CollectionsDeps,
  caller: Caller,
  request: PersistentAccountRequest,
): Promise<{ account: repo.VirtualAccount; replayed: boolean }> {
  const partner = caller.partner
  const key = { reference: request.reference, requestHash: requestHash(request) }
  const stored = (db: Queryable) => () => repo.selectPersistentByReference(db, partner.id, request.reference)
  const known = await findReplay(PERSISTENT_REFERENCE, key, stored(deps.pool))
  if (known) return { account: known.replayed, replayed: true }
  const currency = request.currency ?? COLLECTION_CURRENCY
  assertCollectionCurrency(currency)
  await assertCallbackUrl(deps, partner, request.callbackUrl)
  const provider = await collectionProvider(deps.pool, partner.id)
  // Outside any transaction: a concurrent duplicate is handed the same account by the provider.
  const accountName = holderName(request.virtualAccountHolder, partner.name)
  const allocated = await allocateAtProvider(deps, provider, {
    partnerId: partner.id,
    uniqueKey: `persistent\n${request.reference}`,
    accountName,
    requestId: caller.requestId,
  })
  const row = newAccountRow(caller, provider, allocated, {
    purpose: 'persistent',
    reference: request.reference,
    requestHash: key.requestHash,
    currency,
    purposeTag: request.purposeTag ?? null,
    callbackUrl: request.callbackUrl ?? null,
    holder: request.virtualAccountHolder ?? null,
    holderRef: null,
    brr: bearsBrr(partner) ? generateBrr() : null,
  })
  const claimed = await withTransaction(deps.pool, (tx) =>
    claimReference(PERSISTENT_REFERENCE, key, () => repo.insertVirtualAccount(tx, row), stored(tx)),
  )
  return claimed.created ? { account: claimed.created, replayed: false } : { account: claimed.replayed, replayed: true }
}

/** How a persistent account takes its reference (platform/idempotency.ts); the API knows it by its tracking id. */
const PERSISTENT_REFERENCE: ReferenceKind<repo.VirtualAccount> = {
  field: 'reference',
  hashOf: (account) => account.requestHash ?? '',
  idOf: (account) => account.trackingId,
}

/** The persistent virtual account object of docs/contracts/collections-and-payouts.md §Persistent virtual accounts: exactly its fields. */
export function toPersistentAccountJson(account: repo.VirtualAccount): VirtualAccountJson {
  return {
    trackingId: account.trackingId,
    partnerId: account.partnerId,
    reference: account.reference ?? '',
    status: account.status,
    provider: account.provider,
    providerChannel: account.providerChannel,
    bankCode: account.bankCode,
    bankName: bankName(account.bankCode),
    currency: account.currency,
    virtualAccount: account.accountNumber,
    virtualAccountName: account.accountName,
    purposeTag: account.purposeTag,
    creatorMetadata: account.creatorMetadata,
    createdAt: account.createdAt.toISOString(),
    brr: account.brr,
  }
}

/**
 * The account `GET /virtual-account/{key}` answers: a persistent account by its tracking id or id;
 * by its id, also the account a payment intent collects through — what an invoice names as its
 * persistentVirtualAccountId. Another partner's, or any other: 404.
 */
export async function getAccountByKey(db: Queryable, partnerId: string, key: string): Promise<repo.VirtualAccount> {
  if (key.startsWith('trk_')) return getAccount(db, partnerId, key, ['persistent'])
  const account = await repo.selectById(db, key)
  if (!account || account.partnerId !== partnerId || account.purpose === 'fbo') throw notFound('Virtual account')
  return account
}

export async function getAccount(
  db: Queryable,
  partnerId: string,
  trackingId: string,
  purposes: repo.VirtualAccountPurpose[],
): Promise<repo.VirtualAccount> {
  const account = await repo.selectByTrackingId(db, partnerId, trackingId, purposes)
  if (!account) throw notFound('Virtual account')
  return account
}

export async function listAccounts(
  db: Queryable,
  query: {
    partnerId: string
    purpose: repo.VirtualAccountPurpose
    status?: repo.VirtualAccountStatus
    limit: number
    cursor?: string
  },
): Promise<{ accounts: repo.VirtualAccount[]; nextCursor: string | null }> {
  const rows = await readPage(db, query.cursor, (reader, before) =>
    repo.list(reader, { ...query, cursor: before, limit: pageQueryLimit(query.limit) }),
  )
  const page = toPage(rows, query.limit)
  return { accounts: page.items, nextCursor: page.nextCursor }
}

/** Archives a persistent account: it stops collecting (later credits go to triage). Archived already: 409. */
export async function archivePersistentAccount(
  deps: Pick<CollectionsDeps, 'pool' | 'clock'>,
  partnerId: string,
  trackingId: string,
): Promise<repo.VirtualAccount> {
  return withTransaction(deps.pool, async (tx) => {
    const found = await repo.selectByTrackingId(tx, partnerId, trackingId, ['persistent'])
    if (!found) throw notFound('Virtual account')
    await repo.lockById(tx, found.id)
    const archived = await archiveInTransaction(tx, deps.clock, found.id)
    if (!archived)
      throw new RailError('invalid_state', 'The virtual account is archived already', {
        trackingId,
        status: 'archived',
        currentState: 'archived',
      })
    return archived
  })
}

export const ARCHIVE_AT_PROVIDER_TASK = 'virtual_account_archive_at_provider'

/**
 * Archives an account on the caller's transaction (the caller holds the account's lock), and
 * enqueues telling the provider. Rail's own status decides where a credit goes — an archived
 * account's credits go to triage — so the provider's side may lag without moving money wrongly.
 * Undefined when the account was archived already.
 */
export async function archiveInTransaction(
  tx: Queryable,
  clock: Clock,
  accountId: string,
): Promise<repo.VirtualAccount | undefined> {
  const archived = await repo.archive(tx, accountId, clock.now())
  if (archived) await addJob(tx, ARCHIVE_AT_PROVIDER_TASK, { virtualAccountId: accountId })
  return archived
}

/** The job: tells the provider an account is archived; no usable answer throws, so it is retried. */
export async function archiveAtProvider(
  deps: Pick<CollectionsDeps, 'pool' | 'providers'>,
  virtualAccountId: string,
): Promise<void> {
  const account = await repo.selectById(deps.pool, virtualAccountId)
  if (!account) return
  const provider = await getProvider(deps.pool, account.provider)
  const answer = await (await deps.providers.adapterFor(provider)).archiveVirtualAccount(account.accountNumber)
  if (answer.outcome === 'unknown')
    throw new Error(`provider ${provider.name} gave no usable answer archiving ${account.trackingId}: ${answer.error}`)
}
