// Submitting an outbound transfer: the request checked, the transfer recorded under its
// clientReference with its bank instruction and its hold, before the payment pipeline gives the
// instruction to the bank. Every submit is recorded by recordSubmissions, as a batch: the API's
// (coalesced by the submit batcher into shared transactions) and Rail's own payouts (a refund, an
// escrow's disbursement, a settlement: a batch of one on the caller's transaction).
import { checkBankAccount } from '../../banking/banks/service.ts'
import { recordPayoutsTo } from '../counterparties/service.ts'
import { assertCallbackUrlAllowed, recordEvent } from '../../events/service.ts'
import {
  committedPartnerAccount,
  createTransfers,
  derivedId,
  ensurePartnerAccount,
  getBalance,
  type AccountKind,
  type TransferInput,
} from '../../ledger/service.ts'
import { generateBrr } from '../../banking/nip/brr.ts'
import { creatorMetadata, type Caller, type Partner } from '../../partners/service.ts'
import { createInstructions, failUnsent, newInstruction, type PaymentsDeps } from '../pipeline/service.ts'
import { providerFor, requireCapability, type ProviderProfile } from '../../banking/providers/service.ts'
import type { Clock } from '../../platform/clock.ts'
import type { Pool, Queryable } from '../../platform/db.ts'
import { RailError } from '../../platform/errors.ts'
import { claimReferences, findReplay, replayOf, requestHash, type ReferenceKind } from '../../platform/idempotency.ts'
import { uuidv7 } from '../../platform/ids.ts'
import { Coalescer } from '../../platform/coalescer.ts'
import { callbackEvent } from './callbacks.ts'
import { FLOAT_CURRENCY } from './float.ts'
import * as repo from './repo.ts'

export interface OutboundDeps {
  pool: Pool
  allowLoopbackCallbacks: boolean
  /** The payment pipeline, which sends the transfers' instructions. */
  payments: PaymentsDeps
  /** Coalesces the API's concurrent submits into shared transactions written by recordSubmissions (outboundDeps makes it). */
  submitBatcher: Coalescer<Submission, repo.OutboundTransfer | undefined>
}

/**
 * The outbound deps with their submit batcher: the checked submits waiting when a lane frees up
 * are recorded together by recordSubmissions (one insert, one ledger call, one commit for all of them).
 */
export function outboundDeps(base: Omit<OutboundDeps, 'submitBatcher'>): OutboundDeps {
  return {
    ...base,
    submitBatcher: new Coalescer(base.pool, (tx, submissions) => recordSubmissions(base.payments, tx, submissions)),
  }
}

export interface SubmitRequest {
  clientReference: string
  beneficiaryAccountNumber: string
  beneficiaryBankCode: string
  beneficiaryAccountName: string
  amountKobo: number
  currency: string
  narration?: string
  consumerId?: string
  callbackUrl?: string
}

/** The request's names of the account paid, which its errors name. */
const BENEFICIARY_FIELDS = { bankCode: 'beneficiaryBankCode', accountNumber: 'beneficiaryAccountNumber' }

/** Checks what the schema cannot: currency, bank, NUBAN, callback URL. Nothing is written before. */
async function assertSubmittable(
  caller: Caller,
  request: SubmitRequest,
  allowLoopbackCallbacks: boolean,
): Promise<void> {
  if (request.currency !== FLOAT_CURRENCY)
    throw new RailError('unsupported_currency', `Only ${FLOAT_CURRENCY} is served`, { currency: request.currency })
  checkBankAccount(
    { bankCode: request.beneficiaryBankCode, accountNumber: request.beneficiaryAccountNumber },
    BENEFICIARY_FIELDS,
  )
  if (request.callbackUrl !== undefined)
    await assertCallbackUrlAllowed(request.callbackUrl, caller.partner.environment, allowLoopbackCallbacks)
}

