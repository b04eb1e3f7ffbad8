// The one write path of inbound credits: applyCredits writes a batch of received credits in one
// transaction — a single credit is a batch of one. One apply job takes its own credit and up to
// BATCH_MAX other received ones (TigerBeetle's lesson: batch what arrives together), with a
// handful of statements for the whole batch: the accounts and intents locked at once, one ledger
// call, one update of the credits, one insert of the events. matching.ts decides each credit —
// to a virtual account (its owner's, if an invoice or escrow composed its intent), to a wallet, or
// to no account of Rail's — and this file writes what it decided.
//
// Locks, in one order for every batch: the credits, their virtual accounts (by id), their intents
// (by id), then the ledger. A batch with owned credits posts the credits' own moves first (an
// owner moves money out of collections, which must hold it), then asks the owners in the
// credits' order (their rows are locked by them, after the ledger — as ever), then posts what the
// owners' answers move and settlement. Without owners, the ledger is one call, its locks in order.
//
// If the batch fails, the job applies its own credit as a batch of one; a credit that fails alone
// too is kept out of later batches (it would fail them all) and retried by its job, with backoff.
import { recordEvents, type NewEvent } from '../../events/service.ts'
import { createTransfers, ensurePartnerAccount, type TransferInput } from '../../ledger/service.ts'
import { creditedIntent, saveCreditedIntent, type PaymentIntent } from '../intents/service.ts'
import { withTransaction, type Tx } from '../../platform/db.ts'
import { uuidv7 } from '../../platform/ids.ts'
import type { VirtualAccount } from '../virtual-accounts/service.ts'
import type { Wallet } from '../../wallets/service.ts'
import type { CollectedCredit, InboundDeps } from './deps.ts'
import {
  creditEvent,
  creditUnmatchedEvent,
  unmatchedAtAccount,
  walletFundedEvent,
  type UnmatchedPlace,
} from './events.ts'
import {
  accountSettlement,
  creditTransfer,
  decideCredit,
  decideOwned,
  firstMove,
  placelessSettlement,
  type CreditDecision,
  type CreditLedgerRole,
  type CreditMove,
} from './matching.ts'
import { askOwner } from './owners.ts'
import { locatePlaces, type Place } from './places.ts'
import * as repo from './repo.ts'

/** Credits per batch: large enough to share the statements, small enough to keep locks short. */
export const BATCH_MAX = 200

/** The apply job: this credit and whatever else is waiting, in one transaction; alone if that batch fails. */
export async function applyCreditBatch(deps: InboundDeps, creditId: string): Promise<void> {
  if (!(await repo.isReceived(deps.pool, creditId))) return // an earlier batch applied it
  try {
    await withTransaction(deps.pool, async (tx) =>
      applyCredits(deps, tx, await repo.claimReceived(tx, creditId, BATCH_MAX), creditId),
    )
  } catch {
    // Something in the batch failed it (every change rolled back): this credit alone, below.
  }
  if (!(await repo.isReceived(deps.pool, creditId))) return
  // The batch failed, or another batch held this credit: a batch of one, which waits for that other batch.
  try {
    await applyCreditAlone(deps, creditId)
  } catch (error) {
    await repo.countApplyFailure(deps.pool, creditId)
    throw error // the job is retried with backoff
  }
}

/** One credit as a batch of one: the job's fallback, and the requery's (whose answer shows the result). Once: only a received credit is applied. */
export async function applyCreditAlone(deps: InboundDeps, creditId: string): Promise<void> {
  await withTransaction(deps.pool, async (tx) => {
    const credit = await repo.lockCredit(tx, creditId)
    if (credit?.status === 'received') await applyCredits(deps, tx, [credit], creditId)
  })
}

/** How a credit of the batch was settled: what its event needs besides the settled row. */
type Landing =
  | { kind: 'account'; account: VirtualAccount; intent: PaymentIntent | undefined }
  | { kind: 'wallet'; wallet: Wallet }
  | { kind: 'unmatched'; place: UnmatchedPlace }
  | { kind: 'silent' }

/** An owned credit, waiting for its owner's answer after the credits' own moves are posted. */
interface OwnedCredit {
  credit: repo.InboundCredit
  account: VirtualAccount
  intent: PaymentIntent
  ownerType: NonNullable<PaymentIntent['ownerType']>
}

/** What the batch will write, credit by credit. */
interface BatchPlan {
  settlements: repo.Settlement[]
  transfers: TransferInput[]
  landings: Map<string, Landing>
  owned: OwnedCredit[]
  /** The events of overpayments' excesses, by the credit they were split off. */
  excessEvents: Map<string, NewEvent>
  /** What applied credits left in collections, for settlement. */
  collected: CollectedCredit[]
  /** The intents, by account id, as the batch's credits left them so far; `credited`: those to save. */
  intents: Map<string, PaymentIntent>
  credited: Set<string>
}

