// Credential rotation from the dashboard: the same rotate* service functions as the operator's
// `rail partner rotate-*` commands (no second write path), recorded in dashboard_actions before the
// rotation with what came of it after — the key id and the overlap's end, never the secret.
// The form's hidden random reference is claimed with that record, so the same form posted again (a
// double click, a reload of the answer page) rotates nothing more and shows no secret.
import { RailError } from '../../platform/errors.ts'
import { withTransaction, type Queryable } from '../../platform/db.ts'
import {
  rotateCallbackSecret,
  rotateEscrowApiKey,
  rotateSigningSecret,
  saveRotatedCredential,
  type CredentialKind,
  type PartnerCredentials,
} from '../../partners/service.ts'
import { recordAction, recordOutcome, type DashboardDeps, type Visit } from './http.ts'

export const ROTATE_ACTION = 'credentials.rotate'

export interface Issued {
  keyId?: string
  secret: string
  previousValidUntil: Date
}

export type RotateResult =
  { ok: true; issued: Issued } | { ok: false; seen: true } | { ok: false; seen: false; error: RailError }

/**
 * Records the rotation under its reference, unless that reference was already recorded: undefined
 * then. Two posts of the same form at once serialise on a lock of the partner's rotations.
 */
async function claimRotation(
  db: Queryable,
  deps: DashboardDeps,
  visit: Visit,
  detail: { kind: CredentialKind; overlapS: number; reference: string },
): Promise<string | undefined> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('dashboard.rotate:' || $1::text, 0))`, [
    visit.partner.id,
  ])
  const { rows } = await db.query(
    `SELECT 1 FROM dashboard_actions WHERE partner_id = $1 AND action = $2 AND detail->>'reference' = $3`,
    [visit.partner.id, ROTATE_ACTION, detail.reference],
  )
  if (rows.length > 0) return undefined
  return recordAction(db, deps.clock, visit, ROTATE_ACTION, visit.partner.id, detail)
}

async function rotate(deps: DashboardDeps, partnerId: string, kind: CredentialKind, overlapS: number): Promise<Issued> {
  if (kind === 'request_signing') {
    const rotation = await rotateSigningSecret(deps.pool, deps.masterKey, partnerId, overlapS)
    return {
      keyId: rotation.issued.keyId,
      secret: rotation.issued.signingSecret,
      previousValidUntil: rotation.previousValidUntil,
    }
  }
  if (kind === 'escrow_api_key') {
    const rotation = await rotateEscrowApiKey(deps.pool, partnerId, overlapS)
    return { secret: rotation.issued.escrowApiKey, previousValidUntil: rotation.previousValidUntil }
  }
  const rotation = await rotateCallbackSecret(deps.pool, deps.masterKey, partnerId, overlapS)
  return { secret: rotation.issued.callbackSigningSecret, previousValidUntil: rotation.previousValidUntil }
}

export async function rotateFromDashboard(
  deps: DashboardDeps,
  visit: Visit,
  kind: CredentialKind,
  overlapS: number,
  reference: string,
): Promise<RotateResult> {
  const actionId = await withTransaction(deps.pool, (tx) =>
    claimRotation(tx, deps, visit, { kind, overlapS, reference }),
  )
  if (actionId === undefined) return { ok: false, seen: true }
  try {
    const issued = await rotate(deps, visit.partner.id, kind, overlapS)
    // The sandbox partner's file (`npm start`'s banner, rail listen, the examples) follows the rotation, as after `rail partner rotate-*`.
    if (deps.sandboxPartnerDataDir !== undefined)
      saveRotatedCredential(deps.sandboxPartnerDataDir, visit.partner.id, savedFields(kind, issued))
    await recordOutcome(deps.pool, actionId, {
      keyId: issued.keyId ?? null,
      previousValidUntil: issued.previousValidUntil.toISOString(),
    })
    return { ok: true, issued }
  } catch (error) {
    if (!(error instanceof RailError) || error.statusCode >= 500) throw error
    await recordOutcome(deps.pool, actionId, { refused: error.message })
    return { ok: false, seen: false, error }
  }
}

/** The credentials-file fields a rotation replaces. */
function savedFields(kind: CredentialKind, issued: Issued): Partial<Omit<PartnerCredentials, 'partnerId'>> {
  if (kind === 'request_signing') return { keyId: issued.keyId!, signingSecret: issued.secret }
  if (kind === 'escrow_api_key') return { escrowApiKey: issued.secret }
  return { callbackSigningSecret: issued.secret }
}
