// The partner dashboard over HTTP (docs/dashboard.md): sign-in by one-time link (the button on the
// page it opens spends it), sign-out, the style sheet, and each area's pages. The session lives in
// a cookie (HttpOnly, SameSite=Strict, Secure unless the request came to a loopback address); a
// missing, forged, ended or expired one is "signed out". Every post but the sign-in's carries the
// session's CSRF token or is refused 403 with nothing changed; the sign-in's, which has no session
// yet, is refused 403 when another site made it (sign-in.ts).
import { readFileSync } from 'node:fs'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { html } from '../../platform/html.ts'
import { registerPageArea, toRailError, type HttpServer } from '../../platform/http.ts'
import { publicUrlIsHttps } from '../../platform/public-url.ts'
import { registerCollectionPages } from './collections.ts'
import { registerEscrowPages } from './escrows.ts'
import { registerEventPages } from './events.ts'
import { COOKIE, cookieOf, dashboardRoutes, headers, type DashboardDeps, type DashboardRoutes } from './http.ts'
import { registerInvoicePages } from './invoices.ts'
import { layout, plainPage } from './layout.ts'
import { registerOverviewPage } from './overview.ts'
import { endSession, redeemSignInLink, SESSION_LIFETIME_MS, signInLinkUsable } from './service.ts'
import {
  newPageNonce,
  PAGE_COOKIE,
  PAGE_COOKIE_MAX_AGE_S,
  PAGE_FIELD,
  pageToken,
  refuseCrossSitePost,
  requirePageToken,
} from './sign-in.ts'
import { registerSandboxPages } from './sandbox.ts'
import { registerSettingsPages } from './settings.ts'
import { registerTransferPages } from './transfers.ts'

export type { DashboardDeps } from './http.ts'

const STYLE = readFileSync(new URL('./assets/dashboard.css', import.meta.url))

/** Every area of the dashboard; each registers its pages and forms through the same session and CSRF checks. */
const AREAS: readonly ((routes: DashboardRoutes) => void)[] = [
  registerOverviewPage,
  registerTransferPages,
  registerCollectionPages,
  registerInvoicePages,
  registerEscrowPages,
  registerEventPages,
  registerSettingsPages,
  registerSandboxPages,
]

/**
 * Secure everywhere but loopback, where tests and local development speak plain HTTP — unless
 * PUBLIC_URL is https: behind a TLS-terminating proxy on the same host the socket is loopback, yet
 * the browser speaks https.
 */
function isPlainLoopback(request: FastifyRequest): boolean {
  return !publicUrlIsHttps() && /^(127\.|::1$|::ffff:127\.)/.test(request.socket.localAddress ?? '')
}

function sessionCookie(request: FastifyRequest, value: string, maxAgeS: number): string {
  return `${COOKIE}=${value}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${isPlainLoopback(request) ? '' : '; Secure'}`
}

/** The nonce of this browser's opening of a sign-in page; only sign-in posts carry it back. */
function pageCookie(request: FastifyRequest, value: string, maxAgeS: number): string {
  return `${PAGE_COOKIE}=${value}; Path=/dashboard/sign-in; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${isPlainLoopback(request) ? '' : '; Secure'}`
}

/** The page a sign-in link opens: its form posts back to the link's own URL, with the token of this opening. */
function signInPage(token: string): string {
  return layout(
    'Sign in',
    html`<p id="message">Sign in to your Rail dashboard. This link signs in once.</p>
<form method="post"><input type="hidden" name="${PAGE_FIELD}" value="${token}"><button type="submit">Sign in</button></form>`,
  )
}

function linkNotValid(reply: FastifyReply): FastifyReply {
  return headers(reply)
    .code(410)
    .send(plainPage('Link not valid', 'This sign-in link is used, expired or not valid. Ask for a new one.'))
}

export function registerDashboardRoutes(app: HttpServer, deps: DashboardDeps): void {
  const open = { config: { auth: 'none' as const }, schema: { hide: true } }
  // A dashboard URL that is wrong (no such page, a malformed or over-long link) is a page too.
  registerPageArea(app, {
    prefix: '/dashboard',
    notFound: (reply) =>
      headers(reply)
        .code(404)
        .send(plainPage('Page not found', 'There is no such page. Start again from the overview.')),
  })
  // Opening the link shows a page whose button signs in: a GET never spends it, so a mail scanner
  // or a link preview that fetches the link leaves it for the person it was sent to.
  app.get<{ Params: { token: string } }>('/dashboard/sign-in/:token', open, async (request, reply) => {
    if (!(await signInLinkUsable(deps.pool, deps.clock, request.params.token))) return linkNotValid(reply)
    const nonce = newPageNonce()
    // same-origin, not no-referrer: under no-referrer a browser sends its form's post with
    // `Origin: null`, which the post's check cannot tell from another site's (sign-in.ts).
    return headers(reply)
      .header('Referrer-Policy', 'same-origin')
      .header('Set-Cookie', pageCookie(request, nonce, PAGE_COOKIE_MAX_AGE_S))
      .send(signInPage(pageToken(deps.masterKey, nonce, request.params.token)))
  })
  app.get('/dashboard-assets/dashboard.css', open, async (_request, reply) =>
    reply
      .header('X-Content-Type-Options', 'nosniff')
      .header('Cache-Control', 'public, max-age=300')
      .type('text/css; charset=utf-8')
      .send(STYLE),
  )
  // Pages and posts share one scope, which reads urlencoded form bodies.
  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)))
    })
    // Whatever is refused before or inside a handler (a control character in a field, a bank
    // that did not answer) is a page, not the API's JSON: its status and message, nothing changed.
    scope.setErrorHandler((error, request, reply) => {
      const refusal = toRailError(error as FastifyError, request)
      if (refusal.retryAfterS !== undefined)
        void reply.header('Retry-After', String(Math.max(1, Math.ceil(refusal.retryAfterS))))
      return headers(reply)
        .code(refusal.statusCode)
        .send(plainPage(refusal.statusCode >= 500 ? 'Something went wrong' : 'Refused', refusal.message))
    })
    scope.post<{ Params: { token: string } }>('/dashboard/sign-in/:token', open, async (request, reply) => {
      // Login CSRF: another site's post is refused before the link is looked at, spent or a cookie set.
      refuseCrossSitePost(request)
      if (!(await signInLinkUsable(deps.pool, deps.clock, request.params.token))) return linkNotValid(reply)
      requirePageToken(request, deps.masterKey, request.params.token)
      const sessionId = await redeemSignInLink(deps.pool, deps.clock, request.params.token)
      if (!sessionId) return linkNotValid(reply)
      // A fresh session id on every sign-in: a session fixed before sign-in is never the one used after.
      // The page's nonce cookie is left to lapse: without a fresh link of its own it signs nobody in.
      return headers(reply)
        .header('Set-Cookie', sessionCookie(request, sessionId, SESSION_LIFETIME_MS / 1000))
        .redirect('/dashboard', 303)
    })
    const routes = dashboardRoutes(scope as unknown as HttpServer, deps)
    routes.form('/dashboard/sign-out', async (request, reply) => {
      await endSession(deps.pool, deps.clock, cookieOf(request))
      return headers(reply)
        .header('Set-Cookie', sessionCookie(request, '', 0))
        .send(plainPage('Signed out', 'You are signed out.'))
    })
    for (const register of AREAS) register(routes)
  })
}
