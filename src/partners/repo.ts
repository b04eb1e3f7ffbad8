// SQL of the partners module: partners and their credentials. Row ↔ object mapping lives here.
import type { Queryable } from '../platform/db.ts'

export type CustomerClass = 'government' | 'corporate' | 'fintech' | 'citizen'
export type PartnerEnvironment = 'sandbox' | 'live'
export type CredentialKind = 'request_signing' | 'escrow_api_key' | 'callback_signing'

export const CUSTOMER_CLASSES: readonly CustomerClass[] = ['government', 'corporate', 'fintech', 'citizen']
export const PARTNER_ENVIRONMENTS: readonly PartnerEnvironment[] = ['sandbox', 'live']

/** What a partner is given once at creation: its id and its credentials, secrets included. */
export interface PartnerCredentials {
  partnerId: string
  keyId: string
  signingSecret: string
  escrowApiKey: string
  callbackSigningSecret: string
}

export interface Partner {
  id: string
  name: string
  customerClass: CustomerClass
  environment: PartnerEnvironment
  callbackUrl: string | null
  createdAt: Date
}

interface PartnerRow {
  id: string
  name: string
  customer_class: CustomerClass
  environment: PartnerEnvironment
  callback_url: string | null
  created_at: Date
}

const PARTNER_COLUMNS = 'id, name, customer_class, environment, callback_url, created_at'

function toPartner(row: PartnerRow): Partner {
  return {
    id: row.id,
    name: row.name,
    customerClass: row.customer_class,
    environment: row.environment,
    callbackUrl: row.callback_url,
    createdAt: row.created_at,
  }
}

export async function insertPartner(db: Queryable, partner: Omit<Partner, 'createdAt'>): Promise<void> {
  await db.query(
    `INSERT INTO partners (id, name, customer_class, environment, callback_url) VALUES ($1, $2, $3, $4, $5)`,
    [partner.id, partner.name, partner.customerClass, partner.environment, partner.callbackUrl],
  )
}

export async function selectPartner(db: Queryable, partnerId: string): Promise<Partner | undefined> {
  const result = await db.query<PartnerRow>(`SELECT ${PARTNER_COLUMNS} FROM partners WHERE id = $1`, [partnerId])
  return result.rows[0] && toPartner(result.rows[0])
}

export async function selectPartnerForUpdate(db: Queryable, partnerId: string): Promise<Partner | undefined> {
  const result = await db.query<PartnerRow>(`SELECT ${PARTNER_COLUMNS} FROM partners WHERE id = $1 FOR UPDATE`, [
    partnerId,
  ])
  return result.rows[0] && toPartner(result.rows[0])
}

export async function countPartners(db: Queryable): Promise<number> {
  const result = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM partners')
  return result.rows[0]!.count
}

export async function selectPartners(db: Queryable): Promise<Partner[]> {
  const result = await db.query<PartnerRow>(`SELECT ${PARTNER_COLUMNS} FROM partners ORDER BY created_at, id`)
  return result.rows.map(toPartner)
}

/** Sets the default callback URL. */
export async function updatePartnerCallbackUrl(
  db: Queryable,
  partnerId: string,
  callbackUrl: string | null,
): Promise<Partner | undefined> {
  const result = await db.query<PartnerRow>(
    `UPDATE partners SET callback_url = $2, updated_at = now() WHERE id = $1 RETURNING ${PARTNER_COLUMNS}`,
    [partnerId, callbackUrl],
  )
  return result.rows[0] && toPartner(result.rows[0])
}

export interface NewCredential {
  id: string
  partnerId: string
  kind: CredentialKind
  keyId: string | null
  secretSealed: Buffer | null
  apiKeyHash: Buffer | null
  apiKeyPrefix: string | null
}

