// Invoices (docs/contracts/collections-and-payouts.md §Invoices): create (draft, or published at once), publish — which allocates the
// invoice's virtual account by composing payment-intent creation, in the same transaction —
// payments through the collections credit path (partially paid, paid; an excess goes to triage),
// and cancel, which archives the account so that later credits fall to unmatched triage.
// Lock order, as in every collections path: the virtual account, then the invoice.
import { recordEvent } from '../events/service.ts'
import type { CollectionsRegistries, OwnedCredit } from '../collections/credits/service.ts'
import { creatorMetadata, type Caller } from '../partners/service.ts'
import {
  allocateIntentAccount,
  createIntentInTransaction,
  getIntentById,
  type IntentAccount,
  type IntentView,
  type PaymentIntentRequest,
} from '../collections/intents/service.ts'
import type { Clock } from '../platform/clock.ts'
import { withTransaction, type Queryable, type Tx } from '../platform/db.ts'
import { fieldError, notFound, RailError } from '../platform/errors.ts'
import { claimReference, findReplay, requestHash, type ReferenceKind } from '../platform/idempotency.ts'
import { uuidv7 } from '../platform/ids.ts'
import { pageQueryLimit, toPage } from '../platform/pagination.ts'
import { readPage } from '../platform/read-pool.ts'
import { checkoutUrl } from '../platform/public-url.ts'
import {
  archiveInTransaction,
  assertCallbackUrl,
  assertCollectionCurrency,
  bankName,
  COLLECTION_CURRENCY,
  lockById as lockAccountById,
  type CollectionsDeps,
} from '../collections/virtual-accounts/service.ts'
import { partnerClock } from '../partners/sandbox-clock/service.ts'
import * as repo from './repo.ts'
import type { InvoiceJson } from './schemas.ts'

export type { Invoice, InvoiceStatus, LineItem } from './repo.ts'

export const INVOICE_PAGE_MAX = 100
/** The composed intent of an invoice without a due date is shown as expiring this far ahead (invoices do not expire). */
const UNDATED_INVOICE_HORIZON_MS = 365 * 24 * 60 * 60 * 1000

export interface InvoiceRequest {
  reference: string
  title: string
  amountKobo: number
  currency?: string
  customer?: repo.Customer
  callbackUrl?: string
  publishOnCreate?: boolean
  description?: string
  dueAt?: string
  lineItems?: repo.LineItem[]
}

/** An invoice with its payment surface (the composed intent and its account) once published. */
export interface InvoiceView {
  invoice: repo.Invoice
  payment: IntentView | undefined
}

/** The invoice object of docs/contracts/collections-and-payouts.md §Invoices; the payment-surface fields are null until published. */
export function toInvoiceJson({ invoice, payment }: InvoiceView): InvoiceJson {
  return {
    id: invoice.id,
    reference: invoice.reference,
    partnerId: invoice.partnerId,
    status: invoice.status,
    title: invoice.title,
    description: invoice.description,
    lineItems: invoice.lineItems,
    amountKobo: invoice.amountKobo,
    amountPaidKobo: invoice.amountPaidKobo,
    currency: invoice.currency,
    customer: invoice.customer,
    dueAt: invoice.dueAt?.toISOString() ?? null,
    publishedAt: invoice.publishedAt?.toISOString() ?? null,
    paidAt: invoice.paidAt?.toISOString() ?? null,
    cancelledAt: invoice.cancelledAt?.toISOString() ?? null,
    persistentVirtualAccountId: payment?.account.id ?? null,
    virtualAccount: payment?.account.accountNumber ?? null,
    virtualAccountName: payment?.account.accountName ?? null,
    virtualAccountBank: payment ? bankName(payment.account.bankCode) : null,
    trackingId: payment?.account.trackingId ?? null,
    checkoutToken: payment?.intent.checkoutToken ?? null,
    checkoutUrl: payment ? checkoutUrl(payment.intent.checkoutToken, 'pay') : null,
    createdAt: invoice.createdAt.toISOString(),
    creatorMetadata: invoice.creatorMetadata,
  }
}

