// The Refunds API: a partner's refund of a credit, or of the confirmed credits of a payment intent
// or an invoice, under one reference, made by the core (core.ts) credit by credit.
import { ensurePartnerAccount, getBalance } from '../../ledger/service.ts'
import type { Caller } from '../../partners/service.ts'
import { accountOfIntent, intentOwnerTypeOfAccount } from '../../collections/intents/service.ts'
import { withTransaction, type Pool, type Queryable, type Tx } from '../../platform/db.ts'
import { notFound, RailError } from '../../platform/errors.ts'
import { claimReference, requestHash, type ReferenceKind } from '../../platform/idempotency.ts'
import { pageQueryLimit, toPage } from '../../platform/pagination.ts'
import { readPage } from '../../platform/read-pool.ts'
import {
  assertRefundableBy,
  exceedsRefundable,
  noSender,
  refundCredit,
  senderOf,
  toRefund,
  type Refund,
  type RefundsDeps,
} from './core.ts'
import { confirmedCreditIds, leftToRefundKobo, lockCredit } from './credits.ts'
import * as repo from './repo.ts'

/**
 * An invoice's payment intent by the partner's reference (`found` false for no such invoice; a
 * draft has no intent). Invoices sit above refunds (they reach them through inbound credits), so
 * the composition root hands this over.
 */
export type InvoiceIntentOf = (
  db: Queryable,
  partnerId: string,
  reference: string,
) => Promise<{ found: boolean; paymentIntentId: string | null }>

/** What the Refunds API needs beyond the core: an invoice's intent, to refund what it collected. */
export interface RefundsApiDeps extends RefundsDeps {
  invoiceIntentOf: InvoiceIntentOf
}

export interface RefundApiRequest {
  reference: string
  creditId?: string
  paymentIntentId?: string
  invoiceReference?: string
  amountKobo?: number
  reason?: string
}

/** What POST /refunds answers: the partner's request and the refunds it made, one per credit. */
export interface RefundRequestView {
  reference: string
  amountKobo: number
  refunds: Refund[]
}

/**
 * The Refunds API: refunds a credit, or the confirmed credits of a payment intent or invoice
 * (newest first until the amount is covered: one refund per credit, all under the partner's
 * reference), all or nothing, in one transaction. Each refund is held on the partner's
 * collections account when its available balance covers it, else on the float; neither → 422
 * insufficient_funds. Idempotent on the reference per partner: the request claims it with its own
 * row (refund_requests) as the transaction's first write, so a concurrent duplicate waits for the
 * first to commit and answers its refunds; a refused request claims nothing.
 */
export async function createRefunds(
  deps: RefundsApiDeps,
  caller: Caller,
  request: RefundApiRequest,
): Promise<{ view: RefundRequestView; replayed: boolean }> {
  const given = (['creditId', 'paymentIntentId', 'invoiceReference'] as const).filter(
    (field) => request[field] !== undefined,
  )
  if (given.length !== 1) {
    const message = 'give exactly one of creditId, paymentIntentId and invoiceReference'
    const fields = ['creditId', 'paymentIntentId', 'invoiceReference'].map((field) => ({ field, message }))
    throw new RailError('validation_error', `creditId, paymentIntentId, invoiceReference: ${message}`, { fields })
  }
  const hash = requestHash(request)
  const partnerId = caller.partner.id
  const key = { reference: request.reference, requestHash: hash }
  return withTransaction(deps.outbound.pool, async (tx) => {
    const claim = await claimReference(
      REFUND_REQUEST,
      key,
      () => repo.insertRequest(tx, partnerId, request.reference, hash),
      () => repo.selectRequest(tx, partnerId, request.reference),
    )
    if (claim.replayed) {
      const refunds = (await repo.selectByReference(tx, partnerId, request.reference)).map(toRefund)
      return { view: { reference: request.reference, amountKobo: sumKobo(refunds), refunds }, replayed: true }
    }
    const creditIds =
      request.creditId !== undefined ? [request.creditId] : await creditsOfObject(deps, tx, partnerId, request)
    const refunds = await refundCredits(deps, tx, caller, request, creditIds, hash)
    return { view: { reference: request.reference, amountKobo: sumKobo(refunds), refunds }, replayed: false }
  })
}

/** A Refunds API request as a claim of its reference; a conflict names the request's first refund. */
const REFUND_REQUEST: ReferenceKind<repo.RefundRequest> = {
  field: 'reference',
  hashOf: (request) => request.requestHash,
  idOf: (request) => request.firstRefundId ?? request.reference,
}

/** The credits confirmed to a payment intent or an invoice's intent, newest first; another partner's or unknown: 404. */
async function creditsOfObject(
  deps: RefundsApiDeps,
  tx: Tx,
  partnerId: string,
  request: RefundApiRequest,
): Promise<string[]> {
  let accountId: string | null | undefined
  if (request.paymentIntentId !== undefined) {
    accountId = await accountOfIntent(tx, partnerId, request.paymentIntentId)
    if (!accountId) throw notFound('Payment intent')
  } else {
    const invoice = await deps.invoiceIntentOf(tx, partnerId, request.invoiceReference!)
    if (!invoice.found) throw notFound('Invoice')
    accountId = invoice.paymentIntentId === null ? null : await accountOfIntent(tx, partnerId, invoice.paymentIntentId)
  }
  if (!accountId) return [] // a draft invoice: nothing was paid
  // An escrow's intent is refused before any credit is locked (escrow takes its credits' locks in its own order).
  if ((await intentOwnerTypeOfAccount(tx, accountId)) === 'escrow') {
    throw new RailError('invalid_state', 'The payment intent funds an escrow: cancel the escrow to refund its payer', {
      paymentIntentId: request.paymentIntentId ?? null,
    })
  }
  return confirmedCreditIds(deps.credits, tx, partnerId, accountId)
}

