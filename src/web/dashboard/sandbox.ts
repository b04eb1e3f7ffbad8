// Sandbox simulators (sandbox partners only): send an inbound credit into one of the partner's
// accounts, and fund the float. Each calls the same service function as its API route
// (simulate-inbound-credit, fund-float) and is recorded in dashboard_actions. Each form carries a
// random key rendered with the page, so the same form posted twice (a double click, a reload of
// the post) does its work once: the credit's key is claimed as the API claims an Idempotency-Key, the
// funding's is its reference.
import { randomUUID } from 'node:crypto'
import { html } from '../../platform/html.ts'
import { simulateInboundCreditOnce } from '../../collections/credits/service.ts'
import { fundFloat } from '../../money-out/outbound/service.ts'
import { koboOfNaira } from './amounts.ts'
import { runRecorded } from './actions.ts'
import { headers, isUuid, refusedAction, type DashboardRoutes, type FormBody } from './http.ts'
import { csrfField, layout, noticeOf, plainPage, type Chrome } from './layout.ts'

const NOTICES: Record<string, string> = {
  credited:
    'The sandbox bank received the credit and is announcing it to Rail; it appears under Collections within seconds.',
  funded: 'The float is funded.',
}
const PAYER_NAME_MAX = 100

export function registerSandboxPages(routes: DashboardRoutes): void {
  routes.page('/dashboard/sandbox', async (request, reply, visit) => {
    if (!visit.chrome.sandbox) return notSandbox(reply)
    return headers(reply).send(sandboxPage(visit.chrome, noticeOf(NOTICES, request)))
  })
  routes.form('/dashboard/sandbox/inbound-credit', async (_request, reply, visit, body) => {
    if (!visit.chrome.sandbox) return notSandbox(reply)
    const input = creditInput(body)
    if (typeof input === 'string') return headers(reply).code(422).send(plainPage('Not sent', input))
    const action = {
      name: 'sandbox.inbound_credit',
      objectId: null,
      detail: { virtualAccount: input.virtualAccount, amountKobo: input.amountKobo },
    }
    try {
      await runRecorded(
        routes.deps,
        visit,
        action,
        () => simulateInboundCreditOnce(routes.deps.collections, visit.partner, input, `dashboard:${input.key}`),
        (answer) => ({ sessionId: answer.sessionId }),
      )
    } catch (error) {
      return refusedAction(reply, 'Not sent', error)
    }
    return headers(reply).redirect('/dashboard/sandbox?notice=credited', 303)
  })
  routes.form('/dashboard/sandbox/fund-float', async (_request, reply, visit, body) => {
    if (!visit.chrome.sandbox) return notSandbox(reply)
    const amountKobo = koboOfNaira(body.amount)
    if (amountKobo === undefined)
      return headers(reply)
        .code(422)
        .send(plainPage('Not funded', 'Give an amount in naira, such as 50000 or 50,000.00.'))
    if (!isUuid(body.key))
      return headers(reply)
        .code(422)
        .send(plainPage('Not funded', 'This form is incomplete; reload the page and try again.'))
    const { pool, maxAmountKobo } = routes.deps
    const action = { name: 'sandbox.fund_float', objectId: null, detail: { amountKobo, reference: body.key } }
    try {
      await runRecorded(
        routes.deps,
        visit,
        action,
        () => fundFloat(pool, visit.partner.id, amountKobo, `dashboard-${body.key}`, maxAmountKobo),
        (funding) => ({ transferId: funding.transferId, replayed: funding.replayed }),
      )
    } catch (error) {
      return refusedAction(reply, 'Not funded', error)
    }
    return headers(reply).redirect('/dashboard/sandbox?notice=funded', 303)
  })
}

function notSandbox(reply: Parameters<typeof headers>[0]) {
  return headers(reply).code(404).send(plainPage('Not found', 'The simulators are only for sandbox partners.'))
}

/** The credit the form asks for, or why it cannot be sent. */
function creditInput(
  body: FormBody,
): { virtualAccount: string; amountKobo: number; payerName?: string; key: string } | string {
  const virtualAccount = (body.virtualAccount ?? '').trim()
  if (!/^\d{10}$/.test(virtualAccount)) return 'The account number is 10 digits.'
  const amountKobo = koboOfNaira(body.amount)
  if (amountKobo === undefined) return 'Give an amount in naira, such as 12500 or 12,500.50.'
  const payerName = (body.payerName ?? '').trim()
  // eslint-disable-next-line no-control-regex
  if (payerName.length > PAYER_NAME_MAX || /[\u0000-\u001f\u007f]/.test(payerName))
    return `The payer's name is at most ${PAYER_NAME_MAX} printable characters.`
  if (!isUuid(body.key)) return 'This form is incomplete; reload the page and try again.'
  return { virtualAccount, amountKobo, ...(payerName ? { payerName } : {}), key: body.key }
}

function sandboxPage(chrome: Chrome, notice: ReturnType<typeof noticeOf>): string {
  return layout(
    'Sandbox simulators',
    html`${notice}
<section aria-labelledby="credit"><h2 id="credit">Send an inbound credit</h2>
<p>Someone pays into one of your virtual accounts (or a wallet's account number) at the sandbox bank, which announces it to Rail as a real bank would.</p>
<form method="post" action="/dashboard/sandbox/inbound-credit" id="inbound-credit">${csrfField(chrome)}<input type="hidden" name="key" value="${randomUUID()}">
<label>Account number <input name="virtualAccount" inputmode="numeric" pattern="[0-9]{10}" maxlength="10" required></label>
<label>Amount (₦) <input name="amount" inputmode="decimal" required></label>
<label>Payer's name (optional) <input name="payerName" maxlength="${PAYER_NAME_MAX}"></label>
<button type="submit">Send the credit</button></form></section>
<section aria-labelledby="float"><h2 id="float">Fund the float</h2>
<p>Moves money from your sandbox settlement account to your float, which payouts draw on.</p>
<form method="post" action="/dashboard/sandbox/fund-float" id="fund-float">${csrfField(chrome)}<input type="hidden" name="key" value="${randomUUID()}">
<label>Amount (₦) <input name="amount" inputmode="decimal" required></label>
<button type="submit">Fund the float</button></form></section>`,
    chrome,
  )
}
