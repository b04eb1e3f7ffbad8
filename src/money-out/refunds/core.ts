// Refunds (issue 18, item 7): money of a confirmed inbound credit paid back to the account it came
// from (the sender's account and bank the credit carries). A refund is an ordinary outbound
// transfer of the payment pipeline — origin 'refund', its id the refund's — held on a ledger
// account its caller names: the partner's collections or float (the Refunds API), an escrow's
// holding account (escrow cancel and expiry), the partner's suspense account (triage). When the
// payout ends, the outbound owner calls the handler this module registered as the payout's origin,
// on the pipeline's transaction: the refund succeeds or fails, its event is recorded, and the origin
// that asked is told through the handler it registered (RefundOrigins). A failed payout's hold was
// voided (the money is back on its source); a new refund may be made. A credit never refunds more
// than it brought, less its refunds pending or succeeded: checked in SQL under the credit's lock,
// so two refunds of one credit at once cannot exceed it.
import { findBank } from '../../banking/nip/banks.ts'
import { isValidNuban } from '../../banking/nip/nuban.ts'
import { submitOutboundInTransaction, type OutboundDeps } from '../outbound/service.ts'
import type { Caller } from '../../partners/service.ts'
import type { Clock } from '../../platform/clock.ts'
import type { Queryable, Tx } from '../../platform/db.ts'
import { fieldError, notFound, RailError } from '../../platform/errors.ts'
import { claimReference, findReplay, requestHash, type ReferenceKind } from '../../platform/idempotency.ts'
import { uuidv7 } from '../../platform/ids.ts'
import { Registry } from '../../platform/registry.ts'
import { leftToRefundKobo, lockCredit, type RefundableCredit, type RefundableCredits } from './credits.ts'
import * as repo from './repo.ts'
import type { RefundJson } from './schemas.ts'
import type { RefundState } from './states.ts'

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

/** On the pipeline's transaction, when refunds of this origin type end (succeeded or failed); `clock` is the pipeline's. */
export type RefundEndedHandler = (tx: Tx, refunds: readonly Refund[], clock: Clock) => Promise<void>

/**
 * The refunds' origin registry: an origin that asks for refunds of its own (an escrow's cancel,
 * expiry or excess; triage) registers what happens when they end. Called in this order, on the
 * pipeline's transaction, after the refunds ended and their events were recorded.
 */
export type RefundOrigins = Registry<Exclude<RefundOrigin['type'], 'partner'>, RefundEndedHandler>

export function refundOrigins(): RefundOrigins {
  return new Registry<Exclude<RefundOrigin['type'], 'partner'>, RefundEndedHandler>('refund origin', [
    'escrow',
    'triage',
  ])
}

export interface RefundsDeps {
  outbound: OutboundDeps
  /** The credits refunds are made of, from inbound credits (handed over by the composition root). */
  credits: RefundableCredits
}

