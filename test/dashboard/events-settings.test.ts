// The dashboard's events and settings in a real browser (Debian's Chromium) over a real app with
// real workers and real callback receivers: an event made through the API (a credit to a virtual
// account) with its delivery attempts; Redeliver in the browser, the new attempt arriving at the
// receiver and listed on the page; a failing receiver's status and excerpt; the callback URL set
// through the API's rules; a credential rotated, its new secret shown once and working. Refusals:
// CSRF, another partner's event, bad input, a double-submitted form, script in every shown text.
import { randomUUID } from 'node:crypto'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RailClient, verifyRailSignature } from '../../src/client/index.ts'
import type { PartnerCredentials } from '../../src/partners/service.ts'
import { fitsWidth, launchBrowser, screenshot, waitForText } from '../checkout/browser.ts'
import { payIn, startCollections, waitForCallback, type CollectionsHarness } from '../collections/support.ts'
import { startReceiver, type Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'
import { postForm, signedInPage, signedInSession, type DashboardSession } from './support.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const INJECTED = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`

let harness: CollectionsHarness
let browser: Browser
let failing: Receiver
let credentials: PartnerCredentials
let client: RailClient
let eventId: string
let otherEventId: string
let session: DashboardSession

type EventJson = Schemas['EventWithDeliveries']

const pool = () => harness.app.db.pool
const baseUrl = () => harness.app.baseUrl

/** A virtual account of the client's partner (callbacks to `callbackUrl`, else the partner's default), paid once: its credit.confirmed event id. */
async function creditEvent(on: RailClient, callbackUrl?: string): Promise<string> {
  const account = await on.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
    reference: `v${randomUUID().slice(0, 6)}${INJECTED}`,
    purposeTag: `Rent ${INJECTED}`,
    ...(callbackUrl ? { callbackUrl } : {}),
  })
  expect(account.status).toBe(200)
  await payIn(on, account.body.virtualAccount, 125_000, { payerName: `Payer ${INJECTED}` })
  let id: string | undefined
  await waitFor(
    async () => {
      const events = await on.get<{ data: { id: string; type: string; objectId: string }[] }>(
        '/api/v1/rail/events?type=credit.confirmed&limit=100',
      )
      id = events.body.data.find((event) => JSON.stringify(event).includes(account.body.trackingId))?.id
      return id !== undefined
    },
    20_000,
    'credit.confirmed event',
  )
  return id!
}

async function eventOf(id: string, on: RailClient = client): Promise<EventJson> {
  return (await on.get<EventJson>(`/api/v1/rail/events/${id}`)).body
}

async function actions(action: string): Promise<{ object_id: string; detail: Record<string, unknown> }[]> {
  const { rows } = await pool().query(
    `SELECT object_id, detail FROM dashboard_actions WHERE partner_id = $1 AND action = $2 ORDER BY id`,
    [credentials.partnerId, action],
  )
  return rows
}

const attemptsMade = async (id: string) =>
  (await eventOf(id)).deliveries.flatMap((delivery) => delivery.attempts).length

/** Reloads the (script-free) event page until it lists `count` attempts. */
async function reloadUntilAttempts(page: Page, count: number): Promise<void> {
  await waitFor(
    async () => {
      await page.reload()
      return (await page.locator('.attempt').count()) >= count
    },
    15_000,
    `${count} attempts on the page`,
  )
}

function secretOf(page: string): string {
  return /<code id="new-secret">([^<]+)<\/code>/.exec(page)![1]!
}

beforeAll(async () => {
  harness = await startCollections()
  browser = await launchBrowser()
  failing = await startReceiver()
  failing.answer = () => ({ status: 503, body: `Down ${INJECTED}` })
  const partner = await harness.app.newPartner({ name: `Ada ${INJECTED}`, callbackUrl: harness.hook.url })
  credentials = partner.credentials
  client = partner.client
  eventId = await creditEvent(client)
  await waitForCallback(harness.hook, credentials.callbackSigningSecret, (body) => body.id === eventId)
  const other = await harness.app.newPartner({ name: 'Other Ltd', callbackUrl: harness.hook.url })
  otherEventId = await creditEvent(other.client)
  session = await signedInSession(pool(), baseUrl(), credentials.partnerId)
})
afterAll(async () => {
  await browser?.close()
  await failing?.close()
  await harness?.close()
  await harness?.app.close()
})

