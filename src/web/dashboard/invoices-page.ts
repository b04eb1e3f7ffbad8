// The invoice pages' markup: the list, the "New invoice" form, and an invoice's page. Every
// partner-supplied text (title, description, customer, references) goes through `html`.
import { html, type Html } from '../../platform/html.ts'
import { toInvoiceJson, type InvoiceStatus, type InvoiceView } from '../../invoices/service.ts'
import { DASHBOARD_CREDENTIAL } from './actions.ts'
import {
  CUSTOMER_ID_MAX_CHARS,
  CUSTOMER_NAME_MAX_CHARS,
  INVOICE_DESCRIPTION_MAX_CHARS,
  INVOICE_TITLE_MAX_CHARS,
} from './invoices-form.ts'
import { csrfField, dateRows, layout, naira, row, when, type Chrome } from './layout.ts'
import { filterSelect, findPage, statusLabel } from './lists.ts'

export const INVOICE_STATUSES: readonly InvoiceStatus[] = ['draft', 'published', 'partially_paid', 'paid', 'cancelled']
/** The states from which each action is offered (the service decides; these only choose the buttons). */
const PUBLISHABLE: readonly InvoiceStatus[] = ['draft']
const CANCELLABLE: readonly InvoiceStatus[] = ['draft', 'published', 'partially_paid']

type InvoiceJson = ReturnType<typeof toInvoiceJson>

export interface InvoiceFilter {
  status?: InvoiceStatus
}

export function invoicesPage(
  chrome: Chrome,
  filter: InvoiceFilter,
  invoices: readonly InvoiceJson[],
  nextCursor: string | null,
): string {
  return findPage(chrome, {
    title: 'Invoices',
    path: '/dashboard/invoices',
    above: html`<p><a href="/dashboard/invoices/new" id="new-invoice">New invoice</a></p>
`,
    fields: filterSelect('Status', 'status', INVOICE_STATUSES, filter.status),
    filter: { ...filter },
    rows: invoices,
    row: (invoice) => html`<li><a href="/dashboard/invoices/${invoice.id}" class="title">${invoice.title}</a>
<span class="state">${statusLabel(invoice.status)}</span> <span class="amount">${naira(invoice.amountKobo)}</span>, paid <span class="paid">${naira(invoice.amountPaidKobo)}</span>
· created <span class="when">${when(new Date(invoice.createdAt))}</span></li>`,
    empty: 'No invoices match.',
    nextCursor,
    older: 'Older invoices',
  })
}

function field(label: string, name: string, attributes: Html, hint = ''): Html {
  return html`<label>${label}${hint ? html` <small>${hint}</small>` : ''} <input name="${name}" id="${name}"${attributes}></label>`
}

export function newInvoicePage(chrome: Chrome, reference: string): string {
  return layout(
    'New invoice',
    html`<form method="post" action="/dashboard/invoices" class="filter" id="new-invoice-form">
${csrfField(chrome)}<input type="hidden" name="reference" value="${reference}">
${field('Title', 'title', html` required maxlength="${INVOICE_TITLE_MAX_CHARS}"`)}
${field('Amount (₦)', 'amount', html` required inputmode="decimal" autocomplete="off" placeholder="12,500.00"`)}
<label>Description <textarea name="description" id="description" maxlength="${INVOICE_DESCRIPTION_MAX_CHARS}" rows="3"></textarea></label>
${field('Customer name', 'customerName', html` maxlength="${CUSTOMER_NAME_MAX_CHARS}"`, 'names the account')}
${field('Customer email', 'customerEmail', html` type="email" maxlength="254"`)}
${field('Customer phone', 'customerPhone', html` type="tel" maxlength="16"`)}
${field('Your customer id', 'customerId', html` maxlength="${CUSTOMER_ID_MAX_CHARS}"`)}
${field('Due', 'dueAt', html` type="datetime-local"`, 'Lagos time')}
${field('Callback URL', 'callbackUrl', html` type="url" maxlength="2048"`, 'its events')}
<label><input type="checkbox" name="publishOnCreate" id="publishOnCreate" value="yes"> Publish at once (open its account)</label>
<button type="submit">Create invoice</button></form>`,
    chrome,
  )
}

