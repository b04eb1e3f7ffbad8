// The escrow pages' markup: the list and an escrow's page with its parties, funding account,
// disbursement and refund, and the release and cancel forms. Every partner-supplied text
// (description, emails, reference, metadata, reasons, account names) goes through `html`.
import { html, type Html } from '../../platform/html.ts'
import { REASON_MAX_CHARS, type escrowView, type Escrow } from '../../escrow/service.ts'
import { csrfField, dateRows, layout, naira, row, when, type Chrome } from './layout.ts'
import { filterSelect, findPage } from './lists.ts'

type EscrowStatus = Escrow['status']
type EscrowJson = Awaited<ReturnType<typeof escrowView>>

export const ESCROW_STATUSES: readonly EscrowStatus[] = ['initiated', 'funded', 'released', 'cancelled', 'expired']
/** Where each action is offered (the service decides; these only choose the forms shown). */
const CANCELLABLE: readonly EscrowStatus[] = ['initiated', 'funded']

export interface EscrowFilter {
  status?: EscrowStatus
}

export function escrowsPage(
  chrome: Chrome,
  filter: EscrowFilter,
  escrows: readonly Escrow[],
  nextCursor: string | null,
): string {
  return findPage(chrome, {
    title: 'Escrows',
    path: '/dashboard/escrows',
    fields: filterSelect('Status', 'status', ESCROW_STATUSES, filter.status),
    filter: { ...filter },
    rows: escrows,
    row: (escrow) => html`<li><a href="/dashboard/escrows/${escrow.id}" class="description">${escrow.description}</a>
<span class="ref">${escrow.ref}</span> <span class="state">${escrow.status}</span> <span class="amount">${naira(escrow.amountKobo)}</span>, funded <span class="funded">${naira(escrow.fundedAmountKobo)}</span>
· created <span class="when">${when(escrow.createdAt)}</span></li>`,
    empty: 'No escrows match.',
    nextCursor,
    older: 'Older escrows',
  })
}

function at(date: Date | null): Html | string {
  return date ? html`<time datetime="${date.toISOString()}">${when(date)}</time>` : '—'
}

function dates(escrow: Escrow): Html {
  const moments: [string, string, Date | null][] = [
    ['created-at', 'Created', escrow.createdAt],
    ['funded-at', 'Funded', escrow.fundedAt],
    ['released-at', 'Released', escrow.releasedAt],
    ['cancelled-at', 'Cancelled', escrow.cancelledAt],
    ['expired-at', 'Expired', escrow.expiredAt],
  ]
  return dateRows(moments)
}

/** The account the payer funds the escrow through, and its payment page. */
function funding(view: EscrowJson): Html {
  const account = view.funding
  if (!account) return html`<p id="no-account">This escrow has no funding account.</p>`
  return html`<dl>
${row('account-number', 'Account number', account.virtualAccount)}
${row('account-name', 'Account name', account.virtualAccountName)}
${row('account-bank', 'Bank', `${account.bankName} (${account.bankCode})`)}
${row('tracking-id', 'Tracking id', account.trackingId)}
${row('account-expires', 'Account open until', at(new Date(account.expiresAt)))}
</dl>
<p><a id="payment-page" href="${account.checkoutUrl}">Open payment page</a></p>`
}

/** Where the released amount goes, how far it got, and any refund to the payer. */
function moneyOut(escrow: Escrow, view: EscrowJson): Html {
  const disbursement = view.disbursement
  const destination = disbursement
    ? disbursement.destination === 'float'
      ? 'Your float'
      : `${disbursement.destination.accountName} · ${disbursement.destination.accountNumber} (bank ${disbursement.destination.bankCode})`
    : '—'
  const failure = escrow.disbursementFailureReason
  return html`<dl>
${row('disbursement-destination', 'Pays to', destination)}
${row('disbursement-state', 'Disbursement', disbursement ? disbursement.state.replace('_', ' ') : 'none')}
${failure ? row('disbursement-failure', 'Why it failed', `${failure.message} (${failure.code})`) : ''}
${row('refund-state', 'Refund to the payer', view.refund ? `${view.refund.state}, ${naira(view.refund.amountKobo)}` : 'none')}
</dl>`
}

function releaseForm(chrome: Chrome, escrow: Escrow): Html {
  const again = escrow.status === 'released'
  return html`<h3>${again ? 'Release again' : 'Release to the recipient'}</h3>
<form method="post" action="/dashboard/escrows/${escrow.id}/release" id="release-form">
${csrfField(chrome)}
<label>Reason (optional) <input name="reason" maxlength="${REASON_MAX_CHARS}"></label>
<fieldset><legend>Pay another account (optional: all three, or none)</legend>
<label>Account number <input name="accountNumber" inputmode="numeric" maxlength="10" autocomplete="off"></label>
<label>Bank code <input name="bankCode" inputmode="numeric" maxlength="6" autocomplete="off"></label>
<label>Account name <input name="accountName" maxlength="100" autocomplete="off"></label>
</fieldset>
<button type="submit">${again ? 'Release again' : 'Release'}</button></form>`
}

function cancelForm(chrome: Chrome, escrow: Escrow): Html {
  return html`<h3>Cancel and refund the payer</h3>
<form method="post" action="/dashboard/escrows/${escrow.id}/cancel" id="cancel-form">
${csrfField(chrome)}
<label>Reason <input name="reason" required maxlength="${REASON_MAX_CHARS}"></label>
<button type="submit">Cancel escrow</button></form>`
}

function actions(chrome: Chrome, escrow: Escrow): Html {
  // A released escrow whose disbursement failed may be released again (to the same or another account).
  const releasable =
    escrow.status === 'funded' || (escrow.status === 'released' && escrow.disbursementState === 'failed')
  const cancellable = CANCELLABLE.includes(escrow.status)
  if (!releasable && !cancellable) return html``
  return html`<h2>Actions</h2>${releasable ? releaseForm(chrome, escrow) : ''}${cancellable ? cancelForm(chrome, escrow) : ''}`
}

export function escrowPage(chrome: Chrome, escrow: Escrow, view: EscrowJson, notice: Html | ''): string {
  return layout(
    `Escrow ${escrow.ref}`,
    html`${notice}<dl>
${row('escrow-status', 'Status', escrow.status)}
${row('escrow-amount', 'Amount', naira(escrow.amountKobo))}
${row('escrow-funded', 'Funded', naira(escrow.fundedAmountKobo))}
${row('escrow-description', 'Description', escrow.description)}
${row('escrow-type', 'Type', escrow.type)}
${row('payer-email', 'Payer', escrow.payerEmail)}
${row('recipient-email', 'Recipient', escrow.recipientEmail)}
${row('escrow-expires', escrow.status === 'initiated' ? 'Expires unless funded by' : 'Was to be funded by', at(escrow.expiresAt))}
${row('escrow-reference', 'Your reference', escrow.reference ?? '—')}
${row('escrow-metadata', 'Metadata', html`<code>${JSON.stringify(escrow.metadata)}</code>`)}
${escrow.releaseReason ? row('release-reason', 'Release reason', escrow.releaseReason) : ''}
${escrow.cancelReason ? row('cancel-reason', 'Cancel reason', escrow.cancelReason) : ''}
${dates(escrow)}
</dl>
<h2>Funding account</h2>
${funding(view)}
<h2>Money out</h2>
${moneyOut(escrow, view)}
${actions(chrome, escrow)}`,
    chrome,
  )
}
