// Settlement of collections (docs/settlement.md). Money a credit leaves in the partner's
// collections account moves on by the partner's mode:
// - float (the default): to the float in the credit's own transaction — a ledger line
//   (`settlement_to_float`, its id derived from the credit's), no settlement object, no event;
// - bank: it waits in collections; once a day, after the partner's cut-off, one payout of the
//   payment pipeline pays the cycle's credits (as far as collections still has them available)
//   to the registered bank account, recorded as a settlement with its report. The payout's end
//   (confirmed or failed) reaches settleSettlementPayouts on the pipeline's transaction.
// A partner's settings are in settings.ts; what a settlement reads as, in views.ts.
import { recordEvent, type NewEvent } from '../events/service.ts'
import type { CollectedCredit, CollectionsRegistries } from '../collections/credits/service.ts'
import {
  collectionsWithAvailable,
  createTransfers,
  creditRoom,
  derivedId,
  ensurePartnerAccount,
  getBalance,
  type AvailableAccount,
  type TransferInput,
} from '../ledger/service.ts'
import { FLOAT_CURRENCY } from '../money-out/outbound/service.ts'
import { submitOutboundInTransaction, type OutboundDeps, type OutboundTransfer } from '../money-out/outbound/service.ts'
import type { PayoutOrigins } from '../money-out/outbound/types.ts'
import { getPartner, type Partner } from '../partners/service.ts'
import { MAX_AMOUNT_KOBO_DEFAULT } from '../platform/amounts.ts'
import type { Clock } from '../platform/clock.ts'
import { sha256Hex } from '../platform/crypto.ts'
import { withTransaction, type Pool, type Queryable, type Tx } from '../platform/db.ts'
import { uuidv7 } from '../platform/ids.ts'
import type { IdempotencyKey } from '../platform/idempotency-keys.ts'
import { latestCycle, type Cycle } from './cycles.ts'
import { partnerClockById } from '../partners/sandbox-clock/service.ts'
import * as repo from './repo.ts'
import { getSettlementSettings } from './settings.ts'
import { toSettlementJson } from './views.ts'

export type { Settlement, SettlementSettings } from './repo.ts'

export const RUN_DUE_TASK = 'settlement_run_due'
/** Every minute: bank-mode partners past their cut-off get their cycle's payout; float-mode leftovers move to the float. */
export const SETTLEMENT_CRONTAB = `* * * * * ${RUN_DUE_TASK}`
export const SETTLEMENTS_PAGE_MAX = 100
/** The ledger code of collected money moving to the float. */
export const SETTLEMENT_TO_FLOAT_CODE = 'settlement_to_float'
/** Who submits a settlement's payout (the outbound transfer's creatorMetadata.credentialId): Rail itself, on its schedule. */
const SETTLEMENT_CREDENTIAL = 'rail:settlement'
const LEFTOVER_SWEEP_BATCH = 1_000

export interface SettlementDeps {
  pool: Pool
  /** The payment pipeline's outbound transfers, through which a bank settlement is paid. */
  outbound: OutboundDeps
  /** The time cut-offs are judged by (tests move it instead of waiting for 17:00). */
  clock: Clock
  /** The largest payout one instruction may carry (RAIL_MAX_AMOUNT_KOBO); MAX_AMOUNT_KOBO_DEFAULT when absent. */
  maxAmountKobo?: number
}

// ---- the seam for collections: what a credit leaves in collections ---------------------------

/**
 * On the credits' transaction (src/collections/credits: applied, or assigned from triage): float-mode
 * partners' credits answer their transfer collections → float, to be posted with the credits';
 * bank-mode partners' credits are queued for their cycle.
 */
