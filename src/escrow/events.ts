// The signed events of an escrow's changes, and where they go.
import { recordEvent, type EventSigning } from '../events/service.ts'
import type { Clock } from '../platform/clock.ts'
import type { Queryable } from '../platform/db.ts'
import * as repo from './repo.ts'
import { disbursementOf } from './views.ts'

/** Seals a webhookSecret to its partner's registration: a copy on another row does not open. */
export function webhookSecretBinding(partnerId: string): string {
  return `escrow_webhook:${partnerId}`
}

/**
 * The signed event of a change. Target: the escrow's own webhookUrl, else the registered escrow
 * webhook, else (neither) the partner's default callback URL like any event. Signature: the
 * registered webhookSecret when there is one; none for an escrow webhook without a secret (the
 * contract signs only when a secret is registered: docs/contracts/escrow.md §Webhooks); the partner's callback secret on the default URL.
 */
type EscrowEventType =
  | 'escrow.funded'
  | 'escrow.released'
  | 'escrow.cancelled'
  | 'escrow.expired'
  | 'escrow.disbursed'
  | 'escrow.disbursement_failed'
  | 'escrow.refunded'
  | 'escrow.refund_failed'

export async function emit(
  tx: Queryable,
  clock: Clock,
  escrow: repo.Escrow,
  type: EscrowEventType,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const webhook = await repo.selectWebhook(tx, escrow.partnerId)
  const url = escrow.webhookUrl ?? webhook?.url ?? null
  const signing: EventSigning = webhook?.secretSealed
    ? { kind: 'sealed', secretSealed: webhook.secretSealed, boundTo: webhookSecretBinding(escrow.partnerId) }
    : url !== null
      ? { kind: 'none' }
      : { kind: 'partner' }
  const data: Record<string, unknown> = {
    ref: escrow.ref,
    status: escrow.status,
    amount: escrow.amountKobo,
    currency: escrow.currency,
  }
  if (type === 'escrow.released') data.releasedAt = escrow.releasedAt!.toISOString()
  if (type === 'escrow.disbursed' || type === 'escrow.disbursement_failed') data.disbursement = disbursementOf(escrow)
  Object.assign(data, extra)
  await recordEvent(tx, clock, {
    partnerId: escrow.partnerId,
    type,
    objectType: 'escrow',
    objectId: escrow.ref,
    data,
    metadata: escrow.metadata,
    callbackUrl: url,
    signing,
  })
}
