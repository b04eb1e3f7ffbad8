// The settings page (default callback URL and credentials) and the one page that shows a rotated
// credential's new secret. Rail keeps no secret it could show again, so that page is the only time
// the secret is ever seen: it answers the POST itself (never a redirect or a URL), with no-store.
import { randomUUID } from 'node:crypto'
import { html, type Html } from '../../platform/html.ts'
import type { CredentialKind, CredentialSummary, Partner } from '../../partners/service.ts'
import { csrfField, layout, when, type Chrome } from './layout.ts'

/** Each credential a partner can rotate, by its form value. */
export const ROTATABLE: Record<string, { kind: CredentialKind; label: string; noun: string; use: string }> = {
  'request-signing': {
    kind: 'request_signing',
    label: 'Request-signing secret',
    noun: 'request-signing secret',
    use: 'With its key id, it signs your API requests.',
  },
  'escrow-api-key': {
    kind: 'escrow_api_key',
    label: 'Escrow API key',
    noun: 'escrow API key',
    use: 'It authenticates your calls to the escrow API.',
  },
  'callback-signing': {
    kind: 'callback_signing',
    label: 'Callback signing secret',
    noun: 'callback signing secret',
    use: 'Rail signs the callbacks it sends you with it.',
  },
}

/** How long the credential being replaced keeps working, in hours (the service allows up to 30 days). */
export const OVERLAP_HOURS = ['24', '1', '0', '168', '720'] as const
const OVERLAP_LABELS: Record<(typeof OVERLAP_HOURS)[number], string> = {
  '24': '24 hours',
  '1': '1 hour',
  '0': 'none: it stops at once',
  '168': '7 days',
  '720': '30 days',
}

export interface SettingsView {
  partner: Partner
  disabled: { disabledAt: Date; reason: string } | undefined
  credentials: readonly CredentialSummary[]
}

function callbackSection(chrome: Chrome, view: SettingsView): Html {
  const { partner, disabled } = view
  return html`<section aria-labelledby="callback"><h2 id="callback">Default callback URL</h2>
<p>Events of objects that name no callback URL of their own are delivered here.</p>
<dl><div><dt>Now</dt><dd id="callback-url">${partner.callbackUrl ?? 'none: such events are recorded but not delivered'}</dd></div>
${disabled ? html`<div><dt>Stopped</dt><dd id="callback-disabled">since ${when(disabled.disabledAt)}: ${disabled.reason}. Save the URL again to resume deliveries.</dd></div>` : ''}</dl>
<form method="post" action="/dashboard/settings/callback-url" id="callback-form">
${csrfField(chrome)}
<label>Callback URL <input name="callbackUrl" type="url" value="${partner.callbackUrl ?? ''}" maxlength="2048" required></label>
<button type="submit">Save callback URL</button></form>
${
  partner.callbackUrl === null
    ? ''
    : html`<form method="post" action="/dashboard/settings/callback-url" id="callback-remove">
${csrfField(chrome)}<input type="hidden" name="remove" value="1">
<button type="submit">Remove callback URL</button></form>`
}
</section>`
}

function credentialItem(credential: CredentialSummary): Html {
  // Only a key id and an API key's first characters may be shown; a secret never.
  const name = credential.keyId ?? (credential.apiKeyPrefix ? `${credential.apiKeyPrefix}…` : 'whsec_… (not shown)')
  const until = credential.expiresAt
    ? html`valid until <time datetime="${credential.expiresAt.toISOString()}">${when(credential.expiresAt)}</time>`
    : 'no end'
  return html`<li><span class="credential-name">${name}</span> · created ${when(credential.createdAt)} · <span class="credential-until">${until}</span></li>`
}

function rotateForm(chrome: Chrome, value: string, credentials: readonly CredentialSummary[]): Html {
  const { kind, label, noun, use } = ROTATABLE[value]!
  const live = credentials.filter((credential) => credential.kind === kind)
  return html`<section aria-labelledby="${value}" class="credential"><h3 id="${value}">${label}</h3>
<p>${use} Live now:</p>
<ul class="list" id="${value}-live">${live.map(credentialItem)}</ul>
<form method="post" action="/dashboard/settings/rotate" id="rotate-${value}">
${csrfField(chrome)}<input type="hidden" name="credential" value="${value}"><input type="hidden" name="reference" value="${randomUUID()}">
<label>The one it replaces keeps working for <select name="overlapHours">${OVERLAP_HOURS.map((hours) => html`<option value="${hours}">${OVERLAP_LABELS[hours]}</option>`)}</select></label>
<button type="submit">Rotate ${noun}</button></form></section>`
}

export function settingsPage(chrome: Chrome, view: SettingsView, notice: Html | ''): string {
  return layout(
    'Settings',
    html`${notice}<dl>
<div><dt>Partner</dt><dd id="settings-name">${view.partner.name}</dd></div>
<div><dt>Environment</dt><dd id="settings-environment">${view.partner.environment}</dd></div>
<div><dt>Partner id</dt><dd id="settings-partner-id">${view.partner.id}</dd></div>
</dl>
${callbackSection(chrome, view)}
<section aria-labelledby="credentials"><h2 id="credentials">Credentials</h2>
<p>Rotating issues a new secret, shown once on the next page and never again; the one it replaces keeps working for the overlap you choose.</p>
${Object.keys(ROTATABLE).map((value) => rotateForm(chrome, value, view.credentials))}</section>`,
    chrome,
  )
}

/** What a rotation issued: shown on this page once. */
export interface IssuedSecret {
  /** What was rotated, in running text: `escrow API key`. */
  noun: string
  /** The request-signing key id that goes with the secret; absent for the other kinds. */
  keyId?: string
  secret: string
  previousValidUntil: Date
}

export function newSecretPage(chrome: Chrome, issued: IssuedSecret): string {
  return layout(
    `New ${issued.noun}`,
    html`<p id="notice" role="status">Copy it now: Rail shows it this once and never again, and keeps no copy it could show.</p>
<dl>
${issued.keyId ? html`<div><dt>Key id</dt><dd id="new-key-id">${issued.keyId}</dd></div>` : ''}
<div><dt>New secret</dt><dd><code id="new-secret">${issued.secret}</code></dd></div>
<div><dt>The one it replaces works until</dt><dd id="previous-valid-until"><time datetime="${issued.previousValidUntil.toISOString()}">${when(issued.previousValidUntil)}</time></dd></div>
</dl>
<p><a href="/dashboard/settings">Back to settings</a></p>`,
    chrome,
  )
}
