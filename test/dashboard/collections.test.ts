// The dashboard's collections and unmatched credits in a real browser (Debian's Chromium): the
// partner's payment intents, virtual accounts, FBO accounts and inbound credits, made through the
// API and paid through the sandbox bank, listed and shown; unmatched credits assigned and refunded
// from the browser through the same service as the API, their effect read back through the API.
// Refused: posts without the session's CSRF token, another partner's objects, wrong states, bad
// input; the same form sent twice does it once; script in every partner text stays text.
import { randomUUID } from 'node:crypto'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { fitsWidth, launchBrowser, screenshot, waitForText, type WatchedPage } from '../checkout/browser.ts'
import { payIn, postBankNotice, startCollections, type CollectionsHarness } from '../collections/support.ts'
import { waitFor } from '../support/wait.ts'
import { postForm, signedInPage, signedInSession, type DashboardSession } from './support.ts'

const INJECTED = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`
const PAYER = {
  payerName: `Ngozi ${INJECTED}`.slice(0, 100),
  payerAccountNumber: nuban('044', '000765432'),
  payerBankCode: '044',
}

interface Intent {
  id: string
  reference: string
  trackingId: string
  virtualAccount: string
  status: string
  checkoutUrl: string
}
interface Account {
  trackingId: string
  virtualAccount: string
}
interface TriageItem {
  id: string
  status: string
  amountKobo: number
  resolution: Record<string, unknown> | null
}

let harness: CollectionsHarness
let browser: Browser
let client: RailClient
let partnerId: string
let intent: Intent
let persistent: Account
let fbo: Account
let archived: Account
/** The triage ids by what each test does with it. */
const unmatched: Record<'refund' | 'assign' | 'double' | 'noPayer', string> = {
  refund: '',
  assign: '',
  double: '',
  noPayer: '',
}
let other: { client: RailClient; intent: Intent; account: Account; unmatchedId: string }

const base = (): string => harness.app.baseUrl

async function unmatchedIds(on: RailClient, count: number): Promise<string[]> {
  let items: TriageItem[] = []
  await waitFor(
    async () => {
      items = (await on.get<{ data: TriageItem[] }>('/api/v1/rail/unmatched?status=unmatched&limit=100')).body.data
      return items.length >= count
    },
    20_000,
    `${count} unmatched credits`,
  )
  return items.map((item) => item.id)
}

/** Pays into an account and waits until the API lists one more unmatched credit; answers its id. */
async function payUnmatched(
  on: RailClient,
  account: string,
  amountKobo: number,
  payer: Record<string, string> = {},
): Promise<string> {
  const before = await unmatchedIds(on, 0)
  await payIn(on, account, amountKobo, payer)
  const after = await unmatchedIds(on, before.length + 1)
  return after.find((id) => !before.includes(id))!
}

/** A credit announced by the bank with a narration (the simulator takes none). */
function bankNotice(accountNumber: string, amountKobo: number, narration: string): string {
  return JSON.stringify({
    type: 'credit.received',
    sessionId: `999${Date.now()}${Math.floor(Math.random() * 1e6)}`.slice(0, 30),
    accountNumber,
    bankCode: '101',
    amountKobo,
    currency: 'NGN',
    payerName: PAYER.payerName,
    payerAccountNumber: PAYER.payerAccountNumber,
    payerBankCode: PAYER.payerBankCode,
    narration,
    creditedAt: new Date().toISOString(),
  })
}

async function newIntent(on: RailClient, body: Record<string, unknown>): Promise<Intent> {
  const answer = await on.post<Intent>('/api/v1/rail/payment/intent', { reference: randomUUID(), ...body })
  expect(answer.status).toBe(200)
  return answer.body
}

async function newAccount(on: RailClient, body: Record<string, unknown> = {}): Promise<Account> {
  const answer = await on.post<Account>('/api/v1/rail/virtual-account', { reference: randomUUID(), ...body })
  expect(answer.status).toBe(200)
  return answer.body
}

async function triage(on: RailClient, id: string): Promise<TriageItem> {
  return (await on.get<TriageItem>(`/api/v1/rail/unmatched/${id}`)).body
}

async function actionCount(): Promise<number> {
  return (
    await harness.app.db.pool.query(`SELECT count(*)::int AS n FROM dashboard_actions WHERE partner_id = $1`, [
      partnerId,
    ])
  ).rows[0].n as number
}

async function payoutCount(): Promise<number> {
  return (
    await harness.app.db.pool.query(`SELECT count(*)::int AS n FROM outbound_transfers WHERE partner_id = $1`, [
      partnerId,
    ])
  ).rows[0].n as number
}

/** Nothing injected ran or became markup; the page reads on a phone. */
async function expectSafe(watched: WatchedPage): Promise<void> {
  expect(await watched.page.locator('img').count()).toBe(0)
  expect(watched.dialogs).toEqual([])
  expect(await fitsWidth(watched.page)).toBe(true)
}

/** The hidden reference of a form on a page, as the browser would send it. */
function referenceOf(page: string, form: 'assign' | 'refund'): string {
  const markup = page.slice(page.indexOf(`id="${form}"`))
  return /name="reference" value="([0-9a-f-]{36})"/.exec(markup)![1]!
}

async function pageText(session: DashboardSession, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${base()}${path}`, { headers: { cookie: session.cookie } })
  return { status: response.status, text: await response.text() }
}

