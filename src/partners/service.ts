// Partners and their credentials: creation, rotation with overlap, and the look-ups that request
// authentication and callback signing need. Secrets are returned once, at creation or rotation.
import { randomBytes } from 'node:crypto'
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { open, randomBase62, seal, sha256 } from '../platform/crypto.ts'
import { RailError } from '../platform/errors.ts'
import { uuidv7 } from '../platform/ids.ts'
import { claimKeyInTransaction, type IdempotencyKey } from '../platform/idempotency-keys.ts'
import { forgetCredentialsInThisProcess } from './credential-cache.ts'
import * as repo from './repo.ts'
import type { CredentialKind, CustomerClass, Partner, PartnerCredentials, PartnerEnvironment } from './repo.ts'

export type {
  CredentialKind,
  CredentialSummary,
  CustomerClass,
  Partner,
  PartnerCredentials,
  PartnerEnvironment,
} from './repo.ts'
export { CUSTOMER_CLASSES, PARTNER_ENVIRONMENTS } from './repo.ts'
export { readSandboxPartner, SANDBOX_PARTNER_FILE, saveRotatedCredential, writeSandboxPartner } from './sandbox-file.ts'

/**
 * The oldest signing secret as it is sealed, bound to its credential's id: the master key check's
 * probe of a database that sealed secrets before it kept the check (platform/master-key.ts).
 */
export function oldestSealedSigningSecret(
  db: Queryable,
): Promise<{ sealed: Buffer; associatedData: string } | undefined> {
  return repo.selectOldestSigningSecret(db)
}

/** How long a rotated-out credential keeps working, unless the caller says otherwise. */
export const ROTATION_OVERLAP_DEFAULT_S = 24 * 60 * 60
/** Longest overlap a rotation may grant: a leaked old secret must not live on for long. */
export const ROTATION_OVERLAP_MAX_S = 30 * 24 * 60 * 60
/** Characters of an escrow API key kept in clear, so an operator can tell keys apart. */
const API_KEY_PREFIX_CHARS = 12

export interface NewPartner {
  name: string
  customerClass: CustomerClass
  environment: PartnerEnvironment
  callbackUrl?: string | null
}

export async function createPartner(pool: Pool, masterKey: Buffer, input: NewPartner): Promise<PartnerCredentials> {
  assertPartnerInput(input)
  const partnerId = uuidv7()
  return withTransaction(pool, async (tx) => {
    await repo.insertPartner(tx, {
      id: partnerId,
      name: input.name,
      customerClass: input.customerClass,
      environment: input.environment,
      callbackUrl: input.callbackUrl ?? null,
    })
    const { keyId, signingSecret } = await addSigningCredential(tx, masterKey, partnerId, input.environment)
    const { escrowApiKey } = await addEscrowApiKey(tx, partnerId, input.environment)
    const { callbackSigningSecret } = await addCallbackSecret(tx, masterKey, partnerId)
    return { partnerId, keyId, signingSecret, escrowApiKey, callbackSigningSecret }
  })
}

function assertPartnerInput(input: NewPartner): void {
  if (input.name.trim().length === 0 || input.name.length > 200)
    throw new RailError('validation_error', 'name must be 1 to 200 characters')
  if (!repo.CUSTOMER_CLASSES.includes(input.customerClass)) {
    throw new RailError('validation_error', `class must be one of ${repo.CUSTOMER_CLASSES.join(', ')}`)
  }
  if (!repo.PARTNER_ENVIRONMENTS.includes(input.environment)) {
    throw new RailError('validation_error', `env must be one of ${repo.PARTNER_ENVIRONMENTS.join(', ')}`)
  }
}

export async function listPartners(db: Queryable): Promise<Partner[]> {
  return repo.selectPartners(db)
}

export async function countPartners(db: Queryable): Promise<number> {
  return repo.countPartners(db)
}

/** Sandbox routes do not exist for live partners: they answer 404, as any unknown route does. */
export function assertSandboxPartner(partner: Pick<Partner, 'environment'>): void {
  if (partner.environment !== 'sandbox') throw new RailError('not_found', 'Route not found')
}

export async function getPartner(db: Queryable, partnerId: string): Promise<Partner | undefined> {
  return repo.selectPartner(db, partnerId)
}

/**
 * Sets the default callback URL, by a request (with its Idempotency-Key, if it sent one) or by an
 * operator. Answers the partner and whether anything changed: a request replayed on its key
 * changes nothing and answers the partner as it is.
 */
