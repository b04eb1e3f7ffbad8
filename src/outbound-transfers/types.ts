// Types other features use to take part in outbound transfers (a refund is the origin of its payouts).
import type { Clock } from '../platform/clock.ts'
import type { Tx } from '../platform/db.ts'
import type { OriginType, OutboundTransfer } from './repo.ts'

/** What an origin other than the partner (a refund) does when its payout ends, on the same transaction. */
export type OriginHandler = (tx: Tx, transfers: readonly OutboundTransfer[], clock: Clock) => Promise<void>
export type Origins = Partial<Record<OriginType, OriginHandler>>
