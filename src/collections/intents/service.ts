// Payment intents (docs/contracts/collections-and-payouts.md §Payment intents): one collection into its own virtual account, allocated at the
// provider during the request, optionally of an expected amount, until it expires. Invoices and
// escrows compose one (an owner) and decide what a credit to it means; a stand-alone intent
// counts what it received: paid, partially paid or overpaid.
import { randomBytes } from 'node:crypto'
import { creatorMetadata, type Caller } from '../../partners/service.ts'
import type { Clock } from '../../platform/clock.ts'
import { withTransaction, type Pool, type Queryable, type Tx } from '../../platform/db.ts'
import { fieldError, notFound } from '../../platform/errors.ts'
import { claimReference, findReplay, requestHash, type ReferenceKind } from '../../platform/idempotency.ts'
import { uuidv7 } from '../../platform/ids.ts'
import { pageQueryLimit, toPage } from '../../platform/pagination.ts'
import { readPage } from '../../platform/read-pool.ts'
import { checkoutUrl } from '../../platform/public-url.ts'
import {
  allocateAtProvider,
  archiveInTransaction,
  assertCallbackUrl,
  assertCollectionCurrency,
  bankName,
  bearsBrr,
  collectionProvider,
  COLLECTION_CURRENCY,
  holderName,
  insertVirtualAccount,
  lockFreeByIds,
  newAccountRow,
  selectById as selectAccountById,
  selectIdByTrackingId,
  type AccountHolder,
  type CollectionsDeps,
  type VirtualAccount,
} from '../virtual-accounts/service.ts'
import { generateBrr } from '../../banking/nip/brr.ts'
import type { ProviderProfile } from '../../banking/providers/service.ts'
import type { ProviderAccount } from '../../banking/providers/types.ts'
import { furthestOffsetSeconds, partnerClock } from '../../partners/sandbox-clock/service.ts'
import * as repo from './repo.ts'
import type { PaymentIntentJson } from './schemas.ts'

export type { IntentOwnerType, IntentStatus, PaymentIntent } from './repo.ts'

/** An intent expires 24 hours after creation unless the request says when. */
export const INTENT_TTL_MS_DEFAULT = 24 * 60 * 60 * 1000
/** The latest expiry a request may ask for: 90 days ahead. */
export const INTENT_TTL_MS_MAX = 90 * 24 * 60 * 60 * 1000
/** The earliest: one minute ahead, so that a payer has a chance. */
export const INTENT_TTL_MS_MIN = 60 * 1000
export const INTENT_PAGE_MAX = 100
const EXPIRY_BATCH = 500
export const EXPIRE_TASK = 'payment_intent_expire'
/** Every minute: open stand-alone intents past their expiry are expired and their accounts archived. */
export const PAYMENT_INTENTS_CRONTAB = `* * * * * ${EXPIRE_TASK}`

export interface PaymentIntentRequest {
  reference: string
  currency?: string
  amountKobo?: number
  callbackUrl?: string
  purposeTag?: string
  virtualAccountHolder?: AccountHolder
  expiresAt?: string
  merchantDisplayName?: string
  returnUrl?: string
}

/** The object that composed an intent (an invoice, an escrow) and decides what its credits mean. */
export interface IntentOwner {
  type: repo.IntentOwnerType
  id: string
}

/** An intent with the account it collects into. */
export interface IntentView {
  intent: repo.PaymentIntent
  account: VirtualAccount
}

/** The payment intent object of docs/contracts/collections-and-payouts.md §Payment intents: exactly its fields. */
export function toIntentJson({ intent, account }: IntentView): PaymentIntentJson {
  return {
    id: intent.id,
    trackingId: account.trackingId,
    partnerId: intent.partnerId,
    reference: intent.reference,
    status: intent.status,
    direction: { type: 'inbound', channel: account.providerChannel },
    provider: account.provider,
    providerChannel: account.providerChannel,
    providerReference: account.providerReference,
    amountKobo: intent.amountKobo,
    currency: intent.currency,
    virtualAccount: account.accountNumber,
    virtualAccountName: account.accountName,
    virtualAccountBank: bankName(account.bankCode),
    purposeTag: intent.purposeTag,
    creatorMetadata: intent.creatorMetadata,
    expiresAt: intent.expiresAt.toISOString(),
    createdAt: intent.createdAt.toISOString(),
    checkoutToken: intent.checkoutToken,
    checkoutUrl: checkoutUrl(intent.checkoutToken),
    merchantDisplayName: intent.merchantDisplayName,
    returnUrl: intent.returnUrl,
  }
}

