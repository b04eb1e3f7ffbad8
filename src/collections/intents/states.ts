// Statuses of a payment intent and the moves between them (docs/states.md). Repos guard each
// change with `WHERE status = ANY(intentStates.from(next))`; the database refuses any other change
// (migration 0036).
import { defineMachine } from '../../platform/state-machine.ts'

export type IntentStatus = 'pending' | 'partially_paid' | 'paid' | 'overpaid' | 'expired'

// A credit adds to what was received and the status follows (with no expected amount any credit
// pays it); credits applied in one batch may skip a status, so each moves to any later one.
export const intentStates = defineMachine<IntentStatus>({
  name: 'payment_intent',
  table: 'payment_intents',
  column: 'status',
  next: {
    pending: ['partially_paid', 'paid', 'overpaid', 'expired'], // credits, or its expiry (stand-alone intents)
    partially_paid: ['paid', 'overpaid', 'expired'],
    paid: ['overpaid'], // a credit past the expected amount
    overpaid: [],
    expired: [], // its account is archived: later credits go to triage
  },
})
