// States of a wallet move and the moves between them. Checked in SQL on every change
// (`UPDATE … WHERE status = ANY(allowed)`), so a late or duplicate provider answer changes nothing twice.
export type MoveStatus = 'pending' | 'successful' | 'failed' | 'unknown'
export type MoveType = 'credit' | 'debit' | 'wallet_transfer' | 'bank_payout'

// pending covers both "being asked" and "accepted, in progress at the bank" (NIP 09): requery follows.
export const NEXT: Record<MoveStatus, readonly MoveStatus[]> = {
  pending: ['successful', 'failed', 'unknown'], // a final answer, or none at all (unknown)
  unknown: ['successful', 'failed'], // a requery found the final answer
  successful: [],
  failed: [],
}

/** The statuses from which a move may reach `next`. */
export function allowedFrom(next: MoveStatus): MoveStatus[] {
  return (Object.keys(NEXT) as MoveStatus[]).filter((from) => NEXT[from].includes(next))
}

export function isFinal(status: MoveStatus): boolean {
  return NEXT[status].length === 0
}
