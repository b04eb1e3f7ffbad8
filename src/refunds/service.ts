// Refunds (issue 18, item 7): money of a confirmed inbound credit paid back to the account it came
// from (the sender's account and bank the credit carries). A refund is an ordinary outbound
// transfer of the payment pipeline — origin 'refund', its id the refund's — held on a ledger
// account its caller names: the partner's collections or float (the Refunds API), an escrow's
// holding account (escrow cancel and expiry), the partner's suspense account (triage). When the
// payout ends, the outbound owner calls this module's origin handler on the pipeline's
// transaction: the refund succeeds or fails, its event is recorded, and the origin that asked is
// told. A failed payout's hold was voided (the money is back on its source); a new refund may be
// made. A credit never refunds more than it brought, less its refunds pending or succeeded:
// checked in SQL under the credit's lock, so two refunds of one credit at once cannot exceed it.
import { recordEvents, type NewEvent } from '../events/service.ts'
import { ensurePartnerAccount, getBalance } from '../ledger/service.ts'
import { findBank } from '../nip/banks.ts'
import { isValidNuban } from '../nip/nuban.ts'
import type { OriginHandler } from '../outbound-transfers/owner.ts'
import { submitOutboundInTransaction, type Caller, type OutboundDeps, type OutboundTransfer } from '../outbound-transfers/service.ts'
import { withKeyLock, type Pool, type Queryable, type Tx } from '../platform/db.ts'
import { fieldError, notFound, RailError } from '../platform/errors.ts'
import { requestHash } from '../platform/idempotency.ts'
import { uuidv7 } from '../platform/ids.ts'
import { pageQueryLimit, toPage } from '../platform/pagination.ts'
import * as repo from './repo.ts'
import type { RefundState } from './states.ts'

export type { RefundState } from './states.ts'

export type RefundOrigin = { type: 'partner' } | { type: 'escrow'; id: string } | { type: 'triage' }

export interface CreditRefundRequest {
  caller: Caller
  /** Unique per partner (the partner's own, or Rail's e.g. `escrow-refund:<escrowId>:<creditId>`). */
  reference: string
  creditId: string
  amountKobo: number
  /** The ledger account the payout is held on (escrow: the escrow holding account). */
  sourceAccountId: string
  origin: RefundOrigin
  reason?: string
}

export interface Refund {
  id: string
  partnerId: string
  reference: string
  creditId: string
  amountKobo: number
  currency: string
  state: RefundState
  origin: RefundOrigin
  sourceAccountId: string
  outboundTransferId: string | null
  reason: string | null
  failureReason: Record<string, unknown> | null
  createdAt: Date
  completedAt: Date | null
}

/** On the pipeline's transaction, when refunds of this origin type end (succeeded or failed). */
export type RefundEndedHandler = (tx: Tx, refunds: readonly Refund[]) => Promise<void>

export interface RefundsDeps {
  outbound: OutboundDeps
  onEnded: Partial<Record<'escrow' | 'triage', RefundEndedHandler>>
}

function toRefund(row: repo.Refund): Refund {
  const origin: RefundOrigin = row.originType === 'escrow' ? { type: 'escrow', id: row.originId! } : { type: row.originType }
  return {
    id: row.id,
    partnerId: row.partnerId,
    reference: row.reference,
    creditId: row.creditId,
    amountKobo: row.amountKobo,
    currency: row.currency,
    state: row.state,
    origin,
    sourceAccountId: row.sourceAccountId,
    outboundTransferId: row.outboundTransferId,
    reason: row.reason,
    failureReason: row.failureReason,
    createdAt: row.createdAt,
    completedAt: row.completedAt,
  }
}