beforeAll(async () => {
  harness = await startCollections()
  browser = await launchBrowser()
  const partner = await harness.app.newPartner({ name: 'Ada Stores' })
  client = partner.client
  partnerId = partner.credentials.partnerId
  intent = await newIntent(client, {
    reference: `i${INJECTED}`,
    amountKobo: 500_000,
    merchantDisplayName: `Shop ${INJECTED}`,
    purposeTag: INJECTED,
    virtualAccountHolder: { name: `Holder ${INJECTED}` },
    returnUrl: 'https://shop.example/return',
  })
  persistent = await newAccount(client, {
    reference: `a${INJECTED}`,
    purposeTag: INJECTED,
    virtualAccountHolder: { name: `Acct ${INJECTED}` },
  })
  const provisioned = await client.post<Account>('/api/v1/rail/fbo/provision', {
    holderRef: `h-${randomUUID()}`,
    purposeTag: `fbo ${INJECTED}`,
  })
  expect(provisioned.status).toBe(200)
  fbo = provisioned.body
  await payIn(client, intent.virtualAccount, 200_000, PAYER)
  await payIn(client, persistent.virtualAccount, 75_000, PAYER)
  // Credits to an archived account land unmatched, in triage.
  archived = await newAccount(client)
  expect((await client.post(`/api/v1/rail/virtual-account/${archived.trackingId}/archive`)).status).toBe(200)
  expect((await postBankNotice(base(), bankNotice(archived.virtualAccount, 30_000, `Rent ${INJECTED}`))).status).toBe(
    200,
  )
  unmatched.refund = (await unmatchedIds(client, 1))[0]!
  unmatched.assign = await payUnmatched(client, archived.virtualAccount, 40_000, PAYER)
  unmatched.double = await payUnmatched(client, archived.virtualAccount, 50_000, PAYER)
  unmatched.noPayer = await payUnmatched(client, archived.virtualAccount, 60_000)
  await waitFor(
    async () => (await client.get<Intent>(`/api/v1/rail/payment/intent/${intent.id}`)).body.status === 'partially_paid',
    20_000,
    'intent partially paid',
  )

  const theirs = await harness.app.newPartner({ name: 'Other Ltd' })
  const theirArchived = await newAccount(theirs.client)
  await theirs.client.post(`/api/v1/rail/virtual-account/${theirArchived.trackingId}/archive`)
  const theirUnmatched = await payUnmatched(theirs.client, theirArchived.virtualAccount, 10_000, PAYER)
  other = {
    client: theirs.client,
    intent: await newIntent(theirs.client, { amountKobo: 10_000 }),
    account: await newAccount(theirs.client),
    unmatchedId: theirUnmatched,
  }
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await harness?.close()
  await harness?.app.close()
})

