// Inbound credits (seed 001): money paid into Rail's virtual accounts. A provider announces each
// credit by a signed webhook; Rail stores the notice first (once per provider session id) with
// the job that applies it, and answers. The job matches the account to its owner, posts the
// ledger transfer (provider settlement → the partner's collections account) and emits the
// callback, in one transaction. Credits nobody can take — an archived account, an expired
// intent, an owner that is closed — go to the partner's suspense account as unmatched, for triage:
// a refund (paid back to the sender through the outbound pipeline) or an assignment to another
// of the partner's accounts, each once.
import { recordEvent, type NewEvent } from '../events/service.ts'
import { createTransfers, derivedId, ensurePartnerAccount, type TransferInput } from '../ledger/service.ts'
import { findBank } from '../nip/banks.ts'
import { generateBrr } from '../nip/brr.ts'
import { isValidNuban } from '../nip/nuban.ts'
import type { OutboundDeps } from '../outbound-transfers/service.ts'
import { refundCreditInTransaction, type Refund, type RefundsDeps } from '../refunds/service.ts'
import { getPartner, type Partner } from '../partners/service.ts'
import { lockIntentOfAccount, recordIntentCredit, type IntentOwnerType, type PaymentIntent } from '../payment-intents/service.ts'
import { withTransaction, type Pool, type Queryable, type Tx } from '../platform/db.ts'
import { fieldError, notFound, onNotFound, RailError } from '../platform/errors.ts'
import { uuidv7 } from '../platform/ids.ts'
import { addJob } from '../platform/jobs.ts'
import { pageQueryLimit, toPage } from '../platform/pagination.ts'
import { claimSignature, forgetSignature, storeSignatureResponse } from '../platform/signed-requests.ts'
import { getProvider } from '../providers/service.ts'
import type { ProviderCredit } from '../providers/types.ts'
import { bankName, getAccount, lockById, lockByNumber, partnerOfAllocation, selectByBrr as selectAccountByBrr, selectById as selectAccountById, type CollectionsDeps, type VirtualAccount } from '../virtual-accounts/service.ts'
import { findWallet, partnerWalletOfAccountNumber, walletOfAccountNumber, type Wallet } from '../wallets/service.ts'
import { creditUnmatchedEvent, unmatchedAtAccount, walletFundedEvent } from './events.ts'
import { accountUnmatchedReason, walletUnmatchedReason } from './matching.ts'
import * as repo from './repo.ts'

export type { InboundCredit } from './repo.ts'

export const APPLY_TASK = 'inbound_credit_apply'
export const SWEEP_TASK = 'inbound_credit_sweep'
/** Every minute: credits stored but not applied after a grace period get their job again. */
export const INBOUND_CREDITS_CRONTAB = `* * * * * ${SWEEP_TASK}`
const STRANDED_AFTER_S = 60
const SWEEP_BATCH = 1_000
export const TRIAGE_PAGE_MAX = 100
/** How many of an account's latest credits a BRR lookup shows. */
const ACCOUNT_CREDITS_SHOWN = 20

/** A credit to an intent that an owner (an invoice, an escrow) composed: the owner decides what it means. */
export interface OwnedCredit {
  creditId: string
  partnerId: string
  ownerId: string
  intentId: string
  amountKobo: number
  currency: string
  /** The partner's collections account, which the credit has just reached. */
  collectionsAccountId: string
}

/**
 * What an owner does with a credit, on the credit's transaction: how much of it the owner took —
 * all of it (moving it on from the collections account if it must), none (it is paid, cancelled,
 * closed: the credit goes to triage), or part (an overpayment: the excess goes to triage).
 * `movedOnKobo`: how much of what it took the owner moved out of collections itself (an escrow's
 * holding account); the rest stays in collections and is settled (default 0).
 */
export type CreditOwnerHandler = (tx: Tx, credit: OwnedCredit) => Promise<{ takenKobo: number; movedOnKobo?: number }>
export type CreditOwners = Partial<Record<IntentOwnerType, CreditOwnerHandler>>

export interface InboundDeps extends CollectionsDeps {
  outbound: OutboundDeps
  owners: CreditOwners
  /** The refunds core, through which triage refunds an unmatched credit. */
  refunds: RefundsDeps
  /** Settlement of what credits leave in collections (src/settlement); without it, the money stays there. */
  settlement?: CollectedHandler
}

