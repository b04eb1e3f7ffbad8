// The dashboard's invoices and escrows in a real browser (Debian's Chromium) and over fetch: an
// invoice created, published, paid in part and cancelled from the browser and seen through the
// API, its payment page opened; escrows funded through the sandbox bank, then released and
// cancelled from their pages; wrong states, CSRF, another partner's objects, a double-submitted
// create, bad input, and script injected into every partner text shown.
import { randomUUID } from 'node:crypto'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import type { PartnerCredentials } from '../../src/partners/service.ts'
import { fitsWidth, launchBrowser, screenshot, waitForText, type WatchedPage } from '../checkout/browser.ts'
import { payIn, startCollections, type CollectionsHarness } from '../collections/support.ts'
import { createRequest, escrowClient, TEST_PAYER, type EscrowClient } from '../support/escrow.ts'
import { PAYEE } from '../support/payments.ts'
import { waitFor } from '../support/wait.ts'
import { postForm, signedInPage, signedInSession, type DashboardSession } from './support.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const INJECTED = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`

type InvoiceJson = Schemas['Invoice']

type EscrowJson = Schemas['Escrow']

interface Party {
  credentials: PartnerCredentials
  client: RailClient
  escrow: EscrowClient
}

let harness: CollectionsHarness
let browser: Browser
let ada: Party
let other: Party
let baseUrl: string

async function party(name: string): Promise<Party> {
  const { credentials, client } = await harness.app.newPartner({ name })
  return { credentials, client, escrow: escrowClient(harness.app.baseUrl, credentials.escrowApiKey) }
}

async function invoiceOf(on: Party, reference: string): Promise<InvoiceJson> {
  const answer = await on.client.get<InvoiceJson>(`/api/v1/rail/invoice/${encodeURIComponent(reference)}`)
  expect(answer.status).toBe(200)
  return answer.body
}

async function invoicesOf(on: Party): Promise<InvoiceJson[]> {
  return (await on.client.get<{ data: InvoiceJson[] }>('/api/v1/rail/invoice?limit=100')).body.data
}

async function escrowOf(on: Party, ref: string): Promise<EscrowJson> {
  return (await on.escrow.get<{ escrow: EscrowJson }>(ref)).body.escrow
}

async function actionsOf(
  partnerId: string,
): Promise<{ action: string; object_id: string | null; detail: Record<string, unknown> }[]> {
  const { rows } = await harness.app.db.pool.query(
    `SELECT action, object_id, detail FROM dashboard_actions WHERE partner_id = $1 ORDER BY id`,
    [partnerId],
  )
  return rows
}

/** An escrow created through the escrow API and, when asked, funded by the payer through the sandbox bank. */
async function escrowFor(on: Party, overrides: Record<string, unknown>, fund: boolean): Promise<EscrowJson> {
  const created = await on.escrow.create<{ ref: string; funding: { virtualAccount: string } }>(
    createRequest({ amount: 50_000, ...overrides }),
  )
  expect(created.status).toBe(201)
  const { ref, funding } = created.body
  if (fund) {
    await payIn(on.client, funding.virtualAccount, 50_000, {
      payerName: TEST_PAYER.accountName,
      payerAccountNumber: TEST_PAYER.accountNumber,
      payerBankCode: TEST_PAYER.bankCode,
    })
    await waitFor(async () => (await escrowOf(on, ref)).status === 'funded', 45_000, `escrow ${ref} funded`)
  }
  return escrowOf(on, ref)
}

/** Reloads the (script-free) page until the element says `text`. */
async function reloadUntil(page: Page, selector: string, text: string): Promise<void> {
  await waitFor(
    async () => {
      await page.reload()
      return (await page.locator(selector).textContent()) === text
    },
    45_000,
    `${selector} ${text}`,
  )
}

/** Nothing injected ran or became an element. */
async function expectInert(watched: WatchedPage): Promise<void> {
  expect(await watched.page.locator('img').count()).toBe(0)
  expect(await watched.page.locator('main script').count()).toBe(0)
  expect(watched.dialogs).toEqual([])
  expect(await fitsWidth(watched.page)).toBe(true)
}

