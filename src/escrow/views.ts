// What an escrow shows: its funding account, its disbursement and refunds, the objects of docs/contracts/escrow.md.

import type { Queryable } from '../platform/db.ts'
import { getIntentById, type IntentView } from '../collections/intents/service.ts'
import { checkoutUrl } from '../platform/public-url.ts'
import { refundsOfOrigin, type Refund } from '../money-out/refunds/service.ts'
import { bankName } from '../collections/virtual-accounts/service.ts'
import type * as repo from './repo.ts'
import type {
  EscrowCreatedJson,
  EscrowDisbursementJson,
  EscrowFundingJson,
  EscrowJson,
  EscrowRefundJson,
} from './schemas.ts'

/**
 * How the payer funds the escrow: a virtual account of a composed payment intent and its
 * checkoutToken (docs/design.md §10).
 */
function fundingOf(funding: IntentView | undefined): EscrowFundingJson {
  if (!funding) return null
  const { intent, account } = funding
  return {
    virtualAccount: account.accountNumber,
    virtualAccountName: account.accountName,
    bankCode: account.bankCode,
    bankName: bankName(account.bankCode),
    trackingId: account.trackingId,
    checkoutToken: intent.checkoutToken,
    checkoutUrl: checkoutUrl(intent.checkoutToken),
    amountKobo: intent.amountKobo,
    currency: intent.currency,
    expiresAt: intent.expiresAt.toISOString(),
  }
}

/** The funding intent of an escrow (every escrow has one: it is composed at create). */
export async function fundingOfEscrow(db: Queryable, escrow: repo.Escrow): Promise<IntentView | undefined> {
  return escrow.fundingPaymentIntentId ? getIntentById(db, escrow.fundingPaymentIntentId) : undefined
}

/**
 * Where the released amount goes and how far it got: before release the destination planned
 * (state `awaiting_release`); after release `pending` (a bank payout on its way), `paid` or
 * `failed` (with why). Null on a cancelled or expired escrow: nothing is disbursed.
 */
export function disbursementOf(escrow: repo.Escrow): EscrowDisbursementJson {
  if (escrow.status === 'cancelled' || escrow.status === 'expired') return null
  return {
    destination: escrow.destination ?? ('float' as const),
    state: escrow.disbursementState ?? ('awaiting_release' as const),
    outboundTransferId: escrow.disbursementOutboundTransferId,
    ...(escrow.disbursementState === 'failed' && escrow.disbursementFailureReason
      ? { failureReason: escrow.disbursementFailureReason }
      : {}),
  }
}

/**
 * The refund of a cancelled or expired escrow's funding (or an overfunded escrow's excess): its
 * state, the amount it pays back, and every refund made — one per funding credit, a retried one
 * after the one that failed. Null when nothing is to be refunded.
 */
export function refundOf(escrow: repo.Escrow, refunds: readonly Refund[]): EscrowRefundJson {
  if (escrow.refundState === null) return null
  const latest = latestRefunds(refunds)
  return {
    state: escrow.refundState,
    amountKobo: [...latest.values()].reduce((sum, refund) => sum + refund.amountKobo, 0),
    refunds: refunds.map((refund) => ({
      id: refund.id,
      creditId: refund.creditId,
      amountKobo: refund.amountKobo,
      state: refund.state,
      outboundTransferId: refund.outboundTransferId,
    })),
  }
}

/**
 * The last refund made of each credit: the one that counts. An escrow refunds for one purpose only
 * (its funding when cancelled or expired, its excess when released), so a credit is refunded once
 * but for retries.
 */
export function latestRefunds(refunds: readonly Refund[]): Map<string, Refund> {
  return new Map(refunds.map((refund) => [refund.creditId, refund]))
}

/** The escrow with what its read shows beyond the row: its funding account and its refunds (the refunds module's, origin escrow). */
export async function escrowView(db: Queryable, escrow: repo.Escrow): Promise<EscrowJson> {
  return toEscrowJson(
    escrow,
    await fundingOfEscrow(db, escrow),
    await refundsOfOrigin(db, { type: 'escrow', id: escrow.id }),
  )
}

/** The escrow object (docs/contracts/escrow.md §Escrow; inside `escrow` of the read answer), with funding progress and money out. */
export function toEscrowJson(
  escrow: repo.Escrow,
  funding: IntentView | undefined,
  refunds: readonly Refund[],
): EscrowJson {
  return {
    // Rail's id, as payouts and refunds name their origin ({ type: 'escrow', id, reference: ref }).
    id: escrow.id,
    ref: escrow.ref,
    reference: escrow.reference,
    type: escrow.type,
    status: escrow.status,
    amount: escrow.amountKobo,
    fundedAmount: escrow.fundedAmountKobo,
    currency: escrow.currency,
    description: escrow.description,
    payerEmail: escrow.payerEmail,
    recipientEmail: escrow.recipientEmail,
    metadata: escrow.metadata,
    webhookUrl: escrow.webhookUrl,
    funding: fundingOf(funding),
    disbursement: disbursementOf(escrow),
    refund: refundOf(escrow, refunds),
    createdAt: escrow.createdAt.toISOString(),
    expiresAt: escrow.expiresAt.toISOString(),
    fundedAt: escrow.fundedAt?.toISOString() ?? null,
    releasedAt: escrow.releasedAt?.toISOString() ?? null,
    cancelledAt: escrow.cancelledAt?.toISOString() ?? null,
    expiredAt: escrow.expiredAt?.toISOString() ?? null,
  }
}

/** The answer of create (docs/contracts/escrow.md §Endpoints), also given to a replay. */
export function toCreatedJson(escrow: repo.Escrow, funding: IntentView | undefined): EscrowCreatedJson {
  return {
    success: true,
    ref: escrow.ref,
    status: escrow.status,
    amount: escrow.amountKobo,
    currency: escrow.currency,
    expiresAt: escrow.expiresAt.toISOString(),
    message: 'Escrow created; it awaits funding by the payer',
    funding: fundingOf(funding),
  }
}
