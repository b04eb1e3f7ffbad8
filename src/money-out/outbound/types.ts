// Types other features use to take part in outbound transfers (a refund is the origin of its payouts).
import type { Clock } from '../../platform/clock.ts'
import type { Tx } from '../../platform/db.ts'
import { Registry } from '../../platform/registry.ts'
import type { OriginType, OutboundTransfer } from './repo.ts'

/** What an origin other than the partner (a refund) does when its payout ends, on the same transaction. */
export type OriginHandler = (tx: Tx, transfers: readonly OutboundTransfer[], clock: Clock) => Promise<void>

/** The origins Rail pays out for itself; the partner's own payouts tell no one. */
export type PayoutOriginType = Exclude<OriginType, 'partner'>

/**
 * Money-out's origin registry: each product that makes payouts of its own (refunds, escrow,
 * settlement) registers what happens when one of them ends. The outbound owner calls them on the
 * pipeline's transaction, in this order (each locks its own rows; escrow's refunds and its
 * disbursement both lock the escrow, always refunds first).
 */
export type PayoutOrigins = Registry<PayoutOriginType, OriginHandler>

export function payoutOrigins(): PayoutOrigins {
  return new Registry<PayoutOriginType, OriginHandler>('payout origin', ['refund', 'escrow', 'settlement'])
}
