// Escrow (docs/contracts/escrow.md): a partner creates an escrow, the payer funds it, Rail holds the funds in the
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
import { createTransfers, derivedId, ensurePartnerAccount, lockLedgerAccount } from '../ledger/service.ts'
import { getPartner, type Caller } from '../partners/service.ts'
import type { Clock } from '../platform/clock.ts'
import { withTransaction, type Queryable, type Tx } from '../platform/db.ts'
import { notFound, RailError } from '../platform/errors.ts'
import { pageQueryLimit, toPage } from '../platform/pagination.ts'
import { readPage } from '../platform/read-pool.ts'
import type { CollectionsRegistries, OwnedCredit } from '../collections/credits/service.ts'
import { submitOutboundInTransaction, type OutboundTransfer } from '../money-out/outbound/service.ts'
import type { PayoutOrigins } from '../money-out/outbound/types.ts'
import type { RefundOrigins } from '../money-out/refunds/service.ts'
import { furthestOffsetSeconds } from '../partners/sandbox-clock/service.ts'
import * as repo from './repo.ts'
import type { EscrowStatus } from './states.ts'
import { assertDestination } from './create.ts'
import { emit } from './events.ts'
import { holdingOf, move, transfer } from './money.ts'
import { settleEscrowRefunds, startRefund } from './refunds.ts'
import { ESCROW_CURRENCY, type EscrowDeps, type ExpiryDeps, type ReleaseRequest } from './types.ts'

// The module's face: its parts are types.ts, views.ts, create.ts, webhooks.ts, refunds.ts, events.ts and money.ts.
export type { Destination, Escrow, EscrowType } from './repo.ts'
export {
  ESCROW_CURRENCY,
  AMOUNT_MIN_KOBO,
  DESCRIPTION_MAX_CHARS,
  REASON_MAX_CHARS,
  TTL_HOURS_DEFAULT,
  TTL_HOURS_MAX,
  METADATA_MAX_BYTES,
  REFERENCE_MAX_CHARS,
  WEBHOOK_SECRET_MIN_CHARS,
  WEBHOOK_SECRET_MAX_CHARS,
  ESCROW_PAGE_MAX,
  EXPIRE_TASK,
  EXPIRY_SWEEP_TASK,
  ESCROW_CRONTAB,
  type EscrowDeps,
  type CreateRequest,
  type ReleaseRequest,
  type ExpiryDeps,
} from './types.ts'
export { fundingOfEscrow, escrowView, toEscrowJson, toCreatedJson } from './views.ts'
export { createEscrow } from './create.ts'
export { type WebhookRequest, registerWebhook } from './webhooks.ts'
export { retryRefund } from './refunds.ts'

/**
 * Plugs escrow into money-out and collections: it hears when its disbursements' payouts end (payout
 * origins) and when its refunds end (refund origins), and takes credits to its funding intent
 * (credit owners).
 */
export function plugEscrow(
  registries: { origins: PayoutOrigins; refundOrigins: RefundOrigins } & Pick<CollectionsRegistries, 'creditOwners'>,
): void {
  registries.origins.register('escrow', settleEscrowPayouts)
  registries.refundOrigins.register('escrow', settleEscrowRefunds)
  registries.creditOwners.register('escrow', fundEscrow)
}

/** Escrows expired per sweep run; the next run (a minute later) takes the rest. */
const EXPIRY_SWEEP_BATCH = 500

export async function getEscrow(db: Queryable, partnerId: string, ref: string): Promise<repo.Escrow> {
  const escrow = await repo.selectByRef(db, partnerId, ref)
  if (!escrow) throw notFound('Escrow')
  return escrow
}

/** What a statement line shows of the escrows behind it (statements): each one's ref. */
export function escrowRefs(db: Queryable, ids: readonly string[]): Promise<{ id: string; ref: string }[]> {
  return repo.selectRefs(db, ids)
}

/** The escrow that composed an intent (its owner), for the intent's checkout page. */
export async function getEscrowById(db: Queryable, partnerId: string, id: string): Promise<repo.Escrow | undefined> {
  return repo.selectById(db, partnerId, id)
}

export async function listEscrows(
  db: Queryable,
  filter: { partnerId: string; status?: EscrowStatus; limit: number; cursor?: string },
) {
  const rows = await readPage(db, filter.cursor, (reader, before) =>
    repo.selectEscrows(reader, {
      partnerId: filter.partnerId,
      status: filter.status,
      beforeId: before,
      limit: pageQueryLimit(filter.limit),
    }),
  )
  const page = toPage(rows, filter.limit)
  return { escrows: page.items, nextCursor: page.nextCursor }
}

/**
 * Release: a funded escrow becomes released and its amount is disbursed (to the destination of the
 * request, else of the create, else the partner's float); any excess funding goes back to the
 * payer. A released escrow whose disbursement failed may be released again: the amount, held
 * again, is disbursed anew (to the request's destination, else the last one). Anything else is
 * refused and nothing moves.
 */