/**
 * Refunds the asked amount (or all that is refundable) from the credits in order, each credit as
 * much as it has left, until the amount is covered. Locks are taken in the credits' order, newest
 * first, so two requests over one intent cannot deadlock.
 */
async function refundCredits(
  deps: RefundsDeps,
  tx: Tx,
  caller: Caller,
  request: RefundApiRequest,
  creditIds: readonly string[],
  hash: string,
): Promise<Refund[]> {
  const partnerId = caller.partner.id
  const single = request.creditId !== undefined
  let remainingKobo = request.amountKobo ?? Number.MAX_SAFE_INTEGER
  let refundableKobo = 0
  let withoutSender = 0
  const refunds: Refund[] = []
  for (const creditId of creditIds) {
    if (remainingKobo === 0) break
    const credit = await lockCredit(deps.credits, tx, creditId)
    if (!credit || credit.partnerId !== partnerId) throw notFound('Credit')
    if (single) {
      // Asked by id: the credit's own refusals come before the choice of source (no 422 insufficient_funds for a triage item).
      assertRefundableBy({ type: 'partner' }, credit)
      if (!senderOf(credit)) throw noSender(credit)
    } else if (!senderOf(credit)) {
      withoutSender += 1 // a credit of the intent or invoice that cannot be refunded is passed over
      continue
    }
    const leftKobo = await leftToRefundKobo(deps.credits, tx, creditId)
    refundableKobo += leftKobo
    // By id, the amount asked goes to the core, whose check under the lock refuses it if it is too much.
    const amountKobo = single ? (request.amountKobo ?? leftKobo) : Math.min(leftKobo, remainingKobo)
    // Too much is refused as such before the source is chosen (the lock is held: what is left cannot change).
    if (single && (amountKobo === 0 || amountKobo > leftKobo))
      throw await exceedsRefundable(deps.credits, tx, creditId, amountKobo)
    if (amountKobo === 0) continue
    const sourceAccountId = await sourceFor(tx, partnerId, credit.currency, amountKobo)
    const { refund } = await refundCredit(
      deps,
      tx,
      {
        caller,
        reference: request.reference,
        creditId,
        amountKobo,
        sourceAccountId,
        origin: { type: 'partner' },
        reason: request.reason,
      },
      hash,
    )
    refunds.push(refund)
    remainingKobo -= amountKobo
  }
  // No credit left with a sender to pay back is that, whatever amount was asked (docs/refunds.md).
  if (refunds.length === 0 && withoutSender > 0) {
    throw new RailError(
      'refund_destination_unknown',
      'The bank gave no valid sender account for the credits left to refund',
      { creditsWithoutSender: withoutSender },
    )
  }
  if (request.amountKobo !== undefined && remainingKobo > 0) {
    throw new RailError(
      'refund_exceeds_refundable',
      `${refundableKobo} kobo is left to refund; ${request.amountKobo} kobo was asked`,
      { refundableKobo, amountKobo: request.amountKobo },
    )
  }
  if (refunds.length === 0)
    throw new RailError('refund_exceeds_refundable', 'Nothing is left to refund', { refundableKobo: 0 })
  return refunds
}

/**
 * Where a partner's refund is held: a confirmed credit's money sits in the collections account
 * until it settles (to the float, by default after each credit), so the collections account when
 * its available balance covers the amount, else the float; neither → insufficient_funds.
 */
async function sourceFor(tx: Tx, partnerId: string, currency: string, amountKobo: number): Promise<string> {
  for (const kind of ['collections', 'float'] as const) {
    const accountId = await ensurePartnerAccount(tx, partnerId, currency, kind)
    const balance = await getBalance(tx, accountId)
    if ((balance?.availableKobo ?? 0) >= amountKobo) return accountId
  }
  throw new RailError(
    'insufficient_funds',
    `Neither the collections account nor the float has ${amountKobo} kobo available; nothing moved`,
    { amountKobo },
  )
}

function sumKobo(refunds: readonly Refund[]): number {
  return refunds.reduce((sum, refund) => sum + refund.amountKobo, 0)
}

export async function getRefund(pool: Pool, partnerId: string, id: string): Promise<Refund> {
  const refund = await repo.selectPartnerRefund(pool, partnerId, id)
  if (!refund) throw notFound('Refund')
  return toRefund(refund)
}

export const REFUNDS_PAGE_MAX = 100

export async function listRefunds(pool: Pool, filter: Omit<repo.ListFilter, 'beforeId'> & { cursor?: string }) {
  const rows = await readPage(pool, filter.cursor, (reader, before) =>
    repo.selectRefunds(reader, { ...filter, beforeId: before, limit: pageQueryLimit(filter.limit) }),
  )
  const page = toPage(rows, filter.limit)
  return { refunds: page.items.map(toRefund), nextCursor: page.nextCursor }
}
