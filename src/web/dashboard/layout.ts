// The dashboard's page frame and formatting, shared by every area: the navigation, the signed-in
// partner, sign-out, and naira and Lagos-time formatting. Every partner-supplied text reaches the
// page through the escaping `html` template. No script at all: links and form posts only.
import { html, type Html } from '../../platform/html.ts'

const NAIRA = new Intl.NumberFormat('en-NG', { style: 'currency', currency: 'NGN' })
const WHEN = new Intl.DateTimeFormat('en-NG', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'Africa/Lagos' })

/** Every area of the dashboard, in the order of the navigation bar. */
export const NAV: readonly { href: string; label: string; sandboxOnly?: true }[] = [
  { href: '/dashboard', label: 'Overview' },
  { href: '/dashboard/transfers', label: 'Outbound transfers' },
  { href: '/dashboard/collections', label: 'Collections' },
  { href: '/dashboard/unmatched', label: 'Unmatched credits' },
  { href: '/dashboard/invoices', label: 'Invoices' },
  { href: '/dashboard/escrows', label: 'Escrows' },
  { href: '/dashboard/events', label: 'Events' },
  { href: '/dashboard/settings', label: 'Settings' },
  { href: '/dashboard/sandbox', label: 'Sandbox simulators', sandboxOnly: true },
]

export function naira(amountKobo: number): string {
  return NAIRA.format(amountKobo / 100)
}

export function when(date: Date): string {
  return WHEN.format(date)
}

/** One line of a page's definition list: its label, and its value under an id tests and people can find. */
export function row(id: string, label: string, value: Html | string): Html {
  return html`<div><dt>${label}</dt><dd id="${id}">${value}</dd></div>`
}

/** The rows of the moments that happened (a null date did not), each as a machine-readable time. */
export function dateRows(moments: readonly [id: string, label: string, at: Date | null][]): Html {
  return html`${moments.filter(([, , at]) => at !== null).map(([id, label, at]) => row(id, label, html`<time datetime="${at!.toISOString()}">${when(at!)}</time>`))}`
}

/** Who paid: the name the bank gave (or "Not given"), and the account and bank when known. */
export function payerText(name: string | null, accountNumber: string | null, bankCode: string | null): string {
  return `${name ?? 'Not given'}${accountNumber ? ` · ${accountNumber}${bankCode ? ` (bank ${bankCode})` : ''}` : ''}`
}

/** What every signed-in page shows around its content. */
export interface Chrome {
  partnerName: string
  /** Who signed in, when the sign-in link named them. */
  operator: string | null
  csrfToken: string
  sandbox: boolean
}

/** The hidden field every state-changing form carries. */
export function csrfField(chrome: Chrome): Html {
  return html`<input type="hidden" name="csrf" value="${chrome.csrfToken}">`
}

export function layout(title: string, body: Html, chrome?: Chrome): string {
  const nav = chrome
    ? html`<header><nav>${NAV.filter((item) => chrome.sandbox || !item.sandboxOnly).map((item) => html`<a href="${item.href}">${item.label}</a> `)}</nav>
<p class="who">Signed in as <strong id="partner-name">${chrome.partnerName}</strong>${chrome.operator ? html` (<span id="operator">${chrome.operator}</span>)` : ''}</p>
<form method="post" action="/dashboard/sign-out">${csrfField(chrome)}<button type="submit">Sign out</button></form></header>`
    : ''
  return html`<!doctype html>
<html lang="en-NG">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · Rail dashboard</title>
<link rel="stylesheet" href="/dashboard-assets/dashboard.css">
</head>
<body>
${nav}
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.markup
}

/** The one page for refused links, forged sessions, refused forms and unknown objects: it says what to do next. */
export function plainPage(title: string, message: string): string {
  return layout(title, html`<p id="message">${message}</p>`)
}

/** A one-line notice after an action (shown once, from the `notice` query parameter naming a fixed message). */
export function noticeOf(notices: Record<string, string>, request: { query: unknown }): Html | '' {
  const key = (request.query as { notice?: unknown }).notice
  const message = typeof key === 'string' && Object.hasOwn(notices, key) ? notices[key] : undefined
  return message ? html`<p id="notice" role="status">${message}</p>` : ''
}
