// Triage of credits nobody could take (unmatched, in the partner's suspense account): listed,
// read, and settled once — refunded to the sender through the refunds core, or assigned to
// another of the partner's accounts as if it had been paid there (the owner's rules apply).
import { recordEvent } from '../../events/service.ts'
import { createTransfers, ensurePartnerAccount } from '../../ledger/service.ts'
import type { Caller } from '../../partners/service.ts'
import { lockIntentOfAccount, recordIntentCredit } from '../intents/service.ts'
import type { Clock } from '../../platform/clock.ts'
import { withTransaction, type Pool, type Queryable, type Tx } from '../../platform/db.ts'
import { fieldError, notFound, onNotFound, RailError } from '../../platform/errors.ts'
import { uuidv7 } from '../../platform/ids.ts'
import { pageQueryLimit, toPage } from '../../platform/pagination.ts'
import { readPage } from '../../platform/read-pool.ts'
import { refundCreditInTransaction, type Refund } from '../../money-out/refunds/service.ts'
import {
  getAccount,
  lockById,
  selectById as selectAccountById,
  type VirtualAccount,
} from '../virtual-accounts/service.ts'
import type { CollectedCredit, InboundDeps } from './deps.ts'
import { creditEvent } from './events.ts'
import {
  accountUnmatchedReason,
  CREDIT_CODES,
  creditTransfer,
  decideOwned,
  type AccountUnmatchedReason,
} from './matching.ts'
import { askOwner } from './owners.ts'
import * as repo from './repo.ts'
import { toTriageJson } from './views.ts'
import { claimKeyInTransaction, type IdempotencyKey } from '../../platform/idempotency-keys.ts'

export const TRIAGE_PAGE_MAX = 100

export async function listTriage(
  pool: Pool,
  query: { partnerId: string; status?: repo.CreditStatus; limit: number; cursor?: string },
) {
  return readPage(pool, query.cursor, async (reader, before) => {
    const page = toPage(
      await repo.listTriage(reader, { ...query, cursor: before, limit: pageQueryLimit(query.limit) }),
      query.limit,
    )
    return {
      data: await Promise.all(page.items.map((credit) => toTriageJson(reader, credit))),
      nextCursor: page.nextCursor,
    }
  })
}

export async function getTriageItem(pool: Pool, partnerId: string, id: string) {
  const credit = await repo.selectCredit(pool, partnerId, id)
  if (!credit || credit.unmatchedReason === null) throw notFound('Unmatched credit')
  return toTriageJson(pool, credit)
}

export type Resolution = { action: 'refund' } | { action: 'assign'; target: string | { trackingId: string } }

/** Settles an unmatched credit once: refunded to its sender, or assigned to another of the caller's accounts. */
export async function resolveUnmatched(deps: InboundDeps, caller: Caller, id: string, resolution: Resolution) {
  return (await resolveOnce(deps, caller, id, resolution)).credit
}

/** The API's resolve: the same request again with its Idempotency-Key repeats nothing (`replayed`). */
export async function resolveUnmatchedRequest(
  deps: InboundDeps,
  caller: Caller,
  id: string,
  resolution: Resolution,
  key?: IdempotencyKey,
) {
  return resolveOnce(deps, caller, id, resolution, key)
}

async function resolveOnce(
  deps: InboundDeps,
  caller: Caller,
  id: string,
  resolution: Resolution,
  key?: IdempotencyKey,
) {
  const partnerId = caller.partner.id
  let replayed = false
  const resolved = await withTransaction(deps.pool, async (tx) => {
    const found = await repo.selectCredit(tx, partnerId, id)
    if (!found || found.unmatchedReason === null) throw notFound('Unmatched credit')
    // The route has no reference: the same request again with its Idempotency-Key (a retry, or
    // someone else's copy) is answered with the credit as it stands — even when its refund failed
    // since and the credit is unmatched again, no second refund starts. A new try is a new key.
    // Claimed in this transaction: a request refused below takes its claim back with it.
    replayed = (await claimKeyInTransaction(tx, key)) === 'replayed'
    if (replayed) return found
    if (resolution.action === 'assign') {
      // The target account's lock, then the credit's. (The apply job locks a credit before its
      // account, but only a received one; triage locks only unmatched ones: no cycle.)
      const trackingId = typeof resolution.target === 'string' ? resolution.target : resolution.target.trackingId
      const target = await getAccount(tx, partnerId, trackingId, ['payment_intent', 'persistent', 'fbo']).catch(
        onNotFound(() => fieldError('target', 'is not a tracking id of one of your virtual accounts')),
      )
      await lockById(tx, target.id)
      const credit = await lockUnmatched(tx, id)
      return assign(deps, tx, credit, (await selectAccountById(tx, target.id))!)
    }
    const credit = await lockUnmatched(tx, id)
    return refund(deps, tx, caller, credit)
  })
  return { credit: await toTriageJson(deps.pool, resolved), replayed }
}

async function lockUnmatched(tx: Queryable, id: string): Promise<repo.InboundCredit> {
  const credit = (await repo.lockCredit(tx, id))!
  if (credit.status !== 'unmatched')
    throw new RailError('invalid_state', `The credit was ${credit.status} already`, {
      id,
      status: credit.status,
      currentState: credit.status,
    })
  return credit
}

