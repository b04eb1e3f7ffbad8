// The matching rules of inbound credits, in one place: every path that applies credits (one at a
// time in service.ts, many at once in batch.ts) asks these, so the paths cannot disagree.
//
// Where a credit goes, by the provider and the account number the bank reported:
//   1. a virtual account of Rail's (payment intent, persistent, FBO) — unless accountUnmatchedReason
//      names why it cannot take it, or the intent's owner (invoice, escrow) takes none or part of it;
//   2. else a wallet (wallet funding by transfer, seed 000) — unless walletUnmatchedReason says no;
//   3. else no account of Rail's: the partner named by the allocation reference holds it in
//      suspense, or, with no partner, it stays unattributed.
// A credit that cannot be taken goes to the partner's suspense account as `unmatched`, for triage.
// The batch applies only case 1 without an owner; the others it leaves to the credit's own job
// (service.ts applyCredit), so the rules of 2 and 3 exist once.

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
export function walletUnmatchedReason(credit: { currency: string }, wallet: { currency: string }): 'currency_mismatch' | null {
  return credit.currency !== wallet.currency ? 'currency_mismatch' : null
}
