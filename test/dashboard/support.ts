// Shared by the dashboard's tests: a signed-in session for fetch (its cookie and CSRF token) and a
// signed-in browser page, both from a real one-time sign-in link.
import type { Pool } from 'pg'
import type { Browser } from 'playwright-core'
import { systemClock } from '../../src/platform/clock.ts'
import { createSignInLink } from '../../src/web/dashboard/service.ts'
import { openPage, waitForText, type WatchedPage } from '../checkout/browser.ts'

export interface DashboardSession {
  /** `rail_dashboard=…`, for a Cookie header. */
  cookie: string
  csrf: string
}

export async function signInUrl(pool: Pool, baseUrl: string, partnerId: string): Promise<string> {
  return (await createSignInLink(pool, systemClock, partnerId, baseUrl)).url
}

/** Opens a sign-in link as a browser does: the page's token and the nonce cookie it goes with (none for a link not valid). */
export async function openSignInPage(url: string): Promise<{ status: number; page?: string; cookie?: string }> {
  const opened = await fetch(url, { redirect: 'manual' })
  const page = /name="page" value="([0-9a-f]{64})"/.exec(await opened.text())?.[1]
  return { status: opened.status, page, cookie: opened.headers.get('set-cookie')?.split(';')[0] }
}

/** Presses the sign-in page's button, as a browser posts its form: the one request that spends the link (opened first, as a browser must). */
export async function redeem(url: string): Promise<Response> {
  const { page, cookie } = await openSignInPage(url).catch(() => ({ page: undefined, cookie: undefined }))
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    ...(cookie ? { cookie } : {}),
  }
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers,
    body: page ? new URLSearchParams({ page }).toString() : '',
  })
}

/** Signs in over plain HTTP and reads the CSRF token from the overview. */
export async function signedInSession(pool: Pool, baseUrl: string, partnerId: string): Promise<DashboardSession> {
  const signIn = await redeem(await signInUrl(pool, baseUrl, partnerId))
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!
  const page = await (await fetch(`${baseUrl}/dashboard`, { headers: { cookie } })).text()
  return { cookie, csrf: /name="csrf" value="([0-9a-f]{64})"/.exec(page)![1]! }
}

/** Posts a dashboard form as the session's browser would (CSRF token included unless `csrf` is given as null). */
export async function postForm(
  baseUrl: string,
  session: DashboardSession,
  path: string,
  fields: Record<string, string>,
  csrf: string | null = session.csrf,
): Promise<Response> {
  const body = new URLSearchParams(csrf === null ? fields : { ...fields, csrf })
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  })
}

/** A browser page signed in to the partner's dashboard, on the overview. */
export async function signedInPage(
  browser: Browser,
  pool: Pool,
  baseUrl: string,
  partnerId: string,
): Promise<WatchedPage> {
  const watched = await openPage(browser, baseUrl)
  await watched.page.goto(await signInUrl(pool, baseUrl, partnerId))
  await watched.page.getByRole('button', { name: 'Sign in' }).click()
  await waitForText(watched.page, 'h1', 'Overview')
  return watched
}