export async function settlementTransfersFor(tx: Tx, credits: readonly CollectedCredit[]): Promise<TransferInput[]> {
  const kept = credits.filter((credit) => credit.amountKobo > 0)
  if (kept.length === 0) return []
  const modes = await repo.modes(tx, [...new Set(kept.map((credit) => credit.partnerId))])
  const queued = kept.filter((credit) => modes.get(credit.partnerId) === 'bank')
  await repo.enqueue(tx, queued)
  const floats = new Map<string, string>()
  const toFloat = kept.filter((candidate) => modes.get(candidate.partnerId) !== 'bank')
  for (const credit of toFloat) {
    const key = `${credit.partnerId}:${credit.currency}`
    if (!floats.has(key)) floats.set(key, await ensurePartnerAccount(tx, credit.partnerId, credit.currency, 'float'))
  }
  // A float is never credited past 2^53 − 1 kobo in its lifetime (its balances would no longer be
  // exact): a credit that would take it there waits in collections (docs/settlement.md).
  const roomKobo = await creditRoom(tx, [...new Set(floats.values())])
  const transfers: TransferInput[] = []
  for (const credit of toFloat) {
    const float = floats.get(`${credit.partnerId}:${credit.currency}`)!
    const room = roomKobo.get(float) ?? 0
    if (room < credit.amountKobo) continue
    roomKobo.set(float, room - credit.amountKobo)
    transfers.push({
      id: derivedId(credit.creditId, SETTLEMENT_TO_FLOAT_CODE),
      debitAccountId: credit.collectionsAccountId,
      creditAccountId: float,
      amountKobo: credit.amountKobo,
      currency: credit.currency,
      code: SETTLEMENT_TO_FLOAT_CODE,
      sourceType: 'inbound_credit',
      sourceId: credit.creditId,
    })
  }
  return transfers
}

// ---- cycles --------------------------------------------------------------------------------------

/**
 * The cron task: float-mode leftovers move to the float, and each bank-mode partner whose latest
 * cut-off has passed (and came after it chose bank mode) gets that cycle's settlement, once —
 * the unique key (partner, currency, cycle) and the settings row's lock make a second worker or a
 * rerun find the cycle done. One partner's failure does not stop the others; the task then fails
 * (and is retried) after trying them all.
 */
export async function runDueSettlements(deps: SettlementDeps): Promise<{ settlements: number; sweptKobo: number }> {
  const sweptKobo = await sweepFloatLeftovers(deps.pool)
  let settlements = 0
  let firstError: unknown
  for (const settings of await repo.selectBankModePartners(deps.pool)) {
    // The cut-off passed by the partner's time (its sandbox test clock, if moved).
    const cycle = latestCycle(
      (await partnerClockById(deps.pool, deps.clock, settings.partnerId)).now(),
      settings.cutoffTime,
    )
    if (!settings.bankSince || cycle.cutoffAt.getTime() < settings.bankSince.getTime()) continue
    if (await repo.selectByCycle(deps.pool, settings.partnerId, FLOAT_CURRENCY, cycle.key)) continue
    try {
      if (await runCycle(deps, settings.partnerId, cycle)) settlements++
    } catch (error) {
      firstError ??= error
    }
  }
  if (firstError) throw firstError
  return { settlements, sweptKobo }
}

/**
 * One cycle of one partner, in one transaction: the credits collected by the cut-off and not yet
 * paid (as many as one instruction carries), the amount — what collections has available, less
 * the waiting credits this cycle does not include (collected after the cut-off, or past one
 * instruction's maximum): so a refund held or paid from collections keeps its part back, and
 * money given back to collections (a voided hold) is paid with the cycle — the settlement with
 * its report, and its payout held on collections. Nothing to pay: no settlement. The cycle's
 * settlement when it has one already.
 */
