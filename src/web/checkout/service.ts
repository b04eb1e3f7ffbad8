// Hosted checkout: what a payer's page shows for a checkout token. The token is the only
// credential, so a page shows the one object it names (an intent, or the invoice or escrow that
// composed it) and nothing else of the partner. Every token is an intent's: invoices and escrows
// hand out the token of the payment intent they compose, so both page paths serve every token.
import { getEscrowById } from '../../escrow/service.ts'
import { simulateInboundCreditOnce, type InboundDeps } from '../../collections/credits/service.ts'
import { getInvoiceById, type LineItem } from '../../invoices/service.ts'
import { getPartner } from '../../partners/service.ts'
import { getIntentByCheckoutToken, type IntentView } from '../../collections/intents/service.ts'
import type { Clock } from '../../platform/clock.ts'
import type { Pool, Queryable } from '../../platform/db.ts'
import { partnerClockById } from '../../partners/sandbox-clock/service.ts'
import { bankName } from '../../collections/virtual-accounts/service.ts'

/** `cht_` and 32 random bytes in base64url (collections/intents/service.ts); anything else is malformed. */
const TOKEN_PATTERN = /^cht_[A-Za-z0-9_-]{43}$/
/** An expired object's page stays this long after its expiry, then the token answers 404 like an unknown one. */
export const EXPIRED_PAGE_KEPT_MS = 30 * 24 * 60 * 60 * 1000

export type CheckoutState = 'awaiting_payment' | 'partially_paid' | 'paid' | 'expired' | 'cancelled'
export type CheckoutKind = 'payment_intent' | 'invoice' | 'escrow'

/** Everything a checkout page shows; partner-supplied texts are raw here and escaped by the page. */
export interface CheckoutView {
  kind: CheckoutKind
  merchantName: string
  title: string
  details: string | null
  /** Extra labelled lines (an invoice's customer and due date). */
  lines: { label: string; value: string }[]
  /** What an invoice bills, line by line (empty otherwise). */
  items: LineItem[]
  amountKobo: number | null
  paidKobo: number
  remainingKobo: number | null
  state: CheckoutState
  accountNumber: string
  accountName: string
  bankName: string
  /** When payment stops being taken; null when it is not due by any time (an undated invoice). */
  expiresAt: Date | null
  returnUrl: string | null
  /** Sandbox partners' pages offer to simulate a transfer. */
  sandbox: boolean
}

export interface CheckoutDeps {
  pool: Pool
  clock: Clock
  /** The collections path a simulated transfer takes (the simulate-inbound-credit route's). */
  inbound: InboundDeps
  /** The largest amount of one instruction (RAIL_MAX_AMOUNT_KOBO), which the simulate-inbound-credit route also holds a transfer to. */
  maxAmountKobo: number
}

/** The page of a token: undefined for a malformed or unknown token, and for one expired long ago. */
export async function checkoutView(
  deps: Pick<CheckoutDeps, 'pool' | 'clock'>,
  token: string,
): Promise<CheckoutView | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined
  const view = await getIntentByCheckoutToken(deps.pool, token)
  if (!view) return undefined
  const now = (await partnerClockById(deps.pool, deps.clock, view.intent.partnerId)).now()
  const page = await pageOf(deps.pool, view, now)
  if (!page) return undefined
  if (page.state === 'expired' && page.expiresAt && now.getTime() - page.expiresAt.getTime() > EXPIRED_PAGE_KEPT_MS)
    return undefined
  return page
}

