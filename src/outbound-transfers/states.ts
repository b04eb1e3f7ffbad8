// States of an outbound transfer and the moves between them (docs/states.md). Repos guard each
// change with `WHERE state = ANY(outboundStates.from(next))`, so a late or duplicate provider
// answer changes nothing twice; the database refuses any other change (migration 0036).
import { defineMachine } from '../platform/state-machine.ts'

export type OutboundState = 'pending' | 'submitted' | 'confirmed' | 'failed' | 'unknown'

export const outboundStates = defineMachine<OutboundState>({
  name: 'outbound_transfer',
  table: 'outbound_transfers',
  column: 'state',
  next: {
    pending: ['submitted', 'confirmed', 'failed', 'unknown'], // the provider's first answer, or none before the deadline
    submitted: ['confirmed', 'failed', 'unknown'], // requery finds the final code, or the deadline passes
    unknown: ['confirmed', 'failed'], // a later requery (rail outbound requery) may still decide it; never auto-failed
    confirmed: [],
    failed: [],
  },
})