/**
 * Applies these received credits (locked by the caller), in their order, in the caller's
 * transaction. `runningJobOf`: the credit whose job runs this batch (its job ends by itself); the
 * others' jobs are dropped.
 */
async function applyCredits(
  deps: InboundDeps,
  tx: Tx,
  credits: readonly repo.InboundCredit[],
  runningJobOf: string,
): Promise<void> {
  if (credits.length === 0) return
  const now = deps.clock.now() // one time for everything the batch stamps
  const places = await locatePlaces(tx, credits)
  const plan: BatchPlan = {
    settlements: [],
    transfers: [],
    landings: new Map(),
    owned: [],
    excessEvents: new Map(),
    collected: [],
    intents: places.intents,
    credited: new Set(),
  }
  const ledger = partnerLedger(tx)
  for (const credit of credits) await planCredit(plan, ledger, credit, places.of(credit), now)
  if (plan.owned.length > 0) {
    await postTransfers(tx, plan.transfers.splice(0)) // an owner moves money out of collections: it must be there
    for (const owned of plan.owned) await settleOwned(deps, tx, plan, ledger, owned, now)
  }
  // Settlement of what stays in collections (to the float: after the credits' own transfers, in the same ledger call).
  if (deps.settlement) plan.transfers.push(...(await deps.settlement(tx, plan.collected)))
  await postTransfers(tx, plan.transfers)
  for (const accountId of plan.credited) await saveCreditedIntent(tx, plan.intents.get(accountId)!)
  const settled = new Map((await repo.settleMany(tx, plan.settlements, now)).map((credit) => [credit.id, credit]))
  await recordEvents(tx, deps.clock, batchEvents(credits, plan, settled))
  await repo.removeApplyJobs(
    tx,
    credits.map((credit) => credit.id).filter((id) => id !== runningJobOf),
  )
}

/** Decides one credit by matching.ts and plans its first move, its settlement and its event (an owned credit's wait for its owner). */
async function planCredit(
  plan: BatchPlan,
  ledger: PartnerLedger,
  credit: repo.InboundCredit,
  found: Place,
  now: Date,
): Promise<void> {
  const place = found.kind === 'account' ? { ...found, intent: plan.intents.get(found.account.id) } : found
  const decision = decideCredit(credit, place)
  const move = firstMove(decision)
  if (move && decision.kind !== 'unattributed') {
    const accounts = await ledger(
      decision.partnerId,
      credit.currency,
      move,
      place.kind === 'wallet' ? place.wallet.ledgerAccountId : undefined,
    )
    plan.transfers.push(creditTransfer(credit, move.purpose, accounts[move.from]!, accounts[move.to]!, move.code))
    if (decision.kind === 'owned' && place.kind === 'account') {
      plan.owned.push({ credit, account: place.account, intent: place.intent!, ownerType: decision.ownerType })
      return
    }
    if (decision.kind === 'applied' && place.kind === 'account') {
      plan.collected.push({
        creditId: credit.id,
        partnerId: decision.partnerId,
        currency: credit.currency,
        amountKobo: credit.amountKobo,
        collectionsAccountId: accounts.collections!,
      })
    }
  }
  if (place.kind === 'account') return landOnAccount(plan, credit, place.account, place.intent, decision, now)
  plan.settlements.push(placelessSettlement(credit, decision, place.kind === 'wallet' ? place.wallet.id : null))
  plan.landings.set(credit.id, landingOffAccount(place, decision))
}

/** A credit to a virtual account, applied (onto its intent, which credits to it follow in order) or to triage. */
function landOnAccount(
  plan: BatchPlan,
  credit: repo.InboundCredit,
  account: VirtualAccount,
  intent: PaymentIntent | undefined,
  decision: CreditDecision,
  now: Date,
): void {
  if (decision.kind === 'unmatched') {
    plan.settlements.push(accountSettlement(credit, account, { status: 'unmatched', reason: decision.reason }))
    plan.landings.set(credit.id, { kind: 'unmatched', place: unmatchedAtAccount(account, intent) })
    return
  }
  // Each event shows the intent as its credit left it.
  const credited = intent && creditedIntent(intent, credit.amountKobo, now)
  if (credited) {
    plan.intents.set(account.id, credited)
    plan.credited.add(account.id)
  }
  plan.settlements.push(accountSettlement(credit, account, { status: 'applied' }))
  plan.landings.set(credit.id, { kind: 'account', account, intent: credited })
}

function landingOffAccount(place: Exclude<Place, { kind: 'account' }>, decision: CreditDecision): Landing {
  if (decision.kind === 'unattributed') return { kind: 'silent' } // no partner to tell
  if (place.kind === 'wallet')
    return decision.kind === 'fund_wallet'
      ? { kind: 'wallet', wallet: place.wallet }
      : { kind: 'unmatched', place: { walletId: place.wallet.id } }
  return { kind: 'unmatched', place: {} }
}