describe('collections pages', () => {
  it('show the partner intents, accounts, FBO accounts and credits made through the API; script stays text', async () => {
    const watched = await signedInPage(browser, harness.app.db.pool, base(), partnerId)
    const { page } = watched
    await page.getByRole('link', { name: 'Collections' }).first().click()
    await waitForText(page, 'h1', 'Collections')
    expect(await page.locator('.intents .reference').first().textContent()).toBe(`i${INJECTED}`)
    expect(await page.locator('.accounts .reference').allTextContents()).toContain(`a${INJECTED}`)
    expect(await page.locator('.credits li').count()).toBeGreaterThanOrEqual(2)
    await expectSafe(watched)
    await screenshot(page, 'dashboard-collections')

    // Intents, filtered by status as the API's list is.
    await page.getByRole('link', { name: 'Payment intents', exact: true }).click()
    await waitForText(page, 'h1', 'Payment intents')
    await page.locator('select[name=status]').selectOption('partially_paid')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/status=partially_paid/)
    expect(await page.locator('.intents li').count()).toBe(1)
    await screenshot(page, 'dashboard-intents')
    await page.locator('select[name=status]').selectOption('paid')
    await page.getByRole('button', { name: 'Filter' }).click()
    await waitForText(page, '.empty', 'No payment intents match.')

    // The intent: paid and remaining, expiry, its account, its credit, the payer's page.
    await page.goto(`${base()}/dashboard/collections/intents`)
    await page.getByRole('link', { name: `i${INJECTED}` }).click()
    await waitForText(page, 'h1', `Payment intent i${INJECTED}`)
    expect(await page.locator('#intent-status').textContent()).toBe('partially paid')
    expect(await page.locator('#intent-amount').textContent()).toMatch(/^₦\s?5,000\.00$/)
    expect(await page.locator('#intent-paid').textContent()).toMatch(/^₦\s?2,000\.00$/)
    expect(await page.locator('#intent-remaining').textContent()).toMatch(/^₦\s?3,000\.00$/)
    expect(await page.locator('#merchant-name').textContent()).toBe(`Shop ${INJECTED}`)
    expect(await page.locator('#purpose-tag').textContent()).toBe(INJECTED)
    expect(await page.locator('#account-name').textContent()).toBe(`Holder ${INJECTED}`)
    expect(await page.locator('#account-number').textContent()).toBe(intent.virtualAccount)
    expect(await page.locator('.credits .payer').textContent()).toBe(PAYER.payerName)
    expect(await page.locator('#payment-page').getAttribute('href')).toBe(intent.checkoutUrl)
    await expectSafe(watched)
    await screenshot(page, 'dashboard-intent')
    await page.getByRole('link', { name: 'Open payment page' }).click()
    await page.waitForURL(intent.checkoutUrl)
    await waitForText(page, '#status-label', 'Partially paid')

    // Its account, and back to the intent.
    await page.goBack()
    await page.getByRole('link', { name: intent.virtualAccount }).click()
    await waitForText(page, '#account-kind', 'Payment intent account')
    await page.getByRole('link', { name: 'Its payment intent' }).click()
    await waitForText(page, 'h1', `Payment intent i${INJECTED}`)
    await watched.context.close()
  })

  it('show virtual accounts, FBO accounts and a credit with their partner texts as text', async () => {
    const watched = await signedInPage(browser, harness.app.db.pool, base(), partnerId)
    const { page } = watched
    await page.goto(`${base()}/dashboard/collections/virtual-accounts?status=archived`)
    expect(await page.locator('.accounts li').count()).toBe(1)
    expect(await page.locator('.accounts .account-number').textContent()).toBe(archived.virtualAccount)
    await page.goto(`${base()}/dashboard/collections/virtual-accounts?status=nonsense`)
    expect(await page.locator('.accounts li').count()).toBe(2)
    await page.getByRole('link', { name: `a${INJECTED}` }).click()
    await waitForText(page, '#tracking-id', persistent.trackingId)
    expect(await page.locator('#account-reference').textContent()).toBe(`a${INJECTED}`)
    expect(await page.locator('#account-name').textContent()).toBe(`Acct ${INJECTED}`)
    expect(await page.locator('#purpose-tag').textContent()).toBe(INJECTED)
    expect(await page.locator('.credits li').count()).toBe(1)
    await expectSafe(watched)
    await screenshot(page, 'dashboard-virtual-account')

    await page.goto(`${base()}/dashboard/collections/fbo`)
    await waitForText(page, 'h1', 'FBO accounts')
    expect(await page.locator('.accounts .tag').textContent()).toBe(`fbo ${INJECTED}`)
    await expectSafe(watched)
    await screenshot(page, 'dashboard-fbo')
    await page.locator('.accounts .reference').click()
    await waitForText(page, '#account-kind', 'FBO pool account')
    expect(await page.locator('#tracking-id').textContent()).toBe(fbo.trackingId)

    // Credits, filtered; the bank's narration and the payer's name stay text.
    await page.goto(`${base()}/dashboard/collections/credits?status=unmatched`)
    await waitForText(page, 'h1', 'Inbound credits')
    expect(await page.locator('.credits li').count()).toBe(4)
    await page.goto(`${base()}/dashboard/collections/credits?status=confirmed`)
    expect(await page.locator('.credits li').count()).toBe(2)
    await expectSafe(watched)
    await screenshot(page, 'dashboard-credits')
    await page.goto(`${base()}/dashboard/collections/credits/${unmatched.refund}`)
    expect(await page.locator('#narration').textContent()).toBe(`Rent ${INJECTED}`)
    expect(await page.locator('#payer').textContent()).toBe(
      `${PAYER.payerName} · ${PAYER.payerAccountNumber} (bank 044)`,
    )
    expect(await page.locator('#credit-account').textContent()).toBe(
      `${archived.virtualAccount} (${archived.trackingId})`,
    )
    await expectSafe(watched)
    await screenshot(page, 'dashboard-credit')
    await watched.context.close()
  })

  it('page newest first by cursor, keeping the filter', async () => {
    const many = await harness.app.newPartner({ name: 'Many Intents Ltd' })
    const references: string[] = []
    for (let index = 0; index < 26; index += 1)
      references.push((await newIntent(many.client, { reference: `many-${String(index).padStart(2, '0')}` })).reference)
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () =>
        (await many.client.get<{ data: Intent[] }>('/api/v1/rail/payment/intent?limit=100')).body.data.length ===
        references.length,
      20_000,
      'the intents listed',
    )
    const session = await signedInSession(harness.app.db.pool, base(), many.credentials.partnerId)
    const first = await pageText(session, '/dashboard/collections/intents?status=pending')
    const shown = (text: string) => [...text.matchAll(/class="reference">(many-\d\d)</g)].map((match) => match[1])
    expect(shown(first.text)).toEqual(references.slice(1).reverse())
    const older = /href="(\/dashboard\/collections\/intents\?status=pending&amp;cursor=[0-9a-f-]{36})" id="older"/
      .exec(first.text)![1]!
      .replace('&amp;', '&')
    const second = await pageText(session, older)
    expect(shown(second.text)).toEqual([references[0]])
    expect(second.text).not.toContain('id="older"')
    // A cursor that is not an id is ignored: the first page.
    expect(shown((await pageText(session, '/dashboard/collections/intents?cursor=nope')).text)).toHaveLength(25)
  })

  it('answer another partner objects, unknown and malformed ids with the same 404', async () => {
    const session = await signedInSession(harness.app.db.pool, base(), partnerId)
    const paths = [
      `/dashboard/collections/intents/${other.intent.id}`,
      `/dashboard/collections/intents/${randomUUID()}`,
      `/dashboard/collections/intents/${intent.reference.slice(0, 10)}`,
      `/dashboard/collections/virtual-accounts/${other.account.trackingId}`,
      `/dashboard/collections/virtual-accounts/${other.intent.trackingId}`,
      `/dashboard/collections/virtual-accounts/trk_nope`,
      `/dashboard/collections/credits/${other.unmatchedId}`,
      `/dashboard/collections/credits/not-an-id`,
      `/dashboard/unmatched/${other.unmatchedId}`,
      `/dashboard/unmatched/${randomUUID()}`,
    ]
    for (const path of paths) {
      const answer = await pageText(session, path)
      expect(answer.status, path).toBe(404)
      expect(answer.text).toMatch(/There is no such [a-z ]+\./)
    }
    // Their lists do not show it either.
    expect((await pageText(session, '/dashboard/collections/intents')).text).not.toContain(other.intent.id)
    expect((await pageText(session, '/dashboard/unmatched?status=all')).text).not.toContain(other.unmatchedId)
    // Signed out: 401.
    expect((await fetch(`${base()}/dashboard/collections`)).status).toBe(401)
  })
})