export async function insertCredential(db: Queryable, credential: NewCredential): Promise<void> {
  await db.query(
    `INSERT INTO partner_credentials (id, partner_id, kind, key_id, secret_sealed, api_key_hash, api_key_prefix)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      credential.id,
      credential.partnerId,
      credential.kind,
      credential.keyId,
      credential.secretSealed,
      credential.apiKeyHash,
      credential.apiKeyPrefix,
    ],
  )
}

/**
 * Gives every live credential of this kind (other than `keepId`) an expiry `overlapS` seconds from
 * now, unless it already expires sooner: the overlap of a rotation.
 */
export async function expireOtherCredentials(
  db: Queryable,
  partnerId: string,
  kind: CredentialKind,
  keepId: string,
  overlapS: number,
): Promise<Date> {
  const result = await db.query<{ until: Date }>(
    `WITH updated AS (
       UPDATE partner_credentials
          SET expires_at = LEAST(COALESCE(expires_at, 'infinity'), now() + make_interval(secs => $4))
        WHERE partner_id = $1 AND kind = $2 AND id <> $3 AND revoked_at IS NULL
          AND (expires_at IS NULL OR expires_at > now())
        RETURNING expires_at)
     SELECT now() + make_interval(secs => $4) AS until`,
    [partnerId, kind, keepId, overlapS],
  )
  return result.rows[0]!.until
}

export interface ActiveCredential {
  credentialId: string
  partner: Partner
  secretSealed: Buffer | null
  /** When a rotation's overlap ends this credential; null while it has no end. */
  expiresAt: Date | null
}

const ACTIVE = `c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > now())`

export async function selectActiveSigningCredential(
  db: Queryable,
  keyId: string,
): Promise<ActiveCredential | undefined> {
  const result = await db.query<PartnerRow & { credential_id: string; secret_sealed: Buffer; expires_at: Date | null }>(
    `SELECT c.id AS credential_id, c.secret_sealed, c.expires_at, p.id, p.name, p.customer_class, p.environment, p.callback_url, p.created_at
       FROM partner_credentials c JOIN partners p ON p.id = c.partner_id
      WHERE c.key_id = $1 AND c.kind = 'request_signing' AND ${ACTIVE}`,
    [keyId],
  )
  const row = result.rows[0]
  return (
    row && {
      credentialId: row.credential_id,
      partner: toPartner(row),
      secretSealed: row.secret_sealed,
      expiresAt: row.expires_at,
    }
  )
}

export async function selectActiveEscrowApiKey(
  db: Queryable,
  apiKeyHash: Buffer,
): Promise<ActiveCredential | undefined> {
  const result = await db.query<PartnerRow & { credential_id: string; expires_at: Date | null }>(
    `SELECT c.id AS credential_id, c.expires_at, p.id, p.name, p.customer_class, p.environment, p.callback_url, p.created_at
       FROM partner_credentials c JOIN partners p ON p.id = c.partner_id
      WHERE c.api_key_hash = $1 AND c.kind = 'escrow_api_key' AND ${ACTIVE}`,
    [apiKeyHash],
  )
  const row = result.rows[0]
  return (
    row && { credentialId: row.credential_id, partner: toPartner(row), secretSealed: null, expiresAt: row.expires_at }
  )
}

/** The newest live callback-signing secret: during a rotation overlap, callbacks use the new one. */
export async function selectNewestCallbackSecret(
  db: Queryable,
  partnerId: string,
): Promise<{ credentialId: string; secretSealed: Buffer } | undefined> {
  const result = await db.query<{ id: string; secret_sealed: Buffer }>(
    `SELECT c.id, c.secret_sealed FROM partner_credentials c
      WHERE c.partner_id = $1 AND c.kind = 'callback_signing' AND ${ACTIVE}
      ORDER BY c.created_at DESC, c.id DESC LIMIT 1`,
    [partnerId],
  )
  const row = result.rows[0]
  return row && { credentialId: row.id, secretSealed: row.secret_sealed }
}

/** A live credential as a partner may see it: which it is, never its secret. */
export interface CredentialSummary {
  kind: CredentialKind
  /** The request-signing key id; null for the other kinds. */
  keyId: string | null
  /** The first characters of an escrow API key, to tell keys apart; null for the other kinds. */
  apiKeyPrefix: string | null
  createdAt: Date
  /** When a rotation's overlap ends it; null while it has no end. */
  expiresAt: Date | null
}

/** The partner's live credentials (not revoked, not expired), by kind, newest first. */
export async function selectLiveCredentials(db: Queryable, partnerId: string): Promise<CredentialSummary[]> {
  const result = await db.query<{
    kind: CredentialKind
    key_id: string | null
    api_key_prefix: string | null
    created_at: Date
    expires_at: Date | null
  }>(
    `SELECT c.kind, c.key_id, c.api_key_prefix, c.created_at, c.expires_at FROM partner_credentials c
      WHERE c.partner_id = $1 AND ${ACTIVE}
      ORDER BY c.kind, c.created_at DESC, c.id DESC`,
    [partnerId],
  )
  return result.rows.map((row) => ({
    kind: row.kind,
    keyId: row.key_id,
    apiKeyPrefix: row.api_key_prefix,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  }))
}

export async function revokeSigningKey(db: Queryable, keyId: string): Promise<boolean> {
  const result = await db.query(
    `UPDATE partner_credentials SET revoked_at = now() WHERE key_id = $1 AND kind = 'request_signing' AND revoked_at IS NULL`,
    [keyId],
  )
  return result.rowCount === 1
}

/** The oldest signing secret, sealed bound to its credential's id: what a database sealed before it recorded its key check. */
export async function selectOldestSigningSecret(
  db: Queryable,
): Promise<{ sealed: Buffer; associatedData: string } | undefined> {
  const result = await db.query<{ id: string; secret_sealed: Buffer }>(
    `SELECT id, secret_sealed FROM partner_credentials WHERE kind = 'request_signing' ORDER BY created_at LIMIT 1`,
  )
  return result.rows[0] && { sealed: result.rows[0].secret_sealed, associatedData: result.rows[0].id }
}