/** Checks what the schema cannot (currency, expiry window, callback URL); nothing is written before. */
async function assertCreatable(
  deps: CollectionsDeps,
  caller: Caller,
  request: PaymentIntentRequest,
  now: Date,
): Promise<void> {
  assertCollectionCurrency(request.currency ?? COLLECTION_CURRENCY)
  if (request.expiresAt !== undefined) {
    const aheadMs = new Date(request.expiresAt).getTime() - now.getTime()
    if (!(aheadMs >= INTENT_TTL_MS_MIN)) throw fieldError('expiresAt', 'must be at least one minute in the future')
    if (aheadMs > INTENT_TTL_MS_MAX) throw fieldError('expiresAt', 'must be at most 90 days in the future')
  }
  await assertCallbackUrl(deps, caller.partner, request.callbackUrl)
}

/**
 * Creates an intent and allocates its account at the provider during the request, once per
 * reference (same body: the intent, replayed; another body: 409; a concurrent duplicate waits
 * and replays). No usable provider answer: 502, nothing recorded.
 */
export async function createPaymentIntent(
  deps: CollectionsDeps,
  caller: Caller,
  request: PaymentIntentRequest,
): Promise<IntentView & { replayed: boolean }> {
  const known = await findReplay(
    INTENT_REFERENCE,
    { reference: request.reference, requestHash: requestHash(request) },
    storedIntent(deps.pool, caller.partner.id, request.reference),
  )
  if (known) return { ...known.replayed, replayed: true }
  // The partner's time (its sandbox test clock, if moved) judges the expiry it asks for and sets the default.
  const now = (await partnerClock(deps.pool, deps.clock, caller.partner)).now()
  await assertCreatable(deps, caller, request, now)
  const allocated = await allocateIntentAccount(deps, caller, request)
  return withTransaction(deps.pool, (tx) => createIntentInTransaction(tx, caller, request, allocated, now))
}

/** An intent's account, allocated at the provider outside any transaction (see allocateAtProvider). */
export interface IntentAccount {
  provider: ProviderProfile
  account: ProviderAccount & { providerReference: string }
}

/** Allocates the account an intent with this reference collects into (the same one every time). */
export async function allocateIntentAccount(
  deps: CollectionsDeps,
  caller: Caller,
  request: PaymentIntentRequest,
): Promise<IntentAccount> {
  const provider = await collectionProvider(deps.pool, caller.partner.id)
  const accountName = holderName(request.virtualAccountHolder, request.merchantDisplayName ?? caller.partner.name)
  const account = await allocateAtProvider(deps, provider, {
    partnerId: caller.partner.id,
    uniqueKey: `payment-intent\n${request.reference}`,
    accountName,
    requestId: caller.requestId,
  })
  return { provider, account }
}

/**
 * Records an intent and its allocated account on the caller's transaction — for an owner
 * composing an intent (an invoice that publishes, an escrow that needs funding), so the intent
 * commits or rolls back with the owner. The caller allocated the account (allocateIntentAccount)
 * before opening the transaction. `now` is the partner's time, which a default expiry counts from.
 * The intent's account claims its reference (platform/idempotency.ts): the provider allocates one
 * NUBAN per reference, so a concurrent duplicate's account row conflicts with the first's, waits
 * for it to commit, and the first's intent is answered.
 */