/** Money a credit left in the partner's collections account: what settlement moves on. */
export interface CollectedCredit {
  creditId: string
  partnerId: string
  currency: string
  amountKobo: number
  collectionsAccountId: string
}

/**
 * Settlement's seam, on the credit's transaction: the ledger transfers that settle these credits
 * now (collections → float), to be posted with or after the credits' own; credits settled later
 * (to a bank account, by cycle) are recorded for their cycle and give no transfer.
 */
export type CollectedHandler = (tx: Tx, credits: readonly CollectedCredit[]) => Promise<TransferInput[]>

/** Stores a credit the provider announced (or a requery found) with its apply job; once per session id. */
export async function recordCredit(pool: Queryable, provider: string, credit: ProviderCredit): Promise<{ creditId: string; duplicate: boolean }> {
  const id = uuidv7()
  // A provider's credit has exactly the fields of a stored one, less Rail's id and the provider's name.
  const inserted = await repo.insertCreditWithJob(pool, { id, provider, ...credit }, APPLY_TASK)
  if (inserted) return { creditId: inserted, duplicate: false }
  return { creditId: (await repo.selectBySession(pool, provider, credit.sessionId))!.id, duplicate: true }
}

/** The apply job: matches a stored credit to its owner (matching.ts: a virtual account, else a wallet) and applies it, once. */
export async function applyCredit(deps: InboundDeps, creditId: string): Promise<void> {
  await withTransaction(deps.pool, async (tx) => {
    const credit = await repo.lockCredit(tx, creditId)
    if (!credit || credit.status !== 'received') return
    // The account first: every path that changes an account or its owner locks it first.
    const account = await lockByNumber(tx, credit.provider, credit.accountNumber)
    if (account) return applyToAccount(deps, tx, credit, account)
    const wallet = await walletOfAccountNumber(tx, credit.provider, credit.accountNumber)
    if (wallet) return applyToWallet(tx, credit, wallet)
    await settleUnknownAccount(tx, credit)
  })
}

/**
 * Wallet funding by transfer (seed 000): the customer paid into the wallet's account number. The
 * wallet is credited (provider settlement → the wallet's ledger account, one posted transfer, so
 * available = booked) and the partner hears `wallet.funded` — whatever the provider's
 * merchantCredit capability says. Once: the credit row is locked and settled from `received`.
 */
async function applyToWallet(tx: Tx, credit: repo.InboundCredit, wallet: Wallet): Promise<void> {
  const partnerId = wallet.partnerId
  const settlement = await ensurePartnerAccount(tx, partnerId, credit.currency, 'provider_settlement')
  const reason = walletUnmatchedReason(credit, wallet)
  if (reason !== null) {
    await post(tx, credit, 'collect', settlement, await ensurePartnerAccount(tx, partnerId, credit.currency, 'suspense'), 'unmatched_credit')
    const unmatched = await repo.settleReceived(tx, credit.id, { status: 'unmatched', partnerId, virtualAccountId: null, brr: null, unmatchedReason: reason, walletId: wallet.id })
    await recordEvent(tx, creditUnmatchedEvent(unmatched, { walletId: wallet.id }))
    return
  }
  await post(tx, credit, 'fund_wallet', settlement, wallet.ledgerAccountId, WALLET_FUNDING_CODE)
  const applied = await repo.settleReceived(tx, credit.id, { status: 'applied', partnerId, virtualAccountId: null, brr: null, unmatchedReason: null, walletId: wallet.id })
  await recordEvent(tx, walletFundedEvent(applied, wallet))
}

/** The ledger code of a wallet funded by its customer's transfer (a merchant's credit is `wallet_credit`). */
export const WALLET_FUNDING_CODE = 'wallet_funding'

/**
 * A credit to an account Rail has no record of. When the provider's allocation reference names a
 * partner (an allocation whose request failed), the credit is that partner's: suspense, and
 * triage. Otherwise there is no partner to hold it for: it stays `unattributed`, no money moves,
 * and operators see it in the table (the provider holds the money until it is returned).
 */
