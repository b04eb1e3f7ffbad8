// The Redeliver button: the same service function as POST /api/v1/rail/events/{id}/redeliver
// (redeliverEvent, no second write path), recorded in dashboard_actions before it runs, with what
// came of it after. The API keys a redelivery by its request's Idempotency-Key; the dashboard keys it
// by the form's hidden random reference, so a double-submitted form schedules one redelivery.
import { RailError } from '../../platform/errors.ts'
import { withTransaction } from '../../platform/db.ts'
import { idempotencyKeyFor, type IdempotencyKey } from '../../platform/idempotency-keys.ts'
import { redeliverEvent } from '../../events/service.ts'
import { runRecorded } from './actions.ts'
import type { DashboardDeps, Visit } from './http.ts'

/** The claim key of a dashboard redelivery; its prefix keeps it apart from the keys clients choose. */
export function redeliveryKey(partnerId: string, eventId: string, reference: string): IdempotencyKey {
  return idempotencyKeyFor(partnerId, `dashboard:redeliver:${reference}`, { redeliver: eventId })
}

export type RedeliverResult = { ok: true; replayed: boolean } | { ok: false; error: RailError }

export async function redeliverFromDashboard(
  deps: DashboardDeps,
  visit: Visit,
  eventId: string,
  reference: string,
): Promise<RedeliverResult> {
  const action = { name: 'event.redeliver', objectId: eventId, detail: { reference } }
  try {
    const { replayed } = await runRecorded(
      deps,
      visit,
      action,
      () =>
        withTransaction(deps.pool, (tx) =>
          redeliverEvent(
            tx,
            deps.clock,
            visit.partner.id,
            eventId,
            redeliveryKey(visit.partner.id, eventId, reference),
          ),
        ),
      ({ view, replayed }) => (replayed ? { replayed: true } : { deliveryId: view.deliveries.at(-1)?.id ?? null }),
    )
    return { ok: true, replayed }
  } catch (error) {
    if (!(error instanceof RailError) || error.statusCode >= 500) throw error
    return { ok: false, error }
  }
}