async function text(response: Response): Promise<string> {
  return (await response.text()).replace(/&#39;/g, "'").replace(/&quot;/g, '"')
}

beforeAll(async () => {
  harness = await startCollections()
  baseUrl = harness.app.baseUrl
  browser = await launchBrowser()
  ada = await party(`Ada ${INJECTED}`)
  other = await party('Other Ltd')
})
afterAll(async () => {
  await browser?.close()
  await harness?.close()
  await harness?.app.close()
})

describe('dashboard invoices', () => {
  it('creates, publishes, is paid in part and cancels an invoice from the browser, as the API shows; script stays text', async () => {
    const watched = await signedInPage(browser, harness.app.db.pool, baseUrl, ada.credentials.partnerId)
    const { page } = watched
    await page.getByRole('link', { name: 'Invoices' }).first().click()
    await waitForText(page, 'h1', 'Invoices')
    await page.getByRole('link', { name: 'New invoice' }).click()
    await waitForText(page, 'h1', 'New invoice')
    await page.locator('#title').fill(`Rent ${INJECTED}`)
    await page.locator('#amount').fill('12,500.50')
    await page.locator('#description').fill(`Two rooms ${INJECTED}`)
    await page.locator('#customerName').fill(`Chidi ${INJECTED}`)
    await page.locator('#customerEmail').fill('chidi@example.com')
    await page.locator('#customerPhone').fill('+2348012345678')
    await page.locator('#customerId').fill(`c ${INJECTED}`)
    await page.locator('#dueAt').fill('2030-01-15T10:30')
    await page.locator('#callbackUrl').fill(harness.hook.url)
    await expectInert(watched)
    await screenshot(page, 'dashboard-invoice-new')
    await page.getByRole('button', { name: 'Create invoice' }).click()
    await waitForText(page, '#notice', 'Invoice created.')
    await waitForText(page, 'h1', `Rent ${INJECTED}`)
    expect(await page.locator('#invoice-status').textContent()).toBe('draft')
    expect(await page.locator('#description').textContent()).toBe(`Two rooms ${INJECTED}`)
    expect(await page.locator('#customer').textContent()).toBe(
      `Chidi ${INJECTED} · chidi@example.com · +2348012345678 · id c ${INJECTED}`,
    )
    expect(await page.locator('#created-by').textContent()).toBe('The dashboard')
    expect(await page.locator('#payment-page').count()).toBe(0)
    await expectInert(watched)
    await screenshot(page, 'dashboard-invoice')

    // The API shows the same invoice: every field of the form, created by the dashboard.
    const reference = (await page.locator('#invoice-reference').textContent())!
    const created = await invoiceOf(ada, reference)
    expect(created).toMatchObject({
      status: 'draft',
      title: `Rent ${INJECTED}`,
      description: `Two rooms ${INJECTED}`,
      amountKobo: 1_250_050,
      amountPaidKobo: 0,
      customer: {
        name: `Chidi ${INJECTED}`,
        email: 'chidi@example.com',
        phone: '+2348012345678',
        customerId: `c ${INJECTED}`,
      },
      dueAt: '2030-01-15T09:30:00.000Z',
      creatorMetadata: { partnerId: ada.credentials.partnerId, credentialId: 'rail:dashboard' },
    })
    expect(page.url()).toBe(`${baseUrl}/dashboard/invoices/${created.id}?notice=created`)

    await page.getByRole('button', { name: 'Publish' }).click()
    await waitForText(page, '#notice', /^Invoice published/)
    expect(await page.locator('#invoice-status').textContent()).toBe('published')
    const published = await invoiceOf(ada, reference)
    expect(published.status).toBe('published')
    expect(await page.locator('#account-number').textContent()).toBe(published.virtualAccount)
    expect(await page.locator('#payment-page').getAttribute('href')).toBe(published.checkoutUrl)
    expect(published.checkoutUrl).toMatch(new RegExp(`^${baseUrl}/pay/`))
    expect(await page.getByRole('button', { name: 'Publish' }).count()).toBe(0)
    await screenshot(page, 'dashboard-invoice-published')

    // The payer pays part of it; the page shows what is paid and what remains.
    await payIn(ada.client, published.virtualAccount!, 250_050)
    await reloadUntil(page, '#invoice-status', 'partially paid')
    expect(await page.locator('#invoice-paid').textContent()).toMatch(/^₦\s?2,500\.50$/)
    expect(await page.locator('#invoice-remaining').textContent()).toMatch(/^₦\s?10,000\.00$/)

    // Its payment page is the payer's page of the same invoice.
    await page.getByRole('link', { name: 'Open payment page' }).click()
    await page.waitForURL(/\/pay\//)
    await waitForText(page, 'h1', `Rent ${INJECTED}`)
    expect(await page.locator('#account-number').textContent()).toBe(published.virtualAccount)
    await expectInert(watched)
    await page.goBack()
    await waitForText(page, 'h1', `Rent ${INJECTED}`)

    await page.getByRole('button', { name: 'Cancel invoice' }).click()
    await waitForText(page, '#notice', /^Invoice cancelled/)
    expect(await page.locator('#invoice-status').textContent()).toBe('cancelled')
    expect((await invoiceOf(ada, reference)).status).toBe('cancelled')
    expect(await page.locator('form[action$="/cancel"]').count()).toBe(0)

    // Every action is recorded as the dashboard's, with what came of it.
    expect(await actionsOf(ada.credentials.partnerId)).toEqual([
      {
        action: 'invoice.create',
        object_id: null,
        detail: {
          reference,
          amountKobo: 1_250_050,
          publishOnCreate: false,
          invoiceId: created.id,
          status: 'draft',
          replayed: false,
        },
      },
      { action: 'invoice.publish', object_id: created.id, detail: { reference, status: 'published' } },
      { action: 'invoice.cancel', object_id: created.id, detail: { reference, status: 'cancelled' } },
    ])

    // The list, filtered by status, shows it (its title as text). A list shows a row once the
    // transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(async () => (await invoicesOf(ada)).length === 1, 20_000, 'the invoice listed')
    await page.getByRole('link', { name: 'Invoices' }).first().click()
    await page.locator('select[name=status]').selectOption('cancelled')
    await page.getByRole('button', { name: 'Find' }).click()
    await page.waitForURL(/status=cancelled/)
    expect(await page.locator('.list li .title').allTextContents()).toEqual([`Rent ${INJECTED}`])
    await expectInert(watched)
    await screenshot(page, 'dashboard-invoices')

    // A wrong state is refused by the service, with its own message.
    const session = await signedInSession(harness.app.db.pool, baseUrl, ada.credentials.partnerId)
    const publish = await postForm(baseUrl, session, `/dashboard/invoices/${created.id}/publish`, {})
    expect(publish.status).toBe(409)
    expect(await text(publish)).toContain('A cancelled invoice cannot be published')
    const cancel = await postForm(baseUrl, session, `/dashboard/invoices/${created.id}/cancel`, {})
    expect(cancel.status).toBe(409)
    expect(await text(cancel)).toContain('A cancelled invoice cannot be cancelled')
    expect((await actionsOf(ada.credentials.partnerId)).slice(-2).map((row) => row.detail.refused)).toEqual([
      'A cancelled invoice cannot be published',
      'A cancelled invoice cannot be cancelled (only draft, published and partially_paid can)',
    ])
    await watched.context.close()
  })

  it('makes one invoice of a double-submitted create form, published at once', async () => {
    const session = await signedInSession(harness.app.db.pool, baseUrl, ada.credentials.partnerId)
    const form = await (
      await fetch(`${baseUrl}/dashboard/invoices/new`, { headers: { cookie: session.cookie } })
    ).text()
    const reference = /name="reference" value="([0-9a-f-]{36})"/.exec(form)![1]!
    const fields = { reference, title: 'Twice', amount: '700', publishOnCreate: 'yes' }
    const [first, second] = await Promise.all([
      postForm(baseUrl, session, '/dashboard/invoices', fields),
      postForm(baseUrl, session, '/dashboard/invoices', fields),
    ])
    expect([first.status, second.status]).toEqual([303, 303])
    expect(first.headers.get('location')).toBe(second.headers.get('location'))
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await invoicesOf(ada)).some((invoice) => invoice.reference === reference),
      20_000,
      'the invoice listed',
    )
    const made = (await invoicesOf(ada)).filter((invoice) => invoice.reference === reference)
    expect(made).toHaveLength(1)
    expect(made[0]).toMatchObject({ status: 'published', amountKobo: 70_000 })
    expect(first.headers.get('location')).toBe(`/dashboard/invoices/${made[0]!.id}?notice=created`)
    // Both posts are recorded; one of them made the invoice, the other replayed it.
    const recorded = (await actionsOf(ada.credentials.partnerId)).filter((row) => row.detail.reference === reference)
    expect(recorded.map((row) => row.detail.replayed).sort()).toEqual([false, true])
    expect(recorded.every((row) => row.detail.invoiceId === made[0]!.id)).toBe(true)
    // A new form is a new reference: another invoice.
    const again = await (
      await fetch(`${baseUrl}/dashboard/invoices/new`, { headers: { cookie: session.cookie } })
    ).text()
    expect(/name="reference" value="([0-9a-f-]{36})"/.exec(again)![1]).not.toBe(reference)
  })

  it('refuses bad input with a plain page, and creates nothing', async () => {
    const session = await signedInSession(harness.app.db.pool, baseUrl, ada.credentials.partnerId)
    const before = (await invoicesOf(ada)).length
    const good = { reference: randomUUID(), title: 'Fine', amount: '100' }
    const bad: [Record<string, string>, string][] = [
      [{ ...good, title: '' }, 'Title is required.'],
      [{ ...good, title: 'x'.repeat(201) }, 'Title is longer than 200 characters.'],
      // Control characters are refused by the HTTP layer's input check before the form is read (its own message).
      [{ ...good, title: 'bell\u0007' }, 'control characters'],
      [{ ...good, title: 'two\nlines' }, 'control characters'],
      [{ ...good, amount: 'abc' }, 'Amount must be an amount in naira'],
      [{ ...good, amount: '0' }, 'Amount must be at least ₦0.01.'],
      [{ ...good, amount: '-5' }, 'Amount must be an amount in naira'],
      [{ ...good, amount: '1.234' }, 'Amount must be an amount in naira'],
      [{ ...good, amount: '250000000.01' }, 'Amount is above the maximum of one instruction'],
      [{ ...good, amount: '9'.repeat(30) }, 'Amount is above the maximum of one instruction'],
      [{ ...good, description: 'd'.repeat(2001) }, 'Description is longer than 2000 characters.'],
      [{ ...good, customerEmail: 'not-an-email' }, 'Customer email must be an email address.'],
      [{ ...good, customerPhone: '12ab' }, 'Customer phone must be 7 to 15 digits'],
      [{ ...good, customerName: 'n'.repeat(101) }, 'Customer name is longer than 100 characters.'],
      [{ ...good, dueAt: '2030-02-30T10:00' }, 'Due must be a date and time.'],
      [{ ...good, dueAt: 'tomorrow' }, 'Due must be a date and time.'],
      [{ ...good, callbackUrl: 'ftp://example.com/hook' }, 'Callback URL must be an http or https URL.'],
      [{ ...good, callbackUrl: `https://example.com/${INJECTED}` }, 'Callback URL must be an http or https URL.'],
      [{ ...good, publishOnCreate: 'maybe' }, 'Publish at once is yes or not given.'],
      [{ ...good, reference: 'not-a-uuid' }, 'This form has no valid reference'],
      [{ title: 'Fine', amount: '100' }, 'This form has no valid reference'],
    ]
    const actions = (await actionsOf(ada.credentials.partnerId)).length
    for (const [fields, message] of bad) {
      const answer = await postForm(baseUrl, session, '/dashboard/invoices', fields)
      expect(answer.status, JSON.stringify(fields)).toBe(422)
      // A plain page, also for what the HTTP layer refuses before the form is read.
      expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(await text(answer)).toContain(message)
    }
    expect((await actionsOf(ada.credentials.partnerId)).length).toBe(actions)
    // What only the service knows is its refusal, recorded: a due date in the past.
    const past = await postForm(baseUrl, session, '/dashboard/invoices', { ...good, dueAt: '2020-01-01T10:00' })
    expect(past.status).toBe(422)
    expect(await text(past)).toContain('dueAt: must be in the future')
    expect((await actionsOf(ada.credentials.partnerId)).at(-1)!.detail.refused).toBe('dueAt: must be in the future')
    expect((await invoicesOf(ada)).length).toBe(before)
  })

  it("shows an invoice's billed lines, as text", async () => {
    const mine = await signedInSession(harness.app.db.pool, baseUrl, ada.credentials.partnerId)
    const lineItems = [
      { description: 'Textbooks <b>x</b>', quantity: 2, unitAmountKobo: 500_000 },
      { description: 'Uniform', quantity: 1, unitAmountKobo: 250_000 },
    ]
    const invoice = await ada.client.post<InvoiceJson>('/api/v1/rail/invoice', {
      reference: `lines-${randomUUID()}`,
      title: 'Term 2',
      amountKobo: 1_250_000,
      lineItems,
    })
    expect(invoice.status).toBe(200)
    const page = await (
      await fetch(`${baseUrl}/dashboard/invoices/${invoice.body.id}`, { headers: { cookie: mine.cookie } })
    ).text()
    expect(page).toContain('<li>2 × Textbooks &lt;b&gt;x&lt;/b&gt; at ₦5,000.00</li><li>1 × Uniform at ₦2,500.00</li>')
  })

  it('refuses posts without the session CSRF token, and another partner or unknown invoice is not found', async () => {
    const mine = await signedInSession(harness.app.db.pool, baseUrl, ada.credentials.partnerId)
    const theirs: DashboardSession = await signedInSession(harness.app.db.pool, baseUrl, other.credentials.partnerId)
    const draft = await ada.client.post<InvoiceJson>('/api/v1/rail/invoice', {
      reference: `csrf-${randomUUID()}`,
      title: 'Draft',
      amountKobo: 10_000,
    })
    const foreign = await other.client.post<InvoiceJson>('/api/v1/rail/invoice', {
      reference: `other-${randomUUID()}`,
      title: 'Theirs',
      amountKobo: 10_000,
    })
    expect([draft.status, foreign.status]).toEqual([200, 200])
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await invoicesOf(ada)).some((invoice) => invoice.id === draft.body.id),
      20_000,
      'the draft listed',
    )
    const before = {
      invoices: (await invoicesOf(ada)).length,
      actions: (await actionsOf(ada.credentials.partnerId)).length,
    }
    const create = { reference: randomUUID(), title: 'Forged', amount: '100' }
    for (const csrf of [null, theirs.csrf]) {
      expect((await postForm(baseUrl, mine, '/dashboard/invoices', create, csrf)).status).toBe(403)
      expect((await postForm(baseUrl, mine, `/dashboard/invoices/${draft.body.id}/publish`, {}, csrf)).status).toBe(403)
      expect((await postForm(baseUrl, mine, `/dashboard/invoices/${draft.body.id}/cancel`, {}, csrf)).status).toBe(403)
    }
    expect((await invoicesOf(ada)).length).toBe(before.invoices)
    expect((await actionsOf(ada.credentials.partnerId)).length).toBe(before.actions)
    expect((await invoiceOf(ada, draft.body.reference)).status).toBe('draft')

    // Another partner's invoice, an unknown id and a malformed one: the same 404, nothing changed.
    for (const id of [foreign.body.id, randomUUID(), 'not-an-id']) {
      const page = await fetch(`${baseUrl}/dashboard/invoices/${id}`, { headers: { cookie: mine.cookie } })
      expect(page.status).toBe(404)
      expect(await page.text()).toContain('There is no such invoice.')
      expect((await postForm(baseUrl, mine, `/dashboard/invoices/${id}/publish`, {})).status).toBe(404)
      expect((await postForm(baseUrl, mine, `/dashboard/invoices/${id}/cancel`, {})).status).toBe(404)
    }
    expect((await invoiceOf(other, foreign.body.reference)).status).toBe('draft')
    // An invalid filter is ignored: the whole list.
    expect(
      (await fetch(`${baseUrl}/dashboard/invoices?status=nonsense&cursor=x`, { headers: { cookie: mine.cookie } }))
        .status,
    ).toBe(200)
  })

  it('records a publish the bank could not serve as refused, and leaves the invoice a draft to publish again', async () => {
    const session = await signedInSession(harness.app.db.pool, baseUrl, ada.credentials.partnerId)
    const draft = await ada.client.post<InvoiceJson>('/api/v1/rail/invoice', {
      reference: `bank-${randomUUID()}`,
      title: 'Bank away',
      amountKobo: 10_000,
    })
    expect(draft.status).toBe(200)
    await harness.app.db.pool.query(`UPDATE sandbox_bank.faults SET error_rate = 1 WHERE id = 1`)
    try {
      const refused = await postForm(baseUrl, session, `/dashboard/invoices/${draft.body.id}/publish`, {})
      expect(refused.status).toBe(502)
      expect(refused.headers.get('content-type')).toBe('text/html; charset=utf-8')
    } finally {
      await harness.app.db.pool.query(`UPDATE sandbox_bank.faults SET error_rate = 0 WHERE id = 1`)
    }
    expect((await invoiceOf(ada, draft.body.reference)).status).toBe('draft')
    const recorded = (await actionsOf(ada.credentials.partnerId)).at(-1)!
    expect(recorded).toMatchObject({
      action: 'invoice.publish',
      object_id: draft.body.id,
      detail: { reference: draft.body.reference, refused: expect.any(String) },
    })
    expect((await postForm(baseUrl, session, `/dashboard/invoices/${draft.body.id}/publish`, {})).status).toBe(303)
    expect((await invoiceOf(ada, draft.body.reference)).status).toBe('published')
  })
})

