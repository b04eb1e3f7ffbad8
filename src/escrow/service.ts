// Escrow (seed 002): a partner creates an escrow, the payer funds it, Rail holds the funds in the
// partner's escrow holding account, and the partner releases it to the recipient or cancels it
// (the payer is refunded); an escrow not funded within its TTL expires (refunded likewise).
//
// Every change is one transaction: the status change (checked against the transition table in
// SQL), the ledger transfers, and the signed event. Release, cancel, expiry and funding racing on
// one escrow serialise on its row; the first to commit wins and money moves once.
//
// Money: credits → escrow_holding (funding). Release disburses the amount: an outbound transfer
// of the payment pipeline to the recipient's bank account, held on escrow_holding until the bank
// answers (a failed one is voided back there, for the partner to release again), or, without a
// destination, escrow_holding → the partner's float at once. Cancel and expiry (and any excess
// funding on release) refund each funding credit to the account it came from through the refunds
// core: payouts held on escrow_holding, so a failed refund leaves the money held there.
import { assertCallbackUrlAllowed, recordEvent, type EventSigning } from '../events/service.ts'
import { classifyAddress } from '../events/address-guard.ts'
import { createTransfers, derivedId, ensurePartnerAccount, lockLedgerAccount, type TransferInput } from '../ledger/service.ts'
import { getPartner, type Partner } from '../partners/service.ts'
import type { Clock } from '../platform/clock.ts'
import { randomBase62, seal } from '../platform/crypto.ts'
import { withKeyLock, withTransaction, type Pool, type Queryable, type Tx } from '../platform/db.ts'
import { fieldError, notFound, RailError } from '../platform/errors.ts'
import { requestHash } from '../platform/idempotency.ts'
import { uuidv7 } from '../platform/ids.ts'
import { addJob } from '../platform/jobs.ts'
import { pageQueryLimit, toPage } from '../platform/pagination.ts'
import { allocateIntentAccount, createIntentInTransaction, getIntentById, type IntentView } from '../payment-intents/service.ts'
import { submitOutboundInTransaction, type OutboundDeps, type OutboundTransfer } from '../outbound-transfers/service.ts'
import { checkBankAccount } from '../providers/bank-accounts.ts'
import { refundCreditInTransaction, type Refund } from '../refunds/service.ts'
import { bankName, type Caller, type CollectionsDeps } from '../virtual-accounts/service.ts'
import * as repo from './repo.ts'
import type { EscrowStatus } from './states.ts'

export type { Destination, Escrow, EscrowType } from './repo.ts'

/** Only naira is held in escrow (docs/design.md §5); another ISO 4217 code is 422 unsupported_currency. */
export const ESCROW_CURRENCY = 'NGN'
/** Seed 002: the smallest escrow, ₦100. */
export const AMOUNT_MIN_KOBO = 10_000
/** Seed 002. */
export const DESCRIPTION_MAX_CHARS = 255
/** Seed 002: the reason of a release or a cancel. */
export const REASON_MAX_CHARS = 500
/** Seed 002: the TTL when none is given. */
export const TTL_HOURS_DEFAULT = 24
/** 30 days: an unfunded escrow should not linger longer; a new one is cheap. */
export const TTL_HOURS_MAX = 720
/** Metadata rides on every event; 4 KiB of JSON keeps events small. */
export const METADATA_MAX_BYTES = 4_096
/** The partner's idempotency reference. */
export const REFERENCE_MAX_CHARS = 64
/** A webhookSecret shorter than this is too easy to guess; longer than the max is a mistake. */
export const WEBHOOK_SECRET_MIN_CHARS = 8
export const WEBHOOK_SECRET_MAX_CHARS = 256
export const ESCROW_PAGE_MAX = 100
/** Escrows expired per sweep run; the next run (a minute later) takes the rest. */
const EXPIRY_SWEEP_BATCH = 500

export const EXPIRE_TASK = 'escrow_expire'
export const EXPIRY_SWEEP_TASK = 'escrow_expiry_sweep'
/** Every minute: initiated escrows past their TTL expire (each also has a job at its own expiresAt). */
export const ESCROW_CRONTAB = `* * * * * ${EXPIRY_SWEEP_TASK}`

export interface EscrowDeps {
  pool: Pool
  /** Seals registered webhook secrets. */
  masterKey: Buffer
  clock: Clock
  /** Sandbox partners may use loopback webhook URLs (RAIL_ALLOW_LOOPBACK_CALLBACKS). */
  allowLoopbackCallbacks: boolean
  /** Funding: every escrow composes a payment intent whose virtual account the payer pays into. */
  collections: CollectionsDeps
  /** Money out: disbursements and refunds are outbound transfers of the payment pipeline. */
  outbound: OutboundDeps
}