/** The refund object of the API and of refund.* events. */
export function toRefundJson(refund: Refund) {
  return {
    id: refund.id,
    partnerId: refund.partnerId,
    reference: refund.reference,
    creditId: refund.creditId,
    amountKobo: refund.amountKobo,
    currency: refund.currency,
    state: refund.state,
    origin: { type: refund.origin.type, id: refund.origin.type === 'escrow' ? refund.origin.id : null },
    outboundTransferId: refund.outboundTransferId,
    reason: refund.reason,
    failureReason: refund.failureReason,
    createdAt: refund.createdAt.toISOString(),
    completedAt: refund.completedAt?.toISOString() ?? null,
  }
}

// ---- the core: one refund of one credit -------------------------------------------------------

/**
 * Refunds (part of) one credit on the caller's transaction: records the refund if the credit still
 * has the amount to refund (under the credit's lock), and submits its payout to the credit's
 * sender, held on `sourceAccountId`. Idempotent on (partner, reference, credit): the same request
 * answers the refund made before; another request with them is 409 idempotency_conflict.
 * Refused, with nothing written: another partner's or unknown credit (404), a credit the origin
 * may not refund (409 invalid_state), no valid sender account (422 refund_destination_unknown),
 * more than is refundable (422 refund_exceeds_refundable) — each thrown before anything is
 * written (the credit's lock aside), so a caller may catch one and go on. A source that cannot
 * cover it is 422 insufficient_funds, thrown after the refund was written: the caller's
 * transaction must not commit then. A failed refund keeps its reference: another try is a new
 * reference (the same one answers the failed refund).
 */
export async function refundCreditInTransaction(deps: RefundsDeps, tx: Tx, request: CreditRefundRequest): Promise<Refund> {
  return (await refundCredit(deps, tx, request)).refund
}

/** refundCreditInTransaction, telling a new refund from one made before; `hash` is the request's, as its caller knows it. */
async function refundCredit(deps: RefundsDeps, tx: Tx, request: CreditRefundRequest, hash = coreRequestHash(request)): Promise<{ refund: Refund; replayed: boolean }> {
  const partnerId = request.caller.partner.id
  if (!Number.isSafeInteger(request.amountKobo) || request.amountKobo <= 0) throw fieldError('amountKobo', 'must be a positive whole number of kobo')
  const credit = await repo.lockCredit(tx, request.creditId)
  if (!credit || credit.partnerId !== partnerId) throw notFound('Credit')
  const known = await repo.selectByReferenceAndCredit(tx, partnerId, request.reference, credit.id)
  if (known) return { refund: replayOf(known, hash), replayed: true }
  assertRefundableBy(request.origin, credit)
  const destination = senderOf(credit)
  if (!destination) throw noSender(credit)
  const inserted = await repo.insertWithinRefundable(tx, {
    id: uuidv7(),
    partnerId,
    reference: request.reference,
    requestHash: hash,
    creditId: credit.id,
    amountKobo: request.amountKobo,
    currency: credit.currency,
    originType: request.origin.type,
    originId: request.origin.type === 'escrow' ? request.origin.id : null,
    sourceAccountId: request.sourceAccountId,
    reason: request.reason ?? null,
  })
  if (!inserted) throw await exceedsRefundable(tx, credit.id, request.amountKobo)
  const payout = await submitOutboundInTransaction(
    deps.outbound,
    tx,
    request.caller,
    {
      clientReference: `rail-refund-${inserted.id}`,
      beneficiaryAccountNumber: destination.accountNumber,
      beneficiaryBankCode: destination.bankCode,
      beneficiaryAccountName: (credit.payerName ?? 'SENDER').slice(0, 100),
      amountKobo: inserted.amountKobo,
      currency: inserted.currency,
      narration: narrationOf(request.origin, credit).slice(0, 100),
    },
    { accountId: request.sourceAccountId, originType: 'refund', originId: inserted.id, originReference: inserted.reference },
  )
  if (payout.state === 'failed') {
    // The hold was refused for funds: thrown, so the caller's transaction (the refund, the failed payout) is rolled back.
    throw new RailError('insufficient_funds', `The account the refund is held on cannot cover ${inserted.amountKobo} kobo; nothing moved`, { amountKobo: inserted.amountKobo })
  }
  return { refund: toRefund(await repo.setOutboundTransfer(tx, inserted.id, payout.id)), replayed: false }
}

