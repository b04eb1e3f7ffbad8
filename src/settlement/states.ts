// States of a bank settlement (docs/settlement.md) and the moves between them, checked in SQL on
// every change (`UPDATE … WHERE state = ANY(allowed)`), so that a payout's answer arriving twice
// changes the settlement once.
export type SettlementState = 'pending' | 'paid' | 'failed'

export const SETTLEMENT_STATES: readonly SettlementState[] = ['pending', 'paid', 'failed']

export const NEXT: Record<SettlementState, readonly SettlementState[]> = {
  pending: ['paid', 'failed'], // its payout is confirmed by the bank, or fails (its hold voided: the money is back in collections)
  paid: [], // the partner's bank account has the money
  failed: [], // its credits wait again in collections; the next cycle pays them in a settlement of its own
}

export function allowedFrom(next: SettlementState): SettlementState[] {
  return SETTLEMENT_STATES.filter((from) => NEXT[from].includes(next))
}

export type SettlementMode = 'float' | 'bank'
export const SETTLEMENT_MODES: readonly SettlementMode[] = ['float', 'bank']