function customerText(customer: InvoiceJson['customer']): string {
  if (!customer) return '—'
  return (
    [customer.name, customer.email, customer.phone, customer.customerId ? `id ${customer.customerId}` : undefined]
      .filter((part) => typeof part === 'string')
      .join(' · ') || '—'
  )
}

/** Who created it: the dashboard, or the API credential that signed the request. */
function creatorText(metadata: Record<string, unknown>): string {
  return metadata.credentialId === DASHBOARD_CREDENTIAL
    ? 'The dashboard'
    : `API credential ${String(metadata.credentialId ?? 'unknown')}`
}

function dates(view: InvoiceView): Html {
  const { invoice } = view
  const moments: [string, string, Date | null][] = [
    ['created-at', 'Created', invoice.createdAt],
    ['published-at', 'Published', invoice.publishedAt],
    ['paid-at', 'Paid', invoice.paidAt],
    ['cancelled-at', 'Cancelled', invoice.cancelledAt],
  ]
  return dateRows(moments)
}

/** The account the payer pays into and its payment page (from published on). */
function paymentDetails(view: InvoiceView, json: InvoiceJson): Html {
  if (!view.payment || !json.checkoutUrl)
    return html`<p id="no-account">No account yet: publish the invoice to open one for the payer.</p>`
  return html`<dl>
${row('account-number', 'Account number', json.virtualAccount ?? '')}
${row('account-name', 'Account name', json.virtualAccountName ?? '')}
${row('account-bank', 'Bank', json.virtualAccountBank ?? '')}
${row('tracking-id', 'Tracking id', json.trackingId ?? '')}
${row('account-expires', 'Account open until', html`<time datetime="${view.payment.intent.expiresAt.toISOString()}">${when(view.payment.intent.expiresAt)}</time>`)}
</dl>
<p><a id="payment-page" href="${json.checkoutUrl}">Open payment page</a></p>`
}

function actions(chrome: Chrome, view: InvoiceView): Html {
  const { id, status } = view.invoice
  const publish = PUBLISHABLE.includes(status)
    ? html`<form method="post" action="/dashboard/invoices/${id}/publish">${csrfField(chrome)}<button type="submit">Publish</button></form>`
    : ''
  const cancel = CANCELLABLE.includes(status)
    ? html`<form method="post" action="/dashboard/invoices/${id}/cancel">${csrfField(chrome)}<button type="submit">Cancel invoice</button></form>`
    : ''
  return publish || cancel ? html`<h2>Actions</h2>${publish}${cancel}` : html``
}

/** The invoice's billed lines, one a line: "2 × Textbooks at ₦5,000.00". */
function lineItemsText(lineItems: InvoiceView['invoice']['lineItems']): Html | string {
  if (lineItems.length === 0) return '—'
  return html`<ul class="line-items">${lineItems.map((line) => html`<li>${line.quantity} × ${line.description} at ${naira(line.unitAmountKobo)}</li>`)}</ul>`
}

export function invoicePage(chrome: Chrome, view: InvoiceView, notice: Html | ''): string {
  const { invoice } = view
  const json = toInvoiceJson(view)
  return layout(
    invoice.title,
    html`${notice}<dl>
${row('invoice-status', 'Status', statusLabel(invoice.status))}
${row('invoice-amount', 'Amount', naira(invoice.amountKobo))}
${row('invoice-paid', 'Paid', naira(invoice.amountPaidKobo))}
${row('invoice-remaining', 'Remaining', naira(invoice.amountKobo - invoice.amountPaidKobo))}
${row('invoice-due', 'Due', invoice.dueAt ? html`<time datetime="${invoice.dueAt.toISOString()}">${when(invoice.dueAt)}</time>` : '—')}
${row('invoice-reference', 'Reference', invoice.reference)}
${row('description', 'Description', invoice.description ?? '—')}
${row('line-items', 'Lines', lineItemsText(invoice.lineItems))}
${row('customer', 'Customer', customerText(json.customer))}
${row('callback-url', 'Callback URL', invoice.callbackUrl ?? '—')}
${row('created-by', 'Created by', creatorText(invoice.creatorMetadata))}
${dates(view)}
</dl>
<h2>Payment details</h2>
${paymentDetails(view, json)}
${actions(chrome, view)}`,
    chrome,
  )
}