function coreRequestHash(request: CreditRefundRequest): string {
  return requestHash({ creditId: request.creditId, amountKobo: request.amountKobo, sourceAccountId: request.sourceAccountId, origin: request.origin, reason: request.reason ?? null })
}

function replayOf(known: repo.Refund, hash: string): Refund {
  if (known.requestHash !== hash) {
    throw new RailError('idempotency_conflict', `reference ${known.reference} was already used with a different request`, { refundId: known.id })
  }
  return toRefund(known)
}

/**
 * Which credits each origin may refund. The partner: a confirmed credit (applied, or assigned by
 * triage) that did not fund an escrow (cancelling the escrow refunds it) and never fell to triage
 * (triage refunds those). Triage: an unmatched credit. An escrow: a credit to its funding account,
 * confirmed or its unmatched excess.
 */
function assertRefundableBy(origin: RefundOrigin, credit: repo.RefundableCredit): void {
  const refuse = (message: string) => new RailError('invalid_state', message, { creditId: credit.id, status: creditStatus(credit.status) })
  if (origin.type === 'triage') {
    if (credit.status !== 'unmatched') throw refuse(`The credit is ${credit.status}; triage refunds only unmatched credits`)
    return
  }
  if (origin.type === 'escrow') {
    if (credit.intentOwnerType !== 'escrow') throw refuse('The credit did not fund an escrow')
    if (!['applied', 'assigned', 'unmatched'].includes(credit.status)) throw refuse(`The credit is ${credit.status}`)
    return
  }
  if (['unmatched', 'refund_pending', 'refunded'].includes(credit.status)) {
    throw refuse('The credit is unmatched (a triage item): refund it with POST /api/v1/rail/unmatched/{id}/resolve')
  }
  if (credit.status !== 'applied' && credit.status !== 'assigned') throw refuse(`The credit is ${creditStatus(credit.status)}, not confirmed`)
  if (credit.intentOwnerType === 'escrow') throw refuse('The credit funded an escrow: cancel the escrow to refund its payer')
  if (credit.confirmedAccountId === null) throw refuse('The credit was not paid to a virtual account (it funded a wallet): it cannot be refunded here')
}

/** A credit's status as a partner reads it (toCreditJson): confirmed once applied. */
function creditStatus(status: string): string {
  return status === 'applied' ? 'confirmed' : status
}

/** The account the credit came from, when the bank gave a valid one (a known bank, a NUBAN that checks out). */
function senderOf(credit: repo.RefundableCredit): { accountNumber: string; bankCode: string } | undefined {
  const { payerAccountNumber, payerBankCode } = credit
  if (!payerAccountNumber || !payerBankCode || !findBank(payerBankCode) || !isValidNuban(payerBankCode, payerAccountNumber)) return undefined
  return { accountNumber: payerAccountNumber, bankCode: payerBankCode }
}

function noSender(credit: repo.RefundableCredit): RailError {
  return new RailError('refund_destination_unknown', 'The bank gave no valid sender account for this credit, so it cannot be refunded', { creditId: credit.id })
}

function narrationOf(origin: RefundOrigin, credit: repo.RefundableCredit): string {
  return origin.type === 'triage' ? `Refund of unmatched credit ${credit.sessionId}` : `Refund of payment ${credit.sessionId}`
}

async function exceedsRefundable(db: Queryable, creditId: string, amountKobo: number): Promise<RailError> {
  const refundableKobo = await repo.selectRefundableKobo(db, creditId)
  return new RailError('refund_exceeds_refundable', `The credit has ${refundableKobo} kobo left to refund; ${amountKobo} kobo was asked`, { creditId, refundableKobo, amountKobo })
}

// ---- the payout's end -------------------------------------------------------------------------