export interface CreateRequest {
  type: repo.EscrowType
  amount: number
  currency: string
  payerEmail: string
  recipientEmail: string
  description: string
  ttlHours?: number
  webhookUrl?: string
  metadata?: Record<string, unknown>
  reference?: string
  /** Where the amount goes at release (a release may override it); none: the partner's float. */
  disbursement?: repo.Destination
}

/**
 * How the payer funds the escrow: a virtual account of a composed payment intent and its
 * checkoutToken (docs/design.md §10).
 */
function fundingOf(funding: IntentView | undefined) {
  if (!funding) return null
  const { intent, account } = funding
  return {
    virtualAccount: account.accountNumber,
    virtualAccountName: account.accountName,
    bankCode: account.bankCode,
    bankName: bankName(account.bankCode),
    trackingId: account.trackingId,
    checkoutToken: intent.checkoutToken,
    amountKobo: intent.amountKobo,
    currency: intent.currency,
    expiresAt: intent.expiresAt.toISOString(),
  }
}

/** The funding intent of an escrow (every escrow has one: it is composed at create). */
export async function fundingOfEscrow(db: Queryable, escrow: repo.Escrow): Promise<IntentView | undefined> {
  return escrow.fundingPaymentIntentId ? getIntentById(db, escrow.fundingPaymentIntentId) : undefined
}

/**
 * Where the released amount goes and how far it got: before release the destination planned
 * (state `awaiting_release`); after release `pending` (a bank payout on its way), `paid` or
 * `failed` (with why). Null on a cancelled or expired escrow: nothing is disbursed.
 */
function disbursementOf(escrow: repo.Escrow) {
  if (escrow.status === 'cancelled' || escrow.status === 'expired') return null
  return {
    destination: escrow.destination ?? ('float' as const),
    state: escrow.disbursementState ?? ('awaiting_release' as const),
    outboundTransferId: escrow.disbursementOutboundTransferId,
    ...(escrow.disbursementState === 'failed' && escrow.disbursementFailureReason ? { failureReason: escrow.disbursementFailureReason } : {}),
  }
}

/**
 * The refund of a cancelled or expired escrow's funding (or an overfunded escrow's excess): its
 * state, the amount it pays back, and every refund made — one per funding credit, a retried one
 * after the one that failed. Null when nothing is to be refunded.
 */
function refundOf(escrow: repo.Escrow, refunds: readonly repo.EscrowRefund[]) {
  if (escrow.refundState === null) return null
  const latest = latestRefunds(refunds)
  return {
    state: escrow.refundState,
    amountKobo: [...latest.values()].reduce((sum, refund) => sum + refund.amountKobo, 0),
    refunds: refunds.map((refund) => ({ id: refund.refundId, creditId: refund.creditId, amountKobo: refund.amountKobo, state: refund.state, outboundTransferId: refund.outboundTransferId })),
  }
}

/** The last refund made of each credit (for each purpose): the one that counts. */
function latestRefunds(refunds: readonly repo.EscrowRefund[]): Map<string, repo.EscrowRefund> {
  return new Map(refunds.map((refund) => [`${refund.creditId}:${refund.purpose}`, refund]))
}

/** The escrow with what its read shows beyond the row: its funding account and its refunds. */
export async function escrowView(db: Queryable, escrow: repo.Escrow) {
  return toEscrowJson(escrow, await fundingOfEscrow(db, escrow), await repo.selectRefunds(db, escrow.id))
}

/** The escrow object of seed 002 (inside `escrow` of the read answer), with funding progress and money out. */
export function toEscrowJson(escrow: repo.Escrow, funding: IntentView | undefined, refunds: readonly repo.EscrowRefund[]) {
  return {
    // Rail's id, as payouts and refunds name their origin ({ type: 'escrow', id, reference: ref }).
    id: escrow.id,
    ref: escrow.ref,
    reference: escrow.reference,
    type: escrow.type,
    status: escrow.status,
    amount: escrow.amountKobo,
    fundedAmount: escrow.fundedAmountKobo,
    currency: escrow.currency,
    description: escrow.description,
    payerEmail: escrow.payerEmail,
    recipientEmail: escrow.recipientEmail,
    metadata: escrow.metadata,
    webhookUrl: escrow.webhookUrl,
    funding: fundingOf(funding),
    disbursement: disbursementOf(escrow),
    refund: refundOf(escrow, refunds),
    createdAt: escrow.createdAt.toISOString(),
    expiresAt: escrow.expiresAt.toISOString(),
    fundedAt: escrow.fundedAt?.toISOString() ?? null,
    releasedAt: escrow.releasedAt?.toISOString() ?? null,
    cancelledAt: escrow.cancelledAt?.toISOString() ?? null,
    expiredAt: escrow.expiredAt?.toISOString() ?? null,
  }
}