describe('dashboard events', () => {
  it('lists the event, shows its payload and attempts, and Redeliver brings a new attempt to the real receiver', async () => {
    const watched = await signedInPage(browser, pool(), baseUrl(), credentials.partnerId)
    const { page } = watched
    await page.getByRole('link', { name: 'Events', exact: true }).first().click()
    await waitForText(page, 'h1', 'Events')
    expect(await page.locator(`a[href="/dashboard/events/${eventId}"]`).textContent()).toBe('credit.confirmed')
    expect(await fitsWidth(page)).toBe(true)
    await screenshot(page, 'dashboard-events')

    await page.locator(`a[href="/dashboard/events/${eventId}"]`).click()
    await waitForText(page, 'h1', 'Event credit.confirmed')
    expect(await page.locator('#event-kind').textContent()).toBe('credit.confirmed')
    const payload = JSON.parse((await page.locator('#payload').textContent())!) as {
      id: string
      data: { payer: { name: string }; purposeTag: string }
    }
    expect(payload.id).toBe(eventId)
    expect(payload.data.payer.name).toBe(`Payer ${INJECTED}`)
    expect(payload.data.purposeTag).toBe(`Rent ${INJECTED}`)
    expect(await page.locator('.attempt').count()).toBe(1)
    expect(await page.locator('.attempt .status-code').textContent()).toBe('200')
    expect(await page.locator('.attempt .url').textContent()).toBe(harness.hook.url)
    expect(await page.locator('.attempt .latency').textContent()).toMatch(/^\d+ ms$/)
    expect(await page.locator('.attempt .excerpt').textContent()).toBe('ok')
    expect(await fitsWidth(page)).toBe(true)
    await screenshot(page, 'dashboard-event')

    const received = harness.hook.requests.length
    await page.getByRole('button', { name: 'Redeliver' }).click()
    await waitForText(page, '#notice', /Redelivery scheduled/)
    // The new attempt reaches the real receiver, signed with the partner's callback secret...
    const delivered = await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.id === eventId,
      2,
    )
    expect(delivered).toHaveLength(2)
    expect(harness.hook.requests.length).toBeGreaterThan(received)
    // ... and is listed on the page, as a second delivery.
    await reloadUntilAttempts(page, 2)
    expect(await page.locator('.delivery').count()).toBe(2)
    expect(await page.locator('.attempt .status-code').allTextContents()).toEqual(['200', '200'])
    expect(await actions('event.redeliver')).toEqual([
      {
        object_id: eventId,
        detail: { reference: expect.any(String), deliveryId: (await eventOf(eventId)).deliveries[1]!.id },
      },
    ])
    // Script in the payload and the partner's name stayed text.
    expect(await page.locator('#partner-name').textContent()).toBe(`Ada ${INJECTED}`)
    expect(await page.locator('img').count()).toBe(0)
    expect(watched.dialogs).toEqual([])
    await watched.context.close()
  })

  it("shows a failing receiver's status and excerpt as text, and lists the event under delivery=failed", async () => {
    const failedId = await creditEvent(client, `${failing.url}?tag=${encodeURIComponent(INJECTED)}`)
    await waitFor(async () => (await eventOf(failedId)).deliveryStatus === 'failed', 20_000, 'delivery failed')
    const watched = await signedInPage(browser, pool(), baseUrl(), credentials.partnerId)
    const { page } = watched
    // The overview's link to failing deliveries lists this one and not the delivered one.
    await page.getByRole('link', { name: 'Events whose webhook delivery failed' }).click()
    await waitForText(page, 'h1', 'Events')
    expect(page.url()).toContain('delivery=failed')
    expect(await page.locator(`a[href="/dashboard/events/${failedId}"]`).count()).toBe(1)
    expect(await page.locator(`a[href="/dashboard/events/${eventId}"]`).count()).toBe(0)
    await page.goto(`${baseUrl()}/dashboard/events/${failedId}`)
    await waitForText(page, 'h1', 'Event credit.confirmed')
    expect(await page.locator('#event-delivery').textContent()).toBe('failed')
    expect(await page.locator('.attempt .status-code').first().textContent()).toBe('503')
    expect(await page.locator('.attempt .excerpt').first().textContent()).toBe(`Down ${INJECTED}`)
    expect(await page.locator('.attempt .url').first().textContent()).toContain(failing.url)
    expect(await page.locator('img').count()).toBe(0)
    expect(watched.dialogs).toEqual([])
    await watched.context.close()
  })

  it('filters by kind and delivery status, ignoring invalid values', async () => {
    const list = async (query: string) =>
      (await fetch(`${baseUrl()}/dashboard/events${query}`, { headers: { cookie: session.cookie } })).text()
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md):
    // the delivery failure of the test before is recorded as its delivery fails.
    await waitFor(
      async () =>
        (await client.get<{ data: unknown[] }>('/api/v1/rail/events?type=event.delivery_failed&limit=100')).body.data
          .length === 1,
      20_000,
      'the delivery failure listed',
    )
    expect(await list('?kind=credit.confirmed')).toContain(`/dashboard/events/${eventId}`)
    expect(await list('?kind=transfer.confirmed')).toContain('No events match.')
    // The only skipped event: the record that the failing receiver's delivery failed (delivered nowhere).
    const skipped = await list('?delivery=skipped')
    expect(skipped).toContain('>event.delivery_failed</a>')
    expect(skipped).not.toContain('>credit.confirmed</a>')
    // Being retried after a failed attempt (what the overview counts and links to): none here, the failure was final.
    expect(await list('?delivery=retrying')).toContain('No events match.')
    // Invalid values are ignored: the whole list.
    const ignored = await list(`?kind=${encodeURIComponent(INJECTED)}&delivery=nope&cursor=x`)
    expect(ignored).toContain(`/dashboard/events/${eventId}`)
    expect(ignored).not.toContain('<script>')
  })

  it("answers 404 for another partner's event, an unknown and a malformed id, on the page and the Redeliver post", async () => {
    for (const id of [otherEventId, randomUUID(), 'not-an-id']) {
      const page = await fetch(`${baseUrl()}/dashboard/events/${id}`, { headers: { cookie: session.cookie } })
      expect(page.status).toBe(404)
      expect(await page.text()).toContain('There is no such event.')
      expect(
        (await postForm(baseUrl(), session, `/dashboard/events/${id}/redeliver`, { reference: randomUUID() })).status,
      ).toBe(404)
    }
  })

  it('refuses Redeliver without the CSRF token or with another session token, and without its reference; a double submit redelivers once', async () => {
    const other = await signedInSession(pool(), baseUrl(), credentials.partnerId)
    const before = {
      attempts: await attemptsMade(eventId),
      deliveries: (await eventOf(eventId)).deliveries.length,
      actions: (await actions('event.redeliver')).length,
    }
    expect(
      (await postForm(baseUrl(), session, `/dashboard/events/${eventId}/redeliver`, { reference: randomUUID() }, null))
        .status,
    ).toBe(403)
    expect(
      (
        await postForm(
          baseUrl(),
          session,
          `/dashboard/events/${eventId}/redeliver`,
          { reference: randomUUID() },
          other.csrf,
        )
      ).status,
    ).toBe(403)
    expect(
      (await postForm(baseUrl(), session, `/dashboard/events/${eventId}/redeliver`, { reference: 'x' })).status,
    ).toBe(400)
    expect((await eventOf(eventId)).deliveries.length).toBe(before.deliveries)
    expect((await actions('event.redeliver')).length).toBe(before.actions)

    const reference = randomUUID()
    const first = await postForm(baseUrl(), session, `/dashboard/events/${eventId}/redeliver`, { reference })
    const again = await postForm(baseUrl(), session, `/dashboard/events/${eventId}/redeliver`, { reference })
    expect(first.headers.get('location')).toBe(`/dashboard/events/${eventId}?notice=redelivered`)
    expect(again.headers.get('location')).toBe(`/dashboard/events/${eventId}?notice=already-redelivered`)
    expect((await eventOf(eventId)).deliveries.length).toBe(before.deliveries + 1)
    await waitFor(async () => (await attemptsMade(eventId)) === before.attempts + 1, 15_000, 'one new attempt')
  })
})

