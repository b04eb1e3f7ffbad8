// The dashboard's overview volumes, the transfer list's day filter, a transfer's timeline (bank
// calls and callbacks) and the sandbox simulators, through a real browser and plain HTTP.
import { randomUUID } from 'node:crypto'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { lagosToday } from '../../src/web/dashboard/dates.ts'
import { createSignInLink, sweepLapsed } from '../../src/web/dashboard/service.ts'
import { offsetClock, systemClock } from '../../src/platform/clock.ts'
import { fitsWidth, launchBrowser, screenshot, waitForText } from '../checkout/browser.ts'
import { bookedKobo, startCollections, type CollectionsHarness } from '../collections/support.ts'
import { runRail } from '../support/cli.ts'
import { fundFloat } from '../support/float.ts'
import { PAYEE } from '../support/payments.ts'
import { waitFor } from '../support/wait.ts'
import { postForm, redeem, signedInPage, signedInSession, type DashboardSession } from './support.ts'

let harness: CollectionsHarness
let browser: Browser
let partnerId: string
let client: RailClient
let session: DashboardSession
let transferId: string
const reference = `ops-${randomUUID()}`

/** The credits Rail applied to a virtual account (by its number), as stored. */
const creditsOf = async (accountNumber: string) =>
  (
    await harness.app.db.pool.query<{ amountKobo: number; payerName: string | null }>(
      `SELECT amount_kobo::int AS "amountKobo", payer_name AS "payerName" FROM inbound_credits WHERE account_number = $1 AND status = 'applied' ORDER BY id`,
      [accountNumber],
    )
  ).rows

beforeAll(async () => {
  // Payouts here are settled by hand after browser steps: they must not reach the requery deadline first.
  harness = await startCollections({ deadlineMs: 10 * 60_000 })
  browser = await launchBrowser()
  const partner = await harness.app.newPartner({ name: 'Ops Ltd' })
  client = partner.client
  partnerId = partner.credentials.partnerId
  expect((await fundFloat(client, 10_000_000)).status).toBe(200)
  const answer = await client.post<{ id: string }>('/api/v1/rail/outbound', {
    clientReference: reference,
    amountKobo: 250_000,
    beneficiaryAccountNumber: PAYEE.accountNumber,
    beneficiaryBankCode: PAYEE.bankCode,
    beneficiaryAccountName: PAYEE.accountName,
    currency: 'NGN',
  })
  expect(answer.status).toBe(202)
  transferId = answer.body.id
  session = await signedInSession(harness.app.db.pool, harness.app.baseUrl, partnerId)
})
afterAll(async () => {
  await browser?.close()
  await harness?.close()
  await harness?.app.close()
})

const page = (path: string) => fetch(`${harness.app.baseUrl}${path}`, { headers: { cookie: session.cookie } })