/** The answer of create (seed 002), also given to a replay. */
export function toCreatedJson(escrow: repo.Escrow, funding: IntentView | undefined) {
  return {
    success: true,
    ref: escrow.ref,
    status: escrow.status,
    amount: escrow.amountKobo,
    currency: escrow.currency,
    expiresAt: escrow.expiresAt.toISOString(),
    message: 'Escrow created; it awaits funding by the payer',
    funding: fundingOf(funding),
  }
}

/** Checks what the schema cannot: currency, metadata size, webhook URL. Nothing is written before. */
async function assertCreatable(deps: EscrowDeps, partner: Partner, request: CreateRequest): Promise<void> {
  if (request.currency !== ESCROW_CURRENCY) throw new RailError('unsupported_currency', `Only ${ESCROW_CURRENCY} is served`, { currency: request.currency })
  if (request.metadata !== undefined && Buffer.byteLength(JSON.stringify(request.metadata), 'utf8') > METADATA_MAX_BYTES) {
    throw fieldError('metadata', `must be at most ${METADATA_MAX_BYTES} bytes of JSON`)
  }
  if (request.webhookUrl !== undefined) await assertCallbackUrlAllowed(request.webhookUrl, partner.environment, deps.allowLoopbackCallbacks, 'webhookUrl')
  if (request.disbursement !== undefined) await assertDestination(deps, request.disbursement)
}

/**
 * A destination is a NUBAN at a Nigerian bank whose holder the name names, by the bank's name
 * enquiry asked now, before anything is written: a mismatch is 422 naming disbursement.accountName
 * (the bank's name in details), a bank that does not answer 502 provider_unavailable. The payment
 * pipeline asks the bank again when it sends the payout.
 */
async function assertDestination(deps: EscrowDeps, destination: repo.Destination): Promise<void> {
  await checkBankAccount({ pool: deps.pool, providers: deps.outbound.payments.providers }, destination, 'disbursement')
}

/**
 * Creates an escrow in `initiated`, with the job that expires it at its TTL, in one transaction.
 * Idempotent on `reference` per partner: the same body answers the existing escrow (replayed),
 * another body is 409 idempotency_conflict.
 */
export async function createEscrow(deps: EscrowDeps, caller: Caller, request: CreateRequest): Promise<{ escrow: repo.Escrow; funding: IntentView | undefined; replayed: boolean }> {
  const partner = caller.partner
  const hash = requestHash(request)
  if (request.reference !== undefined) {
    const known = await repo.selectByReference(deps.pool, partner.id, request.reference)
    if (known) return replay(deps.pool, known, hash)
  }
  await assertCreatable(deps, partner, request)
  const now = deps.clock.now()
  const id = uuidv7()
  const expiresAt = new Date(now.getTime() + (request.ttlHours ?? TTL_HOURS_DEFAULT) * 3_600_000)
  // The funding account: a payment intent owned by the escrow, allocated at the provider before
  // the transaction — no account, no escrow (502 or 403, and the same reference can be retried).
  const fundingRequest = { reference: `escrow:${id}`, amountKobo: request.amount, currency: request.currency, purposeTag: 'escrow', expiresAt: expiresAt.toISOString() }
  const allocated = await allocateIntentAccount(deps.collections, caller, fundingRequest)
  // With a reference, concurrent duplicates wait for the first outside any transaction (withKeyLock).
  const run = <T>(work: (tx: Tx) => Promise<T>) =>
    request.reference === undefined ? withTransaction(deps.pool, work) : withKeyLock(deps.pool, `escrow:${partner.id}:${request.reference}`, work)
  return run(async (tx) => {
    const inserted = await repo.insertEscrow(tx, {
      id,
      partnerId: partner.id,
      ref: `EPT-${now.getTime()}-${randomBase62(12)}`,
      reference: request.reference ?? null,
      requestHash: hash,
      type: request.type,
      amountKobo: request.amount,
      currency: request.currency,
      description: request.description,
      payerEmail: request.payerEmail,
      recipientEmail: request.recipientEmail,
      metadata: request.metadata ?? {},
      webhookUrl: request.webhookUrl ?? null,
      destination: request.disbursement ?? null,
      createdAt: now,
      expiresAt,
    })
    // A concurrent create with this reference committed first (the insert waited for it).
    if (!inserted) return replay(tx, (await repo.selectByReference(tx, partner.id, request.reference!))!, hash)
    const funding = await createIntentInTransaction(tx, caller, fundingRequest, allocated, { type: 'escrow', id })
    const escrow = await repo.setFundingIntent(tx, id, funding.intent.id)
    await addJob(tx, EXPIRE_TASK, { id }, { runAt: expiresAt, jobKey: expireJobKey(id) })
    return { escrow, funding, replayed: false }
  })
}

