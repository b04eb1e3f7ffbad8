// Outbound transfers as the owner of their bank instructions: each change the payment pipeline
// reports moves the transfer (checked against the transition table in SQL), posts or voids its
// hold, sends its callback, and tells its origin (a refund's credit), all in the pipeline's
// transaction. Transfers are changed in id order, as the pipeline writes instructions. A reversal
// the provider confirmed after the payout succeeded moves a confirmed transfer to reversed, gives
// the amount back to the float and sends `transfer.reversed` (docs/decisions/0016-payout-reversals.md).
import { recordVerifiedName } from '../counterparties/service.ts'
import { recordEvents } from '../../events/service.ts'
import { createTransfers, derivedId, ensurePartnerAccount, type TransferInput } from '../../ledger/service.ts'
import { NAME_MISMATCH_CODE, NAME_MISMATCH_MESSAGE } from '../../banking/nip/name-match.ts'
import type { InstructionChange, InstructionOwner, Reversal, ReversalOwner } from '../pipeline/service.ts'
import type { Clock } from '../../platform/clock.ts'
import type { Tx } from '../../platform/db.ts'
import * as repo from './repo.ts'
import { callbackEvent, hasCallback } from './service.ts'
import { FLOAT_CURRENCY } from './float.ts'
import { isFinal, type OutboundState } from './states.ts'
import type { PayoutOrigins } from './types.ts'

const STATE_OF: Record<Exclude<InstructionChange['progress'], 'no_answer'>, OutboundState> = {
  accepted: 'submitted',
  succeeded: 'confirmed',
  failed: 'failed',
  unknown: 'unknown',
}

/** The owner of outbound transfers' instructions; an ended payout of Rail's own is handed to its origin through `origins`. */
export function outboundOwner(origins: PayoutOrigins): InstructionOwner & ReversalOwner {
  return {
    reversed: reverseTransfers,
    async apply(tx, changes, clock) {
      const changed: repo.OutboundTransfer[] = []
      for (const { instruction, progress } of changes) {
        if (progress === 'no_answer') continue // still pending: the requery decides
        const transfer = await repo.transition(
          tx,
          instruction.id,
          STATE_OF[progress],
          clock.now(),
          answerOf(instruction, STATE_OF[progress]),
        )
        if (!transfer) continue // it moved on already: nothing twice
        changed.push(transfer)
        if (progress === 'accepted' && instruction.verifiedAccountName !== null) {
          await recordVerifiedName(
            tx,
            transfer.partnerId,
            transfer.beneficiaryBankCode,
            transfer.beneficiaryAccountNumber,
            instruction.verifiedAccountName,
          )
        }
      }
      const resolutions = changed
        .filter((transfer) => transfer.holdTransferId && isFinal(transfer.state))
        .map(holdResolution)
      const outcomes = resolutions.length > 0 ? await createTransfers(tx, resolutions) : []
      outcomes.forEach((outcome, index) => {
        if (outcome.result !== 'ok' && outcome.result !== 'exists')
          throw new Error(`outbound ${resolutions[index]!.sourceId}: hold resolution ${outcome.result}`)
      })
      await recordEvents(tx, clock, changed.filter((transfer) => hasCallback(transfer.state)).map(callbackEvent))
      for (const [originType, ended] of origins.registered()) {
        const payouts = changed.filter((transfer) => transfer.originType === originType && isFinal(transfer.state))
        if (payouts.length > 0) await ended(tx, payouts, clock)
      }
    },
  }
}

/**
 * What the bank said, as the transfer shows it. A name mismatch shows no name (neither in its
 * message nor as settlementAccountName): whom the bank names is told only within the partner's
 * name-enquiry budget (NAME_MISMATCH_MESSAGE says why).
 */
