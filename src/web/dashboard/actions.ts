// How the dashboard acts: as the session's partner, through the same service functions as the
// API routes, each action recorded in dashboard_actions before the service is
// called (and so before any bank is asked) and what came of it — the object made, its new state,
// or the service's refusal — added to that record after.
import type { FastifyRequest } from 'fastify'
import type { Caller } from '../../partners/service.ts'
import { RailError } from '../../platform/errors.ts'
import { recordAction, recordOutcome, type DashboardDeps, type Visit } from './http.ts'

/**
 * The credential the services record as the creator (creatorMetadata.credentialId, a payout's
 * creator) of what the dashboard does: the session's partner acts through no API credential.
 */
export const DASHBOARD_CREDENTIAL = 'rail:dashboard'

/** The session's partner as the services' caller; the request id ties their records to the log. */
export function dashboardCaller(visit: Visit, request: FastifyRequest): Caller {
  return { partner: visit.partner, credentialId: DASHBOARD_CREDENTIAL, requestId: request.id }
}

export interface RecordedAction {
  /** What was done, e.g. invoice.publish. */
  name: string
  /** The object acted on; null for a create (what it made goes into the outcome). */
  objectId: string | null
  detail: Record<string, unknown>
}

/**
 * Records the action, runs the service call, then records its outcome. A service refusal
 * (RailError) is recorded as `refused` with its message and thrown on, for `refusedAction`.
 */
export async function runRecorded<T>(
  deps: DashboardDeps,
  visit: Visit,
  action: RecordedAction,
  run: () => Promise<T>,
  outcomeOf: (result: T) => Record<string, unknown>,
): Promise<T> {
  const actionId = await recordAction(deps.pool, deps.clock, visit, action.name, action.objectId, action.detail)
  let result: T
  try {
    result = await run()
  } catch (error) {
    if (error instanceof RailError) await recordOutcome(deps.pool, actionId, { refused: error.message })
    throw error
  }
  await recordOutcome(deps.pool, actionId, outcomeOf(result))
  return result
}