/**
 * An owned credit, its money in collections: the owner says how much it takes (matching.ts
 * decideOwned): none — the credit moves on to suspense, for triage; part — the excess is a triage
 * item of its own; all or part — the intent is credited and what the owner left in collections is settled.
 */
async function settleOwned(
  deps: InboundDeps,
  tx: Tx,
  plan: BatchPlan,
  ledger: PartnerLedger,
  owned: OwnedCredit,
  now: Date,
): Promise<void> {
  const { credit, account, ownerType } = owned
  // The intent as the batch's earlier credits left it (an owner reads its own rows, not the intent's).
  const intent = plan.intents.get(account.id)!
  const collect = await ledger(account.partnerId, credit.currency, { from: 'provider_settlement', to: 'collections' })
  const answer = await askOwner(deps, tx, credit, intent, {
    partnerId: account.partnerId,
    collectionsAccountId: collect.collections!,
  })
  const decision = decideOwned(ownerType, credit.amountKobo, answer)
  if (decision.kind === 'closed') {
    const accounts = await ledger(account.partnerId, credit.currency, decision.move)
    plan.transfers.push(
      creditTransfer(
        credit,
        decision.move.purpose,
        accounts[decision.move.from]!,
        accounts[decision.move.to]!,
        decision.move.code,
      ),
    )
    return landOnAccount(
      plan,
      credit,
      account,
      intent,
      { kind: 'unmatched', partnerId: account.partnerId, reason: decision.reason },
      now,
    )
  }
  if (decision.excess) {
    const { amountKobo, reason, move } = decision.excess
    const excess = await repo.insertExcess(tx, {
      id: uuidv7(),
      of: credit,
      amountKobo,
      partnerId: account.partnerId,
      virtualAccountId: account.id,
      unmatchedReason: reason,
      at: now,
    })
    const accounts = await ledger(account.partnerId, credit.currency, move)
    plan.transfers.push(creditTransfer(excess, move.purpose, accounts[move.from]!, accounts[move.to]!, move.code))
    plan.excessEvents.set(
      credit.id,
      creditUnmatchedEvent(excess, { ...unmatchedAtAccount(account, intent), excessOf: credit }),
    )
  }
  plan.collected.push({
    creditId: credit.id,
    partnerId: account.partnerId,
    currency: credit.currency,
    amountKobo: decision.keptKobo,
    collectionsAccountId: collect.collections!,
  })
  landOnAccount(plan, credit, account, intent, { kind: 'applied', partnerId: account.partnerId }, now)
}

/** The ledger accounts of a move, by role. */
type PartnerLedger = (
  partnerId: string,
  currency: string,
  move: Pick<CreditMove, 'from' | 'to'>,
  walletAccountId?: string,
) => Promise<Partial<Record<CreditLedgerRole, string>>>

/**
 * The partners' ledger accounts the batch posts to, ensured once per partner and currency: only
 * those a move needs (a credit in a currency the partner does not collect opens no collections
 * account), the provider settlement account first.
 */
function partnerLedger(tx: Tx): PartnerLedger {
  const known = new Map<string, Partial<Record<CreditLedgerRole, string>>>()
  return async (partnerId, currency, move, walletAccountId) => {
    const key = `${partnerId}:${currency}`
    const found = known.get(key) ?? {}
    known.set(key, found)
    for (const role of [move.from, move.to]) {
      if (role !== 'wallet') found[role] ??= await ensurePartnerAccount(tx, partnerId, currency, role)
    }
    return walletAccountId ? { ...found, wallet: walletAccountId } : found
  }
}

async function postTransfers(tx: Tx, transfers: readonly TransferInput[]): Promise<void> {
  const results = await createTransfers(tx, transfers)
  const refused = results.find((result) => result.result !== 'ok')
  if (refused) throw new Error(`inbound credit ledger transfer ${refused.id}: ${refused.result}`)
}

/**
 * The batch's events, in the credits' order, so that two callbacks for one intent are delivered in
 * the order paid: credit.confirmed (or fbo.funding), wallet.funded, or credit.unmatched — after
 * the one of an overpayment's excess. An unattributed credit has no partner to tell.
 */
function batchEvents(
  credits: readonly repo.InboundCredit[],
  plan: BatchPlan,
  settled: Map<string, repo.InboundCredit>,
): NewEvent[] {
  return credits.flatMap((credit) => {
    const landing = plan.landings.get(credit.id)!
    const row = settled.get(credit.id)!
    const excess = plan.excessEvents.get(credit.id)
    const before = excess ? [excess] : []
    if (landing.kind === 'account') return [...before, creditEvent(row, landing.account, landing.intent)]
    if (landing.kind === 'wallet') return [...before, walletFundedEvent(row, landing.wallet)]
    if (landing.kind === 'unmatched') return [...before, creditUnmatchedEvent(row, landing.place)]
    return before
  })
}