export async function runCycle(
  deps: SettlementDeps,
  partnerId: string,
  cycle: Cycle,
): Promise<repo.Settlement | undefined> {
  return withTransaction(deps.pool, async (tx) => {
    const settings = await repo.lockSettings(tx, partnerId) // one cycle of a partner at a time, and no change of mode meanwhile
    const done = await repo.selectByCycle(tx, partnerId, FLOAT_CURRENCY, cycle.key)
    if (done || settings.mode !== 'bank' || !settings.bankAccount) return done
    const partner = (await getPartner(tx, partnerId))!
    const collections = await ensurePartnerAccount(tx, partnerId, FLOAT_CURRENCY, 'collections')
    const waiting = await repo.lockWaiting(tx, partnerId, FLOAT_CURRENCY)
    const maxAmountKobo = deps.maxAmountKobo ?? MAX_AMOUNT_KOBO_DEFAULT
    const credits = withinOneInstruction(
      waiting.filter((credit) => credit.collectedAt.getTime() <= cycle.cutoffAt.getTime()),
      maxAmountKobo,
    )
    const creditsTotalKobo = sumKobo(credits)
    const notIncludedKobo = sumKobo(waiting) - creditsTotalKobo
    const availableKobo = (await getBalance(tx, collections))!.availableKobo
    const amountKobo = Math.min(availableKobo - notIncludedKobo, maxAmountKobo)
    if (amountKobo <= 0) return undefined
    const { bankCode, accountNumber, accountName } = settings.bankAccount
    const settlement = await repo.insertSettlement(tx, {
      id: uuidv7(),
      partnerId,
      currency: FLOAT_CURRENCY,
      cycle: cycle.key,
      cutoffAt: cycle.cutoffAt,
      amountKobo,
      creditsTotalKobo,
      creditCount: credits.length,
      destination: { bankCode, accountNumber, accountName },
    })
    if (!settlement) return repo.selectByCycle(tx, partnerId, FLOAT_CURRENCY, cycle.key)
    await repo.attachCredits(tx, settlement.id, credits)
    const transfer = await submitOutboundInTransaction(
      deps.outbound,
      tx,
      { partner, credentialId: SETTLEMENT_CREDENTIAL },
      {
        clientReference: `rail-settlement-${settlement.id}`,
        beneficiaryAccountNumber: accountNumber,
        beneficiaryBankCode: bankCode,
        beneficiaryAccountName: accountName,
        amountKobo,
        currency: FLOAT_CURRENCY,
        narration: `Rail settlement ${cycle.key}`.slice(0, 100),
      },
      { accountId: collections, originType: 'settlement', originId: settlement.id, originReference: settlement.id },
    )
    const withPayout = await repo.setOutboundTransfer(tx, settlement.id, transfer.id)
    // Held on collections from what was available in this transaction, so it holds; if it did not, the settlement fails now.
    if (transfer.state === 'failed')
      return (await failSettlement(tx, deps.clock, withPayout.id, transfer.failureReason)) ?? withPayout
    return withPayout
  })
}

function sumKobo(credits: readonly { amountKobo: number }[]): number {
  return credits.reduce((sum, credit) => sum + credit.amountKobo, 0)
}

/** The waiting credits, oldest first, as many as one instruction carries; the rest wait for the next cycle. */
function withinOneInstruction<T extends { amountKobo: number }>(credits: readonly T[], maxAmountKobo: number): T[] {
  const taken: T[] = []
  let totalKobo = 0
  for (const credit of credits) {
    if (totalKobo + credit.amountKobo > maxAmountKobo) break
    taken.push(credit)
    totalKobo += credit.amountKobo
  }
  return taken
}

/**
 * Float-mode partners (a settings row saying so, or none) whose collections account has money
 * available: what a voided hold gave back, or what waited for a bank cycle before the switch to
 * float. The ledger owns the accounts; every partner not in bank mode is in float mode.
 */
async function floatModeLeftovers(pool: Pool, partnerId?: string): Promise<AvailableAccount[]> {
  const bankModePartnerIds = (await repo.selectBankModePartners(pool)).map((settings) => settings.partnerId)
  return collectionsWithAvailable(pool, LEFTOVER_SWEEP_BATCH, bankModePartnerIds, partnerId ?? null)
}

/**
 * Collections left in float mode — what a voided refund hold gave back, or what waited for a bank
 * cycle before the partner switched to float — move to the float: one transfer per partner of
 * what is available (holds stay). A concurrent sweep or hold that took it first: nothing moves.
 */
export async function sweepFloatLeftovers(pool: Pool, partnerId?: string): Promise<number> {
  let sweptKobo = 0
  for (const leftover of await floatModeLeftovers(pool, partnerId)) {
    sweptKobo += await withTransaction(pool, async (tx) => {
      // The settings row locked (made if missing): a cycle or a change of mode for this partner waits.
      const settings = await repo.lockSettings(tx, leftover.partnerId)
      if (settings.mode === 'bank') return 0
      await repo.forgetWaiting(tx, leftover.partnerId, leftover.currency)
      const availableKobo = (await getBalance(tx, leftover.accountId))!.availableKobo
      if (availableKobo <= 0) return 0
      const sweepId = uuidv7()
      const [result] = await createTransfers(tx, [
        {
          id: sweepId,
          debitAccountId: leftover.accountId,
          creditAccountId: await ensurePartnerAccount(tx, leftover.partnerId, leftover.currency, 'float'),
          amountKobo: availableKobo,
          currency: leftover.currency,
          code: SETTLEMENT_TO_FLOAT_CODE,
          sourceType: 'settlement_sweep',
          sourceId: sweepId,
        },
      ])
      return result!.result === 'ok' ? availableKobo : 0
    })
  }
  return sweptKobo
}