/**
 * The outbound owner's handler for origin 'refund': each ended payout ends its refund once —
 * confirmed → succeeded, failed → failed (its hold was voided in this transaction: the money is
 * back on its source) — records refund.succeeded / refund.failed, and tells the origin that
 * asked (escrow, triage).
 */
export function refundPayoutsEnded(onEnded: RefundsDeps['onEnded']): OriginHandler {
  return async (tx, payouts) => {
    const ended: Refund[] = []
    for (const payout of payouts) {
      if (payout.originId === null) continue
      const next = payout.state === 'confirmed' ? 'succeeded' : 'failed'
      const refund = await repo.complete(tx, payout.originId, next, next === 'failed' ? failureOf(payout) : null)
      if (refund) ended.push(toRefund(refund))
    }
    await recordEvents(tx, ended.map(refundEvent))
    for (const type of ['escrow', 'triage'] as const) {
      const ofType = ended.filter((refund) => refund.origin.type === type)
      const handler = onEnded[type]
      if (ofType.length > 0 && handler) await handler(tx, ofType)
    }
  }
}

function failureOf(payout: OutboundTransfer): Record<string, unknown> {
  return payout.failureReason ? { ...payout.failureReason } : { code: 'payout_failed', message: 'The bank did not pay the refund' }
}

function refundEvent(refund: Refund): NewEvent {
  return {
    partnerId: refund.partnerId,
    type: refund.state === 'succeeded' ? 'refund.succeeded' : 'refund.failed',
    objectType: 'refund',
    objectId: refund.id,
    data: toRefundJson(refund),
  }
}

// ---- the Refunds API ---------------------------------------------------------------------------

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
 * insufficient_funds. Idempotent on the reference per partner: concurrent requests with one
 * reference take turns on it (withKeyLock: a duplicate waits for the first outside any
 * transaction, holding no pooled connection), and the later finds the first's refunds.
 */
export async function createRefunds(deps: RefundsDeps, caller: Caller, request: RefundApiRequest): Promise<{ view: RefundRequestView; replayed: boolean }> {
  const given = (['creditId', 'paymentIntentId', 'invoiceReference'] as const).filter((field) => request[field] !== undefined)
  if (given.length !== 1) {
    const message = 'give exactly one of creditId, paymentIntentId and invoiceReference'
    const fields = ['creditId', 'paymentIntentId', 'invoiceReference'].map((field) => ({ field, message }))
    throw new RailError('validation_error', `creditId, paymentIntentId, invoiceReference: ${message}`, { fields })
  }
  const hash = requestHash(request)
  const partnerId = caller.partner.id
  return withKeyLock(deps.outbound.pool, `refund:${partnerId}:${request.reference}`, async (tx) => {
    const known = await repo.selectByReference(tx, partnerId, request.reference)
    if (known.length > 0) {
      const refunds = known.map((refund) => replayOf(refund, hash))
      return { view: { reference: request.reference, amountKobo: sumKobo(refunds), refunds }, replayed: true }
    }
    const creditIds = request.creditId !== undefined ? [request.creditId] : await creditsOfObject(tx, partnerId, request)
    const refunds = await refundCredits(deps, tx, caller, request, creditIds, hash)
    return { view: { reference: request.reference, amountKobo: sumKobo(refunds), refunds }, replayed: false }
  })
}

