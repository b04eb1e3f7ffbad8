// The payer's hosted checkout page in a real browser (Debian's Chromium): an intent paid from its
// page (copy, simulate, live status, back to returnUrl), an invoice partly then fully paid, an
// expired intent, the one 404 page, and the headers that keep the page to itself.
import { randomBytes, randomUUID } from 'node:crypto'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { payIn, startCollections, type CollectionsHarness } from '../collections/support.ts'
import { createRequest, escrowClient } from '../support/escrow.ts'
import { startReceiver, type Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'
import {
  fitsWidth,
  launchBrowser,
  lowContrastTexts,
  openPage,
  PHONE,
  screenshot,
  waitForStatus,
  waitForText,
  type BrowserWindow,
  type WatchedPage,
} from './browser.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

let harness: CollectionsHarness
let browser: Browser
let merchant: Receiver
let client: RailClient

beforeAll(async () => {
  harness = await startCollections()
  browser = await launchBrowser()
  merchant = await startReceiver()
  merchant.answer = () => ({
    status: 200,
    headers: { 'Content-Type': 'text/html' },
    body: '<!doctype html><title>Merchant</title><p>Thanks for your order</p>',
  })
  client = (await harness.app.newPartner({ name: 'Ada Stores Ltd' })).client
})
afterAll(async () => {
  await browser?.close()
  await merchant?.close()
  await harness?.close()
  await harness?.app.close()
})

type IntentJson = Schemas['PaymentIntent']

async function createIntent(body: Record<string, unknown>): Promise<IntentJson> {
  const created = await client.post<IntentJson>('/api/v1/rail/payment/intent', {
    reference: `checkout-${randomUUID()}`,
    ...body,
  })
  expect(created.status).toBe(200)
  return created.body
}

/** Only Rail's own origin was asked for anything (the merchant's page, once sent back, aside). */
function expectOnlyRail(watched: WatchedPage, allowed: string[] = []): void {
  const foreign = watched.requests.filter(
    (url) => !url.startsWith(`${harness.app.baseUrl}/`) && !allowed.some((prefix) => url.startsWith(prefix)),
  )
  expect(foreign).toEqual([])
  // The browser asks for /favicon.ico (a 404 is logged): only a refused script or style matters.
  expect(watched.consoleErrors.filter((message) => /Content Security Policy|Refused/.test(message))).toEqual([])
}

describe('hosted checkout page', () => {
  it('pays a payment intent from its page: copy the account, simulate the transfer, see it paid, land on returnUrl', async () => {
    const returnUrl = `${merchant.url}/orders/1042?paid=1`
    const intent = await createIntent({
      amountKobo: 1_250_000,
      merchantDisplayName: 'Ada Stores',
      purposeTag: 'Order 1042',
      returnUrl,
    })
    expect(intent.checkoutUrl).toBe(`${harness.app.baseUrl}/checkout/${intent.checkoutToken}`)
    const watched = await openPage(browser, harness.app.baseUrl)
    const { page } = watched
    const response = await page.goto(intent.checkoutUrl)
    expect(response?.status()).toBe(200)
    expect(await page.locator('.merchant').textContent()).toBe('Ada Stores')
    expect(await page.locator('h1').textContent()).toBe('Order 1042')
    expect(await page.locator('.amount').textContent()).toBe('₦12,500.00')
    expect(await page.locator('[role="status"] #status-label').textContent()).toBe('Awaiting payment')
    expect(await page.locator('#account-number').textContent()).toBe(intent.virtualAccount)
    await waitForText(page, '#countdown', /left\)$/)
    expect(await fitsWidth(page)).toBe(true)
    await screenshot(page, 'checkout-awaiting-payment')
    expect(await lowContrastTexts(page)).toEqual([])

    await page.getByRole('button', { name: 'Copy' }).click()
    await waitForText(page, '#copied', 'Account number copied')
    expect(await page.evaluate(() => (globalThis as unknown as BrowserWindow).navigator.clipboard.readText())).toBe(
      intent.virtualAccount,
    )

    await page.getByRole('button', { name: 'Simulate a transfer' }).click()
    await waitForStatus(page, 'Paid')
    expect(await page.locator('#status-detail').textContent()).toContain('Received ₦12,500.00')
    await screenshot(page, 'checkout-paid')
    expect(await lowContrastTexts(page)).toEqual([])
    await page.waitForURL(returnUrl)
    await waitForText(page, 'p', 'Thanks for your order')
    expectOnlyRail(watched, [merchant.url])
    await watched.context.close()
  })

  it('shows an invoice through a partial payment, updated by itself, then a full one', async () => {
    const reference = `invoice-${randomUUID()}`
    const created = await client.post<{ checkoutUrl: string; checkoutToken: string; virtualAccount: string }>(
      '/api/v1/rail/invoice',
      {
        reference,
        title: 'Website redesign, phase 1',
        description: 'Design and build of five pages.\nPayable within 14 days.',
        amountKobo: 2_000_000,
        lineItems: [
          { description: 'Page design', quantity: 5, unitAmountKobo: 300_000 },
          { description: 'Hosting set-up', quantity: 1, unitAmountKobo: 500_000 },
        ],
        customer: { name: 'Chinedu Okafor', email: 'chinedu@example.com' },
        dueAt: new Date(Date.now() + 14 * 86_400_000).toISOString(),
        publishOnCreate: true,
      },
    )
    expect(created.status).toBe(200)
    expect(created.body.checkoutUrl).toBe(`${harness.app.baseUrl}/pay/${created.body.checkoutToken}`)
    const watched = await openPage(browser, harness.app.baseUrl)
    const { page } = watched
    await page.goto(created.body.checkoutUrl)
    expect(await page.locator('h1').textContent()).toBe('Website redesign, phase 1')
    expect(await page.locator('.lines').textContent()).toContain('Chinedu Okafor')
    // The invoice's lines: what, how many at how much, and each line's total.
    expect(await page.locator('.items .item-description').allTextContents()).toEqual(['Page design', 'Hosting set-up'])
    expect(await page.locator('.items .item-quantity').allTextContents()).toEqual(['5 × ₦3,000.00', '1 × ₦5,000.00'])
    expect(await page.locator('.items .item-total').allTextContents()).toEqual(['₦15,000.00', '₦5,000.00'])
    expect(await page.locator('.amount').textContent()).toBe('₦20,000.00')
    await waitForStatus(page, 'Awaiting payment')
    // A marker the page would lose if it reloaded: the status below changes without a reload.
    await page.evaluate(() => {
      ;(globalThis as unknown as BrowserWindow).stayedOnPage = true
    })
    await payIn(client, created.body.virtualAccount, 500_000)
    // Once the credit is confirmed (the API says so), the page shows it within 5 s, by itself.
    await waitFor(
      async () =>
        (await client.get<{ status: string }>(`/api/v1/rail/invoice/${reference}`)).body.status === 'partially_paid',
      20_000,
      'credit confirmed',
    )
    await waitForStatus(page, 'Partially paid', 5_000)
    expect(await page.locator('#status-detail').textContent()).toBe('Paid ₦5,000.00 · Remaining ₦15,000.00')
    expect(await page.evaluate(() => (globalThis as unknown as BrowserWindow).stayedOnPage === true)).toBe(true)
    await screenshot(page, 'invoice-partially-paid')
    expect(await lowContrastTexts(page)).toEqual([])

    expect(await page.locator('#simulate-amount').inputValue()).toBe('15000.00')
    await page.getByRole('button', { name: 'Simulate a transfer' }).click()
    await waitForStatus(page, 'Paid')
    expect(await page.locator('section.account').isVisible()).toBe(false)
    await screenshot(page, 'invoice-paid')
    expect(await lowContrastTexts(page)).toEqual([])
    const invoice = await client.get<{ status: string; amountPaidKobo: number }>(`/api/v1/rail/invoice/${reference}`)
    expect(invoice.body).toMatchObject({ status: 'paid', amountPaidKobo: 2_000_000 })
    expectOnlyRail(watched)
    await watched.context.close()
  })

  it('works without JavaScript: everything shows, and the simulated transfer is a plain form post', async () => {
    const intent = await createIntent({ merchantDisplayName: 'No Script Shop' })
    const context = await browser.newContext({ viewport: PHONE, javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(intent.checkoutUrl)
    expect(await page.locator('.amount').textContent()).toBe('Any amount')
    expect(await page.locator('#status-label').textContent()).toBe('Awaiting payment')
    expect(await page.locator('#account-number').textContent()).toBe(intent.virtualAccount)
    expect(await page.locator('#expires-at').textContent()).toMatch(/\d{4}, \d{2}:\d{2}$/)
    // The copy button needs the script: without it, it stays hidden and the number is selectable text.
    expect(await page.getByRole('button', { name: 'Copy' }).isVisible()).toBe(false)
    // Not an amount, or above the largest instruction: nothing is paid, the page says what to enter.
    for (const amount of ['twelve', '0', '1.234', '999999999999']) {
      await page.locator('#simulate-amount').fill(amount)
      await page.getByRole('button', { name: 'Simulate a transfer' }).click()
      await page.waitForURL(/\?notice=amount$/)
      expect(await page.locator('.notice').textContent()).toContain('Enter an amount in naira')
    }
    await page.locator('#simulate-amount').fill('2,500.50')
    await page.getByRole('button', { name: 'Simulate a transfer' }).click()
    await page.waitForURL(/\?notice=sent$/)
    // No live update without the script: the payer reloads until the credit shows.
    await waitFor(
      async () => {
        await page.reload()
        return (await page.locator('#status-label').textContent()) === 'Paid'
      },
      20_000,
      'paid after reloads',
    )
    expect(await page.locator('#status-detail').textContent()).toContain('Received ₦2,500.50')
    await context.close()
  })

  it("shows an escrow's funding page: its description, the account, awaiting payment", async () => {
    const { credentials } = await harness.app.newPartner({ name: 'Bicycle Market' })
    const escrow = await escrowClient(harness.app.baseUrl, credentials.escrowApiKey).create<{
      funding: { checkoutUrl: string; accountNumber?: string }
    }>(createRequest())
    expect(escrow.status).toBe(201)
    const watched = await openPage(browser, harness.app.baseUrl)
    const { page } = watched
    expect((await page.goto(escrow.body.funding.checkoutUrl))?.status()).toBe(200)
    expect(await page.locator('h1').textContent()).toBe('A used bicycle')
    await waitForStatus(page, 'Awaiting payment')
    expect(await page.locator('#account-number').count()).toBe(1)
    expect(await fitsWidth(page)).toBe(true)
    await screenshot(page, 'checkout-escrow')
    expect(await lowContrastTexts(page)).toEqual([])
    expectOnlyRail(watched)
    await watched.context.close()
  })

  it("shows an expired intent's page without its account", async () => {
    const { client: expiring } = await harness.app.newPartner({ name: 'Expiring Partner' })
    const created = await expiring.post<IntentJson>('/api/v1/rail/payment/intent', {
      reference: `expiring-${randomUUID()}`,
      amountKobo: 300_000,
      expiresAt: new Date(Date.now() + 90_000).toISOString(),
    })
    expect((await expiring.post('/api/v1/rail/sandbox/clock/advance', { seconds: 120 })).status).toBe(200)
    const watched = await openPage(browser, harness.app.baseUrl)
    const { page } = watched
    expect((await page.goto(created.body.checkoutUrl))?.status()).toBe(200)
    await waitForStatus(page, 'Expired')
    expect(await page.locator('section.account').count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Simulate a transfer' }).count()).toBe(0)
    await screenshot(page, 'checkout-expired')
    expect(await lowContrastTexts(page)).toEqual([])

    // Expired long ago: the same 404 as an unknown token.
    expect((await expiring.post('/api/v1/rail/sandbox/clock/advance', { seconds: 31 * 86_400 })).status).toBe(200)
    expect((await page.goto(created.body.checkoutUrl))?.status()).toBe(404)
    await watched.context.close()
  })

  it("shows a cancelled invoice's page without its account", async () => {
    const reference = `cancelled-${randomUUID()}`
    const created = await client.post<{ checkoutUrl: string }>('/api/v1/rail/invoice', {
      reference,
      title: 'Catering deposit',
      amountKobo: 750_000,
      publishOnCreate: true,
    })
    expect(created.status).toBe(200)
    expect((await client.post(`/api/v1/rail/invoice/${reference}/cancel`, {})).status).toBe(200)
    const watched = await openPage(browser, harness.app.baseUrl)
    const { page } = watched
    await page.goto(created.body.checkoutUrl)
    await waitForStatus(page, 'Cancelled')
    expect(await page.locator('#status-detail').textContent()).toContain('Do not send money')
    expect(await page.locator('section.account').count()).toBe(0)
    await screenshot(page, 'invoice-cancelled')
    expect(await lowContrastTexts(page)).toEqual([])
    await watched.context.close()
  })

  it('answers an unknown, a malformed and a long-expired token with the same plain 404 page', async () => {
    const watched = await openPage(browser, harness.app.baseUrl)
    const { page } = watched
    const bodies: string[] = []
    for (const token of [
      `cht_${randomBytes(32).toString('base64url')}`,
      'not-a-token',
      '%3Cscript%3Ealert(1)%3C%2Fscript%3E',
      'cht_',
    ]) {
      for (const prefix of ['/checkout/', '/pay/']) {
        const response = await page.goto(`${harness.app.baseUrl}${prefix}${token}`)
        expect(response?.status()).toBe(404)
        bodies.push(await response!.text())
      }
    }
    // A link broken anywhere — malformed escapes, control characters, far too long, a path
    // below the token — is a link not found too, never the API's JSON error.
    for (const token of ['%ZZ', '%E0%A4%A', 'abc%00', 'abc%7F', 'x'.repeat(3_000), 'abc/def']) {
      for (const prefix of ['/checkout/', '/pay/']) {
        const response = await fetch(`${harness.app.baseUrl}${prefix}${token}`)
        expect([prefix + token.slice(0, 20), response.status, response.headers.get('content-type')]).toEqual([
          prefix + token.slice(0, 20),
          404,
          'text/html; charset=utf-8',
        ])
        expect(response.headers.get('content-security-policy')).toContain("default-src 'none'")
        bodies.push(await response.text())
      }
    }
    expect(new Set(bodies).size).toBe(1)
    expect(await page.locator('h1').textContent()).toBe('Payment link not found')
    expect(watched.dialogs).toEqual([])
    await screenshot(page, 'checkout-not-found')
    expect(await lowContrastTexts(page)).toEqual([])
    // The contrast check can fail: light grey text on white is caught.
    await page.locator('main p').evaluate((element) => {
      ;(element as unknown as { style: { color: string } }).style.color = '#aaaaaa'
    })
    expect(await lowContrastTexts(page)).toHaveLength(1)
    await watched.context.close()
  })

  it('is served with a strict Content-Security-Policy, never framed, never cached', async () => {
    const intent = await createIntent({ amountKobo: 100_000 })
    for (const url of [intent.checkoutUrl, `${harness.app.baseUrl}/checkout/not-a-token`]) {
      const response = await fetch(url)
      const csp = response.headers.get('content-security-policy') ?? ''
      expect(csp).toContain("default-src 'none'")
      expect(csp).toContain("script-src 'self'")
      expect(csp).toContain("style-src 'self'")
      expect(csp).toContain("frame-ancestors 'none'")
      expect(csp).not.toContain('unsafe-inline')
      expect(response.headers.get('x-frame-options')).toBe('DENY')
      expect(response.headers.get('referrer-policy')).toBe('no-referrer')
      expect(response.headers.get('cache-control')).toBe('no-store')
      const page = await response.text()
      expect(page).not.toMatch(/<script(?![^>]*\bsrc="\/checkout-assets\/checkout\.js")/)
      expect(page).not.toMatch(/\sstyle=|<style/)
    }
    const openapi = (await (await fetch(`${harness.app.baseUrl}/openapi.json`)).json()) as Record<string, unknown>
    expect(JSON.stringify(openapi)).toContain('"checkoutUrl"')
  })
})

/** Script in every shape a page could be tricked by: closing an attribute, an element with a handler, a script element. */
const INJECTED = '"><img src=x onerror=alert(1)><script>alert(2)</script>'

describe('partner-supplied text on the page', () => {
  it('shows script injected into every displayed field as text and runs none of it', async () => {
    const { client: hostile, credentials } = await harness.app.newPartner({ name: INJECTED })
    const intent = await hostile.post<IntentJson>('/api/v1/rail/payment/intent', {
      reference: `hostile-${randomUUID()}`,
      amountKobo: 100_000,
      merchantDisplayName: INJECTED,
      purposeTag: INJECTED,
      virtualAccountHolder: { name: INJECTED },
    })
    expect(intent.status).toBe(200)
    const invoice = await hostile.post<{ checkoutUrl: string }>('/api/v1/rail/invoice', {
      reference: `hostile-${randomUUID()}`,
      title: INJECTED,
      description: INJECTED,
      amountKobo: 100_000,
      lineItems: [{ description: INJECTED, quantity: 1, unitAmountKobo: 100_000 }],
      customer: { name: INJECTED },
      publishOnCreate: true,
    })
    expect(invoice.status).toBe(200)
    const escrow = await escrowClient(harness.app.baseUrl, credentials.escrowApiKey).create<{
      funding: { checkoutUrl: string }
    }>(createRequest({ description: INJECTED }))
    expect(escrow.status).toBe(201)
    expect(escrow.body.funding.checkoutUrl).toMatch(new RegExp(`^${harness.app.baseUrl}/checkout/cht_`))

    const watched = await openPage(browser, harness.app.baseUrl)
    const { page } = watched
    const pages: [string, string[]][] = [
      [intent.body.checkoutUrl, ['.merchant', 'h1']],
      [invoice.body.checkoutUrl, ['h1', '.details', '.lines dd', '.items .item-description']],
      [escrow.body.funding.checkoutUrl, ['.merchant', 'h1']],
    ]
    for (const [url, fields] of pages) {
      expect((await page.goto(url))?.status()).toBe(200)
      for (const selector of fields) expect(await page.locator(selector).textContent()).toBe(INJECTED)
      expect(await page.locator('img').count()).toBe(0)
      expect(await page.locator('script').count()).toBe(1)
      expect(await page.locator('script').getAttribute('src')).toBe('/checkout-assets/checkout.js')
    }
    // The account name (the holder's, given by the partner) is shown as text too.
    await page.goto(intent.body.checkoutUrl)
    expect(await page.locator('.account dd').last().textContent()).toBe(INJECTED.slice(0, 100))
    await screenshot(page, 'checkout-escaped-text')
    expect(await lowContrastTexts(page)).toEqual([])
    expect(watched.dialogs).toEqual([])
    expectOnlyRail(watched)
    await watched.context.close()
  })
})