export async function createIntentInTransaction(
  tx: Tx,
  caller: Caller,
  request: PaymentIntentRequest,
  { provider, account: allocated }: IntentAccount,
  now: Date,
  owner?: IntentOwner,
): Promise<IntentView & { replayed: boolean }> {
  const partner = caller.partner
  const key = { reference: request.reference, requestHash: requestHash(owner ? { ...request, owner } : request) }
  const currency = request.currency ?? COLLECTION_CURRENCY
  const claimed = await claimReference(
    INTENT_REFERENCE,
    key,
    async () => {
      const account = await insertVirtualAccount(
        tx,
        newAccountRow(caller, provider, allocated, {
          purpose: 'payment_intent',
          reference: request.reference,
          requestHash: null,
          currency,
          purposeTag: request.purposeTag ?? null,
          callbackUrl: request.callbackUrl ?? null,
          holder: request.virtualAccountHolder ?? null,
          holderRef: null,
          brr: bearsBrr(partner) ? generateBrr() : null,
        }),
      )
      return (
        account && {
          intent: await repo.insertIntent(tx, newIntent(caller, request, key.requestHash, account.id, now, owner)),
          account,
        }
      )
    },
    storedIntent(tx, partner.id, request.reference),
  )
  return claimed.created ? { ...claimed.created, replayed: false } : { ...claimed.replayed, replayed: true }
}

/** The intent row of a request whose account was just recorded. */
function newIntent(
  caller: Caller,
  request: PaymentIntentRequest,
  hash: string,
  virtualAccountId: string,
  now: Date,
  owner?: IntentOwner,
): repo.NewIntent {
  const partner = caller.partner
  return {
    id: uuidv7(),
    partnerId: partner.id,
    reference: request.reference,
    requestHash: hash,
    virtualAccountId,
    amountKobo: request.amountKobo ?? null,
    currency: request.currency ?? COLLECTION_CURRENCY,
    expiresAt: request.expiresAt ? new Date(request.expiresAt) : new Date(now.getTime() + INTENT_TTL_MS_DEFAULT),
    checkoutToken: newCheckoutToken(),
    merchantDisplayName: request.merchantDisplayName ?? partner.name.slice(0, 100),
    returnUrl: request.returnUrl ?? null,
    callbackUrl: request.callbackUrl ?? null,
    purposeTag: request.purposeTag ?? null,
    holder: request.virtualAccountHolder ?? null,
    ownerType: owner?.type ?? null,
    ownerId: owner?.id ?? null,
    creatorMetadata: creatorMetadata(caller),
  }
}

/** How a payment intent takes its reference (platform/idempotency.ts). */
const INTENT_REFERENCE: ReferenceKind<IntentView> = {
  field: 'reference',
  hashOf: (view) => view.intent.requestHash,
  idOf: (view) => view.intent.id,
}

/** The intent stored under a reference, with its account. */
function storedIntent(db: Queryable, partnerId: string, reference: string): () => Promise<IntentView | undefined> {
  return async () => {
    const intent = await repo.selectByReference(db, partnerId, reference)
    return intent && { intent, account: (await selectAccountById(db, intent.virtualAccountId))! }
  }
}

/** 32 random bytes, base64url: unguessable, for the hosted checkout page. */
function newCheckoutToken(): string {
  return `cht_${randomBytes(32).toString('base64url')}`
}

export async function getIntent(db: Queryable, partnerId: string, key: string): Promise<IntentView> {
  const intent = await repo.selectByKey(db, partnerId, key, (await selectIdByTrackingId(db, partnerId, key)) ?? null)
  if (!intent) throw notFound('Payment intent')
  return { intent, account: (await selectAccountById(db, intent.virtualAccountId))! }
}

/** The intent a hosted checkout page shows (the token is its only credential). */
export async function getIntentByCheckoutToken(db: Queryable, token: string): Promise<IntentView | undefined> {
  const intent = await repo.selectByCheckoutToken(db, token)
  return intent && { intent, account: (await selectAccountById(db, intent.virtualAccountId))! }
}

export async function getIntentById(db: Queryable, id: string): Promise<IntentView | undefined> {
  const intent = await repo.selectById(db, id)
  return intent && { intent, account: (await selectAccountById(db, intent.virtualAccountId))! }
}

export async function listIntents(
  db: Queryable,
  query: { partnerId: string; status?: repo.IntentStatus; limit: number; cursor?: string },
): Promise<{ intents: IntentView[]; nextCursor: string | null }> {
  return readPage(db, query.cursor, async (reader, before) => {
    const page = toPage(
      await repo.list(reader, { ...query, cursor: before, limit: pageQueryLimit(query.limit) }),
      query.limit,
    )
    const views = await Promise.all(
      page.items.map(async (intent) => ({
        intent,
        account: (await selectAccountById(reader, intent.virtualAccountId))!,
      })),
    )
    return { intents: views, nextCursor: page.nextCursor }
  })
}

