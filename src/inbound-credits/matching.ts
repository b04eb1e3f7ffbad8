// The matching rules of inbound credits, in one place: every path that applies credits (one at a
// time in apply.ts, many at once in batch.ts) decides through these, so the paths cannot disagree
// (test/collections/paths-agree.test.ts applies random credit sequences both ways and compares).
//
// Where a credit goes, by the provider and the account number the bank reported:
//   1. a virtual account of Rail's (payment intent, persistent, FBO) — unless accountUnmatchedReason
//      names why it cannot take it, or the intent's owner (invoice, escrow) takes none or part of it;
//   2. else a wallet (wallet funding by transfer) — unless walletUnmatchedReason says no;
//   3. else no account of Rail's: the partner named by the allocation reference holds it in
//      suspense, or, with no partner, it stays unattributed.
// A credit that cannot be taken goes to the partner's suspense account as `unmatched`, for triage.
// The batch applies only case 1 without an owner; the others it leaves to the credit's own job
// (apply.ts applyCredit), so the rules of 2 and 3, and the owners' calls, exist once.
import { derivedId, type TransferInput } from '../ledger/service.ts'
import { generateBrr } from '../nip/brr.ts'
import type { IntentOwnerType } from '../payment-intents/service.ts'
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

/** What becomes of a credit paid into a virtual account. */
export type AccountCreditDecision =
  /** Its account cannot take it: to suspense, for triage. */
  | { kind: 'unmatched'; reason: AccountUnmatchedReason }
  /** The intent's owner (an invoice, an escrow) says how much of it it takes: the one-credit path asks it. */
  | { kind: 'owned'; ownerType: IntentOwnerType }
  /** Into collections, and onto its intent if it has one. */
  | { kind: 'applied' }

export function decideAccountCredit(
  credit: { currency: string },
  account: { currency: string; status: string },
  intent: { status: string; ownerType: IntentOwnerType | null } | undefined,
): AccountCreditDecision {
  const reason = accountUnmatchedReason(credit, account, intent)
  if (reason !== null) return { kind: 'unmatched', reason }
  if (intent?.ownerType) return { kind: 'owned', ownerType: intent.ownerType }
  return { kind: 'applied' }
}

/** Why a credit to a wallet's account number cannot fund the wallet, or null when it can. Whatever the provider's merchantCredit capability says: a customer's own transfer is no merchant credit. */
export function walletUnmatchedReason(credit: { currency: string }, wallet: { currency: string }): 'currency_mismatch' | null {
  return credit.currency !== wallet.currency ? 'currency_mismatch' : null
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
 * (`collect`, `unmatch`, `assign`, `fund_wallet`), so a retry of either path finds the transfer
 * the other (or an earlier attempt) made instead of moving the money twice.
 */
export function creditTransfer(credit: Pick<InboundCredit, 'id' | 'amountKobo' | 'currency'>, purpose: string, debitAccountId: string, creditAccountId: string, code: string): TransferInput {
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
  }
}
