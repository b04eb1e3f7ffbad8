// Outbound transfers as the owner of their bank instructions: each change the payment pipeline
// reports moves the transfer (checked against the transition table in SQL), posts or voids its
// hold, sends its callback, and tells its origin (a refund's credit), all in the pipeline's
// transaction. Transfers are changed in id order, as the pipeline writes instructions.
import { recordVerifiedName } from '../counterparties/service.ts'
import { recordEvents } from '../events/service.ts'
import { createTransfers, derivedId, type TransferInput } from '../ledger/service.ts'
import { NAME_MISMATCH_CODE, NAME_MISMATCH_MESSAGE } from '../nip/name-match.ts'
import type { InstructionChange, InstructionOwner } from '../payments/service.ts'
import * as repo from './repo.ts'
import { callbackEvent, hasCallback } from './service.ts'
import { outboundStates, type OutboundState } from './states.ts'
import type { Origins } from './types.ts'

const STATE_OF: Record<Exclude<InstructionChange['progress'], 'no_answer'>, OutboundState> = {
  accepted: 'submitted',
  succeeded: 'confirmed',
  failed: 'failed',
  unknown: 'unknown',
}

export function outboundOwner(origins: Origins): InstructionOwner {
  return {
    async apply(tx, changes, clock) {
      const changed: repo.OutboundTransfer[] = []
      for (const { instruction, progress } of changes) {
        if (progress === 'no_answer') continue // still pending: the requery decides
        const transfer = await repo.transition(tx, instruction.id, STATE_OF[progress], clock.now(), answerOf(instruction, STATE_OF[progress]))
        if (!transfer) continue // it moved on already: nothing twice
        changed.push(transfer)
        if (progress === 'accepted' && instruction.verifiedAccountName !== null) {
          await recordVerifiedName(tx, transfer.partnerId, transfer.beneficiaryBankCode, transfer.beneficiaryAccountNumber, instruction.verifiedAccountName)
        }
      }
      const resolutions = changed.filter((transfer) => transfer.holdTransferId && outboundStates.isTerminal(transfer.state)).map(holdResolution)
      const outcomes = resolutions.length > 0 ? await createTransfers(tx, resolutions) : []
      outcomes.forEach((outcome, index) => {
        if (outcome.result !== 'ok' && outcome.result !== 'exists') throw new Error(`outbound ${resolutions[index]!.sourceId}: hold resolution ${outcome.result}`)
      })
      await recordEvents(tx, clock, changed.filter((transfer) => hasCallback(transfer.state)).map(callbackEvent))
      for (const originType of Object.keys(origins) as repo.OriginType[]) {
        const ended = changed.filter((transfer) => transfer.originType === originType && outboundStates.isTerminal(transfer.state))
        if (ended.length > 0) await origins[originType]!(tx, ended, clock)
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
    rail: instruction.sendAttempts > 0 ? { scheme: 'NIP', destinationBankCode: instruction.destinationBankCode } : null,
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
  return { id: derivedId(transfer.id, phase), phase, pendingId: transfer.holdTransferId!, code: 'outbound_transfer', sourceType: 'outbound_transfer', sourceId: transfer.id }
}
