// Triage from the dashboard: assign an unmatched credit to another of the partner's accounts, or
// refund it to its sender — through resolveUnmatched, the same service function as
// POST /api/v1/rail/unmatched/{id}/resolve. Each is recorded in dashboard_actions before the
// service runs (a refund makes a payout the bank is then asked to pay), and what came of it after.
// Each form carries a random reference: the same form sent again (a double click, a reload of the
// post) is answered as a replay and resolves nothing a second time — which matters for a refund
// whose payout failed, after which the credit is unmatched again and could be refunded anew.
import { RailError } from '../../platform/errors.ts'
import { resolveUnmatched, type Resolution } from '../../collections/credits/service.ts'
import { DASHBOARD_CREDENTIAL } from './actions.ts'
import { recordAction, recordOutcome, type DashboardDeps, type Visit } from './http.ts'

export type TriageOutcome =
  { kind: 'resolved'; status: string } | { kind: 'replayed' } | { kind: 'refused'; error: RailError }

/**
 * Whether this form was sent before and not refused: the same action on this credit with the same
 * form reference (other than the action `exceptId`). A refused or failed one changed nothing (the
 * service's transaction rolled back), so sending it again simply tries again.
 */
async function sentBefore(
  deps: DashboardDeps,
  visit: Visit,
  action: string,
  creditId: string,
  reference: string,
  exceptId: string | null,
): Promise<boolean> {
  const { rowCount } = await deps.pool.query(
    `SELECT 1 FROM dashboard_actions
      WHERE partner_id = $1 AND object_id = $2 AND action = $3 AND detail->>'reference' = $4 AND NOT detail ?| array['refused', 'failed'] AND ($5::bigint IS NULL OR id <> $5)
      LIMIT 1`,
    [visit.partner.id, creditId, action, reference, exceptId],
  )
  return rowCount === 1
}

function actionOf(resolution: Resolution): { action: string; detail: Record<string, unknown> } {
  if (resolution.action === 'refund') return { action: 'unmatched.refund', detail: {} }
  return { action: 'unmatched.assign', detail: { target: resolution.target } }
}

/** Resolves the credit once per form reference; a refusal (RailError 4xx) is recorded and answered, anything else recorded and thrown. */
export async function resolveFromDashboard(
  deps: DashboardDeps,
  visit: Visit,
  requestId: string,
  creditId: string,
  reference: string,
  resolution: Resolution,
): Promise<TriageOutcome> {
  const { action, detail } = actionOf(resolution)
  if (await sentBefore(deps, visit, action, creditId, reference, null)) return { kind: 'replayed' }
  const actionId = await recordAction(deps.pool, deps.clock, visit, action, creditId, { reference, ...detail })
  try {
    const resolved = await resolveUnmatched(
      deps.collections,
      { partner: visit.partner, credentialId: DASHBOARD_CREDENTIAL, requestId },
      creditId,
      resolution,
    )
    await recordOutcome(deps.pool, actionId, { status: resolved.status, resolution: resolved.resolution })
    return { kind: 'resolved', status: resolved.status }
  } catch (error) {
    if (!(error instanceof RailError) || error.statusCode >= 500) {
      await recordOutcome(deps.pool, actionId, { failed: error instanceof Error ? error.message : String(error) })
      throw error
    }
    await recordOutcome(deps.pool, actionId, { refused: error.message })
    // The same form sent twice at once: the other one resolved the credit; this one is its replay.
    if (await sentBefore(deps, visit, action, creditId, reference, actionId)) return { kind: 'replayed' }
    return { kind: 'refused', error }
  }
}
