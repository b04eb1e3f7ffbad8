// The pages of outbound transfers: the filtered list, and a transfer with its timeline (its
// states, every call Rail made to the bank for it — the send and each requery — and the callbacks
// the partner was sent), and in the sandbox the settlement simulator.
import { html, type Html } from '../../platform/html.ts'
import type { OutboundTransfer, StateMoment } from '../../money-out/outbound/service.ts'
import type { ProviderCall, ProviderHealthReading } from '../../banking/providers/service.ts'
import { csrfField, layout, naira, when, type Chrome } from './layout.ts'
import { filterSelect, findPage } from './lists.ts'

export const OUTBOUND_STATES = ['pending', 'submitted', 'confirmed', 'failed', 'unknown', 'reversed'] as const

export interface TransferFilter {
  state?: string
  reference?: string
  /** Lagos days, YYYY-MM-DD, both included. */
  from?: string
  to?: string
}

/** A callback about the transfer: the event, and how its delivery stands. */
export interface TransferCallback {
  eventId: string
  type: string
  deliveryStatus: string
  createdAt: Date
}

export function transfersPage(
  chrome: Chrome,
  filter: TransferFilter,
  transfers: readonly OutboundTransfer[],
  nextCursor: string | null,
): string {
  return findPage(chrome, {
    title: 'Outbound transfers',
    path: '/dashboard/transfers',
    fields: html`${filterSelect('State', 'state', OUTBOUND_STATES, filter.state)}
<label>Reference <input name="reference" value="${filter.reference ?? ''}" maxlength="100"></label>
<label>From <input type="date" name="from" value="${filter.from ?? ''}"></label>
<label>To <input type="date" name="to" value="${filter.to ?? ''}"></label>`,
    filter: { ...filter },
    rows: transfers,
    row: (
      transfer,
    ) => html`<li><a href="/dashboard/transfers/${transfer.id}" class="reference">${transfer.clientReference}</a>
<span class="state">${transfer.state}</span> <span class="amount">${naira(transfer.amountKobo)}</span> to <span class="beneficiary">${transfer.beneficiaryAccountName}</span>
<span class="when">${when(transfer.createdAt)}</span></li>`,
    empty: 'No outbound transfers match.',
    nextCursor,
    older: 'Older transfers',
  })
}

interface Moment {
  at: Date
  kind: 'state' | 'bank' | 'callback'
  label: Html
}

const OPERATION_LABELS: Record<string, string> = {
  payout: 'Sent to the bank',
  requery: 'Asked the bank (requery)',
  register_payout_outcome: 'Sandbox outcome registered',
}

function bankMoment(call: ProviderCall): Moment {
  const answer =
    call.httpStatus === null
      ? `no answer (${call.error ?? 'network error'})`
      : `HTTP ${call.httpStatus}${call.responseCode ? `, code ${call.responseCode}` : ''}`
  const label = OPERATION_LABELS[call.operation] ?? call.operation
  return {
    at: call.at,
    kind: 'bank',
    label: html`${label} (${call.provider}): ${call.outcome}, ${answer}, ${call.latencyMs} ms`,
  }
}

/** Everything known of the transfer's life, oldest first: each state it was in, each bank call, each callback. */
export function timelineOf(
  states: readonly StateMoment[],
  calls: readonly ProviderCall[],
  callbacks: readonly TransferCallback[],
): Moment[] {
  const moments: Moment[] = states.map((moment, index) => ({
    at: moment.at,
    kind: 'state',
    label:
      index === 0
        ? html`Created (<span class="state-name">${moment.state}</span>)`
        : html`State <span class="state-name">${moment.state}</span>`,
  }))
  moments.push(...calls.map(bankMoment))
  for (const callback of callbacks) {
    moments.push({
      at: callback.createdAt,
      kind: 'callback',
      label: html`Callback <a href="/dashboard/events/${callback.eventId}">${callback.type}</a>: ${callback.deliveryStatus}`,
    })
  }
  // Stable: at one instant, the order above (state, then bank, then callback) stands.
  return moments
    .map((moment, index) => ({ moment, index }))
    .sort((a, b) => a.moment.at.getTime() - b.moment.at.getTime() || a.index - b.index)
    .map(({ moment }) => moment)
}

export function transferPage(
  chrome: Chrome,
  transfer: OutboundTransfer,
  timeline: readonly Moment[],
  notice: Html | '',
  health?: ProviderHealthReading,
): string {
  return layout(
    `Transfer ${transfer.clientReference}`,
    html`<dl>
<div><dt>State</dt><dd id="transfer-state">${transfer.state}</dd></div>
<div><dt>Amount</dt><dd id="transfer-amount">${naira(transfer.amountKobo)}</dd></div>
<div><dt>Beneficiary</dt><dd id="beneficiary">${transfer.beneficiaryAccountName} · ${transfer.beneficiaryAccountNumber} (bank ${transfer.beneficiaryBankCode})</dd></div>
<div><dt>Narration</dt><dd id="narration">${transfer.narration ?? '—'}</dd></div>
<div><dt>Provider</dt><dd id="transfer-provider">${transfer.provider}${health ? html` (<span id="provider-health">${health.healthy ? 'healthy' : 'unhealthy'}</span>: ${health.unanswered} of ${health.calls} calls unanswered in the last ${health.windowS / 60} minutes${health.failingOperation ? `; ${health.failingOperation} failing` : ''})` : ''}</dd></div>
${transfer.failureReason ? html`<div><dt>Failure</dt><dd>${transfer.failureReason.message} (${transfer.failureReason.code})</dd></div>` : ''}
</dl>
<h2>Timeline</h2>
<ol id="timeline">${timeline.map((moment) => html`<li class="${moment.kind}"><span class="label">${moment.label}</span> <time datetime="${moment.at.toISOString()}">${when(moment.at)}</time></li>`)}</ol>
${notice}
${chrome.sandbox && transfer.state === 'submitted' ? simulatorForm(chrome, transfer) : ''}`,
    chrome,
  )
}

/** Sandbox only: settle a submitted transfer as the bank would (confirmed or failed). */
function simulatorForm(chrome: Chrome, transfer: OutboundTransfer): Html {
  return html`<h2>Sandbox simulator</h2>
<form method="post" action="/dashboard/transfers/${transfer.id}/settle" id="simulator">
${csrfField(chrome)}
<button type="submit" name="outcome" value="confirmed">Settle as confirmed</button>
<button type="submit" name="outcome" value="failed">Settle as failed</button>
</form>`
}
