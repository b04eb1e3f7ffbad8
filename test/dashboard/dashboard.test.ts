// The partner dashboard in a real browser (Debian's Chromium): sign in from a link the real CLI
// printed, see the overview, find a transfer by reference and open its timeline; a link used twice,
// a post without the session's CSRF token, another partner's transfer and a forged cookie are all
// refused; script in partner text stays text; the sandbox simulator settles a transfer.
import { randomUUID } from 'node:crypto'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { offsetClock, systemClock } from '../../src/platform/clock.ts'
import { setPublicUrl } from '../../src/platform/public-url.ts'
import { createSignInLink } from '../../src/web/dashboard/service.ts'
import { fitsWidth, launchBrowser, openPage, screenshot, waitForText } from '../checkout/browser.ts'
import { startCollections, type CollectionsHarness } from '../collections/support.ts'
import { runRail } from '../support/cli.ts'
import { fundFloat } from '../support/float.ts'
import { PAYEE } from '../support/payments.ts'
import { waitFor } from '../support/wait.ts'
import { redeem } from './support.ts'

const INJECTED = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`

let harness: CollectionsHarness
let browser: Browser
let partnerId: string
let client: RailClient
let otherTransferId: string
let transferId: string
const reference = `dash-${randomUUID()}`

async function payout(on: RailClient, clientReference: string, narration: string): Promise<string> {
  const answer = await on.post<{ id: string }>('/api/v1/rail/outbound', {
    clientReference,
    amountKobo: 1_250_000,
    beneficiaryAccountNumber: PAYEE.accountNumber,
    beneficiaryBankCode: PAYEE.bankCode,
    beneficiaryAccountName: PAYEE.accountName,
    currency: 'NGN',
    narration,
  })
  expect(answer.status).toBe(202)
  return answer.body.id
}

/** Reloads the (script-free) transfer page until it shows the state (a busy machine may take a while to send it). */
async function reloadUntil(page: Page, state: string): Promise<void> {
  let shown: string | null = null
  try {
    await waitFor(
      async () => {
        await page.reload()
        shown = await page.locator('#transfer-state').textContent()
        return shown === state
      },
      60_000,
      `transfer ${state}`,
    )
  } catch {
    throw new Error(`the transfer page did not show ${state} within 60 s; it last showed ${String(shown)}`)
  }
}

async function signInUrl(): Promise<string> {
  return (await createSignInLink(harness.app.db.pool, systemClock, partnerId, harness.app.baseUrl)).url
}

beforeAll(async () => {
  // Payouts here are settled by hand after browser steps: they must not reach the requery deadline first.
  harness = await startCollections({ deadlineMs: 10 * 60_000 })
  browser = await launchBrowser()
  const partner = await harness.app.newPartner({ name: `Ada ${INJECTED}` })
  client = partner.client
  partnerId = partner.credentials.partnerId
  expect((await fundFloat(client, 50_000_000)).status).toBe(200)
  transferId = await payout(client, reference, `Rent ${INJECTED}`)
  const other = await harness.app.newPartner({ name: 'Other Ltd' })
  expect((await fundFloat(other.client, 50_000_000)).status).toBe(200)
  otherTransferId = await payout(other.client, `other-${randomUUID()}`, 'Other')
})
afterAll(async () => {
  await browser?.close()
  await harness?.close()
  await harness?.app.close()
})

describe('partner dashboard', () => {
  it(
    'signs in from a CLI link, shows the overview, finds a transfer by reference and its timeline; script stays text',
    { timeout: 150_000 },
    async () => {
      const cli = await runRail(['dashboard', 'link', '--partner', partnerId], {
        DATABASE_URL: harness.app.db.url,
        PUBLIC_URL: harness.app.baseUrl,
      })
      expect(cli.code).toBe(0)
      const url = cli.stdout.trim()
      expect(url).toMatch(new RegExp(`^${harness.app.baseUrl}/dashboard/sign-in/[A-Za-z0-9_-]{43}$`))
      const watched = await openPage(browser, harness.app.baseUrl)
      const { page, context } = watched
      await page.goto(url)
      await waitForText(page, 'h1', 'Sign in')
      await page.getByRole('button', { name: 'Sign in' }).click()
      await waitForText(page, 'h1', 'Overview')
      // Beside the sign-in page's own nonce cookie (rail_sign_in), the session's.
      const cookie = (await context.cookies()).find((one) => one.name === 'rail_dashboard')
      expect(cookie).toMatchObject({ name: 'rail_dashboard', httpOnly: true, sameSite: 'Strict' })
      expect(await page.locator('#partner-name').textContent()).toBe(`Ada ${INJECTED}`)
      expect(await page.locator('#float-booked').textContent()).toMatch(/^₦\s?500,000\.00$/)
      expect(await fitsWidth(page)).toBe(true)
      await screenshot(page, 'dashboard-overview')

      // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
      await waitFor(
        async () => (await client.get<{ data: unknown[] }>('/api/v1/rail/outbound?limit=100')).body.data.length === 1,
        20_000,
        'the transfer listed',
      )
      await page.getByRole('link', { name: 'Outbound transfers' }).first().click()
      await waitForText(page, 'h1', 'Outbound transfers')
      await page.locator('input[name=reference]').fill(reference)
      await page.getByRole('button', { name: 'Find' }).click()
      await page.waitForURL(/reference=/)
      expect(await page.locator('.list li').count()).toBe(1)
      await screenshot(page, 'dashboard-transfers')
      await page.getByRole('link', { name: reference }).click()
      await waitForText(page, 'h1', `Transfer ${reference}`)
      expect(await page.locator('#narration').textContent()).toBe(`Rent ${INJECTED}`)
      expect(await page.locator('#timeline li').first().textContent()).toMatch(/^Created \(pending\)/)
      expect(await page.locator('img').count()).toBe(0)
      expect(watched.dialogs).toEqual([])
      expect(await fitsWidth(page)).toBe(true)
      await screenshot(page, 'dashboard-transfer')

      // The sandbox simulator settles it through the settle-outbound service, recorded as the dashboard's.
      await reloadUntil(page, 'submitted')
      await page.getByRole('button', { name: 'Settle as failed' }).click()
      await waitForText(page, '#notice', /Outcome registered/)
      await reloadUntil(page, 'failed')
      const audit = await harness.app.db.pool.query(
        `SELECT actor, action, detail FROM dashboard_actions WHERE partner_id = $1`,
        [partnerId],
      )
      expect(audit.rows).toEqual([
        { actor: 'dashboard', action: 'sandbox.settle_outbound', detail: { outcome: 'failed' } },
      ])
      await screenshot(page, 'dashboard-transfer-settled')

      // Another partner's transfer by URL is not found.
      expect((await page.goto(`${harness.app.baseUrl}/dashboard/transfers/${otherTransferId}`))!.status()).toBe(404)

      // Sign-out ends the session: the old cookie no longer opens a page.
      await page.goto(`${harness.app.baseUrl}/dashboard`)
      await page.getByRole('button', { name: 'Sign out' }).click()
      await waitForText(page, '#message', 'You are signed out.')
      const headers = { cookie: `rail_dashboard=${cookie!.value}` }
      expect((await fetch(`${harness.app.baseUrl}/dashboard`, { headers })).status).toBe(401)
      await context.close()
    },
  )

  it('a link opened (a mail scanner, a preview) is not spent; refuses a link used twice, a tampered link, an expired link and a forged cookie', async () => {
    const url = await signInUrl()
    for (let opened = 0; opened < 2; opened++) {
      const page = await fetch(url, { redirect: 'manual' })
      // No session: only the nonce of this opening, which the form's token goes with (login CSRF, sign-in-forgery.test.ts).
      expect(page.status).toBe(200)
      expect(page.headers.get('set-cookie')).toMatch(
        /^rail_sign_in=[A-Za-z0-9_-]{43}; Path=\/dashboard\/sign-in; HttpOnly; SameSite=Strict; Max-Age=600$/,
      )
      expect(await page.text()).toMatch(
        /<form method="post"><input type="hidden" name="page" value="[0-9a-f]{64}"><button type="submit">Sign in<\/button><\/form>/,
      )
    }
    const first = await redeem(url)
    expect(first.status).toBe(303)
    for (const again of [await redeem(url), await fetch(url, { redirect: 'manual' })]) {
      expect(again.status).toBe(410)
      expect(again.headers.get('set-cookie')).toBeNull()
      expect(await again.text()).toContain('This sign-in link is used, expired or not valid.')
    }
    const fresh = await signInUrl()
    const tampered = fresh.slice(0, -1) + (fresh.endsWith('A') ? 'B' : 'A')
    expect([(await fetch(tampered, { redirect: 'manual' })).status, (await redeem(tampered)).status]).toEqual([
      410, 410,
    ])
    // Made 11 minutes ago: past its 10 minutes.
    const expired = await createSignInLink(
      harness.app.db.pool,
      offsetClock(systemClock, -11 * 60),
      partnerId,
      harness.app.baseUrl,
    )
    expect([(await fetch(expired.url, { redirect: 'manual' })).status, (await redeem(expired.url)).status]).toEqual([
      410, 410,
    ])
    const forged = await fetch(`${harness.app.baseUrl}/dashboard`, {
      headers: { cookie: `rail_dashboard=${'x'.repeat(43)}` },
    })
    expect(forged.status).toBe(401)
    // A link broken in its URL (malformed escapes, far too long), and a page that does not exist, are pages too.
    for (const path of [
      '/dashboard/sign-in/%ZZ',
      `/dashboard/sign-in/${'x'.repeat(3_000)}`,
      '/dashboard/sign-in/abc%00',
      '/dashboard/no-such-page',
      '/dashboard/',
    ]) {
      const answer = await fetch(`${harness.app.baseUrl}${path}`, { redirect: 'manual' })
      expect([path.slice(0, 30), answer.status, answer.headers.get('content-type')]).toEqual([
        path.slice(0, 30),
        404,
        'text/html; charset=utf-8',
      ])
      expect(answer.headers.get('set-cookie')).toBeNull()
      if (path.startsWith('/dashboard/sign-in/')) {
        // A Sign in post to a broken link (no browser makes one: the page is served for usable links
        // only) is refused as a malformed request, and signs nobody in.
        const posted = await redeem(`${harness.app.baseUrl}${path}`)
        expect([path.slice(0, 30), [400, 422].includes(posted.status), posted.headers.get('set-cookie')]).toEqual([
          path.slice(0, 30),
          true,
          null,
        ])
      }
    }
  })

  it('sets the session cookie Secure off loopback, and on loopback too when PUBLIC_URL is https (behind a TLS proxy)', async () => {
    const loopback = await redeem(await signInUrl())
    expect(loopback.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict; Max-Age=43200$/)
    setPublicUrl('https://pay.example.com')
    try {
      const proxied = await redeem(await signInUrl())
      expect(proxied.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/)
    } finally {
      setPublicUrl(harness.app.baseUrl)
    }
  })

  it('refuses a post without the CSRF token or with another session token (403), and changes nothing', async () => {
    const sessionOf = async (): Promise<{ cookie: string; csrf: string }> => {
      const signIn = await redeem(await signInUrl())
      const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!
      const page = await (await fetch(`${harness.app.baseUrl}/dashboard`, { headers: { cookie } })).text()
      return { cookie, csrf: /name="csrf" value="([0-9a-f]{64})"/.exec(page)![1]! }
    }
    const mine = await sessionOf()
    const theirs = await sessionOf()
    const post = (body: string) =>
      fetch(`${harness.app.baseUrl}/dashboard/sign-out`, {
        method: 'POST',
        headers: { cookie: mine.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body,
      })
    expect((await post('')).status).toBe(403)
    const actions = async () =>
      (await harness.app.db.pool.query(`SELECT count(*)::int AS n FROM dashboard_actions`)).rows[0].n as number
    const before = await actions()
    const settle = await fetch(`${harness.app.baseUrl}/dashboard/transfers/${transferId}/settle`, {
      method: 'POST',
      headers: { cookie: mine.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `outcome=confirmed&csrf=${theirs.csrf}`,
    })
    expect(settle.status).toBe(403)
    expect(await actions()).toBe(before)
    expect((await post(`csrf=${theirs.csrf}`)).status).toBe(403)
    expect((await fetch(`${harness.app.baseUrl}/dashboard`, { headers: { cookie: mine.cookie } })).status).toBe(200)
    expect((await post(`csrf=${mine.csrf}`)).status).toBe(200)
    expect((await fetch(`${harness.app.baseUrl}/dashboard`, { headers: { cookie: mine.cookie } })).status).toBe(401)
  })
})
