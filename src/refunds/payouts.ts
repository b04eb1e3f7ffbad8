// The end of a refund's payout: the outbound owner hands each ended payout of origin 'refund' to
// this module, on the pipeline's transaction.
import { recordEvents, type NewEvent } from '../events/service.ts'
import type { OriginHandler } from '../outbound-transfers/types.ts'
import type { OutboundTransfer } from '../outbound-transfers/service.ts'
import { toRefund, toRefundJson, type Refund, type RefundsDeps } from './core.ts'
import * as repo from './repo.ts'

/**
 * The outbound owner's handler for origin 'refund': each ended payout ends its refund once —
 * confirmed → succeeded, failed → failed (its hold was voided in this transaction: the money is
 * back on its source) — records refund.succeeded / refund.failed, and tells the origin that
 * asked (escrow, triage).
 */
export function refundPayoutsEnded(onEnded: RefundsDeps['onEnded']): OriginHandler {
  return async (tx, payouts, clock) => {
    const ended: Refund[] = []
    for (const payout of payouts) {
      if (payout.originId === null) continue
      const next = payout.state === 'confirmed' ? 'succeeded' : 'failed'
      const refund = await repo.complete(tx, payout.originId, next, next === 'failed' ? failureOf(payout) : null, clock.now())
      if (refund) ended.push(toRefund(refund))
    }
    await recordEvents(tx, clock, ended.map(refundEvent))
    for (const type of ['escrow', 'triage'] as const) {
      const ofType = ended.filter((refund) => refund.origin.type === type)
      const handler = onEnded[type]
      if (ofType.length > 0 && handler) await handler(tx, ofType, clock)
    }
  }
}

function failureOf(payout: OutboundTransfer): Record<string, unknown> {
  return payout.failureReason ? { ...payout.failureReason } : { code: 'payout_failed', message: 'The bank did not pay the refund' }
}

function refundEvent(refund: Refund): NewEvent {
  return {
    partnerId: refund.partnerId,
    type: refund.state === 'succeeded' ? 'refund.succeeded' : 'refund.failed',
    objectType: 'refund',
    objectId: refund.id,
    data: toRefundJson(refund),
  }
}