async function viewOf(db: Queryable, invoice: repo.Invoice): Promise<InvoiceView> {
  return { invoice, payment: invoice.paymentIntentId ? await getIntentById(db, invoice.paymentIntentId) : undefined }
}

/**
 * Creates an invoice once per reference (same body: it again, replayed; another body: 409). With
 * publishOnCreate it is published in the same transaction: if the account cannot be allocated,
 * no invoice exists and the same reference can be retried.
 */
export async function createInvoice(
  deps: CollectionsDeps,
  caller: Caller,
  request: InvoiceRequest,
): Promise<{ view: InvoiceView; replayed: boolean }> {
  const partnerId = caller.partner.id
  const key = { reference: request.reference, requestHash: requestHash(request) }
  const stored = (db: Queryable) => () => repo.selectByReference(db, partnerId, request.reference)
  const known = await findReplay(INVOICE_REFERENCE, key, stored(deps.pool))
  if (known) return { view: await viewOf(deps.pool, known.replayed), replayed: true }
  assertCollectionCurrency(request.currency ?? COLLECTION_CURRENCY)
  assertLineItemsTotal(request.lineItems ?? [], request.amountKobo)
  // Judged by the partner's time (its sandbox test clock, if moved), as the composed intent's expiry is.
  const now = (await partnerClock(deps.pool, deps.clock, caller.partner)).now()
  if (request.dueAt !== undefined && new Date(request.dueAt).getTime() <= now.getTime())
    throw fieldError('dueAt', 'must be in the future')
  await assertCallbackUrl(deps, caller.partner, request.callbackUrl)
  const id = uuidv7()
  // Publishing at once: the account is allocated before the transaction (none is held while the
  // provider answers); if that fails, nothing is written.
  const allocated = request.publishOnCreate
    ? await allocateIntentAccount(deps, caller, intentRequest(id, request, now))
    : undefined
  return withTransaction(deps.pool, async (tx) => {
    const draft = {
      id,
      partnerId,
      reference: request.reference,
      requestHash: key.requestHash,
      title: request.title,
      description: request.description ?? null,
      lineItems: request.lineItems ?? [],
      amountKobo: request.amountKobo,
      currency: request.currency ?? COLLECTION_CURRENCY,
      customer: request.customer ?? null,
      dueAt: request.dueAt ? new Date(request.dueAt) : null,
      callbackUrl: request.callbackUrl ?? null,
      creatorMetadata: creatorMetadata(caller),
    }
    // The draft's row claims the reference: the transaction's first write.
    const claimed = await claimReference(INVOICE_REFERENCE, key, () => repo.insertDraft(tx, draft), stored(tx))
    if (claimed.replayed) return { view: await viewOf(tx, claimed.replayed), replayed: true }
    const view = allocated
      ? await publishInTransaction(tx, deps.clock, caller, claimed.created, allocated, now)
      : { invoice: claimed.created, payment: undefined }
    return { view, replayed: false }
  })
}

/** Lines, when given, bill exactly the invoice's amount: Σ quantity × unit amount = amountKobo (summed in bigint, never rounded). */
function assertLineItemsTotal(lineItems: readonly repo.LineItem[], amountKobo: number): void {
  if (lineItems.length === 0) return
  const total = lineItems.reduce((sum, line) => sum + BigInt(line.quantity) * BigInt(line.unitAmountKobo), 0n)
  if (total !== BigInt(amountKobo))
    throw fieldError('lineItems', `must add up to amountKobo (${amountKobo}); they add up to ${total}`)
}

/** How an invoice takes its reference (platform/idempotency.ts). */
const INVOICE_REFERENCE: ReferenceKind<repo.Invoice> = {
  field: 'reference',
  hashOf: (invoice) => invoice.requestHash,
  idOf: (invoice) => invoice.id,
}

