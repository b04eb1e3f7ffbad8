// Applying one stored credit (the one-credit path; batch.ts applies many at once with the same
// rules, matching.ts). The job matches the account to its owner, posts the ledger transfer
// (provider settlement → the partner's collections account) and emits the callback, in one
// transaction. Credits nobody can take — an archived account, an expired intent, an owner that is
// closed — go to the partner's suspense account as unmatched, for triage.
import { recordEvent } from '../events/service.ts'
import { createTransfers, ensurePartnerAccount } from '../ledger/service.ts'
import { getPartner } from '../partners/service.ts'
import { lockIntentOfAccount, recordIntentCredit, type PaymentIntent } from '../payment-intents/service.ts'
import { withTransaction, type Queryable, type Tx } from '../platform/db.ts'
import { uuidv7 } from '../platform/ids.ts'
import { lockByNumber, partnerOfAllocation, type VirtualAccount } from '../virtual-accounts/service.ts'
import { walletOfAccountNumber, type Wallet } from '../wallets/service.ts'
import type { CollectedCredit, InboundDeps } from './deps.ts'
import { creditEvent, creditUnmatchedEvent, unmatchedAtAccount, walletFundedEvent } from './events.ts'
import { accountSettlement, CREDIT_CODES, creditTransfer, decideAccountCredit, walletUnmatchedReason } from './matching.ts'
import * as repo from './repo.ts'

/** The apply job: matches a stored credit to its owner (matching.ts: a virtual account, else a wallet) and applies it, once. */
export async function applyCredit(deps: InboundDeps, creditId: string): Promise<void> {
  await withTransaction(deps.pool, async (tx) => {
    const credit = await repo.lockCredit(tx, creditId)
    if (!credit || credit.status !== 'received') return
    // The account first: every path that changes an account or its owner locks it first.
    const account = await lockByNumber(tx, credit.provider, credit.accountNumber)
    if (account) return applyToAccount(deps, tx, credit, account)
    const wallet = await walletOfAccountNumber(tx, credit.provider, credit.accountNumber)
    if (wallet) return applyToWallet(deps, tx, credit, wallet)
    await settleUnknownAccount(deps, tx, credit)
  })
}

/**
 * Wallet funding by transfer: the customer paid into the wallet's account number. The wallet is
 * credited (provider settlement → the wallet's ledger account, one posted transfer, so
 * available = booked) and the partner hears `wallet.funded` — whatever the provider's
 * merchantCredit capability says. Once: the credit row is locked and settled from `received`.
 */
async function applyToWallet(deps: Pick<InboundDeps, 'clock'>, tx: Tx, credit: repo.InboundCredit, wallet: Wallet): Promise<void> {
  const partnerId = wallet.partnerId
  const settlement = await ensurePartnerAccount(tx, partnerId, credit.currency, 'provider_settlement')
  const reason = walletUnmatchedReason(credit, wallet)
  if (reason !== null) {
    await post(tx, credit, 'collect', settlement, await ensurePartnerAccount(tx, partnerId, credit.currency, 'suspense'), CREDIT_CODES.unmatched)
    const unmatched = await repo.settleReceived(tx, credit.id, { status: 'unmatched', partnerId, virtualAccountId: null, brr: null, unmatchedReason: reason, walletId: wallet.id }, deps.clock.now())
    await recordEvent(tx, deps.clock, creditUnmatchedEvent(unmatched, { walletId: wallet.id }))
    return
  }
  await post(tx, credit, 'fund_wallet', settlement, wallet.ledgerAccountId, CREDIT_CODES.walletFunding)
  const applied = await repo.settleReceived(tx, credit.id, { status: 'applied', partnerId, virtualAccountId: null, brr: null, unmatchedReason: null, walletId: wallet.id }, deps.clock.now())
  await recordEvent(tx, deps.clock, walletFundedEvent(applied, wallet))
}

/**
 * A credit to an account Rail has no record of. When the provider's allocation reference names a
 * partner (an allocation whose request failed), the credit is that partner's: suspense, and
 * triage. Otherwise there is no partner to hold it for: it stays `unattributed`, no money moves,
 * and operators see it in the table (the provider holds the money until it is returned).
 */
async function settleUnknownAccount(deps: Pick<InboundDeps, 'clock'>, tx: Tx, credit: repo.InboundCredit): Promise<void> {
  const partnerId = await knownPartner(tx, partnerOfAllocation(credit.accountReference))
  if (!partnerId) {
    await repo.settleReceived(tx, credit.id, { status: 'unattributed', partnerId: null, virtualAccountId: null, brr: null, unmatchedReason: 'unknown_account' }, deps.clock.now())
    return
  }
  const settlement = await ensurePartnerAccount(tx, partnerId, credit.currency, 'provider_settlement')
  await post(tx, credit, 'collect', settlement, await ensurePartnerAccount(tx, partnerId, credit.currency, 'suspense'), CREDIT_CODES.unmatched)
  const unmatched = await repo.settleReceived(tx, credit.id, { status: 'unmatched', partnerId, virtualAccountId: null, brr: null, unmatchedReason: 'unknown_account' }, deps.clock.now())
  await recordEvent(tx, deps.clock, creditUnmatchedEvent(unmatched))
}

async function knownPartner(db: Queryable, partnerId: string | undefined): Promise<string | undefined> {
  return partnerId && (await getPartner(db, partnerId)) ? partnerId : undefined
}