// ---- the payout's end ------------------------------------------------------------------------------

/** Plugs settlement in: it settles what credits leave in collections, and hears when its payouts end. */
export function plugSettlement(
  registries: { origins: PayoutOrigins } & Pick<CollectionsRegistries, 'collected'>,
): void {
  registries.collected.register('settlement', settlementTransfersFor)
  registries.origins.register('settlement', settleSettlementPayouts)
}

/**
 * Settlement payouts ended, on the payment pipeline's transaction (the outbound owner has posted
 * or voided each hold in it): confirmed → the settlement is paid, `settlement.paid`; failed → the
 * hold was voided (the money is back in collections), the settlement is failed, its credits wait
 * again for the next cycle, `settlement.failed`. Each settlement changes once (the transition table).
 */
export async function settleSettlementPayouts(
  tx: Tx,
  payouts: readonly OutboundTransfer[],
  clock: Clock,
): Promise<void> {
  for (const payout of payouts) {
    if (payout.originId === null) continue
    if (payout.state === 'confirmed') {
      const paid = await repo.transition(tx, payout.originId, 'paid', clock.now())
      if (paid) await recordEvent(tx, clock, settlementEvent(paid, 'settlement.paid'))
    } else {
      await failSettlement(tx, clock, payout.originId, payout.failureReason)
    }
  }
}

async function failSettlement(
  tx: Queryable,
  clock: Clock,
  settlementId: string,
  reason: OutboundTransfer['failureReason'],
): Promise<repo.Settlement | undefined> {
  const failed = await repo.transition(tx, settlementId, 'failed', clock.now(), {
    code: reason?.code ?? 'payout_failed',
    message: reason?.message ?? 'The payout failed',
  })
  if (!failed) return undefined
  await repo.releaseCredits(tx, settlementId)
  await recordEvent(tx, clock, settlementEvent(failed, 'settlement.failed'))
  return failed
}

function settlementEvent(settlement: repo.Settlement, type: 'settlement.paid' | 'settlement.failed'): NewEvent {
  return {
    partnerId: settlement.partnerId,
    type,
    objectType: 'settlement',
    objectId: settlement.id,
    data: toSettlementJson(settlement),
  }
}

// ---- sandbox -------------------------------------------------------------------------------------------

/**
 * Sandbox: a cycle now, with now as its cut-off, so a partner can watch a settlement without
 * waiting for the day's. Its cycle key derives from the request's Idempotency-Key when it sent one:
 * the same request again with the key answers the same settlement and pays nothing twice, even
 * when its first answer was lost. Without a key each request is a cycle of its own (what waits is
 * paid by the first; a second finds nothing). Float mode: the leftovers sweep.
 */
export async function runSettlementNow(deps: SettlementDeps, partner: Partner, key?: IdempotencyKey) {
  const settings = await getSettlementSettings(deps.pool, partner.id)
  if (settings.mode === 'float') {
    const sweptKobo = await sweepFloatLeftovers(deps.pool, partner.id)
    return {
      mode: settings.mode,
      settlement: null,
      sweptToFloatKobo: sweptKobo,
      message: 'Float mode: collections settle to the float after each credit; any leftover was moved now',
    }
  }
  const cycle = { key: `sandbox-${key ? sha256Hex(key.key).slice(0, 16) : uuidv7()}`, cutoffAt: deps.clock.now() }
  const settlement = await runCycle(deps, partner.id, cycle)
  return {
    mode: settings.mode,
    settlement: settlement ? toSettlementJson(settlement) : null,
    sweptToFloatKobo: 0,
    message: settlement
      ? 'The settlement payout is submitted; settle it with simulate-outbound-settlement'
      : 'Nothing waits in collections to be settled',
  }
}
