// Login CSRF: another site must not sign a visitor's browser into a dashboard of its choosing. A
// Sign in post another site made (its Sec-Fetch-Site or Origin), or one not sent from the page the
// link opened in that browser (no page token, or another opening's), is 403 cross_site_request:
// the link is not spent and no cookie is set. Over HTTP with forged headers, and in Chromium from a
// page on another site posting a form to the link (docs/dashboard.md "Sign-in").
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser, openPage, waitForText } from '../checkout/browser.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { openSignInPage, redeem, signInUrl } from './support.ts'

let app: TestApp
let browser: Browser
let partnerId: string

beforeAll(async () => {
  app = await startTestApp()
  partnerId = (await app.newPartner()).credentials.partnerId
  browser = await launchBrowser()
})
afterAll(async () => {
  await browser?.close()
  await app?.close()
})

/** Posts the Sign in form with what a browser would send: the page's token and cookie, and the headers given. */
async function post(
  url: string,
  opened: { page?: string; cookie?: string },
  headers: Record<string, string> = {},
): Promise<Response> {
  const body = opened.page === undefined ? '' : new URLSearchParams({ page: opened.page }).toString()
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(opened.cookie ? { cookie: opened.cookie } : {}),
      ...headers,
    },
    body,
  })
}

async function expectRefused(answer: Response): Promise<void> {
  expect(answer.status).toBe(403)
  expect(answer.headers.get('set-cookie')).toBeNull()
  expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8')
  expect(await answer.text()).toContain('Nothing was changed')
}

/** The link still signs in (it was not spent): opened and posted as its page does. */
async function expectStillUsable(url: string): Promise<void> {
  const signedIn = await redeem(url)
  expect(signedIn.status).toBe(303)
  expect(signedIn.headers.get('set-cookie')).toMatch(/^rail_dashboard=/)
}

describe('the Sign in post', () => {
  it('is refused when another site made it (Sec-Fetch-Site cross-site or same-site, a foreign or null Origin), the link unspent', async () => {
    const url = await signInUrl(app.db.pool, app.baseUrl, partnerId)
    const opened = await openSignInPage(url)
    expect(opened.status).toBe(200)
    const forged: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'https://attacker.example' },
      { origin: 'null' },
      { origin: app.baseUrl.replace('127.0.0.1', 'localhost') },
      { 'sec-fetch-site': 'cross-site', origin: 'https://attacker.example' },
    ]
    for (const headers of forged) await expectRefused(await post(url, opened, headers))
    // Its own origin, and a navigation a person made (none), are the page's own posts.
    const own = await post(url, opened, { 'sec-fetch-site': 'same-origin', origin: app.baseUrl })
    expect(own.status).toBe(303)
    const again = await signInUrl(app.db.pool, app.baseUrl, partnerId)
    expect((await post(again, await openSignInPage(again), { 'sec-fetch-site': 'none' })).status).toBe(303)
  })

  it("is refused without the token of the page this browser opened: none, no cookie, or another opening's", async () => {
    const url = await signInUrl(app.db.pool, app.baseUrl, partnerId)
    const mine = await openSignInPage(url)
    const theirs = await openSignInPage(url)
    await expectRefused(await post(url, {}))
    await expectRefused(await post(url, { page: mine.page }))
    await expectRefused(await post(url, { cookie: mine.cookie }))
    await expectRefused(await post(url, { page: theirs.page, cookie: mine.cookie }))
    await expectRefused(await post(url, { page: '0'.repeat(64), cookie: mine.cookie }))
    // A page of another link does not sign in with this one.
    const other = await signInUrl(app.db.pool, app.baseUrl, partnerId)
    await expectRefused(await post(url, await openSignInPage(other)))
    await expectStillUsable(url)
  })

  it(
    'posted in Chromium from a page on another site, is refused: no session, the link unspent',
    { timeout: 60_000 },
    async () => {
      // The attacker's own link, and a token it took by opening that link itself.
      const url = await signInUrl(app.db.pool, app.baseUrl, partnerId)
      const stolen = await openSignInPage(url)
      const attacker = await listen(
        `<!doctype html><title>Win a prize</title><form method="post" action="${url}"><input type="hidden" name="page" value="${stolen.page}"><button type="submit">Claim</button></form>`,
      )
      try {
        // localhost is another site than 127.0.0.1 (the app's address).
        const { page, context } = await openPage(browser, `http://localhost:${port(attacker)}`)
        await page.goto(`http://localhost:${port(attacker)}/`)
        await page.getByRole('button', { name: 'Claim' }).click()
        await waitForText(page, '#message', /This sign-in was posted from another site\./)
        expect((await context.cookies(app.baseUrl)).map((cookie) => cookie.name)).not.toContain('rail_dashboard')
        await context.close()
      } finally {
        await new Promise((resolve) => attacker.close(resolve))
      }
      await expectStillUsable(url)
    },
  )
})

function listen(body: string): Promise<Server> {
  const server = createServer((_request, response) =>
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body),
  )
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

function port(server: Server): number {
  return (server.address() as AddressInfo).port
}