describe('dashboard operations', () => {
  it("shows today's volumes on the overview", async () => {
    const text = await (await page('/dashboard')).text()
    expect(text).toContain(`Today (${lagosToday(new Date())}, Lagos time)`)
    expect(/id="today-sent"><a [^>]*>1<\/a> · ₦\s?2,500\.00/.test(text)).toBe(true)
    expect(text).toMatch(/id="today-received">0 · ₦\s?0\.00/)
  })

  it('filters transfers by Lagos day, and ignores a day that is not a date', async () => {
    const today = lagosToday(new Date())
    const listed = async (query: string) =>
      ((await (await page(`/dashboard/transfers?${query}`)).text()).match(/class="reference"/g) ?? []).length
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await client.get<{ data: unknown[] }>('/api/v1/rail/outbound?limit=100')).body.data.length === 1,
      20_000,
      'the transfer listed',
    )
    expect(await listed(`from=${today}&to=${today}`)).toBe(1)
    expect(await listed(`from=2099-01-01`)).toBe(0)
    expect(await listed(`to=2000-01-01`)).toBe(0)
    expect(await listed(`from=2026-02-30&to=yesterday`)).toBe(1)
  })

  it("shows a transfer's bank calls and its callback in the timeline", async () => {
    await waitFor(
      async () => {
        const text = await (await page(`/dashboard/transfers/${transferId}`)).text()
        return text.includes('Sent to the bank') && text.includes('id="transfer-state">submitted')
      },
      30_000,
      'the send in the timeline',
    )
    const settled = await postForm(harness.app.baseUrl, session, `/dashboard/transfers/${transferId}/settle`, {
      outcome: 'confirmed',
    })
    expect(settled.status).toBe(303)
    await waitFor(
      async () => {
        const text = await (await page(`/dashboard/transfers/${transferId}`)).text()
        return (
          text.includes('id="transfer-state">confirmed') &&
          text.includes('Asked the bank (requery)') &&
          /Callback <a href="\/dashboard\/events\/[0-9a-f-]{36}">/.test(text)
        )
      },
      20_000,
      'requery and callback in the timeline',
    )
    const watched = await signedInPage(browser, harness.app.db.pool, harness.app.baseUrl, partnerId)
    await watched.page.goto(`${harness.app.baseUrl}/dashboard/transfers/${transferId}`)
    expect(await watched.page.locator('#timeline li.bank').count()).toBeGreaterThanOrEqual(2)
    // Every state it was in, in order, each with when it began.
    expect(await watched.page.locator('#timeline li.state .state-name').allTextContents()).toEqual([
      'pending',
      'submitted',
      'confirmed',
    ])
    expect(await watched.page.locator('#timeline li.state time').count()).toBe(3)
    await screenshot(watched.page, 'dashboard-transfer-timeline')
    await watched.context.close()
  })

  it('sends an inbound credit and funds the float from the sandbox page, once per form', async () => {
    const account = (
      await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
        reference: randomUUID(),
      })
    ).body
    const watched = await signedInPage(browser, harness.app.db.pool, harness.app.baseUrl, partnerId)
    const { page: tab } = watched
    await tab.getByRole('link', { name: 'Sandbox simulators' }).click()
    await waitForText(tab, 'h1', 'Sandbox simulators')
    expect(await fitsWidth(tab)).toBe(true)
    await screenshot(tab, 'dashboard-sandbox')
    await tab.locator('#inbound-credit input[name=virtualAccount]').fill(account.virtualAccount)
    await tab.locator('#inbound-credit input[name=amount]').fill('1,234.50')
    await tab.locator('#inbound-credit input[name=payerName]').fill('<script>alert(1)</script>')
    await tab.getByRole('button', { name: 'Send the credit' }).click()
    await waitForText(tab, '#notice', /received the credit/)
    await waitFor(async () => (await creditsOf(account.virtualAccount)).length === 1, 20_000, 'the credit applied')
    expect(await creditsOf(account.virtualAccount)).toMatchObject([
      { amountKobo: 123_450, payerName: '<script>alert(1)</script>' },
    ])
    // (A credit settles to the float at once: float mode, the default. Measured after it.)
    const floatBefore = await bookedKobo(harness.app, partnerId, 'float')

    await tab.locator('#fund-float input[name=amount]').fill('500')
    await tab.getByRole('button', { name: 'Fund the float' }).click()
    await waitForText(tab, '#notice', 'The float is funded.')
    expect(await bookedKobo(harness.app, partnerId, 'float')).toBe(floatBefore + 50_000)
    expect(watched.dialogs).toEqual([])
    await watched.context.close()

    // The same form posted twice does its work once.
    const key = randomUUID()
    for (let i = 0; i < 2; i++)
      expect(
        (await postForm(harness.app.baseUrl, session, '/dashboard/sandbox/fund-float', { amount: '100', key })).status,
      ).toBe(303)
    expect(await bookedKobo(harness.app, partnerId, 'float')).toBe(floatBefore + 60_000)
    const creditKey = randomUUID()
    for (let i = 0; i < 2; i++) {
      expect(
        (
          await postForm(harness.app.baseUrl, session, '/dashboard/sandbox/inbound-credit', {
            virtualAccount: account.virtualAccount,
            amount: '10',
            key: creditKey,
          })
        ).status,
      ).toBe(303)
    }
    await waitFor(
      async () => (await creditsOf(account.virtualAccount)).length === 2,
      20_000,
      'the second credit applied',
    )
    const actions = await harness.app.db.pool.query(
      `SELECT action, count(*)::int AS n FROM dashboard_actions WHERE partner_id = $1 GROUP BY action ORDER BY action`,
      [partnerId],
    )
    expect(actions.rows).toEqual([
      { action: 'sandbox.fund_float', n: 3 },
      { action: 'sandbox.inbound_credit', n: 3 },
      { action: 'sandbox.settle_outbound', n: 1 },
    ])
  })

  it('refuses bad input, a post without the CSRF token, and a live partner, changing nothing', async () => {
    const floatBefore = await bookedKobo(harness.app, partnerId, 'float')
    const post = (fields: Record<string, string>, csrf?: string | null) =>
      postForm(harness.app.baseUrl, session, '/dashboard/sandbox/fund-float', fields, csrf)
    for (const amount of ['', '0', '-5', '1.234', 'abc', '1e3', '99999999999999999999', '12\u0000'])
      expect((await post({ amount, key: randomUUID() })).status).toBe(422)
    // Refused before the handler (the platform's input check): still a page, not the API's JSON.
    const control = await post({ amount: '10', note: 'a\u0007b', key: randomUUID() })
    expect(control.status).toBe(422)
    expect(control.headers.get('content-type')).toMatch(/^text\/html/)
    expect(await control.text()).toContain('control characters')
    expect((await post({ amount: '10' })).status).toBe(422)
    expect((await post({ amount: '10', key: randomUUID() }, null)).status).toBe(403)
    const credit = (fields: Record<string, string>) =>
      postForm(harness.app.baseUrl, session, '/dashboard/sandbox/inbound-credit', {
        key: randomUUID(),
        amount: '10',
        ...fields,
      })
    expect((await credit({ virtualAccount: '123' })).status).toBe(422)
    expect((await credit({ virtualAccount: '0123456789', payerName: 'a\u0007b' })).status).toBe(422)
    expect((await credit({ virtualAccount: '0123456789', payerName: 'x'.repeat(101) })).status).toBe(422)
    // An account number that is not one of the partner's: the service's own refusal.
    expect((await credit({ virtualAccount: '0123456789' })).status).toBe(404)
    expect(await bookedKobo(harness.app, partnerId, 'float')).toBe(floatBefore)

    const live = await harness.app.newPartner({ environment: 'live' })
    const liveSession = await signedInSession(harness.app.db.pool, harness.app.baseUrl, live.credentials.partnerId)
    expect(
      (await fetch(`${harness.app.baseUrl}/dashboard/sandbox`, { headers: { cookie: liveSession.cookie } })).status,
    ).toBe(404)
    expect(
      (
        await postForm(harness.app.baseUrl, liveSession, '/dashboard/sandbox/fund-float', {
          amount: '10',
          key: randomUUID(),
        })
      ).status,
    ).toBe(404)
    expect(
      await (await fetch(`${harness.app.baseUrl}/dashboard`, { headers: { cookie: liveSession.cookie } })).text(),
    ).not.toContain('Sandbox simulators')
  })

  it('names the operator a link was made for on every page and in every action; refuses a bad name', async () => {
    const cli = await runRail(['dashboard', 'link', '--partner', partnerId, '--operator', 'Ada <b>Obi</b>'], {
      DATABASE_URL: harness.app.db.url,
      PUBLIC_URL: harness.app.baseUrl,
    })
    expect(cli.code).toBe(0)
    const signIn = await redeem(cli.stdout.trim())
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!
    const overview = await (await fetch(`${harness.app.baseUrl}/dashboard`, { headers: { cookie } })).text()
    expect(overview).toContain('(<span id="operator">Ada &lt;b&gt;Obi&lt;/b&gt;</span>)')
    const csrf = /name="csrf" value="([0-9a-f]{64})"/.exec(overview)![1]!
    expect(
      (
        await postForm(harness.app.baseUrl, { cookie, csrf }, '/dashboard/sandbox/fund-float', {
          amount: '1',
          key: randomUUID(),
        })
      ).status,
    ).toBe(303)
    const recorded = await harness.app.db.pool.query(
      `SELECT operator FROM dashboard_actions WHERE partner_id = $1 ORDER BY id DESC LIMIT 1`,
      [partnerId],
    )
    expect(recorded.rows).toEqual([{ operator: 'Ada <b>Obi</b>' }])
    for (const name of ['', ' Ada', 'A\u0007da', 'x'.repeat(101)]) {
      const refused = await runRail(['dashboard', 'link', '--partner', partnerId, '--operator', name], {
        DATABASE_URL: harness.app.db.url,
      })
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('--operator')
    }
  })

  it('sweeps links and sessions lapsed more than a day ago, and keeps the rest', async () => {
    const pool = harness.app.db.pool
    const count = async () =>
      (
        await pool.query(
          `SELECT (SELECT count(*) FROM dashboard_links WHERE partner_id = $1)::int AS links, (SELECT count(*) FROM dashboard_sessions WHERE partner_id = $1)::int AS sessions`,
          [partnerId],
        )
      ).rows[0]
    const before = await count()
    // Made two days ago: expired (and never used) more than a day before now.
    await createSignInLink(pool, offsetClock(systemClock, -2 * 24 * 3600), partnerId, harness.app.baseUrl)
    expect(await count()).toEqual({ links: before.links + 1, sessions: before.sessions })
    await sweepLapsed(pool, systemClock)
    expect((await count()).links).toBe(before.links)
    // Two days on, every session of this test has lapsed and goes, with the links that opened them.
    await sweepLapsed(pool, offsetClock(systemClock, 2 * 24 * 3600))
    expect(await count()).toEqual({ links: 0, sessions: 0 })
    expect((await fetch(`${harness.app.baseUrl}/dashboard`, { headers: { cookie: session.cookie } })).status).toBe(401)
  })
})
