// /docs in a real browser: the reference renders, and "Try it out" on a signed route works once the
// partner authorizes with its key id and signing secret (the page signs each request itself).
import type { Browser, Locator } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchBrowser } from '../checkout/browser.ts'
import { startTestApp, type TestApp } from '../support/app.ts'

let app: TestApp
let browser: Browser

/**
 * Presses a button once it shows: its click event is dispatched to it, without Playwright's wait
 * for the element to stay still over animation frames. On a busy machine a click on this large
 * page once waited past 90 s on "visible, enabled and stable" with the button shown (headless
 * Chromium drawing no frame is the likely cause); what is tested is what the page does on the
 * click, not how it is drawn.
 */
async function press(button: Locator): Promise<void> {
  await button.waitFor({ state: 'visible' })
  await button.dispatchEvent('click')
}

beforeAll(async () => {
  app = await startTestApp()
  browser = await launchBrowser()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await app?.close()
})

describe('/docs', () => {
  it('"Try it out" on GET /api/v1/rail/settings answers 200 for the partner who authorized, and the secret is never sent', async () => {
    const { credentials } = await app.newPartner({ name: 'Docs Reader' })
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    // Limits, not waits: the reference is a large page, and on a busy machine (CI running files side
    // by side) rendering it and each click took longer than Playwright's default 30 s.
    context.setDefaultTimeout(90_000)
    const page = await context.newPage()
    const sentHeaders: Record<string, string>[] = []
    // The page's Content-Security-Policy must refuse nothing the page needs (it reports each refusal here).
    const refusals: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) refusals.push(message.text())
    })
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/rail/settings')) sentHeaders.push(request.headers())
    })
    await page.goto(`${app.baseUrl}/docs/#/partner/getSettings`)
    const operation = page.locator('#operations-partner-getSettings')
    await operation.waitFor()

    await press(page.locator('button.authorize').first())
    const values: Record<string, string> = {
      railKeyId: credentials.keyId,
      railTimestamp: 'auto',
      railSignature: credentials.signingSecret,
    }
    for (const [scheme, value] of Object.entries(values)) {
      const container = page.locator('.auth-container form', { hasText: `${scheme} (apiKey)` })
      await container.locator('input').fill(value)
      await press(container.locator('button.authorize'))
    }
    await press(page.locator('button.btn-done').first())

    if (!(await operation.locator('.try-out__btn').isVisible())) await press(operation.locator('.opblock-summary'))
    await press(operation.locator('.try-out__btn'))
    await press(operation.locator('button.execute'))
    const status = operation.locator('.live-responses-table tbody .response-col_status').first()
    await status.waitFor()
    expect((await status.textContent())?.trim()).toBe('200')
    await expect.poll(() => sentHeaders.length).toBeGreaterThan(0)
    const sent = sentHeaders[0]!
    expect(sent['x-rail-key-id']).toBe(credentials.keyId)
    expect(sent['x-rail-signature']).toMatch(/^v1=[0-9a-f]{64}$/)
    expect(Object.values(sent)).not.toContain(credentials.signingSecret)
    expect(
      await operation.locator('.live-responses-table tbody .response-col_description').first().textContent(),
    ).toContain(credentials.partnerId)
    expect(refusals).toEqual([])
    await context.close()
  })
})
