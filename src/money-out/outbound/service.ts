// Outbound transfers (docs/contracts/collections-and-payouts.md §Outbound transfers): payouts from the partner's float to an account at any bank.
// Submit records the transfer, holds the amount on the float (a pending ledger transfer) and
// records its bank instruction with its job, in one transaction, and answers 202. The payment
// pipeline (src/money-out/pipeline) then gives the instruction to the bank and learns its outcome; this
// module is the instruction's owner (owner.ts): each change moves the transfer's state, posts or
// voids its hold and sends its callback, in the pipeline's transaction.
import { requestRequery, requeryNow } from '../pipeline/service.ts'
import type { Partner } from '../../partners/service.ts'
import { getProvider } from '../../banking/providers/service.ts'
import type { Pool, Queryable } from '../../platform/db.ts'
import { fieldError, notFound, RailError } from '../../platform/errors.ts'
import { pageQueryLimit, toPage } from '../../platform/pagination.ts'
import { readPage } from '../../platform/read-pool.ts'
import * as repo from './repo.ts'
import { isFinal, type OutboundState } from './states.ts'
import type { OutboundDeps } from './submit.ts'

export type { OutboundTransfer, OutboundVolume, StateMoment } from './repo.ts'
export { FLOAT_CURRENCY, fundFloat } from './float.ts'
export { callbackEvent, hasCallback, toOutboundJson } from './callbacks.ts'
export {
  outboundDeps,
  recordSubmissions,
  submitOutbound,
  submitOutboundInTransaction,
  type OutboundDeps,
  type PayoutSource,
  type Submission,
  type SubmitRequest,
} from './submit.ts'

/** What a statement line shows of a payout behind it (statements): its origin, the partner's reference and its narration. */
export interface PayoutStatementFacts {
  id: string
  originType: string
  clientReference: string | null
  narration: string | null
}

/** The statement facts of these payouts (statements reads them for its lines). */
export function payoutStatementFacts(db: Queryable, ids: readonly string[]): Promise<PayoutStatementFacts[]> {
  return repo.selectStatementFacts(db, ids)
}

/** The holds of the partner's payouts in one currency that are not final yet: the float's money in flight (statements). */
export function inFlightHoldIds(db: Queryable, partnerId: string, currency: string): Promise<string[]> {
  return repo.selectInFlightHoldIds(db, partnerId, currency)
}

export interface SimulationRequest {
  transferId?: string
  clientReference?: string
  outcome: 'confirmed' | 'failed'
}

/**
 * The sandbox settlement simulator: registers the outcome at the sandbox bank for the caller's
 * own transfer in `submitted`, and requeries at once, so that the transfer resolves through the
 * real requery, transition and callback path.
 */
export async function simulateSettlement(
  deps: Pick<OutboundDeps, 'pool' | 'payments'>,
  partner: Partner,
  request: SimulationRequest,
) {
  if ((request.transferId === undefined) === (request.clientReference === undefined)) {
    throw fieldError('transferId', 'give exactly one of transferId and clientReference')
  }
  const transfer =
    request.transferId !== undefined
      ? await repo.selectPartnerTransfer(deps.pool, partner.id, request.transferId)
      : await repo.selectByReference(deps.pool, partner.id, request.clientReference!)
  if (!transfer) throw notFound('Outbound transfer')
  assertSubmitted(transfer.state, transfer.id)
  const controls = deps.payments.providers.sandboxControlsFor(await getProvider(deps.pool, transfer.provider))
  const registered = await controls.registerPayoutOutcome(transfer.id, request.outcome)
  if (registered.outcome === 'unknown') {
    // A lost or failed answer is the bank's, not Rail's: 502, and Rail changed nothing. Registering
    // again replaces the outcome, so asking again is safe.
    throw new RailError(
      'provider_unavailable',
      `The sandbox bank gave no usable answer registering the outcome (${registered.error}); nothing changed at Rail, ask again`,
    )
  }
  if (registered.outcome !== 'successful') {
    throw new RailError(
      'invalid_state',
      `Outbound transfer ${transfer.id} is no longer in progress at the bank; it resolves at its next requery`,
      { state: transfer.state, currentState: transfer.state },
    )
  }
  await requestRequery(deps.pool, transfer.id)
  return {
    transferId: transfer.id,
    clientReference: transfer.clientReference,
    registeredOutcome: request.outcome,
    message: `Outcome ${request.outcome} registered; the transfer resolves through requery and its signed callback follows within seconds`,
  }
}

function assertSubmitted(state: OutboundState, id: string): void {
  if (state !== 'submitted')
    throw new RailError(
      'invalid_state',
      `Outbound transfer ${id} is ${state}; only a submitted transfer can be settled`,
      { state, currentState: state },
    )
}

export async function getOutbound(pool: Pool, partnerId: string, id: string): Promise<repo.OutboundTransfer> {
  const transfer = await repo.selectPartnerTransfer(pool, partnerId, id)
  if (!transfer) throw notFound('Outbound transfer')
  return transfer
}

/** The states a transfer has been in, oldest first: its timeline. */
export async function outboundStateHistory(pool: Pool, id: string): Promise<repo.StateMoment[]> {
  return repo.selectStateHistory(pool, id)
}

export const OUTBOUND_PAGE_MAX = 100

export async function listOutbound(pool: Pool, filter: Omit<repo.ListFilter, 'beforeId'> & { cursor?: string }) {
  const rows = await readPage(pool, filter.cursor, (reader, before) =>
    repo.selectTransfers(reader, { ...filter, beforeId: before, limit: pageQueryLimit(filter.limit) }),
  )
  const page = toPage(rows, filter.limit)
  return { transfers: page.items, nextCursor: page.nextCursor }
}

/** `rail outbound requery`: asks the bank now (an unknown transfer included) and answers the transfer as it then stands. */
export async function requeryOutbound(
  deps: Pick<OutboundDeps, 'pool' | 'payments'>,
  id: string,
): Promise<repo.OutboundTransfer | undefined> {
  const transfer = await repo.selectTransfer(deps.pool, id)
  if (!transfer || isFinal(transfer.state)) return transfer
  await requeryNow(deps.payments, id)
  return repo.selectTransfer(deps.pool, id)
}

/** The partner's transfers created in [from, before): how many, how much, how many confirmed and failed. */
export async function outboundVolume(
  pool: Pool,
  partnerId: string,
  from: Date,
  before: Date,
): Promise<repo.OutboundVolume> {
  return repo.selectVolume(pool, partnerId, from, before)
}
