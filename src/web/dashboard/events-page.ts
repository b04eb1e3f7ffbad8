// The events list and an event's page. The payload is the delivered JSON body, pretty-printed;
// it, the URLs, errors and response excerpts are partner- or receiver-supplied text, escaped by
// the `html` template like everything else.
import { randomUUID } from 'node:crypto'
import { html, type Html } from '../../platform/html.ts'
import { EVENT_DELIVERY_FAILED, type EventView } from '../../events/service.ts'
import { csrfField, layout, when, type Chrome } from './layout.ts'
import { filterSelect, findPage } from './lists.ts'

const EVENT_DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'skipped'] as const
/** The list's delivery filter: a delivery status, or `retrying` (pending after a failed attempt: what the overview counts). */
export const EVENT_DELIVERY_FILTERS = [...EVENT_DELIVERY_STATUSES, 'retrying'] as const
export type EventDeliveryFilter = (typeof EVENT_DELIVERY_FILTERS)[number]

export interface EventFilter {
  kind?: string
  delivery?: EventDeliveryFilter
}

type EventRecord = EventView['event']
type DeliveryView = EventView['deliveries'][number]
type AttemptView = DeliveryView['attempts'][number]

const DELIVERY_LABELS: Record<(typeof EVENT_DELIVERY_STATUSES)[number], string> = {
  pending: 'pending (attempts continue)',
  delivered: 'delivered',
  failed: 'failed',
  skipped: 'skipped (no callback URL)',
}

export function eventsPage(
  chrome: Chrome,
  filter: EventFilter,
  events: readonly EventRecord[],
  nextCursor: string | null,
): string {
  return findPage(chrome, {
    title: 'Events',
    path: '/dashboard/events',
    fields: html`<label>Kind <input name="kind" value="${filter.kind ?? ''}" maxlength="100"></label>
${filterSelect('Delivery', 'delivery', EVENT_DELIVERY_FILTERS, filter.delivery)}`,
    filter: { ...filter },
    rows: events,
    row: (event) => html`<li><a href="/dashboard/events/${event.id}" class="kind">${event.type}</a>
<span class="state">${event.deliveryStatus}</span> · <span class="object">${event.objectType} ${event.objectId}</span>
· <span class="when">${when(event.createdAt)}</span></li>`,
    listId: 'events',
    empty: 'No events match.',
    nextCursor,
    older: 'Older events',
  })
}

/** The delivered body as the receiver got it, indented for reading. */
function prettyPayload(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2)
  } catch {
    return body
  }
}

function attemptItem(attempt: AttemptView): Html {
  const outcome =
    attempt.statusCode !== null
      ? html`HTTP <span class="status-code">${attempt.statusCode}</span>`
      : html`<span class="error">${attempt.error ?? 'no answer'}</span>`
  return html`<li class="attempt"><dl>
<div><dt>Attempt</dt><dd class="attempt-number">${attempt.attemptNumber}</dd></div>
<div><dt>When</dt><dd><time datetime="${attempt.startedAt.toISOString()}">${when(attempt.startedAt)}</time></dd></div>
<div><dt>URL</dt><dd class="url">${attempt.url}</dd></div>
<div><dt>Answer</dt><dd class="outcome">${outcome}</dd></div>
<div><dt>Latency</dt><dd class="latency">${attempt.durationMs} ms</dd></div>
<div><dt>Response excerpt</dt><dd>${attempt.responseExcerpt === null ? '—' : html`<pre class="excerpt">${attempt.responseExcerpt}</pre>`}</dd></div>
</dl></li>`
}

function deliverySection(delivery: DeliveryView, index: number): Html {
  const ended = delivery.deliveredAt ?? delivery.failedAt
  return html`<section class="delivery" aria-labelledby="delivery-${index}"><h3 id="delivery-${index}">Delivery ${index + 1}</h3><dl>
<div><dt>To</dt><dd class="url">${delivery.url}</dd></div>
<div><dt>Status</dt><dd class="delivery-status">${delivery.status}</dd></div>
${delivery.status === 'pending' ? html`<div><dt>Next attempt</dt><dd>${when(delivery.nextAttemptAt)}</dd></div>` : ''}
${ended ? html`<div><dt>Ended</dt><dd>${when(ended)}</dd></div>` : ''}
</dl>
${delivery.attempts.length === 0 ? html`<p>No attempt yet.</p>` : html`<ol class="attempts">${delivery.attempts.map(attemptItem)}</ol>`}</section>`
}

function redeliverForm(chrome: Chrome, event: EventRecord): Html {
  return html`<form method="post" action="/dashboard/events/${event.id}/redeliver" id="redeliver">
${csrfField(chrome)}<input type="hidden" name="reference" value="${randomUUID()}">
<button type="submit">Redeliver</button></form>`
}

function neverDelivered(event: EventRecord): string {
  return event.type === EVENT_DELIVERY_FAILED
    ? 'A record only: Rail delivers this kind of event nowhere.'
    : 'Never delivered: there was no callback URL when it happened.'
}

export function eventPage(chrome: Chrome, view: EventView, notice: Html | ''): string {
  const { event } = view
  return layout(
    `Event ${event.type}`,
    html`<dl>
<div><dt>Kind</dt><dd id="event-kind">${event.type}</dd></div>
<div><dt>Time</dt><dd id="event-time"><time datetime="${event.createdAt.toISOString()}">${when(event.createdAt)}</time></dd></div>
<div><dt>About</dt><dd id="event-object">${event.objectType} ${event.objectId}</dd></div>
<div><dt>Delivery</dt><dd id="event-delivery">${DELIVERY_LABELS[event.deliveryStatus]}</dd></div>
<div><dt>Event id</dt><dd id="event-id">${event.id}</dd></div>
</dl>
${notice}
${event.type === EVENT_DELIVERY_FAILED ? '' : redeliverForm(chrome, event)}
<h2>Payload</h2>
<pre id="payload">${prettyPayload(event.body)}</pre>
<h2>Deliveries</h2>
${view.deliveries.length === 0 ? html`<p id="no-deliveries">${neverDelivered(event)}</p>` : view.deliveries.map(deliverySection)}`,
    chrome,
  )
}