async function replay(db: Queryable, known: repo.Escrow, hash: string): Promise<{ escrow: repo.Escrow; funding: IntentView | undefined; replayed: boolean }> {
  if (known.requestHash !== hash) {
    throw new RailError('idempotency_conflict', `reference ${known.reference} was already used with a different request`, { ref: known.ref })
  }
  return { escrow: known, funding: await fundingOfEscrow(db, known), replayed: true }
}

function expireJobKey(id: string): string {
  return `escrow_expire:${id}`
}

export async function getEscrow(db: Queryable, partnerId: string, ref: string): Promise<repo.Escrow> {
  const escrow = await repo.selectByRef(db, partnerId, ref)
  if (!escrow) throw notFound('Escrow')
  return escrow
}

export async function listEscrows(db: Queryable, filter: { partnerId: string; status?: EscrowStatus; limit: number; cursor?: string }) {
  const rows = await repo.selectEscrows(db, { partnerId: filter.partnerId, status: filter.status, beforeId: filter.cursor, limit: pageQueryLimit(filter.limit) })
  const page = toPage(rows, filter.limit)
  return { escrows: page.items, nextCursor: page.nextCursor }
}

export interface ReleaseRequest {
  reason?: string
  /** Replaces the destination given at create; on a released escrow whose disbursement failed, the retry's. */
  disbursement?: repo.Destination
}

/**
 * Release: a funded escrow becomes released and its amount is disbursed (to the destination of the
 * request, else of the create, else the partner's float); any excess funding goes back to the
 * payer. A released escrow whose disbursement failed may be released again: the amount, held
 * again, is disbursed anew (to the request's destination, else the last one). Anything else is
 * refused and nothing moves.
 */
export async function releaseEscrow(deps: EscrowDeps, caller: Caller, ref: string, request: ReleaseRequest): Promise<{ escrow: repo.Escrow; retried: boolean }> {
  const partnerId = caller.partner.id
  if (request.disbursement !== undefined) {
    // Someone else's escrow is 404 before the bank is asked about the destination.
    await getEscrow(deps.pool, partnerId, ref)
    await assertDestination(deps, request.disbursement)
  }
  return withTransaction(deps.pool, async (tx) => {
    const released = await repo.transition(tx, { partnerId, ref }, 'released', { at: deps.clock.now(), reason: request.reason ?? null })
    if (released) {
      const escrow = await disburse(deps, tx, caller, (await repo.startDisbursement(tx, { id: released.id }, null, request.disbursement))!)
      await emit(tx, escrow, 'escrow.released')
      if (escrow.disbursementState === 'paid') await emit(tx, escrow, 'escrow.disbursed')
      // The excess of an overfunded escrow goes back to the payer.
      const refunded = escrow.fundedAmountKobo > escrow.amountKobo ? await startRefund(deps, tx, caller, escrow, request.reason) : escrow
      return { escrow: refunded, retried: false }
    }
    // A release again: the escrow may have a payout in flight (an excess refund), whose settling locks holding first.
    await lockLedgerAccount(tx, await ensurePartnerAccount(tx, partnerId, ESCROW_CURRENCY, 'escrow_holding'))
    const again = await repo.startDisbursement(tx, { partnerId, ref }, 'failed', request.disbursement)
    if (again) return { escrow: await disburse(deps, tx, caller, again), retried: true }
    throw await refusal(tx, partnerId, ref, 'released')
  })
}

/**
 * Pays a pending disbursement: to a bank account, an outbound transfer of the payment pipeline held
 * on the escrow holding account (the bank checks the account's name against the destination's);
 * to the float, at once. The payout's reference is Rail's, one per attempt.
 */