async function settleUnknownAccount(tx: Tx, credit: repo.InboundCredit): Promise<void> {
  const partnerId = await knownPartner(tx, partnerOfAllocation(credit.accountReference))
  if (!partnerId) {
    await repo.settleReceived(tx, credit.id, { status: 'unattributed', partnerId: null, virtualAccountId: null, brr: null, unmatchedReason: 'unknown_account' })
    return
  }
  const settlement = await ensurePartnerAccount(tx, partnerId, credit.currency, 'provider_settlement')
  await post(tx, credit, 'collect', settlement, await ensurePartnerAccount(tx, partnerId, credit.currency, 'suspense'), 'unmatched_credit')
  const unmatched = await repo.settleReceived(tx, credit.id, { status: 'unmatched', partnerId, virtualAccountId: null, brr: null, unmatchedReason: 'unknown_account' })
  await recordEvent(tx, creditUnmatchedEvent(unmatched))
}

async function knownPartner(db: Queryable, partnerId: string | undefined): Promise<string | undefined> {
  return partnerId && (await getPartner(db, partnerId)) ? partnerId : undefined
}

export async function applyToAccount(deps: InboundDeps, tx: Tx, credit: repo.InboundCredit, account: VirtualAccount): Promise<void> {
  const partnerId = account.partnerId
  const settlement = await ensurePartnerAccount(tx, partnerId, credit.currency, 'provider_settlement')
  const brr = account.brr ? generateBrr() : null
  const settle = (status: 'applied' | 'unmatched', unmatchedReason: string | null) =>
    repo.settleReceived(tx, credit.id, { status, partnerId, virtualAccountId: account.id, brr, unmatchedReason })
  const intent = account.purpose === 'payment_intent' ? await lockIntentOfAccount(tx, account.id) : undefined
  // In triage: the partner hears credit.unmatched, where the account (or its intent) says, in this transaction.
  const unmatchedPlace = unmatchedAtAccount(account, intent)
  const toTriage = async (reason: string) => recordEvent(tx, creditUnmatchedEvent(await settle('unmatched', reason), unmatchedPlace))
  const reason = accountUnmatchedReason(credit, account, intent)
  if (reason !== null) {
    await post(tx, credit, 'collect', settlement, await ensurePartnerAccount(tx, partnerId, credit.currency, 'suspense'), 'unmatched_credit')
    await toTriage(reason)
    return
  }
  const collections = await ensurePartnerAccount(tx, partnerId, credit.currency, 'collections')
  await post(tx, credit, 'collect', settlement, collections, 'collection_credit')
  let updatedIntent: PaymentIntent | undefined
  // What of the credit stays in collections, for settlement: all of it unless an owner moves it on.
  let keptKobo = credit.amountKobo
  if (intent?.ownerType) {
    const handler = deps.owners[intent.ownerType]
    if (!handler) throw new Error(`no credit handler for ${intent.ownerType} owners`)
    const { takenKobo, movedOnKobo = 0 } = await handler(tx, { creditId: credit.id, partnerId, ownerId: intent.ownerId!, intentId: intent.id, amountKobo: credit.amountKobo, currency: credit.currency, collectionsAccountId: collections })
    keptKobo = takenKobo - movedOnKobo
    if (takenKobo === 0) {
      await post(tx, credit, 'unmatch', collections, await ensurePartnerAccount(tx, partnerId, credit.currency, 'suspense'), 'unmatched_credit')
      await toTriage(`${intent.ownerType}_closed`)
      return
    }
    if (takenKobo < credit.amountKobo) {
      const excess = await recordExcess(tx, credit, account, credit.amountKobo - takenKobo, collections, `${intent.ownerType}_overpaid`)
      await recordEvent(tx, creditUnmatchedEvent(excess, { ...unmatchedPlace, excessOf: credit }))
    }
  }
  await settleCollected(deps, tx, { creditId: credit.id, partnerId, currency: credit.currency, amountKobo: keptKobo, collectionsAccountId: collections })
  if (intent) updatedIntent = await recordIntentCredit(tx, intent, credit.amountKobo)
  const applied = await settle('applied', null)
  await emitCreditEvent(tx, applied, account, updatedIntent)
}

/**
 * The part of a credit its owner did not take (an overpayment): a triage item of its own — a
 * credit row for the excess, unmatched — and the excess moves from collections to suspense.
 */
