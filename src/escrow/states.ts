// Statuses of an escrow (seed 002) and the moves between them. Checked in SQL on every change
// (`UPDATE … WHERE status = ANY(allowed)`), so that release, cancel, expiry and funding racing on
// one escrow change it once: the first to commit wins, the others find it elsewhere.
export type EscrowStatus = 'initiated' | 'funded' | 'released' | 'cancelled' | 'expired'

export const ESCROW_STATUSES: readonly EscrowStatus[] = ['initiated', 'funded', 'released', 'cancelled', 'expired']

// Allowed next statuses. Anything else is refused (400 invalid_escrow_status) or, for a credit, unmatched.
export const NEXT: Record<EscrowStatus, readonly EscrowStatus[]> = {
  initiated: ['funded', 'cancelled', 'expired'], // credits reach the amount; the partner cancels; the TTL elapses first
  funded: ['released', 'cancelled'], // the partner releases to the recipient, or cancels and the payer is refunded
  released: [], // the amount is the recipient's: being disbursed (below); nothing undoes it here
  cancelled: [], // any funded amount is being refunded to the payer, credit by credit (below)
  expired: [], // any partial funding is being refunded to the payer, credit by credit (below)
}

export function allowedFrom(next: EscrowStatus): EscrowStatus[] {
  return ESCROW_STATUSES.filter((from) => NEXT[from].includes(next))
}

// The disbursement of a released escrow (docs/escrow.md "Disbursement"). Null until release.
// A bank disbursement is pending until its payout ends; a float disbursement is paid at once.
export type DisbursementState = 'pending' | 'paid' | 'failed'

export const DISBURSEMENT_NEXT: Record<DisbursementState, readonly DisbursementState[]> = {
  pending: ['paid', 'failed'], // the payout is confirmed by the bank, or fails (its hold voided: the money is held again)
  paid: [], // the recipient (or the partner's float) has the money
  failed: ['pending'], // the partner releases again, to another destination or the same one
}

// The refund of a cancelled or expired escrow's funding, or of an overfunded escrow's excess.
// Null when nothing is to be refunded. Its refunds (one per funding credit) each end succeeded or
// failed; the refund is refunded once all succeeded, failed as soon as one failed.
export type EscrowRefundState = 'pending' | 'refunded' | 'failed'

export const REFUND_NEXT: Record<EscrowRefundState, readonly EscrowRefundState[]> = {
  pending: ['refunded', 'failed'],
  refunded: [],
  failed: ['pending'], // the partner retries the failed refunds (PATCH /:ref/refund)
}

export function disbursementAllowedFrom(next: DisbursementState): DisbursementState[] {
  return (Object.keys(DISBURSEMENT_NEXT) as DisbursementState[]).filter((from) => DISBURSEMENT_NEXT[from].includes(next))
}

export function refundAllowedFrom(next: EscrowRefundState): EscrowRefundState[] {
  return (Object.keys(REFUND_NEXT) as EscrowRefundState[]).filter((from) => REFUND_NEXT[from].includes(next))
}
