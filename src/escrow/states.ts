// The state machines of an escrow (docs/escrow.md, docs/states.md): its status, its disbursement
// and its refund (each refund of a funding credit is the refunds module's, src/money-out/refunds/states.ts).
// Repos guard each change with `WHERE status = ANY(escrowStates.from(next))`, so that release,
// cancel, expiry and funding racing on one escrow change it once: the first to commit wins, the
// others find it elsewhere. The database refuses any other change (migration 0036).
import { defineMachine } from '../platform/state-machine.ts'

export type EscrowStatus = 'initiated' | 'funded' | 'released' | 'cancelled' | 'expired'

// A move the table refuses is answered 400 invalid_escrow_status or, for a credit, unmatched.
export const escrowStates = defineMachine<EscrowStatus>({
  name: 'escrow',
  table: 'escrows',
  column: 'status',
  next: {
    initiated: ['funded', 'cancelled', 'expired'], // credits reach the amount; the partner cancels; the TTL elapses first
    funded: ['released', 'cancelled'], // the partner releases to the recipient, or cancels and the payer is refunded
    released: [], // the amount is the recipient's: being disbursed (below); nothing undoes it here
    cancelled: [], // any funded amount is being refunded to the payer, credit by credit (below)
    expired: [], // any partial funding is being refunded to the payer, credit by credit (below)
  },
})

// The disbursement of a released escrow (docs/escrow.md "Disbursement"). Null until release.
// A bank disbursement is pending until its payout ends; a float disbursement is paid at once.
export type DisbursementState = 'pending' | 'paid' | 'failed'

export const disbursementStates = defineMachine<DisbursementState>({
  name: 'escrow_disbursement',
  table: 'escrows',
  column: 'disbursement_state',
  fromNull: ['pending'], // the release starts it
  next: {
    pending: ['paid', 'failed'], // the payout is confirmed by the bank, or fails (its hold voided: the money is held again)
    paid: [], // the recipient (or the partner's float) has the money
    failed: ['pending'], // the partner releases again, to another destination or the same one
  },
})

// The refund of a cancelled or expired escrow's funding, or of an overfunded escrow's excess.
// Null when nothing is to be refunded. Its refunds (one per funding credit, made by the refunds
// module) each end succeeded or failed; the refund is refunded once all succeeded, failed as
// soon as one failed.
export type EscrowRefundState = 'pending' | 'refunded' | 'failed'

export const escrowRefundStates = defineMachine<EscrowRefundState>({
  name: 'escrow_refund',
  table: 'escrows',
  column: 'refund_state',
  fromNull: ['pending'], // a cancel, an expiry or an excess starts it
  next: {
    pending: ['refunded', 'failed'],
    refunded: [],
    failed: ['pending'], // the partner retries the failed refunds (PATCH /:ref/refund)
  },
})
