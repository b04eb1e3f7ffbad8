// The sign-in post's defence against login CSRF (docs/dashboard.md "Sign-in"): another site must
// not be able to sign a visitor's browser into a dashboard of its choosing (its own partner's, from
// a link it made), where the visitor would then act and type as if in their own. The Sign in post
// has no session yet, so the session's CSRF token cannot guard it; three checks do instead, each
// before the link is spent or a cookie set:
// - the browser's Sec-Fetch-Site, when sent, is same-origin or none (a link typed or opened from
//   a mail), never another site's;
// - the Origin, when sent, is Rail's own (PUBLIC_URL, or the Host the request was sent to);
// - the form carries a token bound to this browser's opening of the page: opening the link sets a
//   random nonce in a SameSite=Strict cookie and puts an HMAC of it and the link in the form, so a
//   post from anywhere but the page this browser opened (another site's form, a script that never
//   opened it, a nonce of another browser's) is refused — even where a browser sends neither header.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { RailError } from '../../platform/errors.ts'
import { publicOrigin } from '../../platform/public-url.ts'

/** The cookie the page's nonce rides in: only the sign-in page's own path reads it. */
export const PAGE_COOKIE = 'rail_sign_in'
/** As long as a link lives: a page opened is signed in from within the link's 10 minutes. */
export const PAGE_COOKIE_MAX_AGE_S = 10 * 60
/** The form field that carries the page's token. */
export const PAGE_FIELD = 'page'
/** Sec-Fetch-Site values of a post this server's own page makes (same-origin) or a person typed (none). */
const OWN_FETCH_SITES = new Set(['same-origin', 'none'])

function refused(message: string): RailError {
  return new RailError(
    'cross_site_request',
    `${message} Nothing was changed: open the sign-in link again and press Sign in.`,
  )
}

/** A new nonce for one opening of the page. */
export function newPageNonce(): string {
  return randomBytes(32).toString('base64url')
}

/** The form's token for a nonce and a link: only Rail (holding the master key) makes one. */
export function pageToken(masterKey: Buffer, nonce: string, linkToken: string): string {
  return createHmac('sha256', masterKey).update(`dashboard-sign-in:${nonce}:${linkToken}`).digest('hex')
}

/** Throws 403 cross_site_request for a post another site's page made (by the browser's own headers). */
export function refuseCrossSitePost(request: FastifyRequest): void {
  const fetchSite = request.headers['sec-fetch-site']
  if (fetchSite !== undefined && !OWN_FETCH_SITES.has(String(fetchSite)))
    throw refused('This sign-in was posted from another site.')
  const origin = request.headers.origin
  if (origin === undefined) return
  const own = new Set([`${request.protocol}://${request.host}`, publicOrigin()])
  if (!own.has(origin)) throw refused('This sign-in was posted from another site.')
}

/** Throws 403 cross_site_request unless the form's token is the one the page this browser opened carried. */
export function requirePageToken(request: FastifyRequest, masterKey: Buffer, linkToken: string): void {
  const nonce = cookieNamed(request, PAGE_COOKIE)
  const submitted = (request.body as Record<string, unknown> | undefined)?.[PAGE_FIELD]
  if (nonce === undefined || typeof submitted !== 'string')
    throw refused('This sign-in was not sent from the page its link opens.')
  const expected = Buffer.from(pageToken(masterKey, nonce, linkToken))
  const given = Buffer.from(submitted)
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw refused('This sign-in was not sent from the page its link opens.')
}

function cookieNamed(request: FastifyRequest, cookie: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=')
    if (name === cookie) return value.join('=')
  }
  return undefined
}
