// States of an outbound transfer and the moves between them (docs/states.md). Repos guard each
// change with `WHERE state = ANY(outboundStates.from(next))`, so a late or duplicate provider
// answer changes nothing twice; the database refuses any other change (migrations 0036, 0053).
import { defineMachine } from '../../platform/state-machine.ts'

export type OutboundState = 'pending' | 'submitted' | 'confirmed' | 'failed' | 'unknown' | 'reversed'

export const outboundStates = defineMachine<OutboundState>({
  name: 'outbound_transfer',
  table: 'outbound_transfers',
  column: 'state',
  next: {
    pending: ['submitted', 'confirmed', 'failed', 'unknown'], // the provider's first answer, or none before the deadline
    submitted: ['confirmed', 'failed', 'unknown'], // requery finds the final code, or the deadline passes
    unknown: ['confirmed', 'failed'], // a later requery (rail outbound requery) may still decide it; never auto-failed
    // The provider paid, then took the money back, and said so when asked (docs/decisions/0016-payout-reversals.md).
    confirmed: ['reversed'],
    failed: [],
    reversed: [],
  },
})

/**
 * The states in which the bank's answer is final: the hold is posted or voided, the origin has
 * heard, the transfer has its terminal moment. Confirmed is one though it may still be reversed:
 * a reversal is a new fact with its own ledger transfer, not the payout's answer changing.
 */
export const FINAL_STATES: readonly OutboundState[] = ['confirmed', 'failed', 'reversed']

export function isFinal(state: OutboundState): boolean {
  return FINAL_STATES.includes(state)
}