export function toRefund(row: repo.Refund): Refund {
  const origin: RefundOrigin =
    row.originType === 'escrow' ? { type: 'escrow', id: row.originId! } : { type: row.originType }
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

/**
 * The refunds an escrow asked for (one per funding credit; a retry after the one that failed),
 * oldest first, on the caller's transaction: what the escrow shows of its refund and decides it by.
 */
export async function refundsOfOrigin(db: Queryable, origin: { type: 'escrow'; id: string }): Promise<Refund[]> {
  return (await repo.selectByOrigin(db, origin.type, origin.id)).map(toRefund)
}

/** The refund object of the API and of refund.* events. */
export function toRefundJson(refund: Refund): RefundJson {
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
export async function refundCreditInTransaction(
  deps: RefundsDeps,
  tx: Tx,
  request: CreditRefundRequest,
): Promise<Refund> {
  return (await refundCredit(deps, tx, request)).refund
}

/** refundCreditInTransaction, telling a new refund from one made before; `hash` is the request's, as its caller knows it. */
export async function refundCredit(
  deps: RefundsDeps,
  tx: Tx,
  request: CreditRefundRequest,
  hash = coreRequestHash(request),
): Promise<{ refund: Refund; replayed: boolean }> {
  const partnerId = request.caller.partner.id
  if (!Number.isSafeInteger(request.amountKobo) || request.amountKobo <= 0)
    throw fieldError('amountKobo', 'must be a positive whole number of kobo')
  const credit = await lockCredit(deps.credits, tx, request.creditId)
  if (!credit || credit.partnerId !== partnerId) throw notFound('Credit')
  const key = { reference: request.reference, requestHash: hash }
  const stored = () => repo.selectByReferenceAndCredit(tx, partnerId, request.reference, credit.id)
  // The fast path every create takes before its claim: a refund made before is answered before
  // the credit's state is checked, so a replay answers even once the credit has moved on.
  const known = await findReplay(REFUND_REFERENCE, key, stored)
  if (known) return { refund: toRefund(known.replayed), replayed: true }
  assertRefundableBy(request.origin, credit)
  const destination = senderOf(credit)
  if (!destination) throw noSender(credit)
  // The claim: the refund's row on its unique key (partner, reference, credit), as every create claims.
  const claimed = await claimReference(
    REFUND_REFERENCE,
    key,
    () => insertRefund(deps.credits, tx, request, credit, hash),
    stored,
  )
  if (claimed.replayed) return { refund: toRefund(claimed.replayed), replayed: true }
  const inserted = claimed.created
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
    {
      accountId: request.sourceAccountId,
      originType: 'refund',
      originId: inserted.id,
      originReference: inserted.reference,
    },
  )
  if (payout.state === 'failed') {
    // The hold was refused for funds: thrown, so the caller's transaction (the refund, the failed payout) is rolled back.
    throw new RailError(
      'insufficient_funds',
      `The account the refund is held on cannot cover ${inserted.amountKobo} kobo; nothing moved`,
      { amountKobo: inserted.amountKobo },
    )
  }
  return { refund: toRefund(await repo.setOutboundTransfer(tx, inserted.id, payout.id)), replayed: false }
}

/**
 * The claim's insert: the refund's row if the credit still has the amount to refund (checked in the
 * same statement), else undefined when its reference is taken — else, with no row under the
 * reference, the amount is what is missing: 422 refund_exceeds_refundable, nothing written.
 */
async function insertRefund(
  credits: RefundableCredits,
  tx: Tx,
  request: CreditRefundRequest,
  credit: RefundableCredit,
  hash: string,
): Promise<repo.Refund | undefined> {
  const partnerId = request.caller.partner.id
  const amountLessExcessKobo = await credits.amountLessExcessKobo(tx, credit.id)
  const inserted = await repo.insertWithinRefundable(
    tx,
    {
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
    },
    amountLessExcessKobo,
  )
  if (inserted) return inserted
  if (await repo.selectByReferenceAndCredit(tx, partnerId, request.reference, credit.id)) return undefined
  throw await exceedsRefundable(credits, tx, credit.id, request.amountKobo)
}

function coreRequestHash(request: CreditRefundRequest): string {
  return requestHash({
    creditId: request.creditId,
    amountKobo: request.amountKobo,
    sourceAccountId: request.sourceAccountId,
    origin: request.origin,
    reason: request.reason ?? null,
  })
}

/** How a refund takes its reference (platform/idempotency.ts): one per credit under the partner's reference. */
export const REFUND_REFERENCE: ReferenceKind<repo.Refund> = {
  field: 'reference',
  hashOf: (refund) => refund.requestHash,
  idOf: (refund) => refund.id,
}

/**
 * Which credits each origin may refund. The partner: a confirmed credit (applied, or assigned by
 * triage) that did not fund an escrow (cancelling the escrow refunds it) and never fell to triage
 * (triage refunds those). Triage: an unmatched credit. An escrow: a credit to its funding account,
 * confirmed or its unmatched excess.
 */
export function assertRefundableBy(origin: RefundOrigin, credit: RefundableCredit): void {
  const refuse = (message: string) =>
    new RailError('invalid_state', message, {
      creditId: credit.id,
      status: creditStatus(credit.status),
      currentState: creditStatus(credit.status),
    })
  if (origin.type === 'triage') {
    if (credit.status !== 'unmatched')
      throw refuse(`The credit is ${credit.status}; triage refunds only unmatched credits`)
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
  if (credit.status !== 'applied' && credit.status !== 'assigned')
    throw refuse(`The credit is ${creditStatus(credit.status)}, not confirmed`)
  if (credit.intentOwnerType === 'escrow')
    throw refuse('The credit funded an escrow: cancel the escrow to refund its payer')
  if (credit.confirmedAccountId === null)
    throw refuse('The credit was not paid to a virtual account (it funded a wallet): it cannot be refunded here')
}

/** A credit's status as a partner reads it (toCreditJson): confirmed once applied. */
function creditStatus(status: string): string {
  return status === 'applied' ? 'confirmed' : status
}

/** The account the credit came from, when the bank gave a valid one (a known bank, a NUBAN that checks out). */
export function senderOf(credit: RefundableCredit): { accountNumber: string; bankCode: string } | undefined {
  const { payerAccountNumber, payerBankCode } = credit
  if (
    !payerAccountNumber ||
    !payerBankCode ||
    !findBank(payerBankCode) ||
    !isValidNuban(payerBankCode, payerAccountNumber)
  )
    return undefined
  return { accountNumber: payerAccountNumber, bankCode: payerBankCode }
}

export function noSender(credit: RefundableCredit): RailError {
  return new RailError(
    'refund_destination_unknown',
    'The bank gave no valid sender account for this credit, so it cannot be refunded',
    { creditId: credit.id },
  )
}

function narrationOf(origin: RefundOrigin, credit: RefundableCredit): string {
  return origin.type === 'triage'
    ? `Refund of unmatched credit ${credit.sessionId}`
    : `Refund of payment ${credit.sessionId}`
}

export async function exceedsRefundable(
  credits: RefundableCredits,
  db: Queryable,
  creditId: string,
  amountKobo: number,
): Promise<RailError> {
  const refundableKobo = await leftToRefundKobo(credits, db, creditId)
  return new RailError(
    'refund_exceeds_refundable',
    `The credit has ${refundableKobo} kobo left to refund; ${amountKobo} kobo was asked`,
    { creditId, refundableKobo, amountKobo },
  )
}