describe('dashboard lists', () => {
  it('pages invoices and escrows newest first, 25 at a time, keeping the status filter', async () => {
    const lister = await party('Lister Ltd')
    for (let index = 1; index <= 26; index++) {
      expect(
        (
          await lister.client.post('/api/v1/rail/invoice', {
            reference: `page-${index}`,
            title: `Invoice ${index}`,
            amountKobo: 10_000,
          })
        ).status,
      ).toBe(200)
    }
    await Promise.all(
      Array.from({ length: 26 }, (_, index) =>
        lister.escrow.create(createRequest({ description: `Escrow ${index + 1}`, reference: `page-${index + 1}` })),
      ),
    )
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(async () => (await invoicesOf(lister)).length === 26, 20_000, 'the invoices listed')
    await waitFor(
      async () => (await lister.escrow.list<{ data: EscrowJson[] }>('?limit=100')).body.data.length === 26,
      20_000,
      'the escrows listed',
    )
    const session = await signedInSession(harness.app.db.pool, baseUrl, lister.credentials.partnerId)
    const listed = async (path: string) => {
      const page = await (await fetch(`${baseUrl}${path}`, { headers: { cookie: session.cookie } })).text()
      const titles = [...page.matchAll(/class="(?:title|description)">([^<]+)<\/a>/g)].map((match) => match[1])
      const older = /<a href="([^"]+)">Older (?:invoices|escrows)<\/a>/.exec(page)?.[1]?.replace(/&amp;/g, '&')
      return { titles, older }
    }
    const first = await listed('/dashboard/invoices?status=draft')
    expect(first.titles).toHaveLength(25)
    expect(first.titles[0]).toBe('Invoice 26')
    expect(first.older).toMatch(/^\/dashboard\/invoices\?status=draft&cursor=/)
    expect(await listed(first.older!)).toEqual({ titles: ['Invoice 1'], older: undefined })
    expect((await listed('/dashboard/invoices?status=paid')).titles).toEqual([])

    const escrows = await listed('/dashboard/escrows?status=initiated')
    expect(escrows.titles).toHaveLength(25)
    expect(escrows.older).toMatch(/^\/dashboard\/escrows\?status=initiated&cursor=/)
    const rest = await listed(escrows.older!)
    expect(rest.older).toBeUndefined()
    expect(new Set([...escrows.titles, ...rest.titles]).size).toBe(26)
  })
})