describe('dashboard events without a receiver', () => {
  it('refuses Redeliver when there is no callback URL (the service refusal, recorded), and delivers once one is set', async () => {
    const bare = await harness.app.newPartner({ name: 'Bare Ltd' })
    const skippedId = await creditEvent(bare.client)
    expect((await eventOf(skippedId, bare.client)).deliveryStatus).toBe('skipped')
    const bareSession = await signedInSession(pool(), baseUrl(), bare.credentials.partnerId)
    const page = await (
      await fetch(`${baseUrl()}/dashboard/events/${skippedId}`, { headers: { cookie: bareSession.cookie } })
    ).text()
    expect(page).toContain('Never delivered: there was no callback URL when it happened.')
    const refused = await postForm(baseUrl(), bareSession, `/dashboard/events/${skippedId}/redeliver`, {
      reference: randomUUID(),
    })
    expect(refused.status).toBe(409)
    expect(await refused.text()).toContain('There is no callback URL to deliver to')
    const recorded = await pool().query(
      `SELECT detail FROM dashboard_actions WHERE partner_id = $1 AND action = 'event.redeliver'`,
      [bare.credentials.partnerId],
    )
    expect(recorded.rows).toEqual([
      { detail: { reference: expect.any(String), refused: expect.stringContaining('no callback URL') } },
    ])
    expect((await eventOf(skippedId, bare.client)).deliveries).toEqual([])

    expect(
      (await postForm(baseUrl(), bareSession, '/dashboard/settings/callback-url', { callbackUrl: harness.hook.url }))
        .status,
    ).toBe(303)
    expect(
      (await postForm(baseUrl(), bareSession, `/dashboard/events/${skippedId}/redeliver`, { reference: randomUUID() }))
        .status,
    ).toBe(303)
    await waitForCallback(harness.hook, bare.credentials.callbackSigningSecret, (body) => body.id === skippedId)
    await waitFor(
      async () => (await eventOf(skippedId, bare.client)).deliveryStatus === 'delivered',
      15_000,
      'delivered',
    )
  })

  it('shows a callback URL stopped by a 410 on the settings page, and saving it again resumes it', async () => {
    const gone = await startReceiver()
    gone.answer = () => ({ status: 410, body: 'gone' })
    try {
      const partner = await harness.app.newPartner({ name: 'Gone Ltd', callbackUrl: gone.url })
      const goneId = await creditEvent(partner.client)
      await waitFor(
        async () => (await eventOf(goneId, partner.client)).deliveryStatus === 'failed',
        15_000,
        'stopped by 410',
      )
      const goneSession = await signedInSession(pool(), baseUrl(), partner.credentials.partnerId)
      const settings = async () =>
        (await fetch(`${baseUrl()}/dashboard/settings`, { headers: { cookie: goneSession.cookie } })).text()
      expect(await settings()).toMatch(
        /<dd id="callback-disabled">since [^<]+: the receiver answered 410 Gone to event /,
      )
      expect(
        (await postForm(baseUrl(), goneSession, '/dashboard/settings/callback-url', { callbackUrl: gone.url })).status,
      ).toBe(303)
      expect(await settings()).not.toContain('callback-disabled')
    } finally {
      await gone.close()
    }
  })
})