/**
 * Records the transfer and holds its amount on the float, with its submit job, in a transaction
 * shared with whatever other submits are waiting; idempotent on clientReference per partner (same
 * body: the existing transfer; another body: 409). Too little float: the transfer is recorded
 * `failed` with `insufficient_funds`, and nothing is held. The provider's approval and the
 * reference are checked in the batch (a taken reference answers undefined there, and the stored
 * transfer is replayed here — or is a 409).
 */
export async function submitOutbound(
  deps: OutboundDeps,
  caller: Caller,
  request: SubmitRequest,
): Promise<{ transfer: repo.OutboundTransfer; replayed: boolean }> {
  const key = { reference: request.clientReference, requestHash: requestHash(request) }
  const partnerId = caller.partner.id
  const known = () => repo.selectByReference(deps.pool, partnerId, request.clientReference)
  try {
    await assertSubmittable(caller, request, deps.allowLoopbackCallbacks)
    // The partner's float and settlement accounts exist before the shared batch transaction needs
    // them: made there, each would take a second connection while the batch holds one.
    const hold = {
      sourceAccountId: await committedPartnerAccount(deps.pool, partnerId, FLOAT_CURRENCY, 'float'),
      settlementAccountId: await committedPartnerAccount(deps.pool, partnerId, FLOAT_CURRENCY, 'provider_settlement'),
    }
    const transfer = await deps.submitBatcher.run({ caller, request, hash: key.requestHash, hold })
    return transfer
      ? { transfer, replayed: false }
      : { transfer: replayOf(TRANSFER_REFERENCE, key, await known()).replayed, replayed: true }
  } catch (error) {
    // A reference recorded before is answered as it was, whatever changed since (its approval, the bank list).
    const stored = error instanceof RailError ? await findReplay(TRANSFER_REFERENCE, key, known) : undefined
    if (stored) return { transfer: stored.replayed, replayed: true }
    throw error
  }
}

/** How an outbound transfer takes its clientReference (platform/idempotency.ts). */
const TRANSFER_REFERENCE: ReferenceKind<repo.OutboundTransfer> = {
  field: 'clientReference',
  hashOf: (transfer) => transfer.requestHash,
  idOf: (transfer) => transfer.id,
}

/** Where a payout Rail makes on the partner's behalf is held from, and why it is made. */
export interface PayoutSource {
  /** The ledger account holding the amount until the bank decides (never the partner's float for a refund). */
  accountId: string
  originType: repo.OriginType
  originId: string
  /** The handle the partner knows the origin by: the escrow's ref, the refund's reference, the settlement's id. */
  originReference: string
}

/**
 * A payout Rail makes on the partner's behalf (a refund, an escrow's disbursement, a settlement),
 * on the caller's transaction: recorded by recordSubmissions as a batch of one, held on
 * `source.accountId` and given to the pipeline like a submit. The caller has checked the request;
 * its origin hears the final state (owner.ts). A taken clientReference answers the transfer
 * recorded under it (same request) or throws 409.
 */
export async function submitOutboundInTransaction(
  deps: OutboundDeps,
  tx: Queryable,
  caller: Caller,
  request: SubmitRequest,
  source: PayoutSource,
): Promise<repo.OutboundTransfer> {
  const partnerId = caller.partner.id
  const key = { reference: request.clientReference, requestHash: requestHash(request) }
  const hold = {
    sourceAccountId: source.accountId,
    settlementAccountId: await ensurePartnerAccount(tx, partnerId, FLOAT_CURRENCY, 'provider_settlement'),
  }
  const [transfer] = await recordSubmissions(deps.payments, tx, [
    { caller, request, hash: key.requestHash, hold, source },
  ])
  // Taken: the claim's insert waited for the transaction that took it, so this statement sees its row.
  return (
    transfer ??
    replayOf(TRANSFER_REFERENCE, key, await repo.selectByReference(tx, partnerId, request.clientReference)).replayed
  )
}