/** The payment intent an invoice composes: its amount, its customer's name on the account, its callback URL. */
function intentRequest(
  invoiceId: string,
  invoice: Pick<InvoiceRequest, 'amountKobo' | 'currency' | 'callbackUrl' | 'customer' | 'dueAt'>,
  now: Date,
): PaymentIntentRequest {
  const expiresAt = invoice.dueAt ? new Date(invoice.dueAt) : new Date(now.getTime() + UNDATED_INVOICE_HORIZON_MS)
  return {
    reference: `invoice:${invoiceId}`,
    amountKobo: invoice.amountKobo,
    currency: invoice.currency ?? COLLECTION_CURRENCY,
    callbackUrl: invoice.callbackUrl,
    purposeTag: 'invoice',
    virtualAccountHolder: invoice.customer?.name ? { name: invoice.customer.name } : undefined,
    expiresAt: expiresAt.toISOString(),
  }
}

function requestOf(invoice: repo.Invoice, now: Date): PaymentIntentRequest {
  return intentRequest(
    invoice.id,
    {
      amountKobo: invoice.amountKobo,
      currency: invoice.currency,
      callbackUrl: invoice.callbackUrl ?? undefined,
      customer: invoice.customer ?? undefined,
      dueAt: invoice.dueAt?.toISOString(),
    },
    now,
  )
}

/** Records the composed intent with its allocated account, publishes, and records invoice.published — on the caller's transaction. */
async function publishInTransaction(
  tx: Tx,
  clock: Clock,
  caller: Caller,
  draft: repo.Invoice,
  allocated: IntentAccount,
  now: Date,
): Promise<InvoiceView> {
  const payment = await createIntentInTransaction(tx, caller, requestOf(draft, now), allocated, now, {
    type: 'invoice',
    id: draft.id,
  })
  const published = await repo.publish(tx, draft.id, payment.intent.id, clock.now())
  if (!published) throw new Error(`invoice ${draft.id} was not a draft when publishing`)
  const view = { invoice: published, payment }
  await emit(tx, clock, 'invoice.published', view)
  return view
}

/** draft → published. Already published: 409 with the current state in details; any other state: 409. */
export async function publishInvoice(deps: CollectionsDeps, caller: Caller, reference: string): Promise<InvoiceView> {
  const seen = await repo.selectByReference(deps.pool, caller.partner.id, reference)
  if (!seen) throw notFound('Invoice')
  if (seen.status !== 'draft') throw await wrongState(deps.pool, seen, 'publish')
  // Allocated before the transaction; a concurrent publish is handed the same account, and only
  // one of them finds the invoice still a draft.
  const now = (await partnerClock(deps.pool, deps.clock, caller.partner)).now()
  const allocated = await allocateIntentAccount(deps, caller, requestOf(seen, now))
  return withTransaction(deps.pool, async (tx) => {
    const invoice = (await repo.lockById(tx, seen.id))!
    if (invoice.status !== 'draft') throw await wrongState(tx, invoice, 'publish')
    return publishInTransaction(tx, deps.clock, caller, invoice, allocated, now)
  })
}

/**
 * draft, published or partially_paid → cancelled; the account is archived (partial payments stay
 * recorded). A publish committing between the read and the invoice's lock leaves the account
 * unlocked here, taken after the invoice: a credit holding it waits, or the two deadlock and the
 * transaction runs again (withTransaction), now reading the account first.
 */
export async function cancelInvoice(deps: CollectionsDeps, partnerId: string, reference: string): Promise<InvoiceView> {
  return withTransaction(deps.pool, async (tx) => {
    const seen = await repo.selectByReference(tx, partnerId, reference)
    if (!seen) throw notFound('Invoice')
    const accountId = seen.paymentIntentId ? (await getIntentById(tx, seen.paymentIntentId))!.account.id : undefined
    if (accountId) await lockAccountById(tx, accountId) // the account first, as the credit path does
    const invoice = (await repo.lockById(tx, seen.id))!
    const cancelled = await repo.cancel(tx, invoice.id, deps.clock.now())
    if (!cancelled) throw await wrongState(tx, invoice, 'cancel')
    const view = await viewOf(tx, cancelled)
    if (view.payment) await archiveInTransaction(tx, deps.clock, view.payment.account.id)
    await emit(tx, deps.clock, 'invoice.cancelled', view)
    return view
  })
}