async function recordExcess(tx: Tx, credit: repo.InboundCredit, account: VirtualAccount, excessKobo: number, collectionsAccountId: string, reason: string): Promise<repo.InboundCredit> {
  const excess = await repo.insertExcess(tx, { id: uuidv7(), of: credit, amountKobo: excessKobo, partnerId: account.partnerId, virtualAccountId: account.id, unmatchedReason: reason })
  await post(tx, excess, 'collect', collectionsAccountId, await ensurePartnerAccount(tx, account.partnerId, credit.currency, 'suspense'), 'unmatched_credit')
  return excess
}

/**
 * Hands what a credit left in collections to settlement, on the credit's transaction: in float
 * mode it moves on to the float here (a ledger transfer whose id derives from the credit's, so a
 * retry finds it); in bank mode it waits for its cycle. A ledger call after the credit's own, as
 * an owner decides first what stays: it locks the float after collections, so a payout locking
 * the float at the same moment can deadlock with it — PostgreSQL breaks that, and the loser's
 * transaction runs again (withTransaction). The batched path posts it in its one ledger call.
 */
async function settleCollected(deps: InboundDeps, tx: Tx, collected: CollectedCredit): Promise<void> {
  if (!deps.settlement || collected.amountKobo <= 0) return
  const transfers = await deps.settlement(tx, [collected])
  const results = await createTransfers(tx, transfers)
  const refused = results.find((result) => result.result !== 'ok' && result.result !== 'exists')
  if (refused) throw new Error(`inbound credit ${collected.creditId} settlement ${refused.id}: ${refused.result}`)
}

/** One ledger transfer of a credit, with an id derived from the credit's, so a retry finds it. */
async function post(tx: Queryable, credit: repo.InboundCredit, purpose: string, debitAccountId: string, creditAccountId: string, code: string): Promise<void> {
  const transfer: TransferInput = {
    id: derivedId(credit.id, purpose),
    debitAccountId,
    creditAccountId,
    amountKobo: credit.amountKobo,
    currency: credit.currency,
    code,
    sourceType: 'inbound_credit',
    sourceId: credit.id,
  }
  const [result] = await createTransfers(tx, [transfer])
  if (result!.result !== 'ok') throw new Error(`inbound credit ${credit.id} ${purpose}: ${result!.result}`)
}

/** credit.confirmed for intents and persistent accounts; fbo.funding (no balance) for FBO accounts. */
async function emitCreditEvent(tx: Queryable, credit: repo.InboundCredit, account: VirtualAccount, intent: PaymentIntent | undefined): Promise<void> {
  await recordEvent(tx, creditEvent(credit, account, intent))
}

/** The event of an applied credit (`intent`: the intent as the credit left it). */
export function creditEvent(credit: repo.InboundCredit, account: VirtualAccount, intent: PaymentIntent | undefined): NewEvent {
  const common = {
    creditId: credit.id,
    trackingId: account.trackingId,
    virtualAccount: account.accountNumber,
    bankCode: account.bankCode,
    amountKobo: credit.amountKobo,
    currency: credit.currency,
    sessionId: credit.sessionId,
    creditedAt: credit.creditedAt.toISOString(),
  }
  if (account.purpose === 'fbo') {
    return {
      partnerId: account.partnerId,
      type: 'fbo.funding',
      objectType: 'fbo_account',
      objectId: account.id,
      data: { ...common, holderRef: account.holderRef, purposeTag: account.purposeTag },
      callbackUrl: account.callbackUrl,
    }
  }
  return {
    partnerId: account.partnerId,
    type: 'credit.confirmed',
    objectType: intent ? 'payment_intent' : 'virtual_account',
    objectId: intent?.id ?? account.id,
    data: {
      ...common,
      objectType: intent ? (intent.ownerType ?? 'payment_intent') : 'virtual_account',
      reference: intent?.reference ?? account.reference,
      purposeTag: account.purposeTag,
      brr: credit.brr,
      payer: { name: credit.payerName, accountNumber: credit.payerAccountNumber, bankCode: credit.payerBankCode },
      narration: credit.narration,
      paymentIntent: intent
        ? { id: intent.id, reference: intent.reference, status: intent.status, amountKobo: intent.amountKobo, amountReceivedKobo: intent.amountReceivedKobo, ownerType: intent.ownerType, ownerId: intent.ownerId }
        : null,
    },
    callbackUrl: intent?.callbackUrl ?? account.callbackUrl,
  }
}