export async function setDefaultCallbackUrl(
  db: Queryable,
  partnerId: string,
  callbackUrl: string | null,
  key?: IdempotencyKey,
): Promise<{ partner: Partner; changed: boolean }> {
  const replayed = (await claimKeyInTransaction(db, key)) === 'replayed'
  const partner = replayed
    ? await repo.selectPartner(db, partnerId)
    : await repo.updatePartnerCallbackUrl(db, partnerId, callbackUrl)
  if (!partner) throw new RailError('not_found', 'Partner not found')
  return { partner, changed: !replayed }
}

/**
 * How a partner's callback URL is checked and set, and whether deliveries to it stopped. The events
 * feature owns these (the SSRF guard, the deliveries a new URL resumes) and depends on partners, so
 * the partner routes and commands are given them by the composition root instead of importing them.
 */
export interface CallbackUrls {
  assertAllowed(
    url: string,
    environment: PartnerEnvironment,
    allowLoopbackInSandbox: boolean,
    field?: string,
  ): Promise<void>
  set(
    pool: Pool,
    partner: Pick<Partner, 'id' | 'environment'>,
    url: string | null,
    allowLoopbackInSandbox: boolean,
    key?: IdempotencyKey,
  ): Promise<Partner>
  disabled(db: Queryable, partnerId: string, url: string): Promise<{ disabledAt: Date; reason: string } | undefined>
}

export interface Rotation<T> {
  issued: T
  /** The previous credentials of this kind stay valid until then. */
  previousValidUntil: Date
}

export async function rotateSigningSecret(
  pool: Pool,
  masterKey: Buffer,
  partnerId: string,
  overlapS = ROTATION_OVERLAP_DEFAULT_S,
): Promise<Rotation<{ keyId: string; signingSecret: string }>> {
  const rotation = await rotate(pool, partnerId, 'request_signing', overlapS, (tx, partner) =>
    addSigningCredential(tx, masterKey, partnerId, partner.environment),
  )
  return {
    issued: { keyId: rotation.issued.keyId, signingSecret: rotation.issued.signingSecret },
    previousValidUntil: rotation.previousValidUntil,
  }
}

export async function rotateEscrowApiKey(
  pool: Pool,
  partnerId: string,
  overlapS = ROTATION_OVERLAP_DEFAULT_S,
): Promise<Rotation<{ escrowApiKey: string }>> {
  const rotation = await rotate(pool, partnerId, 'escrow_api_key', overlapS, (tx, partner) =>
    addEscrowApiKey(tx, partnerId, partner.environment),
  )
  return { issued: { escrowApiKey: rotation.issued.escrowApiKey }, previousValidUntil: rotation.previousValidUntil }
}

export async function rotateCallbackSecret(
  pool: Pool,
  masterKey: Buffer,
  partnerId: string,
  overlapS = ROTATION_OVERLAP_DEFAULT_S,
): Promise<Rotation<{ callbackSigningSecret: string }>> {
  const rotation = await rotate(pool, partnerId, 'callback_signing', overlapS, (tx) =>
    addCallbackSecret(tx, masterKey, partnerId),
  )
  return {
    issued: { callbackSigningSecret: rotation.issued.callbackSigningSecret },
    previousValidUntil: rotation.previousValidUntil,
  }
}

/** Issues a new credential of `kind` and gives the partner's other live ones of that kind an expiry. */
async function rotate<T extends { credentialId: string }>(
  pool: Pool,
  partnerId: string,
  kind: CredentialKind,
  overlapS: number,
  issue: (tx: Queryable, partner: Partner) => Promise<T>,
): Promise<Rotation<T>> {
  if (!Number.isInteger(overlapS) || overlapS < 0 || overlapS > ROTATION_OVERLAP_MAX_S) {
    throw new RailError('validation_error', `overlap must be 0 to ${ROTATION_OVERLAP_MAX_S} seconds`)
  }
  const rotation = await withTransaction(pool, async (tx) => {
    // Lock the partner so that two concurrent rotations serialise and each sees the other's row.
    const partner = await repo.selectPartnerForUpdate(tx, partnerId)
    if (!partner) throw new RailError('not_found', 'Partner not found')
    const issued = await issue(tx, partner)
    const previousValidUntil = await repo.expireOtherCredentials(tx, partnerId, kind, issued.credentialId, overlapS)
    return { issued, previousValidUntil }
  })
  forgetCredentialsInThisProcess()
  return rotation
}

/** The partner's live credentials, without their secrets (what the dashboard's settings page lists). */
export async function listLiveCredentials(db: Queryable, partnerId: string): Promise<repo.CredentialSummary[]> {
  return repo.selectLiveCredentials(db, partnerId)
}

