// Credits applied in batches: one apply job takes its own credit and up to BATCH_MAX other
// received ones, and applies them in one transaction with a handful of statements for the whole
// batch — the accounts locked at once, one ledger call, one update of the credits, one insert of
// the callbacks — instead of a transaction and a dozen statements per credit (TigerBeetle's
// lesson: batch what arrives together). The rules are matching.ts's, as applyToAccount's are. A
// credit whose intent an owner composed (invoice, escrow), or whose number is no virtual account
// (a wallet's, or none of Rail's), is left to its own job, which applies it alone: the batch's ledger locks are then all taken by its one ledger
// call, in order. If the batch fails, the job applies its own credit alone; a credit that fails
// alone too is kept out of later batches (it would fail them all) and retried by its job.
import { recordEvents, type NewEvent } from '../events/service.ts'
import { createTransfers, derivedId, ensurePartnerAccount, type TransferInput } from '../ledger/service.ts'
import { generateBrr } from '../nip/brr.ts'
import { creditedIntent, lockIntentsOfAccounts, saveCreditedIntent, type PaymentIntent } from '../payment-intents/service.ts'
import { withTransaction, type Tx } from '../platform/db.ts'
import { lockByNumbers, type VirtualAccount } from '../virtual-accounts/service.ts'
import { creditUnmatchedEvent, unmatchedAtAccount } from './events.ts'
import { accountUnmatchedReason } from './matching.ts'
import * as repo from './repo.ts'
import { applyCredit, creditEvent, type CollectedCredit, type InboundDeps } from './service.ts'

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

interface PartnerAccounts {
  settlement: string
  collections: string
  suspense?: string
}

async function applyBatch(deps: InboundDeps, tx: Tx, firstId: string): Promise<void> {
  const credits = await repo.claimReceived(tx, firstId, BATCH_MAX)
  if (credits.length === 0) return
  const accounts = await lockByNumbers(tx, credits.map((credit) => ({ provider: credit.provider, accountNumber: credit.accountNumber })))
  const accountOf = new Map(accounts.map((account) => [`${account.provider}:${account.accountNumber}`, account]))
  const intents = await lockIntentsOfAccounts(tx, accounts.filter((account) => account.purpose === 'payment_intent').map((account) => account.id))
  const ledgerAccounts = new Map<string, PartnerAccounts>()
  const accountsOf = async (partnerId: string, currency: string, withSuspense: boolean): Promise<PartnerAccounts> => {
    const key = `${partnerId}:${currency}`
    let found = ledgerAccounts.get(key)
    if (!found) {
      found = { settlement: await ensurePartnerAccount(tx, partnerId, currency, 'provider_settlement'), collections: await ensurePartnerAccount(tx, partnerId, currency, 'collections') }
      ledgerAccounts.set(key, found)
    }
    if (withSuspense) found.suspense ??= await ensurePartnerAccount(tx, partnerId, currency, 'suspense')
    return found
  }

  const settlements: repo.Settlement[] = []
  const transfers: TransferInput[] = []
  const applied = new Map<string, { account: VirtualAccount; intent: PaymentIntent | undefined }>()
  const unmatched = new Map<string, { account: VirtualAccount; intent: PaymentIntent | undefined }>()
  const leftAlone: string[] = []
  const collected: CollectedCredit[] = []
  const now = new Date()
  for (const credit of credits) {
    const account = accountOf.get(`${credit.provider}:${credit.accountNumber}`)
    if (!account) {
      leftAlone.push(credit.id) // a wallet's account number, or none of Rail's: its own job applies it
      continue
    }
    const intent = intents.get(account.id)
    const unmatchedReason = accountUnmatchedReason(credit, account, intent)
    if (unmatchedReason === null && intent?.ownerType) {
      leftAlone.push(credit.id) // the owner decides: its own job applies it
      continue
    }
    const ledger = await accountsOf(account.partnerId, credit.currency, unmatchedReason !== null)
    const settlement = { id: credit.id, partnerId: account.partnerId, virtualAccountId: account.id, brr: account.brr ? generateBrr() : null }
    transfers.push({
      id: derivedId(credit.id, 'collect'), // the id applyToAccount would give it: a retry finds it
      debitAccountId: ledger.settlement,
      creditAccountId: unmatchedReason === null ? ledger.collections : ledger.suspense!,
      amountKobo: credit.amountKobo,
      currency: credit.currency,
      code: unmatchedReason === null ? 'collection_credit' : 'unmatched_credit',
      sourceType: 'inbound_credit',
      sourceId: credit.id,
    })
    if (unmatchedReason !== null) {
      settlements.push({ ...settlement, status: 'unmatched', unmatchedReason })
      unmatched.set(credit.id, { account, intent })
      continue
    }
    settlements.push({ ...settlement, status: 'applied', unmatchedReason: null })
    // Credits to one intent follow each other: each event shows the intent as its credit left it.
    const credited = intent && creditedIntent(intents.get(account.id)!, credit.amountKobo, now)
    if (credited) intents.set(account.id, credited)
    applied.set(credit.id, { account, intent: credited })
    collected.push({ creditId: credit.id, partnerId: account.partnerId, currency: credit.currency, amountKobo: credit.amountKobo, collectionsAccountId: ledger.collections })
  }

  // Settlement of what stays in collections (to the float: after each credit's own transfer, in
  // the same ledger call, so the batch still takes its ledger locks at once, in order).
  if (deps.settlement) transfers.push(...(await deps.settlement(tx, collected)))
  const results = await createTransfers(tx, transfers)
  const refused = results.find((result) => result.result !== 'ok')
  if (refused) throw new Error(`batch ledger transfer ${refused.id}: ${refused.result}`)
  const creditedIntents = new Set([...applied.values()].flatMap((entry) => (entry.intent ? [entry.intent.virtualAccountId] : [])))
  for (const accountId of creditedIntents) await saveCreditedIntent(tx, intents.get(accountId)!) // as the last of its credits left it
  const settled = new Map((await repo.settleMany(tx, settlements)).map((credit) => [credit.id, credit]))
  // In the credits' order, so that two callbacks for one intent are delivered in the order paid.
  // A credit in triage: credit.unmatched, where applyToAccount would send it.
  const events: NewEvent[] = credits.flatMap((credit) => {
    const entry = applied.get(credit.id)
    if (entry) return [creditEvent(settled.get(credit.id)!, entry.account, entry.intent)]
    const fallen = unmatched.get(credit.id)
    if (!fallen) return []
    return [creditUnmatchedEvent(settled.get(credit.id)!, unmatchedAtAccount(fallen.account, fallen.intent))]
  })
  await recordEvents(tx, events)
  // The credits applied here no longer need their jobs; those left alone keep theirs.
  await repo.removeApplyJobs(tx, credits.map((credit) => credit.id).filter((id) => id !== firstId && !leftAlone.includes(id)))
}