describe('dashboard settings', () => {
  it('rotates the request-signing secret in the browser: shown once, works, and not shown again', async () => {
    const watched = await signedInPage(browser, pool(), baseUrl(), credentials.partnerId)
    const { page } = watched
    await page.getByRole('link', { name: 'Settings', exact: true }).first().click()
    await waitForText(page, 'h1', 'Settings')
    expect(await page.locator('#callback-url').textContent()).toBe(harness.hook.url)
    expect(await page.locator('#settings-name').textContent()).toBe(`Ada ${INJECTED}`)
    expect(await page.locator('#request-signing-live .credential-name').allTextContents()).toEqual([credentials.keyId])
    expect(await fitsWidth(page)).toBe(true)
    await screenshot(page, 'dashboard-settings')

    const answer = page.waitForResponse((response) => response.url().endsWith('/dashboard/settings/rotate'))
    await page.getByRole('button', { name: 'Rotate request-signing secret' }).click()
    await waitForText(page, 'h1', 'New request-signing secret')
    expect((await answer).headers()['cache-control']).toBe('no-store')
    expect(page.url()).toBe(`${baseUrl()}/dashboard/settings/rotate`)
    const keyId = (await page.locator('#new-key-id').textContent())!
    const signingSecret = (await page.locator('#new-secret').textContent())!
    expect(signingSecret).toMatch(/^rk_sec_test_/)
    const until = new Date((await page.locator('#previous-valid-until time').getAttribute('datetime'))!)
    expect(Math.abs(until.getTime() - Date.now() - 24 * 3600_000)).toBeLessThan(60_000)
    expect(await fitsWidth(page)).toBe(true)

    // The new secret signs API requests; the old one still works during the overlap.
    const rotated = new RailClient(baseUrl(), { keyId, signingSecret })
    expect((await rotated.get('/api/v1/rail/settings')).status).toBe(200)
    expect((await client.get('/api/v1/rail/settings')).status).toBe(200)

    // Reloading the answer (the browser posts the form again) shows no secret and rotates nothing.
    await page.reload()
    await waitForText(page, 'h1', 'Already rotated')
    expect(await page.content()).not.toContain(signingSecret)
    await page.goto(`${baseUrl()}/dashboard/settings`)
    expect(await page.content()).not.toContain(signingSecret)
    expect(await page.locator('#request-signing-live .credential-name').allTextContents()).toEqual([
      keyId,
      credentials.keyId,
    ])
    expect(await page.locator('#request-signing-live .credential-until').nth(1).textContent()).toMatch(/^valid until /)
    const recorded = await actions('credentials.rotate')
    expect(recorded).toEqual([
      {
        object_id: credentials.partnerId,
        detail: {
          kind: 'request_signing',
          overlapS: 86_400,
          reference: expect.any(String),
          keyId,
          previousValidUntil: until.toISOString(),
        },
      },
    ])
    expect(JSON.stringify(recorded)).not.toContain(signingSecret)
    expect(await page.locator('img').count()).toBe(0)
    expect(watched.dialogs).toEqual([])
    await watched.context.close()
  })

  it('rotates the callback secret (the next callback is signed with it) and the escrow API key (it authenticates)', async () => {
    const callback = await postForm(baseUrl(), session, '/dashboard/settings/rotate', {
      credential: 'callback-signing',
      overlapHours: '0',
      reference: randomUUID(),
    })
    expect(callback.status).toBe(200)
    expect(callback.headers.get('cache-control')).toBe('no-store')
    const callbackSecret = secretOf(await callback.text())
    expect(callbackSecret).toMatch(/^whsec_/)
    const count = harness.hook.requests.length
    expect(
      (await postForm(baseUrl(), session, `/dashboard/events/${eventId}/redeliver`, { reference: randomUUID() }))
        .status,
    ).toBe(303)
    await harness.hook.waitForRequests(count + 1)
    const latest = harness.hook.requests.at(-1)!
    expect(verifyRailSignature(latest.rawBody, String(latest.headers['x-rail-signature']), callbackSecret)).toBe(true)

    const escrow = await postForm(baseUrl(), session, '/dashboard/settings/rotate', {
      credential: 'escrow-api-key',
      overlapHours: '1',
      reference: randomUUID(),
    })
    expect(escrow.status).toBe(200)
    const apiKey = secretOf(await escrow.text())
    expect((await fetch(`${baseUrl()}/api/v1/escrow/partner`, { headers: { 'x-api-key': apiKey } })).status).toBe(200)
    expect((await fetch(`${baseUrl()}/api/v1/escrow/partner`, { headers: { 'x-api-key': `${apiKey}x` } })).status).toBe(
      401,
    )
  })

  it('refuses a rotation without the CSRF token, with bad input, or posted twice; nothing more is issued', async () => {
    const live = async () =>
      (
        await pool().query(`SELECT count(*)::int AS n FROM partner_credentials WHERE partner_id = $1`, [
          credentials.partnerId,
        ])
      ).rows[0].n as number
    const before = { credentials: await live(), actions: (await actions('credentials.rotate')).length }
    const fields = { credential: 'request-signing', overlapHours: '24', reference: randomUUID() }
    expect((await postForm(baseUrl(), session, '/dashboard/settings/rotate', fields, null)).status).toBe(403)
    const other = await signedInSession(pool(), baseUrl(), credentials.partnerId)
    expect((await postForm(baseUrl(), session, '/dashboard/settings/rotate', fields, other.csrf)).status).toBe(403)
    for (const bad of [
      { credential: 'master-key' },
      { overlapHours: '5' },
      { overlapHours: '' },
      { reference: 'r1' },
      { credential: '__proto__' },
    ]) {
      expect((await postForm(baseUrl(), session, '/dashboard/settings/rotate', { ...fields, ...bad })).status).toBe(400)
    }
    expect(await live()).toBe(before.credentials)
    expect((await actions('credentials.rotate')).length).toBe(before.actions)

    const first = await postForm(baseUrl(), session, '/dashboard/settings/rotate', fields)
    const again = await postForm(baseUrl(), session, '/dashboard/settings/rotate', fields)
    expect(first.status).toBe(200)
    expect(again.status).toBe(409)
    expect(await again.text()).not.toContain('new-secret')
    expect(await live()).toBe(before.credentials + 1)
  })

  it('sets and removes the callback URL under the API rules, refusing bad URLs with nothing changed', async () => {
    const watched = await signedInPage(browser, pool(), baseUrl(), credentials.partnerId)
    const { page } = watched
    await page.goto(`${baseUrl()}/dashboard/settings`)
    await page.locator('input[name=callbackUrl]').fill(failing.url)
    await page.getByRole('button', { name: 'Save callback URL' }).click()
    await waitForText(page, '#notice', 'Callback URL saved.')
    expect(await page.locator('#callback-url').textContent()).toBe(failing.url)
    expect((await client.get<{ callbackUrl: string }>('/api/v1/rail/settings')).body.callbackUrl).toBe(failing.url)
    await watched.context.close()

    const refused: [string, number][] = [
      ['http://10.1.2.3/hooks', 422], // a private address: the SSRF guard
      ['ftp://example.com/hooks', 422],
      ['javascript:alert(1)', 422],
      [`http://example.com/${INJECTED}`, 400],
      ['http://example.com/a\u0007b', 422], // every request body's control characters are refused before any handler
      [`http://example.com/${'a'.repeat(2100)}`, 400],
      ['', 400],
    ]
    for (const [url, status] of refused) {
      const answer = await postForm(baseUrl(), session, '/dashboard/settings/callback-url', { callbackUrl: url })
      expect([url.slice(0, 40), answer.status]).toEqual([url.slice(0, 40), status])
      expect(await answer.text()).not.toContain('<script>')
    }
    expect((await client.get<{ callbackUrl: string }>('/api/v1/rail/settings')).body.callbackUrl).toBe(failing.url)

    expect(
      (
        await postForm(baseUrl(), session, '/dashboard/settings/callback-url', { callbackUrl: harness.hook.url })
      ).headers.get('location'),
    ).toBe('/dashboard/settings?notice=callback-url-saved')
    expect(
      (await postForm(baseUrl(), session, '/dashboard/settings/callback-url', { remove: '1' })).headers.get('location'),
    ).toBe('/dashboard/settings?notice=callback-url-removed')
    expect((await client.get<{ callbackUrl: string | null }>('/api/v1/rail/settings')).body.callbackUrl).toBeNull()
    expect(
      (await postForm(baseUrl(), session, '/dashboard/settings/callback-url', { callbackUrl: harness.hook.url }, null))
        .status,
    ).toBe(403)
    expect(
      (await postForm(baseUrl(), session, '/dashboard/settings/callback-url', { callbackUrl: harness.hook.url }))
        .status,
    ).toBe(303)
    const saved = (await actions('settings.callback_url')).map((row) => row.detail)
    // Only the URL that reached the service (the guard refused it) was recorded, with its refusal.
    expect(saved.filter((detail) => 'refused' in detail)).toEqual([
      { callbackUrl: 'http://10.1.2.3/hooks', refused: expect.stringContaining('private') },
    ])
  })

  it('refuses an http callback URL for a live partner, as the API does', async () => {
    const live = await harness.app.newPartner({ name: 'Live Ltd', environment: 'live' })
    const liveSession = await signedInSession(pool(), baseUrl(), live.credentials.partnerId)
    const answer = await postForm(baseUrl(), liveSession, '/dashboard/settings/callback-url', {
      callbackUrl: 'http://example.com/hooks',
    })
    expect(answer.status).toBe(422)
    expect(await answer.text()).toContain('must use https')
  })
})

