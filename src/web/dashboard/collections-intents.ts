// Payment intents on the dashboard: the partner's intents newest first (filtered by status, as
// GET /api/v1/rail/payment/intent is), and an intent's page: what was paid and what remains, its
// expiry, its virtual account and the credits to it, and a link to the payer's page.
import { html } from '../../platform/html.ts'
import { checkoutUrl } from '../../platform/public-url.ts'
import { listCredits, type InboundCredit } from '../../collections/credits/service.ts'
import { getIntent, listIntents, type IntentStatus, type IntentView } from '../../collections/intents/service.ts'
import { bankName } from '../../collections/virtual-accounts/service.ts'
import { creditList } from './collections-credits.ts'
import { COLLECTIONS_PATH, collectionsListPage, collectionsNav, statusFilter } from './collections-shared.ts'
import { headers, notFound, ownObject, type DashboardRoutes } from './http.ts'
import { layout, naira, when, type Chrome } from './layout.ts'
import { cursorOf, LIST_PAGE, oneOf, queryOf, statusLabel } from './lists.ts'

const INTENTS_PATH = `${COLLECTIONS_PATH}/intents`
export const INTENT_STATUSES: readonly IntentStatus[] = ['pending', 'partially_paid', 'paid', 'overpaid', 'expired']

export function registerIntentPages(routes: DashboardRoutes): void {
  const { pool } = routes.deps
  routes.page(INTENTS_PATH, async (request, reply, visit) => {
    const status = oneOf(INTENT_STATUSES, queryOf(request).status)
    const page = await listIntents(pool, {
      partnerId: visit.partner.id,
      status,
      limit: LIST_PAGE,
      cursor: cursorOf(request),
    })
    return headers(reply).send(intentsPage(visit.chrome, status, page.intents, page.nextCursor))
  })
  routes.page(`${INTENTS_PATH}/:id`, async (request, reply, visit) => {
    // By id only (the API also takes a trackingId or reference): the dashboard links by id.
    const view = await ownObject(request, (id) => getIntent(pool, visit.partner.id, id))
    if (!view) return notFound(reply, 'payment intent')
    const credits = await listCredits(pool, {
      partnerId: visit.partner.id,
      virtualAccountId: view.account.id,
      limit: LIST_PAGE,
    })
    return headers(reply).send(intentPage(visit.chrome, view, credits.credits, credits.nextCursor !== null))
  })
}

/** The amount asked, or "Any amount" when any credit pays the intent. */
function amountOf(amountKobo: number | null): string {
  return amountKobo === null ? 'Any amount' : naira(amountKobo)
}

export function intentList(views: readonly IntentView[], empty: string) {
  if (views.length === 0) return html`<p class="empty">${empty}</p>`
  return html`<ul class="list intents">${views.map(
    ({ intent, account }) => html`<li><a href="${INTENTS_PATH}/${intent.id}" class="reference">${intent.reference}</a>
<span class="state">${statusLabel(intent.status)}</span> <span class="amount">${amountOf(intent.amountKobo)}</span>, paid <span class="paid">${naira(intent.amountReceivedKobo)}</span>
into <span class="account-number">${account.accountNumber}</span> · <span class="when">expires ${when(intent.expiresAt)}</span></li>`,
  )}</ul>`
}

export function intentsPage(
  chrome: Chrome,
  status: IntentStatus | undefined,
  views: readonly IntentView[],
  nextCursor: string | null,
): string {
  return collectionsListPage(chrome, {
    title: 'Payment intents',
    path: INTENTS_PATH,
    above: statusFilter(INTENTS_PATH, INTENT_STATUSES, status),
    list: intentList(views, 'No payment intents match.'),
    status,
    nextCursor,
    older: 'Older intents',
  })
}

export function intentPage(
  chrome: Chrome,
  { intent, account }: IntentView,
  credits: readonly InboundCredit[],
  moreCredits: boolean,
): string {
  const remainingKobo = intent.amountKobo === null ? null : Math.max(0, intent.amountKobo - intent.amountReceivedKobo)
  const accountPath = `${COLLECTIONS_PATH}/virtual-accounts/${account.trackingId}`
  return layout(
    `Payment intent ${intent.reference}`,
    html`${collectionsNav()}
<p><a href="${checkoutUrl(intent.checkoutToken)}" id="payment-page">Open payment page</a></p>
<dl>
<div><dt>Status</dt><dd id="intent-status">${statusLabel(intent.status)}</dd></div>
<div><dt>Amount</dt><dd id="intent-amount">${amountOf(intent.amountKobo)}</dd></div>
<div><dt>Paid</dt><dd id="intent-paid">${naira(intent.amountReceivedKobo)}</dd></div>
${remainingKobo === null ? '' : html`<div><dt>Remaining</dt><dd id="intent-remaining">${naira(remainingKobo)}</dd></div>`}
<div><dt>Expires</dt><dd id="intent-expires"><time datetime="${intent.expiresAt.toISOString()}">${when(intent.expiresAt)}</time></dd></div>
<div><dt>Shown to the payer as</dt><dd id="merchant-name">${intent.merchantDisplayName}</dd></div>
<div><dt>Purpose tag</dt><dd id="purpose-tag">${intent.purposeTag ?? '—'}</dd></div>
<div><dt>Return URL</dt><dd id="return-url">${intent.returnUrl ?? '—'}</dd></div>
${intent.ownerType ? html`<div><dt>Part of</dt><dd id="owner">${intent.ownerType} ${intent.ownerId}</dd></div>` : ''}
<div><dt>Created</dt><dd>${when(intent.createdAt)}</dd></div>
</dl>
<h2>Virtual account</h2>
<dl>
<div><dt>Account number</dt><dd id="account-number"><a href="${accountPath}">${account.accountNumber}</a></dd></div>
<div><dt>Account name</dt><dd id="account-name">${account.accountName}</dd></div>
<div><dt>Bank</dt><dd>${bankName(account.bankCode)}</dd></div>
<div><dt>Tracking id</dt><dd>${account.trackingId} (${account.status})</dd></div>
</dl>
<h2>Credits</h2>
${creditList(credits, 'No credits yet.')}
${moreCredits ? html`<p><a href="${accountPath}">All credits to this account</a></p>` : ''}`,
    chrome,
  )
}