/** The sweep: credits stored but not applied after a grace period get their apply job again. */
export async function sweepStrandedCredits(pool: Pool): Promise<number> {
  const stranded = await repo.selectStranded(pool, STRANDED_AFTER_S, SWEEP_BATCH)
  for (const creditId of stranded) await addJob(pool, APPLY_TASK, { creditId }, { jobKey: `inbound_credit:${creditId}` })
  return stranded.length
}

// ---- requery for missed credits --------------------------------------------------------------

/**
 * Asks the provider for every credit of one of the caller's accounts and applies, once each,
 * those Rail has not seen (a lost webhook). Answers what was found and what was new.
 */
export async function requeryAccount(deps: InboundDeps, partnerId: string, trackingId: string) {
  const account = await getAccount(deps.pool, partnerId, trackingId, ['payment_intent', 'persistent', 'fbo'])
  return { trackingId: account.trackingId, virtualAccount: account.accountNumber, ...(await requeryCredits(deps, account.provider, account.accountNumber)) }
}

/** The same for one of the caller's wallets (wallet funding by transfer): credits to its account number Rail has not seen. */
export async function requeryWallet(deps: InboundDeps, partnerId: string, walletId: string) {
  const wallet = await findWallet(deps.pool, partnerId, walletId)
  return { walletId: wallet.id, accountNumber: wallet.accountNumber, ...(await requeryCredits(deps, wallet.provider, wallet.accountNumber)) }
}

/**
 * Lists the credits the provider has for one account number, records those Rail has not seen
 * (once each: unique on the provider's session id, so a webhook racing the requery records
 * nothing twice) and applies each through the one apply path.
 */
async function requeryCredits(deps: InboundDeps, providerName: string, accountNumber: string) {
  const provider = await getProvider(deps.pool, providerName)
  const listed = await deps.providers.adapterFor(provider).listCredits(accountNumber)
  if (listed.outcome !== 'successful') throw new RailError('provider_unavailable', `Provider ${provider.name} did not answer the requery; try again`)
  const ofAccount = listed.value.filter((credit) => credit.accountNumber === accountNumber)
  const recorded: string[] = []
  for (const credit of ofAccount) {
    const { creditId, duplicate } = await recordCredit(deps.pool, provider.name, credit)
    if (!duplicate) recorded.push(creditId)
    // Applied here rather than by the job, so the answer shows the result; the job then finds it done.
    await applyCredit(deps, creditId)
  }
  const credits = await Promise.all(ofAccount.map(async (credit) => (await repo.selectBySession(deps.pool, provider.name, credit.sessionId))!))
  return { creditsFound: ofAccount.length, creditsRecorded: recorded.length, credits: credits.map(toCreditJson) }
}

// ---- sandbox -------------------------------------------------------------------------------

export interface SimulatedCredit {
  virtualAccount: string
  amountKobo: number
  payerName?: string
  payerAccountNumber?: string
  payerBankCode?: string
}

export type SimulatedCreditAnswer = Awaited<ReturnType<typeof payInto>>

/**
 * Sandbox: the bank receives a real credit into one of the caller's accounts and announces it to
 * Rail. The request has no reference, so its signature is its key: the same signed request again
 * (a replay within the signature's window, or an identical retry) pays nothing and answers what
 * the first one did (`replayed`); while the first is still at the bank, 409 request_in_progress.
 */
export async function simulateInboundCredit(deps: InboundDeps, partner: Partner, request: SimulatedCredit, signature: string): Promise<SimulatedCreditAnswer & { replayed: boolean }> {
  if (request.payerBankCode !== undefined && !findBank(request.payerBankCode)) throw fieldError('payerBankCode', 'is not a bank code of a Nigerian bank')
  if (request.payerAccountNumber !== undefined && request.payerBankCode !== undefined && !isValidNuban(request.payerBankCode, request.payerAccountNumber)) {
    throw fieldError('payerAccountNumber', 'is not a valid NUBAN at that bank')
  }
  const account = await simulationTarget(deps.pool, partner.id, request.virtualAccount)
  const claim = await claimSignature(deps.pool, partner.id, signature)
  if (claim.kind === 'seen') {
    if (claim.response === null) throw new RailError('request_in_progress', 'The same signed request is still being worked; retry for its answer', undefined, { retryAfterS: 1 })
    return { ...(claim.response as SimulatedCreditAnswer), replayed: true }
  }
  let answer: SimulatedCreditAnswer
  try {
    answer = await payInto(deps, account, request)
  } catch (error) {
    // Forgotten only when nothing can have been paid in — the bank refused, or was never reached —
    // so that the same request may be tried again. When the bank's answer is unknown the credit
    // may have been made: the signature stays taken (a retry answers request_in_progress, and the
    // credit, if made, arrives by the bank's notice); a new payment is a newly signed request.
    if (!isOutcomeUnknown(error)) await forgetSignature(deps.pool, partner.id, signature)
    throw error
  }
  await storeSignatureResponse(deps.pool, partner.id, signature, answer)
  return { ...answer, replayed: false }
}