async function pageOf(db: Queryable, view: IntentView, now: Date): Promise<CheckoutView | undefined> {
  const { intent, account } = view
  const partner = await getPartner(db, intent.partnerId)
  if (!partner) return undefined
  const base = {
    merchantName: intent.merchantDisplayName,
    lines: [],
    items: [],
    accountNumber: account.accountNumber,
    accountName: account.accountName,
    bankName: bankName(account.bankCode),
    returnUrl: intent.returnUrl,
    sandbox: partner.environment === 'sandbox',
  }
  if (intent.ownerType === 'invoice' && intent.ownerId) return invoicePage(db, base, intent.partnerId, intent.ownerId)
  if (intent.ownerType === 'escrow' && intent.ownerId)
    return escrowPage(db, base, intent.partnerId, intent.ownerId, view)
  const lapsed = intent.expiresAt.getTime() <= now.getTime()
  const state: CheckoutState =
    intent.status === 'paid' || intent.status === 'overpaid'
      ? 'paid'
      : intent.status === 'expired' || lapsed
        ? 'expired'
        : intent.status === 'partially_paid'
          ? 'partially_paid'
          : 'awaiting_payment'
  return {
    ...base,
    kind: 'payment_intent',
    title: intent.purposeTag ?? `Payment to ${intent.merchantDisplayName}`,
    details: null,
    ...amounts(intent.amountKobo, intent.amountReceivedKobo),
    state,
    expiresAt: intent.expiresAt,
  }
}

type PageBase = Pick<
  CheckoutView,
  'merchantName' | 'lines' | 'items' | 'accountNumber' | 'accountName' | 'bankName' | 'returnUrl' | 'sandbox'
>

function amounts(
  amountKobo: number | null,
  paidKobo: number,
): Pick<CheckoutView, 'amountKobo' | 'paidKobo' | 'remainingKobo'> {
  return { amountKobo, paidKobo, remainingKobo: amountKobo === null ? null : Math.max(0, amountKobo - paidKobo) }
}

async function invoicePage(
  db: Queryable,
  base: PageBase,
  partnerId: string,
  invoiceId: string,
): Promise<CheckoutView | undefined> {
  const invoice = await getInvoiceById(db, partnerId, invoiceId)
  if (!invoice) return undefined
  const states: Record<typeof invoice.status, CheckoutState> = {
    draft: 'awaiting_payment',
    published: 'awaiting_payment',
    partially_paid: 'partially_paid',
    paid: 'paid',
    cancelled: 'cancelled',
  }
  const lines = invoice.customer?.name ? [{ label: 'Billed to', value: invoice.customer.name }] : []
  return {
    ...base,
    kind: 'invoice',
    title: invoice.title,
    details: invoice.description,
    lines,
    items: invoice.lineItems,
    ...amounts(invoice.amountKobo, invoice.amountPaidKobo),
    state: states[invoice.status],
    // Invoices do not expire: a due date is shown, and counted down to, when one was set.
    expiresAt: invoice.dueAt,
  }
}

async function escrowPage(
  db: Queryable,
  base: PageBase,
  partnerId: string,
  escrowId: string,
  view: IntentView,
): Promise<CheckoutView | undefined> {
  const escrow = await getEscrowById(db, partnerId, escrowId)
  if (!escrow) return undefined
  const state: CheckoutState =
    escrow.status === 'initiated'
      ? escrow.fundedAmountKobo > 0
        ? 'partially_paid'
        : 'awaiting_payment'
      : escrow.status === 'funded' || escrow.status === 'released'
        ? 'paid'
        : escrow.status
  return {
    ...base,
    kind: 'escrow',
    title: escrow.description,
    details: 'Paid into escrow: the merchant receives it once the deal is done',
    ...amounts(escrow.amountKobo, escrow.fundedAmountKobo),
    state,
    expiresAt: view.intent.expiresAt,
  }
}

/**
 * Sandbox: pays into the page's account through the simulate-inbound-credit service (the sandbox
 * bank receives it and announces it to Rail). `attemptKey` is the form's one-time key: a form
 * posted twice pays once, as the same request sent twice with its Idempotency-Key does.
 */
export async function simulatePageTransfer(
  deps: CheckoutDeps,
  token: string,
  amountKobo: number,
  attemptKey: string,
): Promise<'paid' | 'not_found' | 'not_sandbox'> {
  if (!TOKEN_PATTERN.test(token)) return 'not_found'
  const view = await getIntentByCheckoutToken(deps.pool, token)
  const partner = view && (await getPartner(deps.pool, view.intent.partnerId))
  if (!view || !partner) return 'not_found'
  if (partner.environment !== 'sandbox') return 'not_sandbox'
  await simulateInboundCreditOnce(
    deps.inbound,
    partner,
    { virtualAccount: view.account.accountNumber, amountKobo, payerName: 'Checkout Payer' },
    `checkout:${attemptKey}`,
  )
  return 'paid'
}
