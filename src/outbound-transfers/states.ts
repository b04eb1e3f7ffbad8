// States of an outbound transfer and the moves between them (seed 001). Checked in SQL on every
// change (`UPDATE … WHERE state = ANY(allowed)`), so a late or duplicate provider answer changes
// nothing twice.
export type OutboundState = 'pending' | 'submitted' | 'confirmed' | 'failed' | 'unknown'

export const NEXT: Record<OutboundState, readonly OutboundState[]> = {
  pending: ['submitted', 'confirmed', 'failed', 'unknown'], // the provider's first answer, or none before the deadline
  submitted: ['confirmed', 'failed', 'unknown'], // requery finds the final code, or the deadline passes
  unknown: ['confirmed', 'failed'], // a later requery (rail outbound requery) may still decide it; never auto-failed
  confirmed: [],
  failed: [],
}

export function allowedFrom(next: OutboundState): OutboundState[] {
  return (Object.keys(NEXT) as OutboundState[]).filter((from) => NEXT[from].includes(next))
}

export function isTerminal(state: OutboundState): boolean {
  return NEXT[state].length === 0
}