function answerOf(instruction: InstructionChange['instruction'], next: OutboundState): repo.ProviderAnswer {
  const mismatch = instruction.failureCode === NAME_MISMATCH_CODE
  return {
    providerSessionId: instruction.providerReference,
    providerResponseCode: instruction.responseCode,
    providerResponseMessage: instruction.responseMessage,
    settlementAccountName: mismatch ? null : instruction.verifiedAccountName,
    rail:
      instruction.sendAttempts > 0
        ? { scheme: 'NIP', destinationBankCode: instruction.destinationBankCode, provider: instruction.provider }
        : null,
    failureReason:
      next === 'failed' && instruction.failureCode
        ? {
            code: instruction.failureCode,
            message: mismatch ? NAME_MISMATCH_MESSAGE : (instruction.failureMessage ?? ''),
            ...(instruction.responseCode ? { providerResponseCode: instruction.responseCode } : {}),
          }
        : null,
  }
}

/** Confirmed posts the hold; failed voids it. The id is derived, so a retried answer cannot resolve it twice. */
function holdResolution(transfer: repo.OutboundTransfer): TransferInput {
  const phase = transfer.state === 'confirmed' ? 'post' : 'void'
  return {
    id: derivedId(transfer.id, phase),
    phase,
    pendingId: transfer.holdTransferId!,
    code: 'outbound_transfer',
    sourceType: 'outbound_transfer',
    sourceId: transfer.id,
  }
}

/**
 * Reversals the provider confirmed (src/money-out/pipeline/reversals.ts), on the check's transaction: each
 * confirmed transfer moves to reversed once (the transition table: only from confirmed), its own
 * ledger transfer gives the amount back to the float, and `transfer.reversed` is recorded. The
 * origin's record is not rewritten (a refund stays succeeded, a disbursement paid, a settlement
 * paid): the event names the origin, and the money is the partner's to pay again.
 */
async function reverseTransfers(tx: Tx, reversals: readonly Reversal[], clock: Clock): Promise<void> {
  const reversed: repo.OutboundTransfer[] = []
  for (const reversal of [...reversals].sort((a, b) => (a.instruction.id < b.instruction.id ? -1 : 1))) {
    const transfer = await repo.transition(
      tx,
      reversal.instruction.id,
      'reversed',
      clock.now(),
      reversalAnswer(reversal),
    )
    if (transfer) reversed.push(transfer)
  }
  const giveBacks: TransferInput[] = []
  for (const transfer of reversed) giveBacks.push(await giveBack(tx, transfer))
  const outcomes = giveBacks.length > 0 ? await createTransfers(tx, giveBacks) : []
  outcomes.forEach((outcome, index) => {
    if (outcome.result !== 'ok' && outcome.result !== 'exists')
      throw new Error(`outbound ${giveBacks[index]!.sourceId}: reversal ${outcome.result}`)
  })
  await recordEvents(tx, clock, reversed.map(callbackEvent))
}

function reversalAnswer(reversal: Reversal): repo.ProviderAnswer {
  const message =
    'The provider reversed the payout after it was confirmed: nothing reached the beneficiary in the end, and the amount is back on the float'
  return {
    providerResponseCode: reversal.responseCode,
    providerResponseMessage: reversal.responseMessage,
    failureReason: { code: 'payout_reversed', message, providerResponseCode: reversal.responseCode },
  }
}

/**
 * The posted hold undone: the confirm moved the amount from its source to the provider settlement
 * account; this moves it back from there to the partner's float (for a partner's own payout, its
 * source; for a refund, disbursement or settlement, the float too: decision 0016). Its id is
 * derived, so the reversal of a transfer is booked once whoever asks again.
 */
async function giveBack(tx: Tx, transfer: repo.OutboundTransfer): Promise<TransferInput> {
  return {
    id: derivedId(transfer.id, 'reversal'),
    debitAccountId: await ensurePartnerAccount(tx, transfer.partnerId, FLOAT_CURRENCY, 'provider_settlement'),
    creditAccountId: await ensurePartnerAccount(tx, transfer.partnerId, FLOAT_CURRENCY, 'float'),
    amountKobo: transfer.amountKobo,
    currency: transfer.currency,
    code: 'outbound_transfer_reversal',
    sourceType: 'outbound_transfer',
    sourceId: transfer.id,
  }
}