/** The credits confirmed to a payment intent or an invoice's intent, newest first; another partner's or unknown: 404. */
async function creditsOfObject(tx: Tx, partnerId: string, request: RefundApiRequest): Promise<string[]> {
  let accountId: string | null | undefined
  if (request.paymentIntentId !== undefined) {
    accountId = await repo.selectIntentAccount(tx, partnerId, request.paymentIntentId)
    if (!accountId) throw notFound('Payment intent')
  } else {
    const invoice = await repo.selectInvoiceAccount(tx, partnerId, request.invoiceReference!)
    if (!invoice.found) throw notFound('Invoice')
    accountId = invoice.virtualAccountId
  }
  if (!accountId) return [] // a draft invoice: nothing was paid
  // An escrow's intent is refused before any credit is locked (escrow takes its credits' locks in its own order).
  if ((await repo.selectIntentOwnerType(tx, accountId)) === 'escrow') {
    throw new RailError('invalid_state', 'The payment intent funds an escrow: cancel the escrow to refund its payer', { paymentIntentId: request.paymentIntentId ?? null })
  }
  return repo.selectConfirmedCreditIds(tx, partnerId, accountId)
}

/**
 * Refunds the asked amount (or all that is refundable) from the credits in order, each credit as
 * much as it has left, until the amount is covered. Locks are taken in the credits' order, newest
 * first, so two requests over one intent cannot deadlock.
 */
async function refundCredits(deps: RefundsDeps, tx: Tx, caller: Caller, request: RefundApiRequest, creditIds: readonly string[], hash: string): Promise<Refund[]> {
  const partnerId = caller.partner.id
  const single = request.creditId !== undefined
  let remainingKobo = request.amountKobo ?? Number.MAX_SAFE_INTEGER
  let refundableKobo = 0
  let withoutSender = 0
  const refunds: Refund[] = []
  for (const creditId of creditIds) {
    if (remainingKobo === 0) break
    const credit = await repo.lockCredit(tx, creditId)
    if (!credit || credit.partnerId !== partnerId) throw notFound('Credit')
    if (single) {
      // Asked by id: the credit's own refusals come before the choice of source (no 422 insufficient_funds for a triage item).
      assertRefundableBy({ type: 'partner' }, credit)
      if (!senderOf(credit)) throw noSender(credit)
    } else if (!senderOf(credit)) {
      withoutSender += 1 // a credit of the intent or invoice that cannot be refunded is passed over
      continue
    }
    const leftKobo = await repo.selectRefundableKobo(tx, creditId)
    refundableKobo += leftKobo
    // By id, the amount asked goes to the core, whose check under the lock refuses it if it is too much.
    const amountKobo = single ? (request.amountKobo ?? leftKobo) : Math.min(leftKobo, remainingKobo)
    // Too much is refused as such before the source is chosen (the lock is held: what is left cannot change).
    if (single && (amountKobo === 0 || amountKobo > leftKobo)) throw await exceedsRefundable(tx, creditId, amountKobo)
    if (amountKobo === 0) continue
    const sourceAccountId = await sourceFor(tx, partnerId, credit.currency, amountKobo)
    const { refund } = await refundCredit(
      deps,
      tx,
      { caller, reference: request.reference, creditId, amountKobo, sourceAccountId, origin: { type: 'partner' }, reason: request.reason },
      hash,
    )
    refunds.push(refund)
    remainingKobo -= amountKobo
  }
  if (request.amountKobo !== undefined && remainingKobo > 0) {
    throw new RailError('refund_exceeds_refundable', `${refundableKobo} kobo is left to refund; ${request.amountKobo} kobo was asked`, { refundableKobo, amountKobo: request.amountKobo })
  }
  if (refunds.length === 0 && withoutSender > 0) {
    throw new RailError('refund_destination_unknown', 'The bank gave no valid sender account for the credits left to refund', { creditsWithoutSender: withoutSender })
  }
  if (refunds.length === 0) throw new RailError('refund_exceeds_refundable', 'Nothing is left to refund', { refundableKobo: 0 })
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
  throw new RailError('insufficient_funds', `Neither the collections account nor the float has ${amountKobo} kobo available; nothing moved`, { amountKobo })
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
  const rows = await repo.selectRefunds(pool, { ...filter, beforeId: filter.cursor, limit: pageQueryLimit(filter.limit) })
  const page = toPage(rows, filter.limit)
  return { refunds: page.items.map(toRefund), nextCursor: page.nextCursor }
}