/** The bank instruction of a transfer: a payout from the merchant's funds, its name checked where the provider checks names. */
function payoutInstruction(
  payments: PaymentsDeps,
  partner: Partner,
  transfer: repo.OutboundTransfer,
  provider: ProviderProfile,
) {
  return newInstruction(payments.settings, payments.clock, partner.environment, {
    id: transfer.id,
    partnerId: transfer.partnerId,
    ownerType: 'outbound_transfer',
    provider: transfer.provider,
    operation: 'payout',
    amountKobo: transfer.amountKobo,
    narration: provider.capabilities.narration ? transfer.narration : null,
    debitAccountNumber: null,
    creditAccountNumber: null,
    destinationBankCode: transfer.beneficiaryBankCode,
    destinationAccountNumber: transfer.beneficiaryAccountNumber,
    nameCheck: provider.capabilities.nameCheck,
    // A refund goes back to the account the money came from, as the bank named it: its name is the bank's, not a caller's.
    expectedAccountName: transfer.originType === 'refund' ? null : transfer.beneficiaryAccountName,
  })
}

/** The ledger accounts a transfer's hold moves its amount between while the bank decides. */
export interface HoldAccounts {
  /** The float for the partner's own payouts; the payout source's account for Rail's. */
  sourceAccountId: string
  settlementAccountId: string
}

/** A checked submit, ready to record. */
export interface Submission {
  caller: Caller
  request: SubmitRequest
  hash: string
  /** Found before the batch's transaction: a batch looks no account up. */
  hold: HoldAccounts
  /** Rail's own payout: where it is held from and why it is made; absent for the partner's own submit. */
  source?: PayoutSource
}

function newTransfer(
  { caller, request, hash, source }: Submission,
  provider: ProviderProfile,
): repo.NewOutboundTransfer {
  const partnerId = caller.partner.id
  const id = uuidv7()
  const brrBearing = caller.partner.customerClass === 'government' || caller.partner.customerClass === 'corporate'
  return {
    id,
    partnerId,
    clientReference: request.clientReference,
    requestHash: hash,
    consumerId: request.consumerId ?? null,
    provider: provider.name,
    brr: brrBearing ? generateBrr() : null,
    beneficiaryAccountNumber: request.beneficiaryAccountNumber,
    beneficiaryBankCode: request.beneficiaryBankCode,
    beneficiaryAccountName: request.beneficiaryAccountName,
    amountKobo: request.amountKobo,
    currency: request.currency,
    // Applied where the provider supports it: the transfer says what the bank was told.
    narration: provider.capabilities.narration ? (request.narration ?? null) : null,
    callbackUrl: request.callbackUrl ?? null,
    creatorMetadata: creatorMetadata(caller),
    holdTransferId: derivedId(id, 'hold'),
    sourceAccountId: source?.accountId ?? null,
    originType: source?.originType ?? 'partner',
    originId: source?.originId ?? null,
    originReference: source?.originReference ?? null,
  }
}

/** How a refusal for funds names the payout's source: the float as partners know it, another account by its kind. */
function sourceName(kind: AccountKind): string {
  return kind === 'float' ? "The float's" : `The ${kind.replaceAll('_', ' ')} account's`
}

/**
 * Too little on the source: the transfer is recorded failed with insufficient_funds, nothing held,
 * its instruction failed before anything was sent, and called back. The message names the account
 * the payout was to be held on: the float for the partner's own, another for Rail's (a refund's,
 * an escrow's, a settlement's source).
 */
async function failForFunds(
  tx: Queryable,
  clock: Clock,
  transfer: repo.OutboundTransfer,
  sourceAccountId: string,
): Promise<repo.OutboundTransfer> {
  await repo.clearHold(tx, transfer.id)
  const source = await getBalance(tx, sourceAccountId)
  const failed = await repo.transition(tx, transfer.id, 'failed', clock.now(), {
    failureReason: {
      code: 'insufficient_funds',
      message: `${sourceName(source!.kind)} available balance is less than ${transfer.amountKobo} kobo; nothing was held`,
    },
  })
  await failUnsent(tx, clock, transfer.id, 'insufficient_funds')
  await recordEvent(tx, clock, callbackEvent(failed!))
  return failed!
}

