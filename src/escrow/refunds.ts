// Refunds of an escrow's funding credits (cancel, expiry, an excess at release), each through the
// refunds core, and their ends. The refunds are the refunds module's rows (origin escrow): the
// escrow keeps no copy, it reads them (refundsOfOrigin) to show and to decide its refund.
import { creditsForRefunds } from '../collections/credits/service.ts'
import { lockLedgerAccount } from '../ledger/service.ts'
import type { Caller } from '../partners/service.ts'
import type { Clock } from '../platform/clock.ts'
import { withTransaction, type Queryable, type Tx } from '../platform/db.ts'
import { notFound, RailError } from '../platform/errors.ts'
import { refundCreditInTransaction, refundsOfOrigin, type Refund } from '../money-out/refunds/service.ts'
import * as repo from './repo.ts'
import { emit } from './events.ts'
import { holdingOf } from './money.ts'
import type { EscrowDeps } from './types.ts'
import { latestRefunds, refundOf } from './views.ts'

/** A refund of a cancelled or expired escrow's funding, or an overfunded released escrow's excess (one purpose an escrow). */
type RefundPurpose = 'refund' | 'excess_refund'

interface PlannedRefund {
  creditId: string
  purpose: RefundPurpose
  amountKobo: number
}

/**
 * What an escrow pays back: a cancelled or expired escrow, each funding credit in full; a released
 * overfunded escrow, its excess, from the credit that overfunded it (the last applied: before it
 * the credits were short of the amount, so the excess is less than that credit).
 */
async function refundPlan(db: Queryable, escrow: repo.Escrow): Promise<PlannedRefund[]> {
  const credits = await repo.selectFundingCredits(db, escrow.id)
  if (escrow.status === 'cancelled' || escrow.status === 'expired')
    return credits.map((credit) => ({ ...credit, purpose: 'refund' }))
  const excessKobo = escrow.fundedAmountKobo - escrow.amountKobo
  const last = credits.at(-1)
  if (escrow.status !== 'released' || excessKobo <= 0 || !last) return []
  return [{ creditId: last.creditId, purpose: 'excess_refund', amountKobo: excessKobo }]
}

/** The refunds the escrow asked for, oldest first (a retried one after the one that failed). */
function refundsOfEscrow(db: Queryable, escrowId: string): Promise<Refund[]> {
  return refundsOfOrigin(db, { type: 'escrow', id: escrowId })
}

/** The refund starts (pending), and every planned refund is made. */
export async function startRefund(
  deps: Pick<EscrowDeps, 'outbound' | 'clock'>,
  tx: Tx,
  caller: Caller,
  escrow: repo.Escrow,
  reason: string | undefined,
): Promise<repo.Escrow> {
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
async function makeRefunds(
  deps: Pick<EscrowDeps, 'outbound' | 'clock'>,
  tx: Tx,
  caller: Caller,
  escrow: repo.Escrow,
  reason: string | undefined,
): Promise<repo.Escrow> {
  const existing = await refundsOfEscrow(tx, escrow.id)
  const made = latestRefunds(existing)
  const attempts = existing.length
  const holding = await holdingOf(tx, escrow)
  let unrefundable = false
  for (const [index, planned] of (await refundPlan(tx, escrow)).entries()) {
    const last = made.get(planned.creditId)
    if (last && last.state !== 'failed') continue
    const refund = await refundOne(
      deps,
      tx,
      caller,
      escrow,
      planned,
      holding,
      `escrow:${escrow.id}:${planned.purpose}:${attempts + index}`,
      reason,
    )
    if (!refund) unrefundable = true
  }
  if (!unrefundable) return escrow
  const failed = (await repo.setRefundState(tx, escrow.id, 'failed'))!
  await emit(tx, deps.clock, failed, 'escrow.refund_failed', {
    refund: refundOf(failed, await refundsOfEscrow(tx, escrow.id)),
  })
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
    return await refundCreditInTransaction({ outbound: deps.outbound, credits: creditsForRefunds }, tx, {
      caller,
      reference,
      creditId: planned.creditId,
      amountKobo: planned.amountKobo,
      sourceAccountId: holding,
      origin: { type: 'escrow', id: escrow.id },
      reason: (
        reason ??
        (planned.purpose === 'refund'
          ? `escrow ${escrow.ref} ${escrow.status}`
          : `excess funding of escrow ${escrow.ref}`)
      ).slice(0, 200),
    })
  } catch (error) {
    // Thrown before anything is written (the core checks the sender's account first): the transaction goes on.
    if (error instanceof RailError && error.code === 'refund_destination_unknown') return undefined
    throw error
  }
}

/**
 * Refunds of escrows ended, on the payment pipeline's transaction (registered in the refunds'
 * origin registry; the refunds ended just before, each once): each escrow's refund is refunded once
 * every credit's last refund succeeded, failed as soon as one failed (its hold was voided: the money
 * is back in escrow holding). Each change sends its event once.
 */
export async function settleEscrowRefunds(tx: Tx, refunds: readonly Refund[], clock: Clock): Promise<void> {
  const escrowIds = refunds.flatMap((refund) =>
    refund.state !== 'pending' && refund.origin.type === 'escrow' ? [refund.origin.id] : [],
  )
  for (const escrowId of [...new Set(escrowIds)].sort()) {
    const escrow = (await repo.lockById(tx, escrowId))!
    const all = await refundsOfEscrow(tx, escrowId)
    const latest = [...latestRefunds(all).values()]
    const next = latest.some((refund) => refund.state === 'failed')
      ? 'failed'
      : latest.every((refund) => refund.state === 'succeeded')
        ? 'refunded'
        : undefined
    if (!next || escrow.refundState !== 'pending') continue
    const changed = (await repo.setRefundState(tx, escrowId, next))!
    await emit(tx, clock, changed, next === 'refunded' ? 'escrow.refunded' : 'escrow.refund_failed', {
      refund: refundOf(changed, all),
    })
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
      throw new RailError(
        'invalid_escrow_status',
        `Escrow ${ref} is ${current.status}; its refund is ${current.refundState ?? 'none'}, and only a failed refund can be retried`,
      )
    }
    return makeRefunds(deps, tx, caller, pending, undefined)
  })
}
