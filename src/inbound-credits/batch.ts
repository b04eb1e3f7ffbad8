// Credits applied in batches: one apply job takes its own credit and up to BATCH_MAX other
// received ones, and applies them in one transaction with a handful of statements for the whole
// batch — the accounts locked at once, one ledger call, one update of the credits, one insert of
// the callbacks — instead of a transaction and a dozen statements per credit (TigerBeetle's
// lesson: batch what arrives together). Each credit is decided by matching.ts, as apply.ts decides
// it alone, and its transfer, settlement and event are built by the same functions. A credit
// whose intent an owner composed (invoice, escrow), or whose number is no virtual account (a
// wallet's, or none of Rail's), is left to its own job, which applies it alone: the batch's ledger
// locks are then all taken by its one ledger call, in order. If the batch fails, the job applies
// its own credit alone; a credit that fails alone too is kept out of later batches (it would fail
// them all) and retried by its job.
import { recordEvents, type NewEvent } from '../events/service.ts'
import { createTransfers, ensurePartnerAccount, type TransferInput } from '../ledger/service.ts'
import { creditedIntent, lockIntentsOfAccounts, saveCreditedIntent, type PaymentIntent } from '../payment-intents/service.ts'
import { withTransaction, type Tx } from '../platform/db.ts'
import { lockByNumbers, type VirtualAccount } from '../virtual-accounts/service.ts'
import { applyCredit } from './apply.ts'
import type { CollectedCredit, InboundDeps } from './deps.ts'
import { creditEvent, creditUnmatchedEvent, unmatchedAtAccount } from './events.ts'
import { accountSettlement, CREDIT_CODES, creditTransfer, decideAccountCredit } from './matching.ts'
import * as repo from './repo.ts'

/** Credits per batch: large enough to share the statements, small enough to keep locks short. */
export const BATCH_MAX = 200

/** The apply job: this credit and whatever else is waiting, in one transaction. */
export async function applyCreditBatch(deps: InboundDeps, creditId: string): Promise<void> {
  if (!(await repo.isReceived(deps.pool, creditId))) return // an earlier batch applied it
  try {
    await withTransaction(deps.pool, (tx) => applyBatch(deps, tx, creditId))
  } catch {
    // Something in the batch failed it (every change rolled back): this credit alone, below.
  }
  if (!(await repo.isReceived(deps.pool, creditId))) return
  // Left by the batch (an owned intent, an unknown account), or the batch failed: alone, the per-credit way.
  try {
    await applyCredit(deps, creditId)
  } catch (error) {
    await repo.countApplyFailure(deps.pool, creditId)
    throw error // the job is retried with backoff
  }
}

/** Where a credit of the batch landed: its account, and its intent as the credit left it (applied) or found it (unmatched). */
interface Landed {
  account: VirtualAccount
  intent: PaymentIntent | undefined
}

/** What the batch will write, built credit by credit before any of it is. */
interface BatchPlan {
  settlements: repo.Settlement[]
  transfers: TransferInput[]
  applied: Map<string, Landed>
  unmatched: Map<string, Landed>
  /** Credits the batch leaves to their own jobs. */
  leftAlone: Set<string>
  /** What applied credits left in collections, for settlement. */
  collected: CollectedCredit[]
  /** The intents credited, by account id, as the last of their credits left them. */
  intents: Map<string, PaymentIntent>
}

async function applyBatch(deps: InboundDeps, tx: Tx, firstId: string): Promise<void> {
  const credits = await repo.claimReceived(tx, firstId, BATCH_MAX)
  if (credits.length === 0) return
  const now = deps.clock.now() // one time for everything the batch stamps
  const plan = await planBatch(tx, credits, now)
  // Settlement of what stays in collections (to the float: after each credit's own transfer, in
  // the same ledger call, so the batch still takes its ledger locks at once, in order).
  if (deps.settlement) plan.transfers.push(...(await deps.settlement(tx, plan.collected)))
  const results = await createTransfers(tx, plan.transfers)
  const refused = results.find((result) => result.result !== 'ok')
  if (refused) throw new Error(`batch ledger transfer ${refused.id}: ${refused.result}`)
  const creditedAccounts = new Set([...plan.applied.values()].flatMap((landed) => (landed.intent ? [landed.intent.virtualAccountId] : [])))
  for (const accountId of creditedAccounts) await saveCreditedIntent(tx, plan.intents.get(accountId)!)
  const settled = new Map((await repo.settleMany(tx, plan.settlements, now)).map((credit) => [credit.id, credit]))
  await recordEvents(tx, deps.clock, batchEvents(credits, plan, settled))
  // The credits applied here no longer need their jobs; those left alone keep theirs.
  await repo.removeApplyJobs(tx, credits.map((credit) => credit.id).filter((id) => id !== firstId && !plan.leftAlone.has(id)))
}