describe('unmatched credits', () => {
  it('are listed from the overview; a refund and an assignment from the browser take effect through the API', async () => {
    const watched = await signedInPage(browser, harness.app.db.pool, base(), partnerId)
    const { page } = watched
    expect(await page.locator('#unmatched-credits').textContent()).toBe('4')
    await page.getByRole('link', { name: 'Unmatched credits' }).last().click()
    await waitForText(page, 'h1', 'Unmatched credits')
    expect(await page.locator('.triage li').count()).toBe(4)
    await expectSafe(watched)
    await screenshot(page, 'dashboard-unmatched')

    // Refund: the credit is refund pending, its payout a real outbound transfer to the sender.
    await page.goto(`${base()}/dashboard/unmatched/${unmatched.refund}`)
    expect(await page.locator('#narration').textContent()).toBe(`Rent ${INJECTED}`)
    expect(await page.locator('#reason').textContent()).toBe('account archived')
    await expectSafe(watched)
    await screenshot(page, 'dashboard-unmatched-credit')
    await page.getByRole('button', { name: 'Refund to sender' }).click()
    await waitForText(page, '#notice', /^Refund started/)
    expect(await page.locator('#triage-status').textContent()).toBe('refund pending')
    const refunded = await triage(client, unmatched.refund)
    expect(refunded.status).toBe('refund_pending')
    const transferId = refunded.resolution!.outboundTransferId as string
    const payout = (
      await client.get<{ beneficiaryAccountNumber: string; amountKobo: number }>(`/api/v1/rail/outbound/${transferId}`)
    ).body
    // Made by the dashboard, not by an API credential.
    expect(payout).toMatchObject({
      beneficiaryAccountNumber: PAYER.payerAccountNumber,
      amountKobo: 30_000,
      creatorMetadata: { partnerId, credentialId: 'rail:dashboard' },
    })
    await screenshot(page, 'dashboard-unmatched-refunded')
    await page.locator('#refund-transfer').click()
    await page.waitForURL(`${base()}/dashboard/transfers/${transferId}`)

    // Assign: to an open intent of the same amount, which the credit then pays.
    const target = await newIntent(client, { amountKobo: 40_000 })
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md): the credit's page lists the open intents.
    await waitFor(
      async () =>
        (await client.get<{ data: Intent[] }>('/api/v1/rail/payment/intent?limit=100')).body.data.some(
          (listed) => listed.id === target.id,
        ),
      20_000,
      'the target intent listed',
    )
    await page.goto(`${base()}/dashboard/unmatched/${unmatched.assign}`)
    expect(await page.locator(`#assign-targets option[value="${target.trackingId}"]`).count()).toBe(1)
    await page.locator('input[name=trackingId]').fill(target.trackingId)
    await page.getByRole('button', { name: 'Assign' }).click()
    await waitForText(page, '#notice', /^Assigned/)
    expect(await page.locator('#triage-status').textContent()).toBe('assigned')
    expect(await page.locator('#resolution').textContent()).toBe(`Assigned to ${target.trackingId}`)
    expect((await triage(client, unmatched.assign)).status).toBe('assigned')
    expect((await client.get<Intent>(`/api/v1/rail/payment/intent/${target.id}`)).body.status).toBe('paid')
    await expectSafe(watched)
    await screenshot(page, 'dashboard-unmatched-assigned')

    const audit = await harness.app.db.pool.query(
      `SELECT actor, action, object_id, detail FROM dashboard_actions WHERE partner_id = $1 ORDER BY id`,
      [partnerId],
    )
    expect(audit.rows).toMatchObject([
      {
        actor: 'dashboard',
        action: 'unmatched.refund',
        object_id: unmatched.refund,
        detail: { status: 'refund_pending', resolution: { action: 'refund', outboundTransferId: transferId } },
      },
      {
        actor: 'dashboard',
        action: 'unmatched.assign',
        object_id: unmatched.assign,
        detail: { target: target.trackingId, status: 'assigned' },
      },
    ])
    await watched.context.close()
  })

  it('refund once for the same form sent twice, and refuse a credit resolved already', async () => {
    const session = await signedInSession(harness.app.db.pool, base(), partnerId)
    const form = await pageText(session, `/dashboard/unmatched/${unmatched.double}`)
    const reference = referenceOf(form.text, 'refund')
    const payoutsBefore = await payoutCount()
    const path = `/dashboard/unmatched/${unmatched.double}/refund`
    const answers = await Promise.all([
      postForm(base(), session, path, { reference }),
      postForm(base(), session, path, { reference }),
    ])
    expect(answers.map((answer) => answer.status)).toEqual([303, 303])
    expect(answers.map((answer) => answer.headers.get('location')).sort()).toEqual([
      `/dashboard/unmatched/${unmatched.double}?notice=refund_started`,
      `/dashboard/unmatched/${unmatched.double}?notice=replayed`,
    ])
    // Later, the same form again: a replay, still one payout.
    const later = await postForm(base(), session, path, { reference })
    expect(later.headers.get('location')).toBe(`/dashboard/unmatched/${unmatched.double}?notice=replayed`)
    expect(await payoutCount()).toBe(payoutsBefore + 1)
    expect((await triage(client, unmatched.double)).status).toBe('refund_pending')

    // A new form on a credit resolved already: the service's refusal, with its status.
    const again = await postForm(base(), session, path, { reference: randomUUID() })
    expect(again.status).toBe(409)
    expect(await again.text()).toContain('The credit was refund_pending already')
    const assigned = await postForm(base(), session, `/dashboard/unmatched/${unmatched.assign}/refund`, {
      reference: randomUUID(),
    })
    expect(assigned.status).toBe(409)
    expect(await payoutCount()).toBe(payoutsBefore + 1)
    // A resolved credit's page offers no forms.
    expect((await pageText(session, `/dashboard/unmatched/${unmatched.assign}`)).text).not.toContain('id="refund"')
  })

  it('pass the service refusals on and refuse bad input, changing nothing', async () => {
    const session = await signedInSession(harness.app.db.pool, base(), partnerId)
    const item = `/dashboard/unmatched/${unmatched.noPayer}`
    const actionsBefore = await actionCount()
    const refusals: [string, Record<string, string>, number, string][] = [
      ['refund', { reference: randomUUID() }, 422, 'no valid sender account'],
      ['assign', { reference: randomUUID(), trackingId: archived.trackingId }, 409, 'The target account is archived'],
      [
        'assign',
        { reference: randomUUID(), trackingId: other.account.trackingId },
        422,
        'is not a tracking id of one of your virtual accounts',
      ],
    ]
    for (const [action, fields, status, message] of refusals) {
      const answer = await postForm(base(), session, `${item}/${action}`, fields)
      expect(answer.status, message).toBe(status)
      expect(await answer.text()).toContain(message)
    }
    // Each refusal is recorded as the dashboard's, with the service's message.
    const refused = await harness.app.db.pool.query(
      `SELECT detail FROM dashboard_actions WHERE partner_id = $1 AND object_id = $2 ORDER BY id`,
      [partnerId, unmatched.noPayer],
    )
    expect(refused.rows.map((row) => typeof row.detail.refused)).toEqual(['string', 'string', 'string'])
    expect(await actionCount()).toBe(actionsBefore + 3)

    const bad: [string, Record<string, string>, number][] = [
      ['refund', {}, 400],
      ['refund', { reference: 'not-a-uuid' }, 400],
      ['assign', { trackingId: persistent.trackingId }, 400],
      ['assign', { reference: randomUUID() }, 422],
      ['assign', { reference: randomUUID(), trackingId: 'nope' }, 422],
      ['assign', { reference: randomUUID(), trackingId: `${persistent.trackingId}\u0000` }, 422],
      ['assign', { reference: randomUUID(), trackingId: `trk_${'a'.repeat(5000)}` }, 422],
      ['assign', { reference: randomUUID(), trackingId: INJECTED }, 422],
    ]
    for (const [action, fields, status] of bad) {
      const answer = await postForm(base(), session, `${item}/${action}`, fields)
      expect(answer.status, JSON.stringify(fields).slice(0, 60)).toBe(status)
      const text = await answer.text()
      expect(text).not.toContain('<script>')
    }
    expect(await actionCount()).toBe(actionsBefore + 3)
    expect((await triage(client, unmatched.noPayer)).status).toBe('unmatched')
    // Another partner's credit: the same 404, before anything is read from the form.
    const theirs = await postForm(base(), session, `/dashboard/unmatched/${other.unmatchedId}/refund`, {
      reference: randomUUID(),
    })
    expect(theirs.status).toBe(404)
    expect((await triage(other.client, other.unmatchedId)).status).toBe('unmatched')
  })

  it('refuse a post without the CSRF token or with another session token (403), and change nothing', async () => {
    const mine = await signedInSession(harness.app.db.pool, base(), partnerId)
    const theirs = await signedInSession(harness.app.db.pool, base(), partnerId)
    const actionsBefore = await actionCount()
    const path = `/dashboard/unmatched/${unmatched.noPayer}`
    const attempts = [
      postForm(base(), mine, `${path}/refund`, { reference: randomUUID() }, null),
      postForm(base(), mine, `${path}/refund`, { reference: randomUUID() }, theirs.csrf),
      postForm(base(), mine, `${path}/assign`, { reference: randomUUID(), trackingId: persistent.trackingId }, null),
      postForm(
        base(),
        mine,
        `${path}/assign`,
        { reference: randomUUID(), trackingId: persistent.trackingId },
        theirs.csrf,
      ),
    ]
    for (const answer of await Promise.all(attempts)) expect(answer.status).toBe(403)
    expect(await actionCount()).toBe(actionsBefore)
    expect((await triage(client, unmatched.noPayer)).status).toBe('unmatched')
    // With its own token the same assign goes through.
    const assigned = await postForm(base(), mine, `${path}/assign`, {
      reference: randomUUID(),
      trackingId: persistent.trackingId,
    })
    expect(assigned.status).toBe(303)
    expect((await triage(client, unmatched.noPayer)).status).toBe('assigned')
  })
})