/**
 * Pays the credit back to its sender through the refunds core (origin 'triage'): an outbound
 * transfer to the payer's account through the payment pipeline, held on the partner's suspense
 * account (where the credit sits) — never on its float. The credit is refund_pending until the
 * refund ends (settleTriageRefunds, in the pipeline's transaction): succeeded → refunded; failed →
 * the hold is voided back to suspense and the credit is unmatched again, for another try. Each
 * attempt is a refund of its own, under Rail's reference `triage-refund:<credit>:<uuid>`.
 */
async function refund(deps: InboundDeps, tx: Tx, caller: Caller, credit: repo.InboundCredit) {
  const suspense = await ensurePartnerAccount(tx, caller.partner.id, credit.currency, 'suspense')
  const refunded = await refundCreditInTransaction(deps.refunds, tx, {
    caller,
    reference: `triage-refund:${credit.id}:${uuidv7()}`,
    creditId: credit.id,
    amountKobo: credit.amountKobo,
    sourceAccountId: suspense,
    origin: { type: 'triage' },
  })
  return (await repo.resolveUnmatched(
    tx,
    credit.id,
    'refund_pending',
    { action: 'refund', outboundTransferId: refunded.outboundTransferId, refundId: refunded.id },
    deps.clock.now(),
  ))!
}

/**
 * Triage's refunds ended, on the payment pipeline's transaction: succeeded → the credit is
 * refunded; failed → its hold was voided back to suspense in this same transaction, and the
 * credit is unmatched again with what was tried.
 */
export async function settleTriageRefunds(tx: Tx, refunds: readonly Refund[], clock: Clock): Promise<void> {
  for (const ended of refunds) {
    if (ended.state === 'succeeded') await repo.markRefunded(tx, ended.creditId, clock.now())
    else {
      await repo.reopenAfterFailedRefund(tx, ended.creditId, {
        action: 'refund',
        outboundTransferId: ended.outboundTransferId,
        refundId: ended.id,
        outcome: 'failed',
        failureReason: ended.failureReason,
      })
    }
  }
}

/** Applies the credit to another account as if it had been paid there: suspense → collections, and the owner's rules. */
async function assign(deps: InboundDeps, tx: Tx, credit: repo.InboundCredit, target: VirtualAccount) {
  const intent = target.purpose === 'payment_intent' ? await lockIntentOfAccount(tx, target.id) : undefined
  // The rules a credit paid there would meet (matching.ts); one the target could not take is refused, not sent back to triage.
  const reason = accountUnmatchedReason(credit, target, intent)
  if (reason !== null)
    throw new RailError('invalid_state', ASSIGN_REFUSALS[reason](credit, target), { trackingId: target.trackingId })
  const partnerId = target.partnerId
  const suspense = await ensurePartnerAccount(tx, partnerId, credit.currency, 'suspense')
  const collections = await ensurePartnerAccount(tx, partnerId, credit.currency, 'collections')
  const [assigned] = await createTransfers(tx, [
    creditTransfer(credit, 'assign', suspense, collections, CREDIT_CODES.assigned),
  ])
  if (assigned!.result !== 'ok') throw new Error(`inbound credit ${credit.id} assign: ${assigned!.result}`)
  let keptKobo = credit.amountKobo
  if (intent?.ownerType) {
    const owned = decideOwned(
      intent.ownerType,
      credit.amountKobo,
      await askOwner(deps, tx, credit, intent, { partnerId, collectionsAccountId: collections }),
    )
    // Assigning is all or nothing: an owner that would not take the whole credit refuses it, and nothing changes.
    if (owned.kind !== 'taken' || owned.excess)
      throw new RailError('invalid_state', `The target's ${intent.ownerType} does not take this whole payment`, {
        trackingId: target.trackingId,
      })
    keptKobo = owned.keptKobo
  }
  await settleCollected(deps, tx, {
    creditId: credit.id,
    partnerId,
    currency: credit.currency,
    amountKobo: keptKobo,
    collectionsAccountId: collections,
  })
  const updatedIntent = intent ? await recordIntentCredit(tx, intent, credit.amountKobo, deps.clock.now()) : undefined
  const resolved = (await repo.resolveUnmatched(
    tx,
    credit.id,
    'assigned',
    { action: 'assign', trackingId: target.trackingId },
    deps.clock.now(),
  ))!
  await recordEvent(tx, deps.clock, creditEvent(resolved, target, updatedIntent))
  return resolved
}

/**
 * Hands what an assigned credit left in collections to settlement, on its transaction: in float
 * mode it moves on to the float here (a ledger transfer whose id derives from the credit's); in
 * bank mode it waits for its cycle. A ledger call after the credit's own, as the owner decides
 * first what stays.
 */
async function settleCollected(deps: InboundDeps, tx: Tx, collected: CollectedCredit): Promise<void> {
  if (!deps.settlement || collected.amountKobo <= 0) return
  const results = await createTransfers(tx, await deps.settlement(tx, [collected]))
  const refused = results.find((result) => result.result !== 'ok' && result.result !== 'exists')
  if (refused) throw new Error(`inbound credit ${collected.creditId} settlement ${refused.id}: ${refused.result}`)
}

/** Why triage cannot assign a credit to an account, by the reason a credit paid there would be unmatched. */
const ASSIGN_REFUSALS: Record<AccountUnmatchedReason, (credit: repo.InboundCredit, target: VirtualAccount) => string> =
  {
    account_archived: () => 'The target account is archived',
    currency_mismatch: (credit, target) =>
      `The credit is in ${credit.currency}; the target account collects ${target.currency}`,
    payment_intent_expired: () => 'The target payment intent has expired',
  }