/** Where a simulated credit is paid: one of the partner's virtual accounts, else one of its wallets; anyone else's is not found. */
interface SimulationTarget {
  provider: string
  accountNumber: string
  trackingId: string | null
  walletId: string | null
}

async function simulationTarget(pool: Pool, partnerId: string, accountNumber: string): Promise<SimulationTarget> {
  const found = await pool.query<{ id: string }>(`SELECT id FROM virtual_accounts WHERE partner_id = $1 AND account_number = $2`, [partnerId, accountNumber])
  const account = found.rows[0] && (await selectAccountById(pool, found.rows[0].id))
  if (account) return { provider: account.provider, accountNumber: account.accountNumber, trackingId: account.trackingId, walletId: null }
  const wallet = await partnerWalletOfAccountNumber(pool, partnerId, accountNumber)
  if (wallet) return { provider: wallet.provider, accountNumber: wallet.accountNumber, trackingId: null, walletId: wallet.id }
  throw new RailError('not_found', 'Virtual account or wallet not found')
}

function isOutcomeUnknown(error: unknown): boolean {
  return error instanceof RailError && error.details?.outcome === 'unknown'
}

async function payInto(deps: InboundDeps, account: SimulationTarget, request: SimulatedCredit) {
  const provider = await getProvider(deps.pool, account.provider)
  const paid = await deps.providers.adapterFor(provider).simulateInboundCredit({
    accountNumber: account.accountNumber,
    amountKobo: request.amountKobo,
    payerName: request.payerName,
    payerAccountNumber: request.payerAccountNumber,
    payerBankCode: request.payerBankCode,
  })
  if (paid.outcome === 'unknown') {
    throw new RailError('provider_unavailable', `The sandbox bank's answer was lost (${paid.error}); the credit may have been made and would arrive by its notice`, { outcome: 'unknown' })
  }
  if (paid.outcome !== 'successful') throw new RailError('provider_unavailable', `The sandbox bank did not take the credit: ${paid.responseCode}`)
  return {
    virtualAccount: account.accountNumber,
    trackingId: account.trackingId,
    walletId: account.walletId,
    amountKobo: request.amountKobo,
    sessionId: paid.value.sessionId,
    notified: paid.value.notified,
    message: paid.value.notified
      ? 'The sandbox bank received the credit and is announcing it to Rail; the callback follows'
      : `The sandbox bank received the credit but lost its announcement (magic amount); requery the ${account.walletId ? 'wallet' : 'account'} to find it`,
  }
}

// ---- triage ----------------------------------------------------------------------------------

export async function listTriage(pool: Pool, query: { partnerId: string; status?: repo.CreditStatus; limit: number; cursor?: string }) {
  const page = toPage(await repo.listTriage(pool, { ...query, limit: pageQueryLimit(query.limit) }), query.limit)
  return { data: await Promise.all(page.items.map((credit) => toTriageJson(pool, credit))), nextCursor: page.nextCursor }
}

export async function getTriageItem(pool: Pool, partnerId: string, id: string) {
  const credit = await repo.selectCredit(pool, partnerId, id)
  if (!credit || credit.unmatchedReason === null) throw notFound('Unmatched credit')
  return toTriageJson(pool, credit)
}

export type Resolution = { action: 'refund' } | { action: 'assign'; target: string | { trackingId: string } }

