// Inbound credits: money paid into Rail's virtual accounts and wallets' account numbers. This is
// the module's face — other modules reach it only here; the work is by concern:
//   intake.ts    a provider's notice stored first, once per session id, with its apply job; the sweep
//   matching.ts  the rules deciding where a credit goes, as pure functions
//   batch.ts     the one write path: received credits applied in one transaction (one credit is a batch of one)
//   places.ts    what a batch's credits were paid into (accounts and intents locked, wallets, unknown numbers)
//   owners.ts    asking an intent's owner (invoice, escrow) what a credit to it means
//   triage.ts    credits nobody could take: refunded to the sender or assigned, once
//   requery.ts   credits the provider has that Rail missed (one account, asked by the partner)
//   account-sweep.ts  the same for every account, a batch a run, on a schedule
//   brr.ts, views.ts, simulate.ts  the BRR lookup, how credits read (and are listed), the sandbox simulator
import type { RefundableCredits, RefundOrigins } from '../../money-out/refunds/service.ts'
import type { Queryable } from '../../platform/db.ts'
import { lockCredit, selectAmountLessExcessKobo, selectConfirmedIds, selectNarrations } from './repo.ts'
import { settleTriageRefunds } from './triage.ts'

export type { CreditStatus, FoundBy, InboundCredit } from './repo.ts'
export {
  collectionsRegistries,
  type CollectedCredit,
  type CollectedHandler,
  type CollectionsRegistries,
  type CreditOwnerHandler,
  type CreditOwners,
  type InboundDeps,
  type OwnedCredit,
} from './deps.ts'
export { APPLY_TASK, INBOUND_CREDITS_CRONTAB, recordCredit, sweepStrandedCredits, SWEEP_TASK } from './intake.ts'
export { applyCreditAlone, applyCreditBatch } from './batch.ts'
export {
  getTriageItem,
  listTriage,
  resolveUnmatched,
  resolveUnmatchedRequest,
  TRIAGE_PAGE_MAX,
  type Resolution,
} from './triage.ts'
export { requeryAccount, requeryWallet } from './requery.ts'
export {
  ACCOUNT_SWEEP_TASK,
  accountSweepCrontab,
  accountSweepSettings,
  type AccountSweepRun,
  type AccountSweepSettings,
} from './account-sweep.ts'
export { lookupBrr } from './brr.ts'
export { creditLifecycle, getCredit, listCredits, receivedVolume } from './views.ts'
export {
  simulateInboundCredit,
  simulateInboundCreditOnce,
  type SimulatedCredit,
  type SimulatedCreditAnswer,
} from './simulate.ts'

/** What refunds read of credits, on the caller's transaction (the composition root hands it to the refunds core). */
export const creditsForRefunds: RefundableCredits = {
  lock: lockCredit,
  amountLessExcessKobo: selectAmountLessExcessKobo,
  confirmedIds: selectConfirmedIds,
}

/** What a statement line shows of the credits behind it (statements): each one's narration. */
export function creditNarrations(
  db: Queryable,
  ids: readonly string[],
): Promise<{ id: string; narration: string | null }[]> {
  return selectNarrations(db, ids)
}

/** Plugs triage into refunds: a refund triage asked for that ends settles its credit (refunded, or unmatched again). */
export function plugTriage(registries: { refundOrigins: RefundOrigins }): void {
  registries.refundOrigins.register('triage', settleTriageRefunds)
}
