// Inbound credits on the dashboard: the partner's credits newest first (filtered by status), a
// credit's page, and the credit list that an account's and an intent's pages show.
import { html, type Html } from '../../platform/html.ts'
import {
  creditLifecycle,
  getCredit,
  listCredits,
  type CreditStatus,
  type InboundCredit,
} from '../../collections/credits/service.ts'
import { selectById as selectAccountById, type VirtualAccount } from '../../collections/virtual-accounts/service.ts'
import { COLLECTIONS_PATH, collectionsListPage, collectionsNav, statusFilter } from './collections-shared.ts'
import { headers, notFound, ownObject, type DashboardRoutes } from './http.ts'
import { layout, naira, payerText, when, type Chrome } from './layout.ts'
import { cursorOf, LIST_PAGE, oneOf, queryOf, statusLabel } from './lists.ts'

const CREDITS_PATH = `${COLLECTIONS_PATH}/credits`
/** The statuses a partner's credit shows (confirmed is an applied credit), as the filter offers them. */
export const CREDIT_FILTERS = ['confirmed', 'unmatched', 'refund_pending', 'refunded', 'assigned'] as const
type CreditFilter = (typeof CREDIT_FILTERS)[number]

function storedStatus(filter: CreditFilter): CreditStatus {
  return filter === 'confirmed' ? 'applied' : filter
}

export function registerCreditPages(routes: DashboardRoutes): void {
  const { pool } = routes.deps
  routes.page(CREDITS_PATH, async (request, reply, visit) => {
    const status = oneOf(CREDIT_FILTERS, queryOf(request).status)
    const page = await listCredits(pool, {
      partnerId: visit.partner.id,
      status: status && storedStatus(status),
      limit: LIST_PAGE,
      cursor: cursorOf(request),
    })
    return headers(reply).send(creditsPage(visit.chrome, status, page.credits, page.nextCursor))
  })
  routes.page(`${CREDITS_PATH}/:id`, async (request, reply, visit) => {
    const credit = await ownObject(request, (id) => getCredit(pool, visit.partner.id, id))
    if (!credit) return notFound(reply, 'credit')
    const account = credit.virtualAccountId ? await selectAccountById(pool, credit.virtualAccountId) : undefined
    return headers(reply).send(
      creditPage(visit.chrome, credit, account?.partnerId === visit.partner.id ? account : undefined),
    )
  })
}

/** Credits as a list: each links to its page. */
export function creditList(credits: readonly InboundCredit[], empty: string): Html {
  if (credits.length === 0) return html`<p class="empty">${empty}</p>`
  return html`<ul class="list credits">${credits.map(
    (credit) => html`<li><a href="${CREDITS_PATH}/${credit.id}" class="amount">${naira(credit.amountKobo)}</a>
<span class="state">${statusLabel(creditLifecycle(credit.status))}</span> from <span class="payer">${credit.payerName ?? 'an unnamed payer'}</span>
into <span class="account-number">${credit.accountNumber}</span> · <span class="when">${when(credit.creditedAt)}</span></li>`,
  )}</ul>`
}

export function creditsPage(
  chrome: Chrome,
  status: CreditFilter | undefined,
  credits: readonly InboundCredit[],
  nextCursor: string | null,
): string {
  return collectionsListPage(chrome, {
    title: 'Inbound credits',
    path: CREDITS_PATH,
    above: statusFilter(CREDITS_PATH, CREDIT_FILTERS, status),
    list: creditList(credits, 'No inbound credits match.'),
    status,
    nextCursor,
    older: 'Older credits',
  })
}

function payerOf(credit: InboundCredit): string {
  return payerText(credit.payerName, credit.payerAccountNumber, credit.payerBankCode)
}

function paidInto(credit: InboundCredit, account: VirtualAccount | undefined): Html {
  if (account)
    return html`<a href="${COLLECTIONS_PATH}/virtual-accounts/${account.trackingId}">${credit.accountNumber}</a> (${account.trackingId})`
  if (credit.walletId) return html`${credit.accountNumber} (wallet ${credit.walletId})`
  return html`${credit.accountNumber}`
}

export function creditPage(chrome: Chrome, credit: InboundCredit, account: VirtualAccount | undefined): string {
  return layout(
    `Credit of ${naira(credit.amountKobo)}`,
    html`${collectionsNav()}
<dl>
<div><dt>Status</dt><dd id="credit-status">${statusLabel(creditLifecycle(credit.status))}</dd></div>
<div><dt>Amount</dt><dd id="credit-amount">${naira(credit.amountKobo)}</dd></div>
<div><dt>Paid into</dt><dd id="credit-account">${paidInto(credit, account)}</dd></div>
<div><dt>Payer</dt><dd id="payer">${payerOf(credit)}</dd></div>
<div><dt>Narration</dt><dd id="narration">${credit.narration ?? '—'}</dd></div>
<div><dt>Session id</dt><dd id="session-id">${credit.sessionId}</dd></div>
${credit.brr ? html`<div><dt>BRR</dt><dd id="brr">${credit.brr}</dd></div>` : ''}
<div><dt>Credited</dt><dd>${when(credit.creditedAt)}</dd></div>
<div><dt>Received by Rail</dt><dd>${when(credit.receivedAt)}</dd></div>
${credit.unmatchedReason ? html`<div><dt>Unmatched</dt><dd id="unmatched-reason">${statusLabel(credit.unmatchedReason)} · <a href="/dashboard/unmatched/${credit.id}">Triage</a></dd></div>` : ''}
</dl>`,
    chrome,
  )
}
