// The events of inbound credits: an applied credit (`credit.confirmed`, or `fbo.funding` for an
// FBO account), a wallet funded by transfer (`wallet.funded`), and a credit that fell to triage
// (`credit.unmatched`). Each is recorded in the transaction that settles the credit, so it exists
// exactly when that change committed — once per credit, and once per triage item (an
// overpayment's excess is an item of its own). Both apply paths build them here. Each says how
// Rail learned of the credit (`foundBy`: the bank's notice, the partner's requery, or the sweep of
// every account when the notice never came — src/collections/credits/account-sweep.ts).
import type { NewEvent } from '../../events/service.ts'
import type { PaymentIntent } from '../intents/service.ts'
import type { VirtualAccount } from '../virtual-accounts/service.ts'
import type { InboundCredit } from './repo.ts'

function payerOf(credit: InboundCredit) {
  return { name: credit.payerName, accountNumber: credit.payerAccountNumber, bankCode: credit.payerBankCode }
}

export interface FundedWallet {
  id: string
  partnerId: string
  customerReference: string
  accountNumber: string
  bankCode: string
}

/** A wallet funded by its customer's transfer: to the partner's default callback URL (wallets have none of their own). */
export function walletFundedEvent(credit: InboundCredit, wallet: FundedWallet): NewEvent {
  return {
    partnerId: wallet.partnerId,
    type: 'wallet.funded',
    objectType: 'wallet',
    objectId: wallet.id,
    data: {
      walletId: wallet.id,
      customerReference: wallet.customerReference,
      accountNumber: wallet.accountNumber,
      bankCode: wallet.bankCode,
      amountKobo: credit.amountKobo,
      currency: credit.currency,
      sessionId: credit.sessionId,
      payer: payerOf(credit),
      narration: credit.narration,
      creditId: credit.id,
      creditedAt: credit.creditedAt.toISOString(),
      foundBy: credit.foundBy,
    },
  }
}

/** Where an unmatched credit was paid: the account (and intent) or wallet behind its number, when Rail knows one. */
export interface UnmatchedPlace {
  trackingId?: string | null
  walletId?: string | null
  /** The account's (or its intent's) own callback URL; null: the partner's default callback URL. */
  callbackUrl?: string | null
  /** For an overpayment's excess: the credit it was part of. */
  excessOf?: InboundCredit
}

/**
 * A credit to a virtual account in triage is told of where its credits' callbacks go: the
 * intent's callback URL, else the account's, else (null) the partner's default.
 */
export function unmatchedAtAccount(
  account: { trackingId: string; callbackUrl: string | null },
  intent: { callbackUrl: string | null } | undefined,
): UnmatchedPlace {
  return { trackingId: account.trackingId, callbackUrl: intent?.callbackUrl ?? account.callbackUrl }
}

/**
 * A credit in triage (status unmatched, in the partner's suspense account): its id is the triage
 * item's (`GET /api/v1/rail/unmatched/{creditId}`), and the reason says why.
 */
export function creditUnmatchedEvent(credit: InboundCredit, place: UnmatchedPlace = {}): NewEvent {
  if (credit.partnerId === null || credit.unmatchedReason === null)
    throw new Error(`inbound credit ${credit.id} is no triage item`)
  return {
    partnerId: credit.partnerId,
    type: 'credit.unmatched',
    objectType: 'unmatched_credit',
    objectId: credit.id,
    data: {
      creditId: credit.id,
      reason: credit.unmatchedReason,
      amountKobo: credit.amountKobo,
      currency: credit.currency,
      virtualAccount: credit.accountNumber,
      trackingId: place.trackingId ?? null,
      walletId: place.walletId ?? null,
      sessionId: credit.sessionId,
      payer: payerOf(credit),
      narration: credit.narration,
      creditedAt: credit.creditedAt.toISOString(),
      excessOf: place.excessOf
        ? { creditId: place.excessOf.id, sessionId: place.excessOf.sessionId, amountKobo: place.excessOf.amountKobo }
        : null,
      foundBy: credit.foundBy,
    },
    callbackUrl: place.callbackUrl ?? null,
  }
}

/** The event of an applied credit (`intent`: the intent as the credit left it). */
export function creditEvent(
  credit: InboundCredit,
  account: VirtualAccount,
  intent: PaymentIntent | undefined,
): NewEvent {
  const common = {
    creditId: credit.id,
    trackingId: account.trackingId,
    virtualAccount: account.accountNumber,
    bankCode: account.bankCode,
    amountKobo: credit.amountKobo,
    currency: credit.currency,
    sessionId: credit.sessionId,
    creditedAt: credit.creditedAt.toISOString(),
    foundBy: credit.foundBy,
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
        ? {
            id: intent.id,
            reference: intent.reference,
            status: intent.status,
            amountKobo: intent.amountKobo,
            amountReceivedKobo: intent.amountReceivedKobo,
            ownerType: intent.ownerType,
            ownerId: intent.ownerId,
          }
        : null,
    },
    callbackUrl: intent?.callbackUrl ?? account.callbackUrl,
  }
}