async function disburse(deps: EscrowDeps, tx: Tx, caller: Caller, escrow: repo.Escrow): Promise<repo.Escrow> {
  const holding = await holdingOf(tx, escrow)
  const destination = escrow.destination
  if (destination === null) {
    const float = await ensurePartnerAccount(tx, escrow.partnerId, escrow.currency, 'float')
    await move(tx, escrow, [transfer(escrow, 'disbursement', holding, float, escrow.amountKobo)])
    return (await repo.endDisbursement(tx, escrow.id, 'paid', null, null))!
  }
  const payout = await submitOutboundInTransaction(
    deps.outbound,
    tx,
    caller,
    {
      clientReference: `rail-escrow-${escrow.id}-${escrow.disbursementAttempts}`,
      beneficiaryAccountNumber: destination.accountNumber,
      beneficiaryBankCode: destination.bankCode,
      beneficiaryAccountName: destination.accountName,
      amountKobo: escrow.amountKobo,
      currency: escrow.currency,
      narration: `Escrow ${escrow.ref}`,
    },
    { accountId: holding, originType: 'escrow', originId: escrow.id, originReference: escrow.ref },
  )
  // The amount is in the holding account, so its hold cannot fail for funds.
  if (payout.state === 'failed') throw new Error(`escrow ${escrow.id} disbursement ${payout.id} failed at submit: ${payout.failureReason?.code}`)
  return repo.setDisbursementPayout(tx, escrow.id, payout.id)
}

/**
 * A disbursement's payout ended, on the payment pipeline's transaction: confirmed → paid; failed →
 * its hold was voided back to the escrow holding account in this same transaction, and the
 * disbursement is failed until the partner releases the escrow again. Each sends its event.
 */
export async function settleEscrowPayouts(tx: Tx, payouts: readonly OutboundTransfer[]): Promise<void> {
  for (const payout of payouts) {
    if (payout.originId === null) continue
    const paid = payout.state === 'confirmed'
    const failureReason = paid ? null : { ...(payout.failureReason ?? { code: 'failed', message: 'The bank did not pay the transfer' }) }
    const ended = await repo.endDisbursement(tx, payout.originId, paid ? 'paid' : 'failed', payout.id, failureReason)
    if (ended) await emit(tx, ended, paid ? 'escrow.disbursed' : 'escrow.disbursement_failed')
  }
}

/** Cancel: from initiated or funded; whatever was funded goes back to the payer, credit by credit. */
export async function cancelEscrow(deps: EscrowDeps, caller: Caller, ref: string, reason: string): Promise<repo.Escrow> {
  const partnerId = caller.partner.id
  return withTransaction(deps.pool, async (tx) => {
    const cancelled = await repo.transition(tx, { partnerId, ref }, 'cancelled', { at: deps.clock.now(), reason })
    if (!cancelled) throw await refusal(tx, partnerId, ref, 'cancelled')
    await emit(tx, cancelled, 'escrow.cancelled')
    return cancelled.fundedAmountKobo > 0 ? startRefund(deps, tx, caller, cancelled, reason) : cancelled
  })
}

/** The part of EscrowDeps that expiry (a job) needs. */
export type ExpiryDeps = Pick<EscrowDeps, 'pool' | 'clock' | 'outbound'>

/**
 * Expiry: an initiated escrow whose TTL has elapsed by the clock becomes expired, and any partial
 * funding goes back to the payer, credit by credit. Undefined when it was not due or is elsewhere
 * already. No request asks for it: its refunds are made by the escrow's system caller.
 */
export async function expireEscrow(deps: ExpiryDeps, id: string): Promise<repo.Escrow | undefined> {
  return withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now()
    const expired = await repo.transition(tx, { id }, 'expired', { at: now, dueBy: now })
    if (!expired) return undefined
    await emit(tx, expired, 'escrow.expired')
    return expired.fundedAmountKobo > 0 ? startRefund(deps, tx, await systemCaller(tx, expired), expired, 'escrow expired before it was funded') : expired
  })
}

/**
 * Who a refund is made by when no request asks (expiry): the escrow's partner, with a credential
 * id that names Rail's job (the payout's creatorMetadata shows it).
 */
async function systemCaller(tx: Queryable, escrow: repo.Escrow): Promise<Caller> {
  const partner = await getPartner(tx, escrow.partnerId)
  if (!partner) throw new Error(`escrow ${escrow.id}: partner ${escrow.partnerId} not found`)
  return { partner, credentialId: 'rail:escrow-expiry' }
}

/** The sweep: expires initiated escrows past their TTL, each in its own transaction. */
export async function expireDueEscrows(deps: ExpiryDeps): Promise<number> {
  const ids = await repo.selectDueToExpire(deps.pool, deps.clock.now(), EXPIRY_SWEEP_BATCH)
  let expired = 0
  for (const id of ids) if (await expireEscrow(deps, id)) expired++
  return expired
}

/** 404 when the caller has no such escrow; else 400 invalid_escrow_status naming its status. */
async function refusal(tx: Queryable, partnerId: string, ref: string, next: 'released' | 'cancelled'): Promise<RailError> {
  const current = await repo.selectByRef(tx, partnerId, ref)
  if (!current) return notFound('Escrow')
  if (next === 'released' && current.status === 'released') {
    return new RailError(
      'invalid_escrow_status',
      `Escrow ${ref} is released; its disbursement is ${current.disbursementState}, and only a failed disbursement can be released again`,
    )
  }
  const needs = next === 'released' ? 'release needs funded' : 'cancel needs initiated or funded'
  return new RailError('invalid_escrow_status', `Escrow ${ref} is ${current.status}; ${needs}`)
}

