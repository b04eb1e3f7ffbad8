// Virtual accounts on the dashboard: persistent accounts (filtered by status, as
// GET /api/v1/rail/virtual-account is), FBO pool accounts (as GET /api/v1/rail/fbo lists them),
// and one account's page — of any kind, an intent's too — with the credits paid into it.
import { html } from '../../platform/html.ts'
import { listCredits, type InboundCredit } from '../../collections/credits/service.ts'
import { getIntent } from '../../collections/intents/service.ts'
import {
  bankName,
  getAccount,
  listAccounts,
  type VirtualAccount,
  type VirtualAccountPurpose,
} from '../../collections/virtual-accounts/service.ts'
import { creditList } from './collections-credits.ts'
import { COLLECTIONS_PATH, collectionsListPage, collectionsNav, statusFilter } from './collections-shared.ts'
import { headers, notFound, notFoundAsUndefined, type DashboardRoutes } from './http.ts'
import { layout, when, type Chrome } from './layout.ts'
import { cursorOf, LIST_PAGE, olderLink, oneOf, queryOf } from './lists.ts'

const ACCOUNTS_PATH = `${COLLECTIONS_PATH}/virtual-accounts`
const FBO_PATH = `${COLLECTIONS_PATH}/fbo`
const ACCOUNT_STATUSES = ['active', 'archived'] as const
const TRACKING_ID = /^trk_[a-z0-9]{24}$/
const ALL_PURPOSES: VirtualAccountPurpose[] = ['payment_intent', 'persistent', 'fbo']
const KIND: Record<VirtualAccountPurpose, string> = {
  payment_intent: 'Payment intent account',
  persistent: 'Persistent account',
  fbo: 'FBO pool account',
}

export function registerAccountPages(routes: DashboardRoutes): void {
  const { pool } = routes.deps
  routes.page(ACCOUNTS_PATH, async (request, reply, visit) => {
    const status = oneOf(ACCOUNT_STATUSES, queryOf(request).status)
    const page = await listAccounts(pool, {
      partnerId: visit.partner.id,
      purpose: 'persistent',
      status,
      limit: LIST_PAGE,
      cursor: cursorOf(request),
    })
    return headers(reply).send(accountsPage(visit.chrome, status, page.accounts, page.nextCursor))
  })
  routes.page(FBO_PATH, async (request, reply, visit) => {
    const page = await listAccounts(pool, {
      partnerId: visit.partner.id,
      purpose: 'fbo',
      limit: LIST_PAGE,
      cursor: cursorOf(request),
    })
    return headers(reply).send(fboPage(visit.chrome, page.accounts, page.nextCursor))
  })
  routes.page(`${ACCOUNTS_PATH}/:trackingId`, async (request, reply, visit) => {
    const trackingId = (request.params as { trackingId: string }).trackingId
    const account = TRACKING_ID.test(trackingId)
      ? await getAccount(pool, visit.partner.id, trackingId, ALL_PURPOSES).catch(notFoundAsUndefined)
      : undefined
    if (!account) return notFound(reply, 'virtual account')
    const credits = await listCredits(pool, {
      partnerId: visit.partner.id,
      virtualAccountId: account.id,
      limit: LIST_PAGE,
      cursor: cursorOf(request),
    })
    const intent =
      account.purpose === 'payment_intent'
        ? await getIntent(pool, visit.partner.id, account.trackingId).catch(notFoundAsUndefined)
        : undefined
    return headers(reply).send(
      accountPage(visit.chrome, account, intent?.intent.id, credits.credits, credits.nextCursor),
    )
  })
}

/** Whom an account collects for: a persistent account's reference, an FBO account's holder reference. */
function labelOf(account: VirtualAccount): string {
  return account.reference ?? account.holderRef ?? account.trackingId
}

export function accountList(accounts: readonly VirtualAccount[], empty: string) {
  if (accounts.length === 0) return html`<p class="empty">${empty}</p>`
  return html`<ul class="list accounts">${accounts.map(
    (account) => html`<li><a href="${ACCOUNTS_PATH}/${account.trackingId}" class="reference">${labelOf(account)}</a>
<span class="state">${account.status}</span> · <span class="account-number">${account.accountNumber}</span> · <span class="account-name">${account.accountName}</span>
${account.purposeTag ? html`· tag <span class="tag">${account.purposeTag}</span>` : ''} · <span class="when">${when(account.createdAt)}</span></li>`,
  )}</ul>`
}

export function accountsPage(
  chrome: Chrome,
  status: string | undefined,
  accounts: readonly VirtualAccount[],
  nextCursor: string | null,
): string {
  return collectionsListPage(chrome, {
    title: 'Virtual accounts',
    path: ACCOUNTS_PATH,
    above: statusFilter(ACCOUNTS_PATH, ACCOUNT_STATUSES, status),
    list: accountList(accounts, 'No persistent virtual accounts match.'),
    status,
    nextCursor,
    older: 'Older accounts',
  })
}

export function fboPage(chrome: Chrome, accounts: readonly VirtualAccount[], nextCursor: string | null): string {
  return collectionsListPage(chrome, {
    title: 'FBO accounts',
    path: FBO_PATH,
    above: html`<p>Identity-blind pool accounts, one per holder reference and purpose tag.</p>`,
    list: accountList(accounts, 'No FBO accounts yet.'),
    nextCursor,
    older: 'Older accounts',
  })
}

export function accountPage(
  chrome: Chrome,
  account: VirtualAccount,
  intentId: string | undefined,
  credits: readonly InboundCredit[],
  nextCursor: string | null,
): string {
  return layout(
    `Account ${account.accountNumber}`,
    html`${collectionsNav()}
<dl>
<div><dt>Kind</dt><dd id="account-kind">${KIND[account.purpose]}</dd></div>
<div><dt>Status</dt><dd id="account-status">${account.status}${account.archivedAt ? ` since ${when(account.archivedAt)}` : ''}</dd></div>
<div><dt>Account number</dt><dd id="account-number">${account.accountNumber}</dd></div>
<div><dt>Account name</dt><dd id="account-name">${account.accountName}</dd></div>
<div><dt>Bank</dt><dd>${bankName(account.bankCode)}</dd></div>
<div><dt>Tracking id</dt><dd id="tracking-id">${account.trackingId}</dd></div>
${account.reference ? html`<div><dt>Reference</dt><dd id="account-reference">${account.reference}</dd></div>` : ''}
${account.holderRef ? html`<div><dt>Holder reference</dt><dd id="holder-ref">${account.holderRef}</dd></div>` : ''}
<div><dt>Purpose tag</dt><dd id="purpose-tag">${account.purposeTag ?? '—'}</dd></div>
${account.brr ? html`<div><dt>BRR</dt><dd>${account.brr}</dd></div>` : ''}
<div><dt>Created</dt><dd>${when(account.createdAt)}</dd></div>
${intentId ? html`<div><dt>Collects for</dt><dd><a href="${COLLECTIONS_PATH}/intents/${intentId}" id="intent-link">Its payment intent</a></dd></div>` : ''}
</dl>
<h2>Credits</h2>
${creditList(credits, 'No credits to this account.')}
${olderLink(`${ACCOUNTS_PATH}/${account.trackingId}`, {}, nextCursor, 'Older credits')}`,
    chrome,
  )
}
