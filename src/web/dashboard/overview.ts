// The overview (/dashboard): the partner's balances, today's volumes (the Lagos day so far) and
// what needs attention.
import { html } from '../../platform/html.ts'
import { countRetryingEvents, listEvents } from '../../events/service.ts'
import { listTriage, receivedVolume } from '../../collections/credits/service.ts'
import { listOutbound, outboundVolume, type OutboundVolume } from '../../money-out/outbound/service.ts'
import { partnerBalances, type PartnerBalances } from '../../statements/service.ts'
import { lagosDayEnd, lagosDayStart, lagosToday } from './dates.ts'
import { headers, type DashboardRoutes } from './http.ts'
import { layout, naira, type Chrome } from './layout.ts'

const ATTENTION_PAGE = 100

export interface Attention {
  unknownPayouts: number
  unmatchedCredits: number
  /** Events whose delivery failed for good, and events being retried after a failed attempt. */
  failingWebhooks: number
  retryingWebhooks: number
  /** True when a count stopped at the page size (shown as "100+"). */
  more: { unknownPayouts: boolean; unmatchedCredits: boolean; failingWebhooks: boolean; retryingWebhooks: boolean }
}

/** Today's volumes: what was sent (payouts created today) and received (credits received today). */
export interface TodaysVolumes {
  day: string
  sent: OutboundVolume
  received: { count: number; amountKobo: number; unmatchedCount: number }
}

export function registerOverviewPage(routes: DashboardRoutes): void {
  const { pool, clock } = routes.deps
  routes.page('/dashboard', async (_request, reply, visit) => {
    const partnerId = visit.partner.id
    const day = lagosToday(clock.now())
    const [from, before] = [lagosDayStart(day)!, lagosDayEnd(day)!]
    const [balances, sent, received, unknown, unmatched, failing, retrying] = await Promise.all([
      partnerBalances(pool, partnerId),
      outboundVolume(pool, partnerId, from, before),
      receivedVolume(pool, partnerId, from, before),
      listOutbound(pool, { partnerId, state: 'unknown', limit: ATTENTION_PAGE }),
      listTriage(pool, { partnerId, status: 'unmatched', limit: ATTENTION_PAGE }),
      listEvents(pool, { partnerId, deliveryStatus: 'failed', limit: ATTENTION_PAGE }),
      countRetryingEvents(pool, partnerId, ATTENTION_PAGE + 1),
    ])
    const attention = {
      unknownPayouts: unknown.transfers.length,
      unmatchedCredits: unmatched.data.length,
      failingWebhooks: failing.events.length,
      retryingWebhooks: Math.min(retrying, ATTENTION_PAGE),
      more: {
        unknownPayouts: unknown.nextCursor !== null,
        unmatchedCredits: unmatched.nextCursor !== null,
        failingWebhooks: failing.nextCursor !== null,
        retryingWebhooks: retrying > ATTENTION_PAGE,
      },
    }
    return headers(reply).send(overviewPage(visit.chrome, balances, { day, sent, received }, attention))
  })
}

function count(value: number, more: boolean): string {
  return more ? `${value}+` : String(value)
}

export function overviewPage(
  chrome: Chrome,
  balances: PartnerBalances,
  today: TodaysVolumes,
  attention: Attention,
): string {
  const rows: [string, string, string][] = [
    ['float-available', 'Float available', naira(balances.float.availableKobo)],
    ['float-booked', 'Float booked', naira(balances.float.bookedKobo)],
    ['collections', 'Collections awaiting settlement', naira(balances.collections.awaitingSettlementKobo)],
    ['escrow', 'Held in escrow', naira(balances.escrow.heldKobo)],
    [
      'pending-payouts',
      `Payouts in flight (${balances.pendingPayouts.count})`,
      naira(balances.pendingPayouts.amountKobo),
    ],
  ]
  return layout(
    'Overview',
    html`<section aria-labelledby="balances"><h2 id="balances">Balances</h2><dl>
${rows.map(([id, label, value]) => html`<div><dt>${label}</dt><dd id="${id}">${value}</dd></div>`)}</dl></section>
<section aria-labelledby="today"><h2 id="today">Today (${today.day}, Lagos time)</h2><dl>
<div><dt>Payouts made</dt><dd id="today-sent"><a href="/dashboard/transfers?from=${today.day}&amp;to=${today.day}">${today.sent.count}</a> · ${naira(today.sent.amountKobo)}</dd></div>
<div><dt>Payouts confirmed</dt><dd id="today-confirmed">${today.sent.confirmedCount} · ${naira(today.sent.confirmedKobo)}</dd></div>
<div><dt>Payouts failed</dt><dd id="today-failed">${today.sent.failedCount}</dd></div>
<div><dt>Credits received</dt><dd id="today-received">${today.received.count} · ${naira(today.received.amountKobo)}</dd></div>
<div><dt>Of them unmatched</dt><dd id="today-unmatched">${today.received.unmatchedCount}</dd></div>
</dl></section>
<section aria-labelledby="attention"><h2 id="attention">Needs attention</h2><ul>
<li><a href="/dashboard/transfers?state=unknown">Payouts in unknown state</a>: <span id="unknown-payouts">${count(attention.unknownPayouts, attention.more.unknownPayouts)}</span></li>
<li><a href="/dashboard/unmatched">Unmatched credits</a>: <span id="unmatched-credits">${count(attention.unmatchedCredits, attention.more.unmatchedCredits)}</span></li>
<li><a href="/dashboard/events?delivery=retrying">Events being retried after a failed webhook attempt</a>: <span id="retrying-webhooks">${count(attention.retryingWebhooks, attention.more.retryingWebhooks)}</span></li>
<li><a href="/dashboard/events?delivery=failed">Events whose webhook delivery failed</a>: <span id="failing-webhooks">${count(attention.failingWebhooks, attention.more.failingWebhooks)}</span></li>
</ul></section>`,
    chrome,
  )
}