/**
 * The seam for collections: a credit to the escrow's funding account, already posted to the
 * partner's collections account, applied inside the caller's transaction. An initiated escrow
 * takes it (collections → escrow holding) and becomes funded once its credits reach the amount;
 * any other escrow (or currency) takes nothing: 'unmatched', for the caller's unmatched triage.
 * Applying the same creditId again changes nothing and answers 'applied'.
 */
export async function applyEscrowFunding(
  tx: Queryable,
  credit: { escrowId: string; partnerId: string; amountKobo: number; currency: string; creditId: string; collectionsAccountId: string },
): Promise<'applied' | 'unmatched'> {
  if (!Number.isSafeInteger(credit.amountKobo) || credit.amountKobo <= 0) throw new Error(`escrow funding: amount ${credit.amountKobo} is not a positive kobo integer`)
  const escrow = await repo.selectForUpdate(tx, credit.escrowId, credit.partnerId)
  if (!escrow || escrow.status !== 'initiated' || escrow.currency !== credit.currency) return 'unmatched'
  const [outcome] = await createTransfers(tx, [
    {
      id: derivedId(credit.creditId, 'escrow_funding'),
      debitAccountId: credit.collectionsAccountId,
      creditAccountId: await ensurePartnerAccount(tx, escrow.partnerId, escrow.currency, 'escrow_holding'),
      amountKobo: credit.amountKobo,
      currency: escrow.currency,
      code: 'escrow_funding',
      sourceType: 'escrow',
      sourceId: escrow.id,
    },
  ])
  if (outcome!.result === 'exists') return 'applied' // this credit was applied already, with its funded amount
  if (outcome!.result !== 'ok') throw new Error(`escrow ${escrow.id} funding from credit ${credit.creditId}: ${outcome!.result}`)
  const now = new Date()
  // Remembered with its credit: a refund pays each credit back to the account it came from.
  await repo.insertFundingCredit(tx, escrow.id, credit.creditId, credit.amountKobo, now)
  const funded = await repo.addFunding(tx, escrow.id, credit.amountKobo, now)
  if (funded.status === 'funded') await emit(tx, funded, 'escrow.funded')
  return 'applied'
}

async function holdingOf(tx: Queryable, escrow: repo.Escrow): Promise<string> {
  return ensurePartnerAccount(tx, escrow.partnerId, escrow.currency, 'escrow_holding')
}

// ---- refunds ----------------------------------------------------------------------------------

interface PlannedRefund {
  creditId: string
  purpose: repo.RefundPurpose
  amountKobo: number
}

/**
 * What an escrow pays back: a cancelled or expired escrow, each funding credit in full; a released
 * overfunded escrow, its excess, from the credit that overfunded it (the last applied: before it
 * the credits were short of the amount, so the excess is less than that credit).
 */
async function refundPlan(db: Queryable, escrow: repo.Escrow): Promise<PlannedRefund[]> {
  const credits = await repo.selectFundingCredits(db, escrow.id)
  if (escrow.status === 'cancelled' || escrow.status === 'expired') return credits.map((credit) => ({ ...credit, purpose: 'refund' }))
  const excessKobo = escrow.fundedAmountKobo - escrow.amountKobo
  const last = credits.at(-1)
  if (escrow.status !== 'released' || excessKobo <= 0 || !last) return []
  return [{ creditId: last.creditId, purpose: 'excess_refund', amountKobo: excessKobo }]
}

/** The refund starts (pending), and every planned refund is made. */
async function startRefund(deps: Pick<EscrowDeps, 'outbound'>, tx: Tx, caller: Caller, escrow: repo.Escrow, reason: string | undefined): Promise<repo.Escrow> {
  const pending = await repo.beginRefund(tx, escrow.id)
  if (!pending) throw new Error(`escrow ${escrow.id}: its refund was started already`)
  return makeRefunds(deps, tx, caller, pending, reason)
}

/**
 * Makes each planned refund that has none pending or succeeded (all of them at first; on a retry,
 * those whose last refund failed): a refund of the credit through the refunds core, paid to the
 * credit's sender and held on the escrow holding account. A credit the bank gave no valid sender
 * account for cannot be refunded: the refund is failed at once and the money stays held.
 */