/** A credit to one of Rail's virtual accounts, as matching.ts decides: to triage, to its owner, or applied. */
async function applyToAccount(deps: InboundDeps, tx: Tx, credit: repo.InboundCredit, account: VirtualAccount): Promise<void> {
  const partnerId = account.partnerId
  const now = deps.clock.now() // one time for everything this credit's application stamps
  const settlement = await ensurePartnerAccount(tx, partnerId, credit.currency, 'provider_settlement')
  const intent = account.purpose === 'payment_intent' ? await lockIntentOfAccount(tx, account.id) : undefined
  // In triage: the partner hears credit.unmatched, where the account (or its intent) says, in this transaction.
  const unmatchedPlace = unmatchedAtAccount(account, intent)
  const toTriage = async (reason: string) => {
    const unmatched = await repo.settleReceived(tx, credit.id, accountSettlement(credit, account, { status: 'unmatched', reason }), now)
    await recordEvent(tx, deps.clock, creditUnmatchedEvent(unmatched, unmatchedPlace))
  }
  const decision = decideAccountCredit(credit, account, intent)
  if (decision.kind === 'unmatched') {
    await post(tx, credit, 'collect', settlement, await ensurePartnerAccount(tx, partnerId, credit.currency, 'suspense'), CREDIT_CODES.unmatched)
    return toTriage(decision.reason)
  }
  const collections = await ensurePartnerAccount(tx, partnerId, credit.currency, 'collections')
  await post(tx, credit, 'collect', settlement, collections, CREDIT_CODES.collected)
  // What of the credit stays in collections, for settlement: all of it unless an owner moves it on.
  let keptKobo = credit.amountKobo
  if (decision.kind === 'owned') {
    const owned = await askOwner(deps, tx, credit, intent!, { partnerId, collectionsAccountId: collections })
    keptKobo = owned.keptKobo
    if (owned.takenKobo === 0) {
      await post(tx, credit, 'unmatch', collections, await ensurePartnerAccount(tx, partnerId, credit.currency, 'suspense'), CREDIT_CODES.unmatched)
      return toTriage(`${decision.ownerType}_closed`)
    }
    if (owned.takenKobo < credit.amountKobo) {
      const excess = await recordExcess(tx, now, credit, account, credit.amountKobo - owned.takenKobo, collections, `${decision.ownerType}_overpaid`)
      await recordEvent(tx, deps.clock, creditUnmatchedEvent(excess, { ...unmatchedPlace, excessOf: credit }))
    }
  }
  await settleCollected(deps, tx, { creditId: credit.id, partnerId, currency: credit.currency, amountKobo: keptKobo, collectionsAccountId: collections })
  const updatedIntent = intent ? await recordIntentCredit(tx, intent, credit.amountKobo, now) : undefined
  const applied = await repo.settleReceived(tx, credit.id, accountSettlement(credit, account, { status: 'applied' }), now)
  await recordEvent(tx, deps.clock, creditEvent(applied, account, updatedIntent))
}

/**
 * Asks the intent's owner how much of the credit it takes (the credit has just reached
 * the partner's `collectionsAccountId`), and answers that with what of it stays in collections for settlement.
 * Applying and triage's assignment ask it the same way.
 */
export async function askOwner(
  deps: InboundDeps,
  tx: Tx,
  credit: repo.InboundCredit,
  intent: PaymentIntent,
  partner: { partnerId: string; collectionsAccountId: string },
): Promise<{ takenKobo: number; keptKobo: number }> {
  const handler = intent.ownerType ? deps.owners[intent.ownerType] : undefined
  if (!handler) throw new Error(`no credit handler for ${intent.ownerType} owners`)
  const owned = { ...partner, creditId: credit.id, ownerId: intent.ownerId!, intentId: intent.id, amountKobo: credit.amountKobo, currency: credit.currency }
  const { takenKobo, movedOnKobo = 0 } = await handler(tx, owned, deps.clock)
  return { takenKobo, keptKobo: takenKobo - movedOnKobo }
}

/**
 * The part of a credit its owner did not take (an overpayment): a triage item of its own — a
 * credit row for the excess, unmatched — and the excess moves from collections to suspense.
 */
async function recordExcess(tx: Tx, at: Date, credit: repo.InboundCredit, account: VirtualAccount, excessKobo: number, collectionsAccountId: string, reason: string): Promise<repo.InboundCredit> {
  const excess = await repo.insertExcess(tx, { id: uuidv7(), of: credit, amountKobo: excessKobo, partnerId: account.partnerId, virtualAccountId: account.id, unmatchedReason: reason, at })
  await post(tx, excess, 'collect', collectionsAccountId, await ensurePartnerAccount(tx, account.partnerId, credit.currency, 'suspense'), CREDIT_CODES.unmatched)
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
export async function settleCollected(deps: InboundDeps, tx: Tx, collected: CollectedCredit): Promise<void> {
  if (!deps.settlement || collected.amountKobo <= 0) return
  const transfers = await deps.settlement(tx, [collected])
  const results = await createTransfers(tx, transfers)
  const refused = results.find((result) => result.result !== 'ok' && result.result !== 'exists')
  if (refused) throw new Error(`inbound credit ${collected.creditId} settlement ${refused.id}: ${refused.result}`)
}

/** One ledger transfer of a credit (matching.ts creditTransfer: its id derives from the credit's, so a retry finds it). */
export async function post(tx: Queryable, credit: repo.InboundCredit, purpose: string, debitAccountId: string, creditAccountId: string, code: string): Promise<void> {
  const [result] = await createTransfers(tx, [creditTransfer(credit, purpose, debitAccountId, creditAccountId, code)])
  if (result!.result !== 'ok') throw new Error(`inbound credit ${credit.id} ${purpose}: ${result!.result}`)
}
