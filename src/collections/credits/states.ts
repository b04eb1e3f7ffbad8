// Statuses of an inbound credit and the moves between them (docs/states.md). Repos guard each
// change with `WHERE status = ANY(creditStates.from(next))`, so a credit is settled once and
// triage resolves it once; the database refuses any other change (migration 0036).
import { defineMachine } from '../../platform/state-machine.ts'

export type CreditStatus =
  'received' | 'applied' | 'unmatched' | 'refund_pending' | 'refunded' | 'assigned' | 'unattributed'

export const creditStates = defineMachine<CreditStatus>({
  name: 'inbound_credit',
  table: 'inbound_credits',
  column: 'status',
  next: {
    received: ['applied', 'unmatched', 'unattributed'], // stored first, then settled once
    applied: [], // on its account (or wallet, or owner); a refund of it is the refunds core's
    unmatched: ['refund_pending', 'assigned'], // triage: sent back to the sender, or assigned to an account
    refund_pending: ['refunded', 'unmatched'], // the refund payout ends: paid, or failed (back in triage)
    refunded: [],
    assigned: [], // applied to the account triage chose
    unattributed: [], // no partner owns its number: the operator's suspense
  },
})