async function makeRefunds(deps: Pick<EscrowDeps, 'outbound'>, tx: Tx, caller: Caller, escrow: repo.Escrow, reason: string | undefined): Promise<repo.Escrow> {
  const existing = await repo.selectRefunds(tx, escrow.id)
  const made = latestRefunds(existing)
  const attempts = existing.length
  const holding = await holdingOf(tx, escrow)
  let unrefundable = false
  for (const [index, planned] of (await refundPlan(tx, escrow)).entries()) {
    const last = made.get(`${planned.creditId}:${planned.purpose}`)
    if (last && last.state !== 'failed') continue
    const refund = await refundOne(deps, tx, caller, escrow, planned, holding, `escrow:${escrow.id}:${planned.purpose}:${attempts + index}`, reason)
    if (refund) {
      await repo.insertRefund(tx, { refundId: refund.id, escrowId: escrow.id, creditId: planned.creditId, purpose: planned.purpose, amountKobo: planned.amountKobo, outboundTransferId: refund.outboundTransferId })
    } else unrefundable = true
  }
  if (!unrefundable) return escrow
  const failed = (await repo.setRefundState(tx, escrow.id, 'failed'))!
  await emit(tx, failed, 'escrow.refund_failed', { refund: refundOf(failed, await repo.selectRefunds(tx, escrow.id)) })
  return failed
}

/** One refund of one credit; undefined when the credit has no sender account to pay back (nothing written). */
async function refundOne(
  deps: Pick<EscrowDeps, 'outbound'>,
  tx: Tx,
  caller: Caller,
  escrow: repo.Escrow,
  planned: PlannedRefund,
  holding: string,
  reference: string,
  reason: string | undefined,
): Promise<Refund | undefined> {
  try {
    return await refundCreditInTransaction({ outbound: deps.outbound, onEnded: {} }, tx, {
      caller,
      reference,
      creditId: planned.creditId,
      amountKobo: planned.amountKobo,
      sourceAccountId: holding,
      origin: { type: 'escrow', id: escrow.id },
      reason: (reason ?? (planned.purpose === 'refund' ? `escrow ${escrow.ref} ${escrow.status}` : `excess funding of escrow ${escrow.ref}`)).slice(0, 200),
    })
  } catch (error) {
    // Thrown before anything is written (the core checks the sender's account first): the transaction goes on.
    if (error instanceof RailError && error.code === 'refund_destination_unknown') return undefined
    throw error
  }
}

/**
 * Refunds of escrows ended, on the payment pipeline's transaction (the refunds core's onEnded
 * hook): each escrow's refund is refunded once every credit's last refund succeeded, failed as
 * soon as one failed (its hold was voided: the money is back in escrow holding). Each change
 * sends its event once.
 */
export async function settleEscrowRefunds(tx: Tx, refunds: readonly Refund[]): Promise<void> {
  const ended = await repo.endRefunds(
    tx,
    refunds.filter((refund) => refund.state !== 'pending').map((refund) => ({ refundId: refund.id, state: refund.state as 'succeeded' | 'failed' })),
  )
  for (const escrowId of [...new Set(ended.map((refund) => refund.escrowId))].sort()) {
    const escrow = (await repo.lockById(tx, escrowId))!
    const all = await repo.selectRefunds(tx, escrowId)
    const latest = [...latestRefunds(all).values()]
    const next = latest.some((refund) => refund.state === 'failed') ? 'failed' : latest.every((refund) => refund.state === 'succeeded') ? 'refunded' : undefined
    if (!next || escrow.refundState !== 'pending') continue
    const changed = (await repo.setRefundState(tx, escrowId, next))!
    await emit(tx, changed, next === 'refunded' ? 'escrow.refunded' : 'escrow.refund_failed', { refund: refundOf(changed, all) })
  }
}

/**
 * Retries a failed refund: every credit whose last refund failed is refunded again, to the account
 * it came from. Anything but a failed refund is refused (400 invalid_escrow_status) and nothing moves.
 */
export async function retryRefund(deps: EscrowDeps, caller: Caller, ref: string): Promise<repo.Escrow> {
  const partnerId = caller.partner.id
  return withTransaction(deps.pool, async (tx) => {
    const escrow = await repo.selectByRef(tx, partnerId, ref)
    if (!escrow) throw notFound('Escrow')
    // Its other payouts may be in flight, and their settling locks holding before the escrow.
    await lockLedgerAccount(tx, await holdingOf(tx, escrow))
    // Failed → pending in SQL: of two retries at once, one retries and the other is refused.
    const pending = await repo.setRefundState(tx, escrow.id, 'pending')
    if (!pending) {
      const current = (await repo.selectByRef(tx, partnerId, ref))!
      throw new RailError('invalid_escrow_status', `Escrow ${ref} is ${current.status}; its refund is ${current.refundState ?? 'none'}, and only a failed refund can be retried`)
    }
    return makeRefunds(deps, tx, caller, pending, undefined)
  })
}