async function wrongState(db: Queryable, invoice: repo.Invoice, operation: 'publish' | 'cancel'): Promise<RailError> {
  const current = toInvoiceJson(await viewOf(db, invoice))
  const message =
    operation === 'publish'
      ? invoice.status === 'published'
        ? 'The invoice is published already; read it for its payment details'
        : `A ${invoice.status} invoice cannot be published`
      : `A ${invoice.status} invoice cannot be cancelled (only draft, published and partially_paid can)`
  return new RailError('invalid_state', message, {
    status: invoice.status,
    currentState: invoice.status,
    invoice: current,
  })
}

/** Plugs invoices into collections: a credit to an invoice's intent is taken by takeInvoicePayment. */
export function plugInvoices(registries: Pick<CollectionsRegistries, 'creditOwners'>): void {
  registries.creditOwners.register('invoice', takeInvoicePayment)
}

/**
 * The owner's rule for a credit to an invoice's account (called by the collections credit path,
 * on its transaction, after the account and intent locks): a published or partially paid invoice
 * takes what is still owed — partially paid below the amount, paid on reaching it — and the
 * excess, or the whole credit when the invoice takes no payment, goes to triage.
 */
export async function takeInvoicePayment(tx: Tx, credit: OwnedCredit, clock: Clock): Promise<{ takenKobo: number }> {
  const invoice = await repo.lockById(tx, credit.ownerId)
  if (!invoice || (invoice.status !== 'published' && invoice.status !== 'partially_paid')) return { takenKobo: 0 }
  const takenKobo = Math.min(credit.amountKobo, invoice.amountKobo - invoice.amountPaidKobo)
  const paid = await repo.recordPayment(tx, invoice.id, takenKobo, clock.now())
  if (!paid) throw new Error(`invoice ${invoice.id} refused a payment it owed`)
  await emit(tx, clock, paid.status === 'paid' ? 'invoice.paid' : 'invoice.partially_paid', await viewOf(tx, paid))
  return { takenKobo }
}

async function emit(tx: Queryable, clock: Clock, type: string, view: InvoiceView): Promise<void> {
  await recordEvent(tx, clock, {
    partnerId: view.invoice.partnerId,
    type,
    objectType: 'invoice',
    objectId: view.invoice.id,
    data: toInvoiceJson(view),
    callbackUrl: view.invoice.callbackUrl,
  })
}

/** The invoice that composed an intent (its owner), for the intent's payment page. */
/** An invoice's payment intent by the partner's reference: `found` false for no such invoice, a null intent for a draft. */
export async function invoicePaymentIntentOf(
  db: Queryable,
  partnerId: string,
  reference: string,
): Promise<{ found: boolean; paymentIntentId: string | null }> {
  const invoice = await repo.selectByReference(db, partnerId, reference)
  return invoice ? { found: true, paymentIntentId: invoice.paymentIntentId } : { found: false, paymentIntentId: null }
}

export async function getInvoiceById(db: Queryable, partnerId: string, id: string): Promise<repo.Invoice | undefined> {
  return repo.selectById(db, partnerId, id)
}

export async function getInvoice(db: Queryable, partnerId: string, reference: string): Promise<InvoiceView> {
  const invoice = await repo.selectByReference(db, partnerId, reference)
  if (!invoice) throw notFound('Invoice')
  return viewOf(db, invoice)
}

export async function listInvoices(
  db: Queryable,
  query: { partnerId: string; status?: repo.InvoiceStatus; limit: number; cursor?: string },
) {
  return readPage(db, query.cursor, async (reader, before) => {
    const page = toPage(
      await repo.list(reader, { ...query, cursor: before, limit: pageQueryLimit(query.limit) }),
      query.limit,
    )
    return {
      data: await Promise.all(page.items.map(async (invoice) => toInvoiceJson(await viewOf(reader, invoice)))),
      nextCursor: page.nextCursor,
    }
  })
}
