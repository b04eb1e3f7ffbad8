// The end of a refund's payout: refunds register as the origin of their payouts in money-out's
// origin registry, so the outbound owner hands each ended payout of origin 'refund' to this module,
// on the pipeline's transaction.
import { recordEvents, type NewEvent } from '../../events/service.ts'
import type { OriginHandler, PayoutOrigins } from '../outbound/types.ts'
import type { OutboundTransfer } from '../outbound/service.ts'
import { toRefund, toRefundJson, type Refund, type RefundOrigins } from './core.ts'
import * as repo from './repo.ts'

/** Plugs refunds into money-out: a refund's payout that ends ends its refund, and tells the origin that asked through `refundOrigins`. */
export function plugRefunds(registries: { origins: PayoutOrigins; refundOrigins: RefundOrigins }): void {
  registries.origins.register('refund', refundPayoutsEnded(registries.refundOrigins))
}

/**
 * The handler of origin 'refund': each ended payout ends its refund once — confirmed → succeeded,
 * failed → failed (its hold was voided in this transaction: the money is back on its source) —
 * records refund.succeeded / refund.failed, and tells the origin that asked (escrow, triage).
 */
function refundPayoutsEnded(refundOrigins: RefundOrigins): OriginHandler {
  return async (tx, payouts, clock) => {
    const ended: Refund[] = []
    for (const payout of payouts) {
      if (payout.originId === null) continue
      const next = payout.state === 'confirmed' ? 'succeeded' : 'failed'
      const refund = await repo.complete(
        tx,
        payout.originId,
        next,
        next === 'failed' ? failureOf(payout) : null,
        clock.now(),
      )
      if (refund) ended.push(toRefund(refund))
    }
    await recordEvents(tx, clock, ended.map(refundEvent))
    for (const [type, handler] of refundOrigins.registered()) {
      const ofType = ended.filter((refund) => refund.origin.type === type)
      if (ofType.length > 0) await handler(tx, ofType, clock)
    }
  }
}

function failureOf(payout: OutboundTransfer): Record<string, unknown> {
  return payout.failureReason
    ? { ...payout.failureReason }
    : { code: 'payout_failed', message: 'The bank did not pay the refund' }
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