function transfer(escrow: repo.Escrow, purpose: 'disbursement', debitAccountId: string, creditAccountId: string, amountKobo: number): TransferInput {
  return {
    id: derivedId(escrow.id, `escrow_${purpose}`),
    debitAccountId,
    creditAccountId,
    amountKobo,
    currency: escrow.currency,
    code: `escrow_${purpose}`,
    sourceType: 'escrow',
    sourceId: escrow.id,
  }
}

/** The transfers of one change, all or none; the holding account must hold them (else a bug). */
async function move(tx: Queryable, escrow: repo.Escrow, transfers: TransferInput[]): Promise<void> {
  const results = await createTransfers(tx, transfers, { linked: true })
  const refused = results.find((outcome) => outcome.result !== 'ok')
  if (refused) throw new Error(`escrow ${escrow.id} ${escrow.status}: transfer ${refused.id} ${refused.result}`)
}

/** Seals a webhookSecret to its partner's registration: a copy on another row does not open. */
function webhookSecretBinding(partnerId: string): string {
  return `escrow_webhook:${partnerId}`
}

/**
 * The signed event of a change. Target: the escrow's own webhookUrl, else the registered escrow
 * webhook, else (neither) the partner's default callback URL like any event. Signature: the
 * registered webhookSecret when there is one; none for an escrow webhook without a secret (the
 * seed signs only when a secret is registered); the partner's callback secret on the default URL.
 */
type EscrowEventType =
  | 'escrow.funded'
  | 'escrow.released'
  | 'escrow.cancelled'
  | 'escrow.expired'
  | 'escrow.disbursed'
  | 'escrow.disbursement_failed'
  | 'escrow.refunded'
  | 'escrow.refund_failed'

async function emit(tx: Queryable, escrow: repo.Escrow, type: EscrowEventType, extra: Record<string, unknown> = {}): Promise<void> {
  const webhook = await repo.selectWebhook(tx, escrow.partnerId)
  const url = escrow.webhookUrl ?? webhook?.url ?? null
  const signing: EventSigning = webhook?.secretSealed
    ? { kind: 'sealed', secretSealed: webhook.secretSealed, boundTo: webhookSecretBinding(escrow.partnerId) }
    : url !== null
      ? { kind: 'none' }
      : { kind: 'partner' }
  const data: Record<string, unknown> = { ref: escrow.ref, status: escrow.status, amount: escrow.amountKobo, currency: escrow.currency }
  if (type === 'escrow.released') data.releasedAt = escrow.releasedAt!.toISOString()
  if (type === 'escrow.disbursed' || type === 'escrow.disbursement_failed') data.disbursement = disbursementOf(escrow)
  Object.assign(data, extra)
  await recordEvent(tx, { partnerId: escrow.partnerId, type, objectType: 'escrow', objectId: escrow.ref, data, metadata: escrow.metadata, callbackUrl: url, signing })
}

export interface WebhookRequest {
  webhookUrl: string
  /** Omitted: the registered secret stays; null: it is removed. */
  webhookSecret?: string | null
}

/**
 * Registers or updates the partner's escrow webhook. The URL must be https; a sandbox partner may
 * use http to a loopback receiver when loopback callbacks are allowed (local development). The
 * SSRF guard of Events applies as to every callback URL.
 */
export async function registerWebhook(deps: EscrowDeps, partner: Partner, request: WebhookRequest) {
  const url = new URL(request.webhookUrl)
  const localReceiver = partner.environment === 'sandbox' && deps.allowLoopbackCallbacks && isLoopbackHost(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && localReceiver)) throw fieldError('webhookUrl', 'must be an https URL')
  await assertCallbackUrlAllowed(request.webhookUrl, partner.environment, deps.allowLoopbackCallbacks, 'webhookUrl')
  const sealed =
    request.webhookSecret === undefined ? undefined : request.webhookSecret === null ? null : seal(deps.masterKey, request.webhookSecret, webhookSecretBinding(partner.id))
  const webhook = await repo.upsertWebhook(deps.pool, partner.id, request.webhookUrl, sealed)
  const hasSecret = webhook.secretSealed !== null
  return {
    success: true,
    webhookUrl: webhook.url,
    hasSecret,
    message: hasSecret
      ? 'Webhook registered; events are signed in X-Rail-Signature with your webhookSecret'
      : 'Webhook registered without a secret; events are not signed (registering a webhookSecret is strongly recommended)',
  }
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '')
  return host === 'localhost' || classifyAddress(host) === 'loopback'
}
