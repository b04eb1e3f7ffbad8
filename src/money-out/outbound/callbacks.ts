// What a partner hears of its outbound transfers: the transfer object of the API, and the callback
// of a transfer reaching a state that has one.
import type { NewEvent } from '../../events/service.ts'
import type { OutboundTransfer } from './repo.ts'
import type { OutboundTransferJson } from './schemas.ts'
import type { OutboundState } from './states.ts'

/** The outbound transfer object (docs/contracts/collections-and-payouts.md §Outbound transfers). */
export function toOutboundJson(transfer: OutboundTransfer): OutboundTransferJson {
  return {
    id: transfer.id,
    clientReference: transfer.clientReference,
    consumerId: transfer.consumerId,
    partnerId: transfer.partnerId,
    state: transfer.state,
    provider: transfer.provider,
    brr: transfer.brr,
    providerSessionId: transfer.providerSessionId,
    providerResponseCode: transfer.providerResponseCode,
    providerResponseMessage: transfer.providerResponseMessage,
    failureReason: transfer.failureReason,
    rail: transfer.rail,
    settlementAccountName: transfer.settlementAccountName,
    beneficiaryAccountNumber: transfer.beneficiaryAccountNumber,
    beneficiaryBankCode: transfer.beneficiaryBankCode,
    beneficiaryAccountName: transfer.beneficiaryAccountName,
    amountKobo: transfer.amountKobo,
    currency: transfer.currency,
    narration: transfer.narration,
    creatorMetadata: transfer.creatorMetadata,
    origin: { type: transfer.originType, id: transfer.originId, reference: transfer.originReference },
    createdAt: transfer.createdAt.toISOString(),
    stateChangedAt: transfer.stateChangedAt.toISOString(),
    terminalAt: transfer.terminalAt?.toISOString() ?? null,
  }
}

const CALLBACK_TYPES: Partial<Record<OutboundState, string>> = {
  confirmed: 'transfer.confirmed',
  failed: 'transfer.failed',
  unknown: 'transfer.unknown',
  reversed: 'transfer.reversed',
}

function callbackType(state: OutboundState): string | undefined {
  return CALLBACK_TYPES[state]
}

/** The callback of a transfer in a state that has one (confirmed, failed, unknown, reversed). */
export function callbackEvent(transfer: OutboundTransfer): NewEvent {
  const type = callbackType(transfer.state)
  if (!type) throw new Error(`outbound transfer ${transfer.id} in ${transfer.state} has no callback`)
  return {
    partnerId: transfer.partnerId,
    type,
    objectType: 'outbound_transfer',
    objectId: transfer.id,
    data: toOutboundJson(transfer),
    callbackUrl: transfer.callbackUrl,
  }
}

/** Whether the partner hears of a transfer reaching this state. */
export function hasCallback(state: OutboundState): boolean {
  return callbackType(state) !== undefined
}