describe('dashboard events paging', () => {
  it('pages 25 events at a time, newest first, with a link to the older ones', async () => {
    const all = async () =>
      (await client.get<{ data: { id: string }[] }>('/api/v1/rail/events?limit=100')).body.data.map((event) => event.id)
    const before = (await all()).length
    const account = await client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', {
      reference: `paging-${randomUUID()}`,
    })
    for (let credit = 1; credit <= 26; credit++) await payIn(client, account.body.virtualAccount, 1_000 * credit)
    await waitFor(async () => (await all()).length >= before + 26, 20_000, "the credits' events")
    const ids = await all()
    const idsOn = (page: string) =>
      [...page.matchAll(/href="\/dashboard\/events\/([0-9a-f-]{36})"/g)].map((match) => match[1]!)
    const first = await (await fetch(`${baseUrl()}/dashboard/events`, { headers: { cookie: session.cookie } })).text()
    expect(idsOn(first)).toEqual(ids.slice(0, 25))
    const older = /<a href="([^"]+)">Older events<\/a>/.exec(first)![1]!.replaceAll('&amp;', '&')
    const second = await (await fetch(`${baseUrl()}${older}`, { headers: { cookie: session.cookie } })).text()
    expect(idsOn(second)).toEqual(ids.slice(25, 50))
  })
})
