// Statuses of a wallet move and the moves between them (docs/states.md). Repos guard each change
// with `WHERE status = ANY(walletMoveStates.from(next))`, so a late or duplicate provider answer
// changes nothing twice; the database refuses any other change (migration 0036).
import { defineMachine } from '../platform/state-machine.ts'

export type MoveStatus = 'pending' | 'successful' | 'failed' | 'unknown'
export type MoveType = 'credit' | 'debit' | 'wallet_transfer' | 'bank_payout'

// pending covers both "being asked" and "accepted, in progress at the bank" (NIP 09): requery follows.
export const walletMoveStates = defineMachine<MoveStatus>({
  name: 'wallet_move',
  table: 'wallet_moves',
  column: 'status',
  next: {
    pending: ['successful', 'failed', 'unknown'], // a final answer, or none at all (unknown)
    unknown: ['successful', 'failed'], // a requery found the final answer
    successful: [],
    failed: [],
  },
})