/** Revokes a request-signing key at once (a leaked key): later requests signed with it get 401. */
export async function revokeSigningKey(db: Queryable, keyId: string): Promise<boolean> {
  const revoked = await repo.revokeSigningKey(db, keyId)
  forgetCredentialsInThisProcess()
  return revoked
}

async function addSigningCredential(
  tx: Queryable,
  masterKey: Buffer,
  partnerId: string,
  environment: PartnerEnvironment,
): Promise<{ credentialId: string; keyId: string; signingSecret: string }> {
  const credentialId = uuidv7()
  const envTag = environment === 'live' ? 'live' : 'test'
  const keyId = `rk_kid_${envTag}_${randomBase62(20)}`
  const signingSecret = `rk_sec_${envTag}_${randomBase62(40)}`
  await repo.insertCredential(tx, {
    id: credentialId,
    partnerId,
    kind: 'request_signing',
    keyId,
    secretSealed: seal(masterKey, signingSecret, credentialId),
    apiKeyHash: null,
    apiKeyPrefix: null,
  })
  return { credentialId, keyId, signingSecret }
}

async function addEscrowApiKey(
  tx: Queryable,
  partnerId: string,
  environment: PartnerEnvironment,
): Promise<{ credentialId: string; escrowApiKey: string }> {
  const credentialId = uuidv7()
  const escrowApiKey = `rk_${environment === 'live' ? 'live' : 'test'}_${randomBase62(40)}`
  await repo.insertCredential(tx, {
    id: credentialId,
    partnerId,
    kind: 'escrow_api_key',
    keyId: null,
    secretSealed: null,
    apiKeyHash: sha256(escrowApiKey),
    apiKeyPrefix: escrowApiKey.slice(0, API_KEY_PREFIX_CHARS),
  })
  return { credentialId, escrowApiKey }
}

/** Callback secrets follow the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
async function addCallbackSecret(
  tx: Queryable,
  masterKey: Buffer,
  partnerId: string,
): Promise<{ credentialId: string; callbackSigningSecret: string }> {
  const credentialId = uuidv7()
  const callbackSigningSecret = `whsec_${randomBytes(32).toString('base64')}`
  await repo.insertCredential(tx, {
    id: credentialId,
    partnerId,
    kind: 'callback_signing',
    keyId: null,
    secretSealed: seal(masterKey, callbackSigningSecret, credentialId),
    apiKeyHash: null,
    apiKeyPrefix: null,
  })
  return { credentialId, callbackSigningSecret }
}

export interface AuthenticatedPartner {
  partner: Partner
  credentialId: string
}

/**
 * Who asks for something to be made: the partner, its credential (an API key's, or Rail's own when
 * Rail acts for the partner: the dashboard, a schedule, an escrow's expiry) and, when a request
 * asks, its X-Request-Id. Recorded on every object it makes (creatorMetadata).
 */
export interface Caller extends AuthenticatedPartner {
  requestId?: string
}

/** The caller as an object it made records it. */
export function creatorMetadata(caller: Caller): Record<string, unknown> {
  return { partnerId: caller.partner.id, credentialId: caller.credentialId, requestId: caller.requestId ?? null }
}

/** A live credential as authentication needs it; `expiresAt` bounds how long it may be remembered. */
export interface FoundCredential extends AuthenticatedPartner {
  expiresAt: Date | null
}

/** The partner and signing secret behind a live key id, or undefined. */
export async function findSigningKey(
  db: Queryable,
  masterKey: Buffer,
  keyId: string,
): Promise<(FoundCredential & { signingSecret: string }) | undefined> {
  const found = await repo.selectActiveSigningCredential(db, keyId)
  if (!found?.secretSealed) return undefined
  return {
    partner: found.partner,
    credentialId: found.credentialId,
    expiresAt: found.expiresAt,
    signingSecret: open(masterKey, found.secretSealed, found.credentialId),
  }
}

/** The partner behind a live escrow API key, or undefined. The key is looked up by its hash. */
export async function findByEscrowApiKey(db: Queryable, apiKey: string): Promise<FoundCredential | undefined> {
  const found = await repo.selectActiveEscrowApiKey(db, sha256(apiKey))
  return found && { partner: found.partner, credentialId: found.credentialId, expiresAt: found.expiresAt }
}

/** The secret that signs this partner's callbacks now, or undefined when it has none. */
export async function currentCallbackSecret(
  db: Queryable,
  masterKey: Buffer,
  partnerId: string,
): Promise<string | undefined> {
  const found = await repo.selectNewestCallbackSecret(db, partnerId)
  return found && open(masterKey, found.secretSealed, found.credentialId)
}