export async function releaseEscrow(
  deps: EscrowDeps,
  caller: Caller,
  ref: string,
  request: ReleaseRequest,
): Promise<{ escrow: repo.Escrow; retried: boolean }> {
  const partnerId = caller.partner.id
  if (request.disbursement !== undefined) {
    // Someone else's escrow is 404 before the bank is asked about the destination.
    await getEscrow(deps.pool, partnerId, ref)
    await assertDestination(deps, partnerId, request.disbursement)
  }
  return withTransaction(deps.pool, async (tx) => {
    const released = await repo.transition(tx, { partnerId, ref }, 'released', {
      at: deps.clock.now(),
      reason: request.reason ?? null,
    })
    if (released) {
      const escrow = await disburse(
        deps,
        tx,
        caller,
        (await repo.startDisbursement(tx, { id: released.id }, null, request.disbursement))!,
      )
      await emit(tx, deps.clock, escrow, 'escrow.released')
      if (escrow.disbursementState === 'paid') await emit(tx, deps.clock, escrow, 'escrow.disbursed')
      // The excess of an overfunded escrow goes back to the payer.
      const refunded =
        escrow.fundedAmountKobo > escrow.amountKobo
          ? await startRefund(deps, tx, caller, escrow, request.reason)
          : escrow
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
  if (payout.state === 'failed')
    throw new Error(`escrow ${escrow.id} disbursement ${payout.id} failed at submit: ${payout.failureReason?.code}`)
  return repo.setDisbursementPayout(tx, escrow.id, payout.id)
}

/**
 * A disbursement's payout ended, on the payment pipeline's transaction: confirmed → paid; failed →
 * its hold was voided back to the escrow holding account in this same transaction, and the
 * disbursement is failed until the partner releases the escrow again. Each sends its event.
 */
export async function settleEscrowPayouts(tx: Tx, payouts: readonly OutboundTransfer[], clock: Clock): Promise<void> {
  for (const payout of payouts) {
    if (payout.originId === null) continue
    const paid = payout.state === 'confirmed'
    const failureReason = paid
      ? null
      : { ...(payout.failureReason ?? { code: 'failed', message: 'The bank did not pay the transfer' }) }
    const ended = await repo.endDisbursement(tx, payout.originId, paid ? 'paid' : 'failed', payout.id, failureReason)
    if (ended) await emit(tx, clock, ended, paid ? 'escrow.disbursed' : 'escrow.disbursement_failed')
  }
}

/** Cancel: from initiated or funded; whatever was funded goes back to the payer, credit by credit. */
export async function cancelEscrow(
  deps: EscrowDeps,
  caller: Caller,
  ref: string,
  reason: string,
): Promise<repo.Escrow> {
  const partnerId = caller.partner.id
  return withTransaction(deps.pool, async (tx) => {
    const cancelled = await repo.transition(tx, { partnerId, ref }, 'cancelled', { at: deps.clock.now(), reason })
    if (!cancelled) throw await refusal(tx, partnerId, ref, 'cancelled')
    await emit(tx, deps.clock, cancelled, 'escrow.cancelled')
    return cancelled.fundedAmountKobo > 0 ? startRefund(deps, tx, caller, cancelled, reason) : cancelled
  })
}

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
    await emit(tx, deps.clock, expired, 'escrow.expired')
    return expired.fundedAmountKobo > 0
      ? startRefund(deps, tx, await systemCaller(tx, expired), expired, 'escrow expired before it was funded')
      : expired
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
  const ids = await repo.selectDueToExpire(
    deps.pool,
    deps.clock.now(),
    await furthestOffsetSeconds(deps.pool),
    EXPIRY_SWEEP_BATCH,
  )
  let expired = 0
  for (const id of ids) if (await expireEscrow(deps, id)) expired++
  return expired
}

/** 404 when the caller has no such escrow; else 400 invalid_escrow_status naming its status. */
async function refusal(
  tx: Queryable,
  partnerId: string,
  ref: string,
  next: 'released' | 'cancelled',
): Promise<RailError> {
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
  deps: Pick<EscrowDeps, 'clock'>,
  tx: Queryable,
  credit: {
    escrowId: string
    partnerId: string
    amountKobo: number
    currency: string
    creditId: string
    collectionsAccountId: string
  },
): Promise<'applied' | 'unmatched'> {
  if (!Number.isSafeInteger(credit.amountKobo) || credit.amountKobo <= 0)
    throw new Error(`escrow funding: amount ${credit.amountKobo} is not a positive kobo integer`)
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
  if (outcome!.result !== 'ok')
    throw new Error(`escrow ${escrow.id} funding from credit ${credit.creditId}: ${outcome!.result}`)
  // A record of when it happened, stamped by the injected clock as release, cancel and expiry stamp
  // theirs; the partner's own clock judges deadlines only (expiry compares with partner_now).
  const now = deps.clock.now()
  // Remembered with its credit: a refund pays each credit back to the account it came from.
  await repo.insertFundingCredit(tx, escrow.id, credit.creditId, credit.amountKobo, now)
  const funded = await repo.addFunding(tx, escrow.id, credit.amountKobo, now)
  if (funded.status === 'funded') await emit(tx, deps.clock, funded, 'escrow.funded')
  return 'applied'
}

/** The escrow's rule for a credit to its funding account: all of it while initiated, none after. */
async function fundEscrow(
  tx: Tx,
  credit: OwnedCredit,
  clock: Clock,
): Promise<{ takenKobo: number; movedOnKobo: number }> {
  const outcome = await applyEscrowFunding({ clock }, tx, { ...credit, escrowId: credit.ownerId })
  const takenKobo = outcome === 'applied' ? credit.amountKobo : 0
  // The escrow takes what it funds out of collections into its holding account: nothing of it is settled.
  return { takenKobo, movedOnKobo: takenKobo }
}