/** The intent an account collects for, locked (the caller holds the account's lock). */
export async function lockIntentOfAccount(
  tx: Queryable,
  virtualAccountId: string,
): Promise<repo.PaymentIntent | undefined> {
  return repo.lockByAccount(tx, virtualAccountId)
}

/**
 * What a credit does to an intent: the amount received grows, and the status follows — with no
 * expected amount any credit pays it; with one, below is partially paid, equal is paid, above is
 * overpaid. Pure: the intent as the credit leaves it.
 */
export function creditedIntent(intent: repo.PaymentIntent, amountKobo: number, at: Date): repo.PaymentIntent {
  const receivedKobo = intent.amountReceivedKobo + amountKobo
  const status: repo.IntentStatus =
    intent.amountKobo === null
      ? 'paid'
      : receivedKobo < intent.amountKobo
        ? 'partially_paid'
        : receivedKobo === intent.amountKobo
          ? 'paid'
          : 'overpaid'
  const paid = status === 'paid' || status === 'overpaid'
  return {
    ...intent,
    amountReceivedKobo: receivedKobo,
    status,
    statusChangedAt: status === intent.status ? intent.statusChangedAt : at,
    paidAt: intent.paidAt ?? (paid ? at : null),
  }
}

/**
 * Records a credit to an intent (the caller holds the intent's lock). `at` is the injected clock's
 * time, as a batch of credits stamps it (creditedIntent): the two paths record the same times.
 */
export async function recordIntentCredit(
  tx: Queryable,
  intent: repo.PaymentIntent,
  amountKobo: number,
  at: Date,
): Promise<repo.PaymentIntent> {
  return repo.recordReceived(tx, intent.id, amountKobo, creditedIntent(intent, amountKobo, at).status, at)
}

/** Who composed the payment intent of a virtual account (an invoice, an escrow), if anyone. */
export async function intentOwnerTypeOfAccount(
  db: Queryable,
  virtualAccountId: string,
): Promise<repo.IntentOwnerType | null> {
  return repo.selectOwnerTypeByAccount(db, virtualAccountId)
}

/** The virtual account of one of the partner's payment intents; undefined for another's or none. */
export async function accountOfIntent(
  db: Queryable,
  partnerId: string,
  paymentIntentId: string,
): Promise<string | undefined> {
  return repo.selectAccountIdOfIntent(db, partnerId, paymentIntentId)
}

/** The intents of these accounts, locked in id order; by account id. */
export async function lockIntentsOfAccounts(
  tx: Queryable,
  virtualAccountIds: string[],
): Promise<Map<string, repo.PaymentIntent>> {
  const intents = await repo.lockByAccounts(tx, virtualAccountIds)
  return new Map(intents.map((intent) => [intent.virtualAccountId, intent]))
}

/** Saves an intent as credits left it (creditedIntent), on the transaction that holds its lock. */
export async function saveCreditedIntent(tx: Queryable, intent: repo.PaymentIntent): Promise<void> {
  await repo.saveReceived(tx, intent)
}

/**
 * The expiry sweep: expires intents due by their partner's time, and archives their accounts, in
 * batches; answers how many. Each batch locks the due intents' accounts first, as every path does
 * (an account, then what it collects for), skipping any a credit is applying to right now: those
 * wait for the next run. A full batch of candidates that expired something is followed by another.
 */
export async function expireIntents(pool: Pool, clock: Clock): Promise<number> {
  let expired = 0
  for (;;) {
    const batch = await withTransaction(pool, async (tx) => {
      const now = clock.now()
      const dueAccountIds = await repo.selectDueAccounts(tx, now, await furthestOffsetSeconds(tx), EXPIRY_BATCH)
      const due = await repo.expireOfAccounts(tx, await lockFreeByIds(tx, dueAccountIds), now)
      for (const { virtualAccountId } of due) await archiveInTransaction(tx, clock, virtualAccountId)
      return { candidates: dueAccountIds.length, expired: due.length }
    })
    expired += batch.expired
    if (batch.candidates < EXPIRY_BATCH || batch.expired === 0) return expired
  }
}
