// The matching rules of inbound credits, in one place and pure: the one write path (batch.ts)
// locks what a credit's number leads to, asks these functions what becomes of the credit, and
// writes what they answer. test/collections/matching.test.ts runs every rule without a database.
//
// Where a credit goes, by the provider and the account number the bank reported (decideCredit):
//   1. a virtual account of Rail's (payment intent, persistent, FBO) — unless accountUnmatchedReason
//      names why it cannot take it; when an owner (invoice, escrow) composed its intent, the owner
//      says how much of it it takes (decideOwned): none (to triage), part (the excess to triage) or all;
//   2. else a wallet (wallet funding by transfer) — unless walletUnmatchedReason says no;
//   3. else no account of Rail's: the partner named by the allocation reference holds it in
//      suspense, or, with no partner, it stays unattributed (no money moves).
// A credit that cannot be taken goes to the partner's suspense account as `unmatched`, for triage.
import { derivedId, type TransferInput } from '../../ledger/service.ts'
import { generateBrr } from '../../banking/nip/brr.ts'
import type { IntentOwnerType } from '../intents/service.ts'
import type { InboundCredit, Settlement } from './repo.ts'

/** Why a credit to a virtual account cannot be applied to it, or null when it can. */
export type AccountUnmatchedReason = 'currency_mismatch' | 'account_archived' | 'payment_intent_expired'

export function accountUnmatchedReason(
  credit: { currency: string },
  account: { currency: string; status: string },
  intent: { status: string } | undefined,
): AccountUnmatchedReason | null {
  if (credit.currency !== account.currency) return 'currency_mismatch'
  if (account.status === 'archived') return 'account_archived'
  if (intent?.status === 'expired') return 'payment_intent_expired'
  return null
}

/** Why a credit to a wallet's account number cannot fund the wallet, or null when it can. Whatever the provider's merchantCredit capability says: a customer's own transfer is no merchant credit. */
export function walletUnmatchedReason(
  credit: { currency: string },
  wallet: { currency: string },
): 'currency_mismatch' | null {
  return credit.currency !== wallet.currency ? 'currency_mismatch' : null
}

/** What a credit's number leads to, as the write path found it (the account and its intent locked). */
export type CreditPlace<Account, Intent, Wallet> =
  | { kind: 'account'; account: Account; intent: Intent | undefined }
  | { kind: 'wallet'; wallet: Wallet }
  /** No account of Rail's: `partnerId` is the partner the provider's allocation reference names, when Rail knows it. */
  | { kind: 'unknown'; partnerId: string | null }

type AccountFacts = { partnerId: string; currency: string; status: string }
type IntentFacts = { status: string; ownerType: IntentOwnerType | null }
type WalletFacts = { partnerId: string; currency: string }

/** What becomes of a received credit. */
export type CreditDecision =
  /** Nobody can take it: the partner's suspense account, for triage. */
  | { kind: 'unmatched'; partnerId: string; reason: string }
  /** Into the account's collections; the intent's owner (an invoice, an escrow) then says how much it takes (decideOwned). */
  | { kind: 'owned'; partnerId: string; ownerType: IntentOwnerType }
  /** Into the account's collections, and onto its intent if it has one. */
  | { kind: 'applied'; partnerId: string }
  /** Into the wallet (its own ledger account). */
  | { kind: 'fund_wallet'; partnerId: string }
  /** No partner to hold it for: it stays with the provider, for operators (no money moves). */
  | { kind: 'unattributed' }

export function decideCredit(
  credit: { currency: string },
  place: CreditPlace<AccountFacts, IntentFacts, WalletFacts>,
): CreditDecision {
  if (place.kind === 'account') {
    const { account, intent } = place
    const reason = accountUnmatchedReason(credit, account, intent)
    if (reason !== null) return { kind: 'unmatched', partnerId: account.partnerId, reason }
    if (intent?.ownerType) return { kind: 'owned', partnerId: account.partnerId, ownerType: intent.ownerType }
    return { kind: 'applied', partnerId: account.partnerId }
  }
  if (place.kind === 'wallet') {
    const reason = walletUnmatchedReason(credit, place.wallet)
    if (reason !== null) return { kind: 'unmatched', partnerId: place.wallet.partnerId, reason }
    return { kind: 'fund_wallet', partnerId: place.wallet.partnerId }
  }
  if (place.partnerId === null) return { kind: 'unattributed' }
  return { kind: 'unmatched', partnerId: place.partnerId, reason: 'unknown_account' }
}

/** The partner's ledger accounts a credit's money moves between. */
export type CreditLedgerRole = 'provider_settlement' | 'collections' | 'suspense' | 'wallet'

/** A move of a credit's money (`purpose` names its ledger transfer: creditTransfer). */
export interface CreditMove {
  purpose: 'collect' | 'fund_wallet' | 'unmatch'
  from: CreditLedgerRole
  to: CreditLedgerRole
  code: string
}

/** The first move of a decided credit's whole amount: from the provider's settlement account to where the decision puts it (none when unattributed). */
export function firstMove(decision: CreditDecision): CreditMove | undefined {
  switch (decision.kind) {
    case 'unattributed':
      return undefined
    case 'unmatched':
      return { purpose: 'collect', from: 'provider_settlement', to: 'suspense', code: CREDIT_CODES.unmatched }
    case 'fund_wallet':
      return { purpose: 'fund_wallet', from: 'provider_settlement', to: 'wallet', code: CREDIT_CODES.walletFunding }
    case 'owned':
    case 'applied':
      return { purpose: 'collect', from: 'provider_settlement', to: 'collections', code: CREDIT_CODES.collected }
  }
}

