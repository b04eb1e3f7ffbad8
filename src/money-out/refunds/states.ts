// States of a refund and the moves between them (docs/states.md). Repos guard each change with
// `WHERE state = ANY(refundStates.from(next))`, so that an ending reported twice changes it once;
// the database refuses any other change (migration 0036).
import { defineMachine } from '../../platform/state-machine.ts'

export type RefundState = 'pending' | 'succeeded' | 'failed'

export const refundStates = defineMachine<RefundState>({
  name: 'refund',
  table: 'refunds',
  column: 'state',
  next: {
    pending: ['succeeded', 'failed'], // its payout is confirmed by the bank, or fails (its hold voided: the money is back on its source)
    succeeded: [], // the sender has the money back
    failed: [], // nothing moved for good; a new refund may be made
  },
})

/** The states whose amount counts against a credit: money on its way back, or back. */
export const LIVE_STATES: readonly RefundState[] = ['pending', 'succeeded']