describe('dashboard escrows', () => {
  it('releases a funded escrow and cancels another from the browser, as the API shows; script stays text', async () => {
    const metadata = { note: INJECTED, [INJECTED]: 1 }
    const toRelease = await escrowFor(
      ada,
      { description: `Bicycle ${INJECTED}`, metadata, reference: `r ${INJECTED}` },
      true,
    )
    const toCancel = await escrowFor(ada, { description: `Sofa ${INJECTED}` }, true)
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await ada.escrow.list<{ data: EscrowJson[] }>('?limit=100')).body.data.length === 2,
      20_000,
      'both escrows listed',
    )
    const watched = await signedInPage(browser, harness.app.db.pool, baseUrl, ada.credentials.partnerId)
    const { page } = watched
    await page.getByRole('link', { name: 'Escrows' }).first().click()
    await waitForText(page, 'h1', 'Escrows')
    expect(await page.locator('.list li .description').allTextContents()).toEqual([
      `Sofa ${INJECTED}`,
      `Bicycle ${INJECTED}`,
    ])
    await expectInert(watched)
    await screenshot(page, 'dashboard-escrows')

    await page.getByRole('link', { name: `Bicycle ${INJECTED}` }).click()
    await waitForText(page, 'h1', `Escrow ${toRelease.ref}`)
    expect(await page.locator('#escrow-status').textContent()).toBe('funded')
    expect(await page.locator('#escrow-description').textContent()).toBe(`Bicycle ${INJECTED}`)
    expect(await page.locator('#escrow-reference').textContent()).toBe(`r ${INJECTED}`)
    expect(JSON.parse((await page.locator('#escrow-metadata').textContent())!)).toEqual(metadata)
    expect(await page.locator('#payer-email').textContent()).toBe('payer@example.com')
    expect(await page.locator('#account-number').textContent()).toBe(toRelease.funding!.virtualAccount)
    expect(await page.locator('#payment-page').getAttribute('href')).toBe(toRelease.funding!.checkoutUrl)
    await expectInert(watched)
    await screenshot(page, 'dashboard-escrow')

    await page.locator('#release-form input[name=reason]').fill(`Delivered ${INJECTED}`)
    await page.getByRole('button', { name: 'Release', exact: true }).click()
    await waitForText(page, '#notice', /^Escrow released/)
    expect(await page.locator('#escrow-status').textContent()).toBe('released')
    expect(await page.locator('#release-reason').textContent()).toBe(`Delivered ${INJECTED}`)
    expect(await page.locator('#disbursement-state').textContent()).toBe('paid')
    await expectInert(watched)
    await screenshot(page, 'dashboard-escrow-released')
    expect(await escrowOf(ada, toRelease.ref)).toMatchObject({
      status: 'released',
      disbursement: { destination: 'float', state: 'paid' },
    })

    await page.goto(`${baseUrl}/dashboard/escrows/${toCancel.id}`)
    await page.locator('#cancel-form input[name=reason]').fill(`Changed mind ${INJECTED}`)
    await page.getByRole('button', { name: 'Cancel escrow' }).click()
    await waitForText(page, '#notice', /^Escrow cancelled/)
    expect(await page.locator('#escrow-status').textContent()).toBe('cancelled')
    expect(await page.locator('#cancel-reason').textContent()).toBe(`Changed mind ${INJECTED}`)
    expect(await page.locator('#release-form, #cancel-form').count()).toBe(0)
    await expectInert(watched)
    await screenshot(page, 'dashboard-escrow-cancelled')
    expect(await escrowOf(ada, toCancel.ref)).toMatchObject({ status: 'cancelled', refund: { amountKobo: 50_000 } })

    const recorded = (await actionsOf(ada.credentials.partnerId)).filter((row) => row.action.startsWith('escrow.'))
    expect(recorded).toEqual([
      {
        action: 'escrow.release',
        object_id: toRelease.id,
        detail: {
          ref: toRelease.ref,
          reason: `Delivered ${INJECTED}`,
          status: 'released',
          disbursementState: 'paid',
          retried: false,
        },
      },
      {
        action: 'escrow.cancel',
        object_id: toCancel.id,
        detail: { ref: toCancel.ref, reason: `Changed mind ${INJECTED}`, status: 'cancelled', refundState: 'pending' },
      },
    ])
    await watched.context.close()
  })

  it('releases to another bank account, refuses wrong states and bad input, and finds no other partner escrow', async () => {
    const session = await signedInSession(harness.app.db.pool, baseUrl, ada.credentials.partnerId)
    const theirs = await signedInSession(harness.app.db.pool, baseUrl, other.credentials.partnerId)
    const funded = await escrowFor(ada, { description: 'Laptop' }, true)
    const unfunded = await escrowFor(ada, { description: 'Not paid yet' }, false)
    const foreign = await escrowFor(other, { description: 'Theirs' }, false)
    const actions = async () => (await actionsOf(ada.credentials.partnerId)).length

    // CSRF: without the token, or with another session's, nothing happens.
    const before = await actions()
    for (const csrf of [null, theirs.csrf]) {
      expect((await postForm(baseUrl, session, `/dashboard/escrows/${funded.id}/release`, {}, csrf)).status).toBe(403)
      expect(
        (await postForm(baseUrl, session, `/dashboard/escrows/${funded.id}/cancel`, { reason: 'x' }, csrf)).status,
      ).toBe(403)
    }
    expect(await actions()).toBe(before)
    expect((await escrowOf(ada, funded.ref)).status).toBe('funded')

    // Bad input: a plain 422, nothing recorded or changed.
    const bad: [string, Record<string, string>, string][] = [
      ['cancel', {}, 'Reason is required.'],
      ['cancel', { reason: 'r'.repeat(501) }, 'Reason is longer than 500 characters.'],
      ['cancel', { reason: 'tab\there' }, 'control characters'],
      [
        'release',
        { accountNumber: PAYEE.accountNumber },
        'Another destination needs its account number, bank code and account name',
      ],
      [
        'release',
        { accountNumber: '12345', bankCode: PAYEE.bankCode, accountName: PAYEE.accountName },
        'Account number must be the 10 digits of a NUBAN.',
      ],
      [
        'release',
        { accountNumber: PAYEE.accountNumber, bankCode: 'abc', accountName: PAYEE.accountName },
        'Bank code must be 3 to 6 digits.',
      ],
    ]
    for (const [change, fields, message] of bad) {
      const answer = await postForm(baseUrl, session, `/dashboard/escrows/${funded.id}/${change}`, fields)
      expect(answer.status, JSON.stringify(fields)).toBe(422)
      // A plain page, also for what the HTTP layer refuses before the form is read.
      expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(await text(answer)).toContain(message)
    }
    expect(await actions()).toBe(before)
    expect((await escrowOf(ada, funded.ref)).status).toBe('funded')

    // Wrong state: the service's refusal, recorded.
    const early = await postForm(baseUrl, session, `/dashboard/escrows/${unfunded.id}/release`, { reason: 'too soon' })
    expect(early.status).toBe(400)
    expect(await text(early)).toContain(`Escrow ${unfunded.ref} is initiated; release needs funded`)
    expect((await actionsOf(ada.credentials.partnerId)).at(-1)).toMatchObject({
      action: 'escrow.release',
      object_id: unfunded.id,
      detail: { refused: `Escrow ${unfunded.ref} is initiated; release needs funded` },
    })
    expect((await escrowOf(ada, unfunded.ref)).status).toBe('initiated')

    // Released to a bank account: the payout is on its way (the bank checked the name first).
    const destination = { accountNumber: PAYEE.accountNumber, bankCode: PAYEE.bankCode, accountName: PAYEE.accountName }
    const released = await postForm(baseUrl, session, `/dashboard/escrows/${funded.id}/release`, destination)
    expect(released.status).toBe(303)
    expect(released.headers.get('location')).toBe(`/dashboard/escrows/${funded.id}?notice=released`)
    const disbursement = (await escrowOf(ada, funded.ref)).disbursement!
    expect(disbursement).toMatchObject({ destination })
    // The payout names the dashboard as its creator.
    const payout = await ada.client.get<{ creatorMetadata: Record<string, unknown> }>(
      `/api/v1/rail/outbound/${disbursement.outboundTransferId}`,
    )
    expect(payout.body.creatorMetadata).toMatchObject({
      partnerId: ada.credentials.partnerId,
      credentialId: 'rail:dashboard',
    })
    // The bank fails the payout: the page offers a release again, which pays anew.
    await waitFor(
      async () =>
        (await ada.client.get<{ state: string }>(`/api/v1/rail/outbound/${disbursement.outboundTransferId}`)).body
          .state === 'submitted',
      15_000,
      'payout submitted',
    )
    expect(
      (
        await ada.client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: disbursement.outboundTransferId,
          outcome: 'failed',
        })
      ).status,
    ).toBe(200)
    await waitFor(
      async () => (await escrowOf(ada, funded.ref)).disbursement?.state === 'failed',
      20_000,
      'disbursement failed',
    )
    const failedPage = await (
      await fetch(`${baseUrl}/dashboard/escrows/${funded.id}`, { headers: { cookie: session.cookie } })
    ).text()
    expect(failedPage).toContain('id="disbursement-failure"')
    expect(failedPage).toContain('>Release again</button>')
    expect(failedPage).not.toContain('id="cancel-form"')
    expect(
      (await postForm(baseUrl, session, `/dashboard/escrows/${funded.id}/release`, { reason: 'pay again' })).status,
    ).toBe(303)
    expect((await escrowOf(ada, funded.ref)).disbursement).toMatchObject({ destination, state: 'pending' })
    expect((await actionsOf(ada.credentials.partnerId)).at(-1)).toMatchObject({
      action: 'escrow.release',
      detail: { reason: 'pay again', retried: true, disbursementState: 'pending' },
    })

    const again = await postForm(baseUrl, session, `/dashboard/escrows/${funded.id}/cancel`, { reason: 'too late' })
    expect(again.status).toBe(400)
    expect(await text(again)).toContain(`Escrow ${funded.ref} is released; cancel needs initiated or funded`)
    expect((await escrowOf(ada, funded.ref)).status).toBe('released')

    // Another partner's escrow, an unknown id and a malformed one: the same 404, nothing changed.
    for (const id of [foreign.id, randomUUID(), 'EPT-1']) {
      const page = await fetch(`${baseUrl}/dashboard/escrows/${id}`, { headers: { cookie: session.cookie } })
      expect(page.status).toBe(404)
      expect(await page.text()).toContain('There is no such escrow.')
      expect((await postForm(baseUrl, session, `/dashboard/escrows/${id}/cancel`, { reason: 'not mine' })).status).toBe(
        404,
      )
      expect((await postForm(baseUrl, session, `/dashboard/escrows/${id}/release`, {})).status).toBe(404)
    }
    expect((await escrowOf(other, foreign.ref)).status).toBe('initiated')
    expect(
      (await fetch(`${baseUrl}/dashboard/escrows?status=nonsense`, { headers: { cookie: session.cookie } })).status,
    ).toBe(200)
  })
})