/**
 * The one write path of a submit: records checked submits on one transaction, a handful of
 * statements whatever their number — one insert of the transfers, one of their instructions with
 * their jobs, one ledger call for their holds, one upsert of their counterparties. A single submit
 * is a batch of one. Answers each submission's transfer, or undefined where its clientReference
 * was taken (before, or earlier in the batch: the caller replays it).
 *
 * The order is the same for every submit, and so are the rows a submit refused for funds leaves:
 * its transfer `failed` (insufficient_funds, no hold), its bank instruction `failed` before
 * anything was sent, its callback event, and no counterparty. Every transfer has its one
 * instruction, and the instructions go in before the holds: the holds lock the source account (the
 * partner's float, which every submit batch needs), so the less a batch does after taking it, the
 * sooner the next batch can.
 */
export async function recordSubmissions(
  payments: PaymentsDeps,
  tx: Queryable,
  submissions: readonly Submission[],
): Promise<(repo.OutboundTransfer | undefined)[]> {
  const providers = await payoutProviders(payments, tx, submissions)
  const providerOf = (submission: Submission) => providers.get(submission.caller.partner.id)!
  // The rows claim their clientReferences, in the batch's one insert (platform/idempotency.ts).
  const transfers = await claimReferences(
    submissions.map((submission) => newTransfer(submission, providerOf(submission))),
    (rows) => repo.insertTransfers(tx, rows),
  )
  const recorded = submissions.flatMap((submission, index) => {
    const transfer = transfers[index]
    return transfer ? [{ submission, transfer, index }] : []
  })
  await createInstructions(
    tx,
    recorded.map(({ submission, transfer }) =>
      payoutInstruction(payments, submission.caller.partner, transfer, providerOf(submission)),
    ),
  )
  // Unlinked: each hold succeeds or fails on its own, in order, against its source as the holds before it left it.
  const results =
    recorded.length === 0
      ? []
      : await createTransfers(
          tx,
          recorded.map(({ submission, transfer }) => holdOn(transfer, submission.hold)),
        )
  const held: repo.OutboundTransfer[] = []
  for (const [position, result] of results.entries()) {
    const { submission, transfer, index } = recorded[position]!
    if (result.result === 'ok') held.push(transfer)
    else if (result.result === 'exceeds_credits')
      transfers[index] = await failForFunds(tx, payments.clock, transfer, submission.hold.sourceAccountId)
    else throw new Error(`outbound hold ${transfer.holdTransferId}: ${result.result}`)
  }
  await recordPayoutsTo(
    tx,
    held.map((transfer) => ({
      partnerId: transfer.partnerId,
      account: {
        bankCode: transfer.beneficiaryBankCode,
        accountNumber: transfer.beneficiaryAccountNumber,
        accountName: transfer.beneficiaryAccountName,
      },
    })),
  )
  return transfers
}

/** Each partner's payout provider, approved for bank payouts; not approved: the batch fails (each submit, recorded alone, fails with 403 and records nothing). */
async function payoutProviders(
  payments: PaymentsDeps,
  tx: Queryable,
  submissions: readonly Submission[],
): Promise<Map<string, ProviderProfile>> {
  const providers = new Map<string, ProviderProfile>()
  for (const partnerId of new Set(submissions.map((submission) => submission.caller.partner.id))) {
    const provider = await providerFor(tx, partnerId, 'payouts', payments.providers)
    requireCapability(provider, 'bankPayout')
    providers.set(partnerId, provider)
  }
  return providers
}

/** The pending transfer holding a transfer's amount on its source while the bank decides. */
function holdOn(transfer: repo.OutboundTransfer, accounts: HoldAccounts): TransferInput {
  return {
    id: transfer.holdTransferId!,
    phase: 'pending',
    debitAccountId: accounts.sourceAccountId,
    creditAccountId: accounts.settlementAccountId,
    amountKobo: transfer.amountKobo,
    currency: transfer.currency,
    code: 'outbound_transfer',
    sourceType: 'outbound_transfer',
    sourceId: transfer.id,
  }
}
