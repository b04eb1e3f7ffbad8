// Statuses of an escrow (seed 002) and the moves between them. Checked in SQL on every change
// (`UPDATE … WHERE status = ANY(allowed)`), so that release, cancel, expiry and funding racing on
// one escrow change it once: the first to commit wins, the others find it elsewhere.
export type EscrowStatus = 'initiated' | 'funded' | 'released' | 'cancelled' | 'expired'

export const ESCROW_STATUSES: readonly EscrowStatus[] = ['initiated', 'funded', 'released', 'cancelled', 'expired']

// Allowed next statuses. Anything else is refused (400 invalid_escrow_status) or, for a credit, unmatched.
export const NEXT: Record<EscrowStatus, readonly EscrowStatus[]> = {
  initiated: ['funded', 'cancelled', 'expired'], // credits reach the amount; the partner cancels; the TTL elapses first
  funded: ['released', 'cancelled'], // the partner releases to the recipient, or cancels and the payer is refunded
  released: [], // money is the recipient's (payable); nothing undoes it here
  cancelled: [], // any funded amount went back to the payer (payable)
  expired: [], // any partial funding went back to the payer (payable)
}

export function allowedFrom(next: EscrowStatus): EscrowStatus[] {
  return ESCROW_STATUSES.filter((from) => NEXT[from].includes(next))
}
