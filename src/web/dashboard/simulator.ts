// The sandbox settlement simulator on a transfer's page: the same service function as
// POST /api/v1/rail/sandbox/simulate-outbound-settlement (no second write path), for the session's partner's
// own sandbox transfer, recorded in dashboard_actions before the bank is asked, its refusal after.
import { RailError } from '../../platform/errors.ts'
import { simulateSettlement } from '../../money-out/outbound/service.ts'
import { runRecorded } from './actions.ts'
import type { DashboardDeps, Visit } from './http.ts'

export const SETTLE_OUTCOMES = ['confirmed', 'failed'] as const
export type SettleOutcome = (typeof SETTLE_OUTCOMES)[number]

/** ok, or why not (a live partner, or the service's refusal message). */
export async function settleFromDashboard(
  deps: DashboardDeps,
  visit: Visit,
  transferId: string,
  outcome: SettleOutcome,
): Promise<{ ok: true } | { ok: false; message: string }> {
  if (visit.partner.environment !== 'sandbox')
    return { ok: false, message: 'The simulator is only for sandbox partners.' }
  const action = { name: 'sandbox.settle_outbound', objectId: transferId, detail: { outcome } }
  try {
    await runRecorded(
      deps,
      visit,
      action,
      () => simulateSettlement(deps.outbound, visit.partner, { transferId, outcome }),
      () => ({}),
    )
  } catch (error) {
    if (!(error instanceof RailError)) throw error
    return { ok: false, message: error.message }
  }
  return { ok: true }
}