/**
 * Locks the batch's accounts and intents, and decides each credit by matching.ts, in the credits'
 * order. `now` stamps the intents credited (statusChangedAt, paidAt): the injected clock's time, as
 * the per-credit path stamps it — a record of when, which no partner's test clock judges.
 */
async function planBatch(tx: Tx, credits: readonly repo.InboundCredit[], now: Date): Promise<BatchPlan> {
  const accounts = await lockByNumbers(tx, credits.map((credit) => ({ provider: credit.provider, accountNumber: credit.accountNumber })))
  const accountOf = new Map(accounts.map((account) => [`${account.provider}:${account.accountNumber}`, account]))
  const intents = await lockIntentsOfAccounts(tx, accounts.filter((account) => account.purpose === 'payment_intent').map((account) => account.id))
  const plan: BatchPlan = { settlements: [], transfers: [], applied: new Map(), unmatched: new Map(), leftAlone: new Set(), collected: [], intents }
  const ledgerOf = partnerLedger(tx)
  for (const credit of credits) {
    const account = accountOf.get(`${credit.provider}:${credit.accountNumber}`)
    // A wallet's account number, or none of Rail's: its own job applies it.
    if (!account) {
      plan.leftAlone.add(credit.id)
      continue
    }
    const intent = intents.get(account.id)
    const decision = decideAccountCredit(credit, account, intent)
    if (decision.kind === 'owned') {
      plan.leftAlone.add(credit.id) // the owner decides: its own job applies it
      continue
    }
    // The transfer's id is the one apply.ts would give it: a retry finds it.
    if (decision.kind === 'unmatched') {
      const ledger = await ledgerOf(account.partnerId, credit.currency, 'suspense')
      plan.transfers.push(creditTransfer(credit, 'collect', ledger.settlement, ledger.suspense!, CREDIT_CODES.unmatched))
      plan.settlements.push(accountSettlement(credit, account, { status: 'unmatched', reason: decision.reason }))
      plan.unmatched.set(credit.id, { account, intent })
      continue
    }
    const ledger = await ledgerOf(account.partnerId, credit.currency, 'collections')
    plan.transfers.push(creditTransfer(credit, 'collect', ledger.settlement, ledger.collections!, CREDIT_CODES.collected))
    plan.settlements.push(accountSettlement(credit, account, { status: 'applied' }))
    // Credits to one intent follow each other: each event shows the intent as its credit left it.
    const credited = intent && creditedIntent(intent, credit.amountKobo, now)
    if (credited) intents.set(account.id, credited)
    plan.applied.set(credit.id, { account, intent: credited })
    plan.collected.push({ creditId: credit.id, partnerId: account.partnerId, currency: credit.currency, amountKobo: credit.amountKobo, collectionsAccountId: ledger.collections! })
  }
  return plan
}

interface PartnerAccounts {
  settlement: string
  collections?: string
  suspense?: string
}

/**
 * The partners' ledger accounts the batch posts to, ensured once per partner and currency: the
 * provider settlement account, and the one a credit's money goes to — only those, as apply.ts
 * ensures them (a credit in a currency the partner does not collect opens no collections account).
 */
function partnerLedger(tx: Tx): (partnerId: string, currency: string, into: 'collections' | 'suspense') => Promise<PartnerAccounts> {
  const known = new Map<string, PartnerAccounts>()
  return async (partnerId, currency, into) => {
    const key = `${partnerId}:${currency}`
    let found = known.get(key)
    if (!found) {
      found = { settlement: await ensurePartnerAccount(tx, partnerId, currency, 'provider_settlement') }
      known.set(key, found)
    }
    found[into] ??= await ensurePartnerAccount(tx, partnerId, currency, into)
    return found
  }
}

/**
 * The batch's events, in the credits' order, so that two callbacks for one intent are delivered in
 * the order paid: credit.confirmed (or fbo.funding) for an applied credit, credit.unmatched for one
 * in triage — what apply.ts sends for each.
 */
function batchEvents(credits: readonly repo.InboundCredit[], plan: BatchPlan, settled: Map<string, repo.InboundCredit>): NewEvent[] {
  return credits.flatMap((credit) => {
    const applied = plan.applied.get(credit.id)
    if (applied) return [creditEvent(settled.get(credit.id)!, applied.account, applied.intent)]
    const fallen = plan.unmatched.get(credit.id)
    if (!fallen) return []
    return [creditUnmatchedEvent(settled.get(credit.id)!, unmatchedAtAccount(fallen.account, fallen.intent))]
  })
}
