// Partner dashboard sign-in without passwords (docs/dashboard.md): `rail dashboard link` makes a
// one-time link valid 10 minutes; redeeming it opens a 12-hour session. Tokens and session ids are
// random 256-bit values; only their SHA-256 is stored, so the tables alone sign nobody in. The
// CSRF token of a session is derived from its id (a secret only the session's browser holds), so a
// form posted from another session, or without it, is told apart without storing anything more.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../../platform/clock.ts'
import type { Queryable } from '../../platform/db.ts'

export const LINK_LIFETIME_MS = 10 * 60_000
export const SESSION_LIFETIME_MS = 12 * 60 * 60_000

export interface DashboardSession {
  partnerId: string
  csrfToken: string
  /** Who signed in, as the sign-in link named them (null when it named no one). */
  operator: string | null
}

export const OPERATOR_MAX = 100
/** Spent links and ended sessions are kept this long after they lapse, then swept. */
export const KEPT_AFTER_EXPIRY_MS = 24 * 60 * 60_000

/** A name for an operator: 1–100 printable characters. */
export function isOperatorName(name: unknown): name is string {
  if (typeof name !== 'string' || name.length < 1 || name.length > OPERATOR_MAX) return false
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u001f\u007f-\u009f]/.test(name) && name.trim() === name
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

function newToken(): string {
  return randomBytes(32).toString('base64url')
}

/** A well-formed token: 43 base64url characters. Anything else is refused before the database is asked. */
function wellFormed(token: string | undefined): token is string {
  return typeof token === 'string' && /^[A-Za-z0-9_-]{43}$/.test(token)
}

/** A one-time sign-in link for the partner (for the operator named, if any): its absolute URL under baseUrl. */
export async function createSignInLink(
  db: Queryable,
  clock: Clock,
  partnerId: string,
  baseUrl: string,
  operator: string | null = null,
): Promise<{ url: string; expiresAt: Date }> {
  if (operator !== null && !isOperatorName(operator))
    throw new Error(`an operator's name is 1–${OPERATOR_MAX} printable characters`)
  const token = newToken()
  const expiresAt = new Date(clock.now().getTime() + LINK_LIFETIME_MS)
  await db.query('INSERT INTO dashboard_links (token_hash, partner_id, expires_at, operator) VALUES ($1, $2, $3, $4)', [
    sha256(token),
    partnerId,
    expiresAt,
    operator,
  ])
  return { url: `${baseUrl.replace(/\/+$/, '')}/dashboard/sign-in/${token}`, expiresAt }
}

/** Whether a sign-in link would sign in now (unused, unexpired). Reading it spends nothing. */
export async function signInLinkUsable(db: Queryable, clock: Clock, token: string | undefined): Promise<boolean> {
  if (!wellFormed(token)) return false
  const { rowCount } = await db.query(
    'SELECT 1 FROM dashboard_links WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2',
    [sha256(token), clock.now()],
  )
  return rowCount === 1
}

/**
 * Uses a link once (its page's Sign in post): marks it used and opens a new session in one
 * statement, so two posts of the same link cannot both sign in. Undefined for an unknown, used,
 * expired or malformed token.
 */
export async function redeemSignInLink(
  db: Queryable,
  clock: Clock,
  token: string | undefined,
): Promise<string | undefined> {
  if (!wellFormed(token)) return undefined
  const sessionId = newToken()
  const now = clock.now()
  const { rows } = await db.query<{ partner_id: string }>(
    `WITH used AS (
       UPDATE dashboard_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING partner_id, operator
     )
     INSERT INTO dashboard_sessions (id_hash, partner_id, expires_at, operator) SELECT $3, partner_id, $4, operator FROM used RETURNING partner_id`,
    [sha256(token), now, sha256(sessionId), new Date(now.getTime() + SESSION_LIFETIME_MS)],
  )
  return rows.length === 1 ? sessionId : undefined
}

/** The live session a cookie names; undefined (signed out) for a forged, ended or expired one. */
export async function sessionFor(
  db: Queryable,
  clock: Clock,
  sessionId: string | undefined,
): Promise<DashboardSession | undefined> {
  if (!wellFormed(sessionId)) return undefined
  const { rows } = await db.query<{ partner_id: string; operator: string | null }>(
    'SELECT partner_id, operator FROM dashboard_sessions WHERE id_hash = $1 AND ended_at IS NULL AND expires_at > $2',
    [sha256(sessionId), clock.now()],
  )
  return rows[0]
    ? { partnerId: rows[0].partner_id, csrfToken: csrfTokenOf(sessionId), operator: rows[0].operator }
    : undefined
}

export async function endSession(db: Queryable, clock: Clock, sessionId: string | undefined): Promise<void> {
  if (!wellFormed(sessionId)) return
  await db.query('UPDATE dashboard_sessions SET ended_at = $2 WHERE id_hash = $1 AND ended_at IS NULL', [
    sha256(sessionId),
    clock.now(),
  ])
}

function csrfTokenOf(sessionId: string): string {
  return sha256(`csrf:${sessionId}`)
}

/** The form's token is the session's own (compared in constant time). */
export function csrfMatches(session: DashboardSession, submitted: unknown): boolean {
  if (typeof submitted !== 'string' || submitted.length !== session.csrfToken.length) return false
  return timingSafeEqual(Buffer.from(submitted), Buffer.from(session.csrfToken))
}

/**
 * Deletes sign-in links and sessions that lapsed (expired, used or ended) more than a day ago:
 * they can open nothing, and the day kept lets an operator see a recent sign-out. The actions
 * done from them stay in dashboard_actions. Answers how many rows went.
 */
export async function sweepLapsed(db: Queryable, clock: Clock): Promise<{ links: number; sessions: number }> {
  const before = new Date(clock.now().getTime() - KEPT_AFTER_EXPIRY_MS)
  const links = await db.query('DELETE FROM dashboard_links WHERE expires_at < $1 OR used_at < $1', [before])
  const sessions = await db.query('DELETE FROM dashboard_sessions WHERE expires_at < $1 OR ended_at < $1', [before])
  return { links: links.rowCount ?? 0, sessions: sessions.rowCount ?? 0 }
}