/** Settles an unmatched credit once: refunded to its sender, or assigned to another of the caller's accounts. */
export async function resolveUnmatched(deps: InboundDeps, caller: { partner: Partner; credentialId: string; requestId?: string }, id: string, resolution: Resolution) {
  const partnerId = caller.partner.id
  const resolved = await withTransaction(deps.pool, async (tx) => {
    const found = await repo.selectCredit(tx, partnerId, id)
    if (!found || found.unmatchedReason === null) throw notFound('Unmatched credit')
    if (resolution.action === 'assign') {
      // The target account's lock, then the credit's. (The apply job locks a credit before its
      // account, but only a received one; triage locks only unmatched ones: no cycle.)
      const trackingId = typeof resolution.target === 'string' ? resolution.target : resolution.target.trackingId
      const target = await getAccount(tx, partnerId, trackingId, ['payment_intent', 'persistent', 'fbo']).catch(
        onNotFound(() => fieldError('target', 'is not a tracking id of one of your virtual accounts')),
      )
      await lockById(tx, target.id)
      const credit = await lockUnmatched(tx, id)
      return assign(deps, tx, credit, (await selectAccountById(tx, target.id))!)
    }
    const credit = await lockUnmatched(tx, id)
    return refund(deps, tx, caller, credit)
  })
  return toTriageJson(deps.pool, resolved)
}

async function lockUnmatched(tx: Queryable, id: string): Promise<repo.InboundCredit> {
  const credit = (await repo.lockCredit(tx, id))!
  if (credit.status !== 'unmatched') throw new RailError('invalid_state', `The credit was ${credit.status} already`, { id, status: credit.status })
  return credit
}

/**
 * Pays the credit back to its sender through the refunds core (origin 'triage'): an outbound
 * transfer to the payer's account through the payment pipeline, held on the partner's suspense
 * account (where the credit sits) — never on its float. The credit is refund_pending until the
 * refund ends (settleTriageRefunds, in the pipeline's transaction): succeeded → refunded; failed →
 * the hold is voided back to suspense and the credit is unmatched again, for another try. Each
 * attempt is a refund of its own, under Rail's reference `triage-refund:<credit>:<uuid>`.
 */
async function refund(deps: InboundDeps, tx: Tx, caller: { partner: Partner; credentialId: string; requestId?: string }, credit: repo.InboundCredit) {
  const suspense = await ensurePartnerAccount(tx, caller.partner.id, credit.currency, 'suspense')
  const refunded = await refundCreditInTransaction(deps.refunds, tx, {
    caller,
    reference: `triage-refund:${credit.id}:${uuidv7()}`,
    creditId: credit.id,
    amountKobo: credit.amountKobo,
    sourceAccountId: suspense,
    origin: { type: 'triage' },
  })
  return (await repo.resolveUnmatched(tx, credit.id, 'refund_pending', { action: 'refund', outboundTransferId: refunded.outboundTransferId, refundId: refunded.id }))!
}

/**
 * Triage's refunds ended, on the payment pipeline's transaction: succeeded → the credit is
 * refunded; failed → its hold was voided back to suspense in this same transaction, and the
 * credit is unmatched again with what was tried.
 */
export async function settleTriageRefunds(tx: Tx, refunds: readonly Refund[]): Promise<void> {
  for (const ended of refunds) {
    if (ended.state === 'succeeded') await repo.markRefunded(tx, ended.creditId)
    else {
      await repo.reopenAfterFailedRefund(tx, ended.creditId, {
        action: 'refund',
        outboundTransferId: ended.outboundTransferId,
        refundId: ended.id,
        outcome: 'failed',
        failureReason: ended.failureReason,
      })
    }
  }
}