/** What an intent's owner answered for a credit that reached collections: how much it took, and how much of that it moved out of collections itself. */
export interface OwnerAnswer {
  takenKobo: number
  movedOnKobo?: number
}

/** What becomes of an owned credit once its owner answered. */
export type OwnedDecision =
  /** The owner took none of it (paid, cancelled, closed): the whole credit moves on from collections to suspense, for triage. */
  | { kind: 'closed'; reason: `${IntentOwnerType}_closed`; move: CreditMove }
  /**
   * The owner took it (all, or part: the excess is a triage item of its own, moved from
   * collections to suspense). `keptKobo` stays in collections, for settlement.
   */
  | {
      kind: 'taken'
      keptKobo: number
      excess: { amountKobo: number; reason: `${IntentOwnerType}_overpaid`; move: CreditMove } | null
    }

export function decideOwned(ownerType: IntentOwnerType, amountKobo: number, answer: OwnerAnswer): OwnedDecision {
  const { takenKobo, movedOnKobo = 0 } = answer
  // An owner cannot take more than the credit, nor move on more than it took: that would move money the credit never brought.
  if (!Number.isSafeInteger(takenKobo) || takenKobo < 0 || takenKobo > amountKobo)
    throw new Error(`${ownerType} owner took ${takenKobo} kobo of a credit of ${amountKobo}`)
  if (!Number.isSafeInteger(movedOnKobo) || movedOnKobo < 0 || movedOnKobo > takenKobo)
    throw new Error(`${ownerType} owner moved on ${movedOnKobo} kobo of the ${takenKobo} it took`)
  const toSuspense = { from: 'collections', to: 'suspense', code: CREDIT_CODES.unmatched } as const
  if (takenKobo === 0)
    return { kind: 'closed', reason: `${ownerType}_closed`, move: { purpose: 'unmatch', ...toSuspense } }
  const excessKobo = amountKobo - takenKobo
  const excess =
    excessKobo > 0
      ? {
          amountKobo: excessKobo,
          reason: `${ownerType}_overpaid` as const,
          move: { purpose: 'collect' as const, ...toSuspense },
        }
      : null
  return { kind: 'taken', keptKobo: takenKobo - movedOnKobo, excess }
}

/** The ledger code of each move of a credit's money. */
export const CREDIT_CODES = {
  /** Provider settlement → collections: a credit its account (or owner) takes. */
  collected: 'collection_credit',
  /** → suspense: a credit (or the part of it) nobody takes, held for triage. */
  unmatched: 'unmatched_credit',
  /** Suspense → collections: triage assigned the credit to an account. */
  assigned: 'unmatched_assigned',
  /** Provider settlement → the wallet: a wallet funded by its customer's transfer (a merchant's credit is `wallet_credit`). */
  walletFunding: 'wallet_funding',
} as const

/**
 * One ledger transfer of a credit's money. Its id derives from the credit's and the purpose
 * (`collect`, `unmatch`, `assign`, `fund_wallet`), so a retry finds the transfer an earlier
 * attempt made instead of moving the money twice.
 */
export function creditTransfer(
  credit: Pick<InboundCredit, 'id' | 'amountKobo' | 'currency'>,
  purpose: string,
  debitAccountId: string,
  creditAccountId: string,
  code: string,
): TransferInput {
  return {
    id: derivedId(credit.id, purpose),
    debitAccountId,
    creditAccountId,
    amountKobo: credit.amountKobo,
    currency: credit.currency,
    code,
    sourceType: 'inbound_credit',
    sourceId: credit.id,
  }
}

/** How a credit paid into a virtual account is settled: on the account's partner, with a BRR when the account issues them. */
export function accountSettlement(
  credit: { id: string },
  account: { id: string; partnerId: string; brr: string | null },
  outcome: { status: 'applied' } | { status: 'unmatched'; reason: string },
): Settlement {
  return {
    id: credit.id,
    status: outcome.status,
    partnerId: account.partnerId,
    virtualAccountId: account.id,
    brr: account.brr ? generateBrr() : null,
    unmatchedReason: outcome.status === 'unmatched' ? outcome.reason : null,
    walletId: null,
  }
}

/** How a credit not paid into a virtual account is settled: into a wallet, to the partner's suspense, or unattributed. */
export function placelessSettlement(
  credit: { id: string },
  decision: CreditDecision,
  walletId: string | null,
): Settlement {
  const partnerId = decision.kind === 'unattributed' ? null : decision.partnerId
  if (decision.kind === 'fund_wallet')
    return {
      id: credit.id,
      status: 'applied',
      partnerId,
      virtualAccountId: null,
      brr: null,
      unmatchedReason: null,
      walletId,
    }
  if (decision.kind === 'unmatched')
    return {
      id: credit.id,
      status: 'unmatched',
      partnerId,
      virtualAccountId: null,
      brr: null,
      unmatchedReason: decision.reason,
      walletId,
    }
  if (decision.kind === 'unattributed')
    return {
      id: credit.id,
      status: 'unattributed',
      partnerId: null,
      virtualAccountId: null,
      brr: null,
      unmatchedReason: 'unknown_account',
      walletId: null,
    }
  throw new Error(`credit ${credit.id}: a ${decision.kind} credit is settled on its account`)
}
