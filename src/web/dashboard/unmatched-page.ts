// The pages of unmatched credits: the triage list and a credit's triage page with its two forms,
// assign (to a tracking id of one of the partner's accounts) and refund (to the sender).
import { randomUUID } from 'node:crypto'
import { html, type Html } from '../../platform/html.ts'
import type { getTriageItem } from '../../collections/credits/service.ts'
import { COLLECTIONS_PATH } from './collections-shared.ts'
import { olderLink, statusLabel } from './lists.ts'
import { csrfField, layout, naira, payerText, when, type Chrome } from './layout.ts'

export const UNMATCHED_PATH = '/dashboard/unmatched'
/** The statuses of a triage item, as the list filter offers them (and "all"). */
export const TRIAGE_STATUSES = ['unmatched', 'refund_pending', 'refunded', 'assigned'] as const
export type TriageItem = Awaited<ReturnType<typeof getTriageItem>>

/** A suggestion for the assign form: one of the partner's accounts that takes credits. */
export interface AssignTarget {
  trackingId: string
  label: string
}

export const NOTICES: Record<string, string> = {
  assigned: 'Assigned: the credit was applied to the account you chose, as if it had been paid there.',
  refund_started:
    'Refund started: an outbound transfer pays the sender back. The credit is refund pending until the bank settles it.',
  replayed: 'This form was sent before, so nothing was done again. The credit as it is now is shown below.',
}

const FILTER_LABELS: Record<string, string> = {
  unmatched: 'Awaiting triage',
  refund_pending: 'Refund pending',
  refunded: 'Refunded',
  assigned: 'Assigned',
  all: 'All',
}

export function triageListPage(
  chrome: Chrome,
  status: string,
  items: readonly TriageItem[],
  nextCursor: string | null,
): string {
  const filters = [...TRIAGE_STATUSES, 'all']
  return layout(
    'Unmatched credits',
    html`<p>Credits that could not be applied where they were paid (an archived account, an expired intent, a closed invoice or escrow, an overpayment). Assign each to another of your accounts, or refund it to its sender.</p>
<form method="get" action="${UNMATCHED_PATH}" class="filter"><label>Show <select name="status">${filters.map(
      (value) =>
        html`<option value="${value}"${value === status ? html` selected` : ''}>${FILTER_LABELS[value]}</option>`,
    )}</select></label><button type="submit">Filter</button></form>
${items.length === 0 ? html`<p id="empty">No unmatched credits here.</p>` : ''}
<ul class="list triage">${items.map(
      (item) => html`<li><a href="${UNMATCHED_PATH}/${item.id}" class="amount">${naira(item.amountKobo)}</a>
<span class="state">${statusLabel(item.status)}</span> <span class="reason">(${statusLabel(item.reason)})</span>
from <span class="payer">${item.payer.name ?? 'an unnamed payer'}</span> into <span class="account-number">${item.virtualAccount}</span> · <span class="when">${when(new Date(item.creditedAt))}</span></li>`,
    )}</ul>
${olderLink(UNMATCHED_PATH, { status }, nextCursor, 'Older credits')}`,
    chrome,
  )
}

function payerOf(item: TriageItem): string {
  return payerText(item.payer.name, item.payer.accountNumber, item.payer.bankCode)
}

function paidInto(item: TriageItem): Html {
  if (item.trackingId)
    return html`<a href="${COLLECTIONS_PATH}/virtual-accounts/${item.trackingId}">${item.virtualAccount}</a> (${item.trackingId})`
  if (item.walletId) return html`${item.virtualAccount} (wallet ${item.walletId})`
  return html`${item.virtualAccount}`
}

/** How it was resolved, or what was tried: a refund's payout, the account it was assigned to. */
function resolutionOf(item: TriageItem): Html | '' {
  const resolution = item.resolution
  if (!resolution) return ''
  if (resolution.action === 'assign' && typeof resolution.trackingId === 'string') {
    return html`Assigned to <a href="${COLLECTIONS_PATH}/virtual-accounts/${resolution.trackingId}">${resolution.trackingId}</a>`
  }
  if (resolution.action === 'refund' && typeof resolution.outboundTransferId === 'string') {
    const failed = resolution.outcome === 'failed' ? ' (that refund failed; the credit is back in triage)' : ''
    return html`Refund by <a href="/dashboard/transfers/${resolution.outboundTransferId}" id="refund-transfer">outbound transfer</a>${failed}`
  }
  return ''
}

export function triageItemPage(
  chrome: Chrome,
  item: TriageItem,
  targets: readonly AssignTarget[],
  notice: Html | '',
): string {
  const resolution = resolutionOf(item)
  return layout(
    `Unmatched credit of ${naira(item.amountKobo)}`,
    html`${notice}
<dl>
<div><dt>Status</dt><dd id="triage-status">${statusLabel(item.status)}</dd></div>
<div><dt>Why unmatched</dt><dd id="reason">${statusLabel(item.reason)}</dd></div>
<div><dt>Amount</dt><dd id="triage-amount">${naira(item.amountKobo)}</dd></div>
<div><dt>Paid into</dt><dd id="paid-into">${paidInto(item)}</dd></div>
<div><dt>Payer</dt><dd id="payer">${payerOf(item)}</dd></div>
<div><dt>Narration</dt><dd id="narration">${item.narration ?? '—'}</dd></div>
<div><dt>Session id</dt><dd>${item.sessionId}</dd></div>
<div><dt>Credited</dt><dd>${when(new Date(item.creditedAt))}</dd></div>
${resolution ? html`<div><dt>Resolution</dt><dd id="resolution">${resolution}</dd></div>` : ''}
${item.resolvedAt ? html`<div><dt>Resolved</dt><dd>${when(new Date(item.resolvedAt))}</dd></div>` : ''}
</dl>
<p><a href="${COLLECTIONS_PATH}/credits/${item.id}">The credit's page</a> · <a href="${UNMATCHED_PATH}">All unmatched credits</a></p>
${item.status === 'unmatched' ? triageForms(chrome, item, targets) : ''}`,
    chrome,
  )
}

/** Assign and refund; each form has its own random reference, so sending it twice does it once. */
function triageForms(chrome: Chrome, item: TriageItem, targets: readonly AssignTarget[]): Html {
  return html`<section aria-labelledby="assign-heading"><h2 id="assign-heading">Assign to an account</h2>
<p>Apply the credit to another of your virtual accounts (a payment intent's, a persistent or an FBO account) as if it had been paid there.</p>
<form method="post" action="${UNMATCHED_PATH}/${item.id}/assign" id="assign">
${csrfField(chrome)}<input type="hidden" name="reference" value="${randomUUID()}">
<label>Tracking id <input name="trackingId" list="assign-targets" required maxlength="28" autocomplete="off" placeholder="trk_…"></label>
<datalist id="assign-targets">${targets.map((target) => html`<option value="${target.trackingId}">${target.label}</option>`)}</datalist>
<button type="submit">Assign</button>
</form></section>
<section aria-labelledby="refund-heading"><h2 id="refund-heading">Refund to the sender</h2>
<p>Pay ${naira(item.amountKobo)} back to ${payerOf(item)} by an outbound transfer from your suspense account, where the credit is held.</p>
<form method="post" action="${UNMATCHED_PATH}/${item.id}/refund" id="refund">
${csrfField(chrome)}<input type="hidden" name="reference" value="${randomUUID()}">
<button type="submit">Refund to sender</button>
</form></section>`
}
