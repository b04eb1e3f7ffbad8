// States of a bank settlement (docs/settlement.md) and the moves between them (docs/states.md).
// Repos guard each change with `WHERE state = ANY(settlementStates.from(next))`, so that a
// payout's answer arriving twice changes the settlement once; the database refuses any other
// change (migration 0036).
import { defineMachine } from '../platform/state-machine.ts'

export type SettlementState = 'pending' | 'paid' | 'failed'

export const settlementStates = defineMachine<SettlementState>({
  name: 'settlement',
  table: 'settlements',
  column: 'state',
  next: {
    pending: ['paid', 'failed'], // its payout is confirmed by the bank, or fails (its hold voided: the money is back in collections)
    paid: [], // the partner's bank account has the money
    failed: [], // its credits wait again in collections; the next cycle pays them in a settlement of its own
  },
})

export type SettlementMode = 'float' | 'bank'