/** Applies the credit to another account as if it had been paid there: suspense → collections, and the owner's rules. */
async function assign(deps: InboundDeps, tx: Tx, credit: repo.InboundCredit, target: VirtualAccount) {
  if (target.status === 'archived') throw new RailError('invalid_state', 'The target account is archived', { trackingId: target.trackingId })
  if (target.currency !== credit.currency) {
    throw new RailError('invalid_state', `The credit is in ${credit.currency}; the target account collects ${target.currency}`, { trackingId: target.trackingId })
  }
  const partnerId = target.partnerId
  const suspense = await ensurePartnerAccount(tx, partnerId, credit.currency, 'suspense')
  const collections = await ensurePartnerAccount(tx, partnerId, credit.currency, 'collections')
  const intent = target.purpose === 'payment_intent' ? await lockIntentOfAccount(tx, target.id) : undefined
  if (intent?.status === 'expired') throw new RailError('invalid_state', 'The target payment intent has expired', { trackingId: target.trackingId })
  await post(tx, credit, 'assign', suspense, collections, 'unmatched_assigned')
  let updatedIntent: PaymentIntent | undefined
  let keptKobo = credit.amountKobo
  if (intent?.ownerType) {
    const handler = deps.owners[intent.ownerType]
    if (!handler) throw new Error(`no credit handler for ${intent.ownerType} owners`)
    const { takenKobo, movedOnKobo = 0 } = await handler(tx, { creditId: credit.id, partnerId, ownerId: intent.ownerId!, intentId: intent.id, amountKobo: credit.amountKobo, currency: credit.currency, collectionsAccountId: collections })
    // Assigning is all or nothing: an owner that would not take the whole credit refuses it, and nothing changes.
    if (takenKobo !== credit.amountKobo) throw new RailError('invalid_state', `The target's ${intent.ownerType} does not take this whole payment`, { trackingId: target.trackingId })
    keptKobo = takenKobo - movedOnKobo
  }
  await settleCollected(deps, tx, { creditId: credit.id, partnerId, currency: credit.currency, amountKobo: keptKobo, collectionsAccountId: collections })
  if (intent) updatedIntent = await recordIntentCredit(tx, intent, credit.amountKobo)
  const resolved = (await repo.resolveUnmatched(tx, credit.id, 'assigned', { action: 'assign', trackingId: target.trackingId }))!
  await emitCreditEvent(tx, resolved, target, updatedIntent)
  return resolved
}

// ---- BRR -------------------------------------------------------------------------------------

/**
 * The lifecycle status behind a BRR of the caller's: a collection transaction (a credit), or a
 * BRR-bearing account with its latest transactions. Another partner's or an unknown BRR: 404.
 */
export async function lookupBrr(pool: Pool, partnerId: string, brr: string) {
  const credit = await repo.selectByBrr(pool, partnerId, brr)
  if (credit) {
    const account = credit.virtualAccountId ? await selectAccountById(pool, credit.virtualAccountId) : undefined
    return { brr, kind: 'transaction' as const, status: creditLifecycle(credit.status), transaction: toCreditJson(credit), account: account ? toBrrAccount(account) : null, transactions: [] }
  }
  const account = await selectAccountByBrr(pool, partnerId, brr)
  if (!account) throw notFound('BRR')
  const credits = await repo.listByAccount(pool, account.id, ACCOUNT_CREDITS_SHOWN)
  return { brr, kind: 'account' as const, status: account.status, transaction: null, account: toBrrAccount(account), transactions: credits.map(toCreditJson) }
}

function toBrrAccount(account: VirtualAccount) {
  return {
    trackingId: account.trackingId,
    reference: account.reference,
    purpose: account.purpose,
    status: account.status,
    virtualAccount: account.accountNumber,
    virtualAccountName: account.accountName,
    bankCode: account.bankCode,
    bankName: bankName(account.bankCode),
    brr: account.brr,
  }
}

/** A credit's status as a partner reads it: confirmed once applied. */
function creditLifecycle(status: repo.CreditStatus): string {
  return status === 'applied' ? 'confirmed' : status
}

export function toCreditJson(credit: repo.InboundCredit) {
  return {
    id: credit.id,
    status: creditLifecycle(credit.status),
    brr: credit.brr,
    amountKobo: credit.amountKobo,
    currency: credit.currency,
    virtualAccount: credit.accountNumber,
    sessionId: credit.sessionId,
    payer: { name: credit.payerName, accountNumber: credit.payerAccountNumber, bankCode: credit.payerBankCode },
    narration: credit.narration,
    creditedAt: credit.creditedAt.toISOString(),
    receivedAt: credit.receivedAt.toISOString(),
  }
}

async function toTriageJson(db: Queryable, credit: repo.InboundCredit) {
  const account = credit.virtualAccountId ? await selectAccountById(db, credit.virtualAccountId) : undefined
  return {
    ...toCreditJson(credit),
    status: credit.status as 'unmatched' | 'refund_pending' | 'refunded' | 'assigned',
    reason: credit.unmatchedReason ?? '',
    trackingId: account?.trackingId ?? null,
    walletId: credit.walletId,
    resolution: credit.resolution,
    resolvedAt: credit.resolvedAt?.toISOString() ?? null,
  }
}
