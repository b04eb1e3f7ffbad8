// States of a refund and the moves between them. Checked in SQL on every change
// (`UPDATE … WHERE state = ANY(allowed)`), so that an ending reported twice changes it once.
export type RefundState = 'pending' | 'succeeded' | 'failed'

export const REFUND_STATES: readonly RefundState[] = ['pending', 'succeeded', 'failed']

export const NEXT: Record<RefundState, readonly RefundState[]> = {
  pending: ['succeeded', 'failed'], // its payout is confirmed by the bank, or fails (its hold voided: the money is back on its source)
  succeeded: [], // the sender has the money back
  failed: [], // nothing moved for good; a new refund may be made
}

export function allowedFrom(next: RefundState): RefundState[] {
  return REFUND_STATES.filter((from) => NEXT[from].includes(next))
}

/** The states whose amount counts against a credit: money on its way back, or back. */
export const LIVE_STATES: readonly RefundState[] = ['pending', 'succeeded']
