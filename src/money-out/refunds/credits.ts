// The credits refunds are made of. Inbound credits own them, and call refunds themselves (triage
// refunds an unmatched credit), so refunds cannot import them: the composition root hands their
// reads over as `RefundableCredits`. The account a credit was confirmed to and its intent's owner
// come from virtual accounts and payment intents, through their services.
import { intentOwnerTypeOfAccount } from '../../collections/intents/service.ts'
import type { Queryable } from '../../platform/db.ts'
import { selectById as selectAccountById, selectIdByTrackingId } from '../../collections/virtual-accounts/service.ts'
import * as repo from './repo.ts'

/** A credit as inbound credits answer it to refunds. */
export interface CreditForRefund {
  id: string
  partnerId: string | null
  status: string
  amountKobo: number
  currency: string
  sessionId: string
  payerName: string | null
  payerAccountNumber: string | null
  payerBankCode: string | null
  /** Set once it fell to triage (whatever happened to it since). */
  unmatchedReason: string | null
  /** The virtual account it was paid into; null when it was paid into a wallet or never matched. */
  virtualAccountId: string | null
  /** Triage's resolution: an assigned credit names its account's tracking id (`trackingId`). */
  resolution: Record<string, unknown> | null
}

/** Inbound credits' reads for refunds, on the caller's transaction. */
export interface RefundableCredits {
  /** Locks the credit (every refund of it takes this lock first) and answers it. */
  lock(tx: Queryable, id: string): Promise<CreditForRefund | undefined>
  /** The credit's amount less the excess split off it (an overpayment, a triage item of its own); 0 for no credit. */
  amountLessExcessKobo(db: Queryable, id: string): Promise<number>
  /** The partner's credits confirmed to the account (applied there, or assigned there by its tracking id), newest first. */
  confirmedIds(db: Queryable, partnerId: string, account: { id: string; trackingId: string }): Promise<string[]>
}

/** A credit as a refund needs it, with the account it was confirmed to and that account's intent's owner, if any. */
export interface RefundableCredit extends CreditForRefund {
  /** The virtual account it was confirmed to; null when it was paid elsewhere (into a wallet) or never confirmed. */
  confirmedAccountId: string | null
  intentOwnerType: string | null
}

/** Locks a credit and answers it with the account it was confirmed to and that account's intent's owner. */
export async function lockCredit(
  credits: RefundableCredits,
  tx: Queryable,
  id: string,
): Promise<RefundableCredit | undefined> {
  const credit = await credits.lock(tx, id)
  if (!credit) return undefined
  const confirmedAccountId = await confirmedAccountOf(tx, credit)
  const intentOwnerType = confirmedAccountId === null ? null : await intentOwnerTypeOfAccount(tx, confirmedAccountId)
  return { ...credit, confirmedAccountId, intentOwnerType }
}

/** Where the credit was paid, or for an assigned credit the partner's account triage assigned it to. */
async function confirmedAccountOf(db: Queryable, credit: CreditForRefund): Promise<string | null> {
  if (credit.status !== 'assigned') return credit.virtualAccountId
  const trackingId = credit.resolution?.trackingId
  if (credit.partnerId === null || typeof trackingId !== 'string') return null
  return (await selectIdByTrackingId(db, credit.partnerId, trackingId)) ?? null
}

/** What a credit still has to refund: its amount less its excess, less its pending and succeeded refunds (the caller holds its lock). */
export async function leftToRefundKobo(credits: RefundableCredits, db: Queryable, creditId: string): Promise<number> {
  return (await credits.amountLessExcessKobo(db, creditId)) - (await repo.selectLiveRefundedKobo(db, creditId))
}

/** The ids of the partner's credits confirmed to one of its virtual accounts, newest first; none for another's or no account. */
export async function confirmedCreditIds(
  credits: RefundableCredits,
  db: Queryable,
  partnerId: string,
  virtualAccountId: string,
): Promise<string[]> {
  const account = await selectAccountById(db, virtualAccountId)
  if (!account || account.partnerId !== partnerId) return []
  return credits.confirmedIds(db, partnerId, { id: account.id, trackingId: account.trackingId })
}
