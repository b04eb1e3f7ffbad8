// The checkout page and the 404 page, server-rendered. Everything works without JavaScript but the
// live status and the copy button, which checkout.js adds (served from Rail: the Content-Security-
// Policy allows no inline script or style and nothing from anywhere else).
import { randomUUID } from 'node:crypto'
import type { CheckoutState, CheckoutView } from './service.ts'
import { html, type Html } from '../../platform/html.ts'

const NAIRA = new Intl.NumberFormat('en-NG', { style: 'currency', currency: 'NGN' })
const WHEN = new Intl.DateTimeFormat('en-NG', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'Africa/Lagos' })

/** ₦12,500.00 for 1250000 kobo. */
export function naira(amountKobo: number): string {
  return NAIRA.format(amountKobo / 100)
}

export const STATE_LABELS: Record<CheckoutState, string> = {
  awaiting_payment: 'Awaiting payment',
  partially_paid: 'Partially paid',
  paid: 'Paid',
  expired: 'Expired',
  cancelled: 'Cancelled',
}

/** What the live region says about a state: the label, and the amounts paid and still due. */
export function statusText(view: Pick<CheckoutView, 'state' | 'paidKobo' | 'remainingKobo'>): {
  label: string
  detail: string
} {
  const label = STATE_LABELS[view.state]
  if (view.state === 'partially_paid')
    return { label, detail: `Paid ${naira(view.paidKobo)} · Remaining ${naira(view.remainingKobo ?? 0)}` }
  if (view.state === 'paid') return { label, detail: `Received ${naira(view.paidKobo)}. Thank you.` }
  if (view.state === 'expired')
    return { label, detail: 'This payment link has expired. Do not send money to this account.' }
  if (view.state === 'cancelled')
    return { label, detail: 'This payment was cancelled. Do not send money to this account.' }
  return { label, detail: 'Send the amount by bank transfer to the account below.' }
}

function layout(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en-NG">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="stylesheet" href="/checkout-assets/checkout.css">
<script src="/checkout-assets/checkout.js" defer></script>
</head>
<body>
${body}
</body>
</html>
`.markup
}

/** The plain page of an unknown, long-expired or malformed token: the same for all three. */
export function notFoundPage(): string {
  return layout(
    'Payment link not found',
    html`<main class="card"><h1>Payment link not found</h1><p>Check the link you were given, or ask the merchant for a new one.</p></main>`,
  )
}

const NOTICES: Record<string, string> = {
  sent: 'Simulated transfer sent. The status updates once the bank confirms it.',
  amount: 'Enter an amount in naira, such as 1500 or 1500.50.',
  failed: 'The sandbox bank did not take the transfer. Try again.',
}

/** The page of a token at `pagePath` (/checkout/{token} or /pay/{token}); its status and simulate paths hang below it. */
export function checkoutPage(pagePath: string, view: CheckoutView, notice: string | undefined): string {
  const status = statusText(view)
  const open = view.state === 'awaiting_payment' || view.state === 'partially_paid'
  const body = html`<main class="card" data-status-url="${pagePath}/status" data-state="${view.state}" data-return-url="${view.returnUrl ?? ''}">
<header>
<p class="merchant">${view.merchantName}</p>
<h1>${view.title}</h1>
${view.details ? html`<p class="details">${view.details}</p>` : ''}
${view.lines.length > 0 ? html`<dl class="lines">${view.lines.map((line) => html`<dt>${line.label}</dt><dd>${line.value}</dd>`)}</dl>` : ''}
${view.items.length > 0 ? itemsTable(view.items) : ''}
</header>
<p class="amount">${view.amountKobo === null ? 'Any amount' : naira(view.amountKobo)}</p>
<div id="status" class="status status-${view.state}" role="status" aria-live="polite"><strong id="status-label">${status.label}</strong> <span id="status-detail">${status.detail}</span></div>
${notice && NOTICES[notice] ? html`<p class="notice">${NOTICES[notice]}</p>` : ''}
${open ? accountSection(view) : ''}
${view.returnUrl && view.state === 'paid' ? html`<p><a id="return-link" href="${view.returnUrl}">Return to ${view.merchantName}</a></p>` : ''}
${open && view.sandbox ? simulateForm(pagePath, view) : ''}
<footer><p>Secured by Rail. Only pay into the account shown on this page.</p></footer>
</main>`
  return layout(`Pay ${view.merchantName}`, body)
}

/** An invoice's billed lines: what, how many at how much, and the line's total. */
function itemsTable(items: CheckoutView['items']): Html {
  return html`<table class="items">
<caption>What is billed</caption>
<thead><tr><th scope="col">Item</th><th scope="col">Quantity</th><th scope="col">Total</th></tr></thead>
<tbody>${items.map(
    (item) =>
      html`<tr><th scope="row" class="item-description">${item.description}</th><td class="item-quantity">${item.quantity} × ${naira(item.unitAmountKobo)}</td><td class="item-total">${naira(item.quantity * item.unitAmountKobo)}</td></tr>`,
  )}</tbody>
</table>`
}

function accountSection(view: CheckoutView): Html {
  return html`<section class="account" aria-labelledby="account-heading">
<h2 id="account-heading">Pay by bank transfer</h2>
<dl>
<dt>Account number</dt>
<dd><span id="account-number" class="account-number">${view.accountNumber}</span> <button type="button" class="copy" data-copy="${view.accountNumber}" hidden>Copy</button><span class="copied" id="copied" aria-live="polite"></span></dd>
<dt>Bank</dt><dd>${view.bankName}</dd>
<dt>Account name</dt><dd>${view.accountName}</dd>
</dl>
${view.expiresAt ? html`<p class="expiry">${view.kind === 'invoice' ? 'Due' : 'Expires'} <time id="expires-at" datetime="${view.expiresAt.toISOString()}">${WHEN.format(view.expiresAt)}</time> <span id="countdown" class="countdown"></span></p>` : ''}
</section>`
}

function simulateForm(pagePath: string, view: CheckoutView): Html {
  const suggestedKobo = view.remainingKobo ?? 100_000
  return html`<form class="simulate" method="post" action="${pagePath}/simulate">
<h2>Sandbox</h2>
<input type="hidden" name="attempt" value="${randomUUID()}">
<label for="simulate-amount">Amount (₦)</label>
<input id="simulate-amount" name="amount" inputmode="decimal" autocomplete="off" value="${(suggestedKobo / 100).toFixed(2)}">
<button type="submit">Simulate a transfer</button>
</form>`
}
