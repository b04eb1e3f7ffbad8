// Submitting an outbound transfer: the request checked, the transfer recorded under its
// clientReference with its hold on the float and its bank instruction, in one transaction (or in a
// coalesced batch's), before the payment pipeline gives the instruction to the bank.
import { recordPayoutsTo, recordPayoutTo } from '../counterparties/service.ts'
import { assertCallbackUrlAllowed, recordEvent } from '../events/service.ts'
import { committedPartnerAccount, createTransfers, derivedId, ensurePartnerAccount, type TransferInput } from '../ledger/service.ts'
import { findBank } from '../nip/banks.ts'
import { generateBrr } from '../nip/brr.ts'
import { isValidNuban } from '../nip/nuban.ts'
import type { Partner } from '../partners/service.ts'
import { createInstructions, failUnsent, newInstruction, type PaymentsDeps } from '../payments/service.ts'
import { providerFor, requireCapability, type ProviderProfile } from '../providers/service.ts'
import type { Clock } from '../platform/clock.ts'
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { fieldError, RailError } from '../platform/errors.ts'
import { claimReference, claimReferences, findReplay, replayOf, requestHash, type ReferenceKey, type ReferenceKind } from '../platform/idempotency.ts'
import { uuidv7 } from '../platform/ids.ts'
import { Coalescer } from '../platform/coalescer.ts'
import { callbackEvent } from './callbacks.ts'
import { FLOAT_CURRENCY } from './float.ts'
import * as repo from './repo.ts'

export interface OutboundDeps {
  pool: Pool
  allowLoopbackCallbacks: boolean
  /** The payment pipeline, which sends the transfers' instructions. */
  payments: PaymentsDeps
  /** The API's coalescer of concurrent submits (without it, each submit is its own transaction). */
  submitBatcher?: Coalescer<Submission, repo.OutboundTransfer | undefined>
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

export interface Caller {
  partner: Partner
  credentialId: string
  requestId?: string
}

/** Checks what the schema cannot: currency, bank, NUBAN, callback URL. Nothing is written before. */
async function assertSubmittable(caller: Caller, request: SubmitRequest, allowLoopbackCallbacks: boolean): Promise<void> {
  if (request.currency !== FLOAT_CURRENCY) throw new RailError('unsupported_currency', `Only ${FLOAT_CURRENCY} is served`, { currency: request.currency })
  if (!findBank(request.beneficiaryBankCode)) throw fieldError('beneficiaryBankCode', 'is not a bank code of a Nigerian bank')
  if (!isValidNuban(request.beneficiaryBankCode, request.beneficiaryAccountNumber)) throw fieldError('beneficiaryAccountNumber', 'is not a valid NUBAN at that bank')
  if (request.callbackUrl !== undefined) await assertCallbackUrlAllowed(request.callbackUrl, caller.partner.environment, allowLoopbackCallbacks)
}

/**
 * Records the transfer and holds its amount on the float, with its submit job, in one
 * transaction; idempotent on clientReference per partner (same body: the existing transfer;
 * another body: 409). Too little float: the transfer is recorded `failed` with
 * `insufficient_funds`, and nothing is held.
 */
export async function submitOutbound(deps: OutboundDeps, caller: Caller, request: SubmitRequest): Promise<{ transfer: repo.OutboundTransfer; replayed: boolean }> {
  const key = { reference: request.clientReference, requestHash: requestHash(request) }
  if (deps.submitBatcher) return submitInBatch(deps, deps.submitBatcher, caller, request, key)
  const known = await findReplay(TRANSFER_REFERENCE, key, () => repo.selectByReference(deps.pool, caller.partner.id, request.clientReference))
  if (known) return { transfer: known.replayed, replayed: true }
  await assertSubmittable(caller, request, deps.allowLoopbackCallbacks)
  const provider = await providerFor(deps.pool, caller.partner.id, 'payouts', deps.payments.providers)
  requireCapability(provider, 'bankPayout')
  return withTransaction(deps.pool, (tx) => recordSubmission(deps, tx, caller, request, provider, key.requestHash))
}

/** How an outbound transfer takes its clientReference (platform/idempotency.ts). */
const TRANSFER_REFERENCE: ReferenceKind<repo.OutboundTransfer> = { field: 'clientReference', hashOf: (transfer) => transfer.requestHash, idOf: (transfer) => transfer.id }

/**
 * The API's path: the request is checked, then recorded in a shared transaction with whatever
 * other submits are waiting; the batch checks the provider's approval and the reference (a
 * taken one answers undefined, and the stored transfer is replayed — or is a 409).
 */
async function submitInBatch(
  deps: OutboundDeps,
  batcher: Coalescer<Submission, repo.OutboundTransfer | undefined>,
  caller: Caller,
  request: SubmitRequest,
  key: ReferenceKey,
): Promise<{ transfer: repo.OutboundTransfer; replayed: boolean }> {
  const known = () => repo.selectByReference(deps.pool, caller.partner.id, request.clientReference)
  try {
    await assertSubmittable(caller, request, deps.allowLoopbackCallbacks)
    // The partner's float and settlement accounts exist before the shared batch transaction needs
    // them: made there, each would take a second connection while the batch holds one.
    await committedPartnerAccount(deps.pool, caller.partner.id, FLOAT_CURRENCY, 'float')
    await committedPartnerAccount(deps.pool, caller.partner.id, FLOAT_CURRENCY, 'provider_settlement')
    const transfer = await batcher.run({ caller, request, hash: key.requestHash })
    return transfer ? { transfer, replayed: false } : { transfer: replayOf(TRANSFER_REFERENCE, key, await known()).replayed, replayed: true }
  } catch (error) {
    // A reference recorded before is answered as it was, whatever changed since (as the direct path does).
    const stored = error instanceof RailError ? await findReplay(TRANSFER_REFERENCE, key, known) : undefined
    if (stored) return { transfer: stored.replayed, replayed: true }
    throw error
  }
}

/**
 * The API's submit batcher for these deps: the checked submits waiting when a lane frees up are
 * recorded together by recordSubmissions (one insert, one ledger call, one commit for all of them).
 */
export function submitBatcherFor(deps: OutboundDeps): Coalescer<Submission, repo.OutboundTransfer | undefined> {
  return new Coalescer(deps.pool, (tx, submissions) => recordSubmissions(deps, tx, submissions))
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
 * A payout Rail makes on the partner's behalf (the refund of an unmatched credit), on the
 * caller's transaction: recorded, held on `source.accountId` and given to the pipeline like a
 * submit. The caller has checked the request; its origin hears the final state (owner.ts).
 */
export async function submitOutboundInTransaction(deps: OutboundDeps, tx: Queryable, caller: Caller, request: SubmitRequest, source: PayoutSource): Promise<repo.OutboundTransfer> {
  const provider = await providerFor(tx, caller.partner.id, 'payouts', deps.payments.providers)
  requireCapability(provider, 'bankPayout')
  const { transfer } = await recordSubmission(deps, tx, caller, request, provider, requestHash(request), source)
  return transfer
}

async function recordSubmission(
  deps: OutboundDeps,
  tx: Queryable,
  caller: Caller,
  request: SubmitRequest,
  provider: ProviderProfile,
  hash: string,
  source?: PayoutSource,
): Promise<{ transfer: repo.OutboundTransfer; replayed: boolean }> {
  const partnerId = caller.partner.id
  // The transfer's row claims its clientReference: the transaction's first write.
  const claimed = await claimReference(
    TRANSFER_REFERENCE,
    { reference: request.clientReference, requestHash: hash },
    () => repo.insertTransfer(tx, newTransfer({ caller, request, hash }, provider, source)),
    () => repo.selectByReference(tx, partnerId, request.clientReference),
  )
  if (claimed.replayed) return { transfer: claimed.replayed, replayed: true }
  const inserted = claimed.created
  const [hold] = await createTransfers(tx, [await holdTransfer(tx, inserted)])
  if (hold!.result === 'exceeds_credits') return { transfer: await failForFunds(tx, deps.payments.clock, inserted), replayed: false }
  if (hold!.result !== 'ok') throw new Error(`outbound hold ${inserted.holdTransferId}: ${hold!.result}`)
  await createInstructions(tx, [payoutInstruction(deps, caller.partner, inserted, provider)])
  await recordPayoutTo(tx, partnerId, { bankCode: request.beneficiaryBankCode, accountNumber: request.beneficiaryAccountNumber, accountName: request.beneficiaryAccountName })
  return { transfer: inserted, replayed: false }
}

/** The bank instruction of a transfer: a payout from the merchant's funds, its name checked where the provider checks names. */
function payoutInstruction(deps: OutboundDeps, partner: Partner, transfer: repo.OutboundTransfer, provider: ProviderProfile) {
  return newInstruction(deps.payments.settings, deps.payments.clock, partner.environment, {
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

/** A checked submit, ready to record. */
export interface Submission {
  caller: Caller
  request: SubmitRequest
  hash: string
}

function newTransfer({ caller, request, hash }: Submission, provider: ProviderProfile, source?: PayoutSource): repo.NewOutboundTransfer {
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
    creatorMetadata: { partnerId, credentialId: caller.credentialId, requestId: caller.requestId ?? null },
    holdTransferId: derivedId(id, 'hold'),
    sourceAccountId: source?.accountId ?? null,
    originType: source?.originType ?? 'partner',
    originId: source?.originId ?? null,
    originReference: source?.originReference ?? null,
  }
}

/** Too little float: the transfer is recorded failed with insufficient_funds, nothing held, and called back. */
async function failForFunds(tx: Queryable, clock: Clock, transfer: repo.OutboundTransfer): Promise<repo.OutboundTransfer> {
  await repo.clearHold(tx, transfer.id)
  const failed = await repo.transition(tx, transfer.id, 'failed', clock.now(), {
    failureReason: { code: 'insufficient_funds', message: `The float's available balance is less than ${transfer.amountKobo} kobo; nothing was held` },
  })
  await recordEvent(tx, clock, callbackEvent(failed!))
  return failed!
}

/**
 * Records many checked submits on one transaction — what recordSubmission does for one, with a
 * handful of statements for the batch: one insert of the transfers, one ledger call for their
 * holds, one upsert of their counterparties, one statement for their jobs. Answers each
 * submission's transfer, or undefined where its clientReference was taken (the caller replays it
 * after the commit).
 */
export async function recordSubmissions(deps: OutboundDeps, tx: Queryable, submissions: readonly Submission[]): Promise<(repo.OutboundTransfer | undefined)[]> {
  // Not approved: the batch fails, and each submit, recorded alone, fails with 403 and records nothing.
  const providers = new Map<string, ProviderProfile>()
  for (const partnerId of new Set(submissions.map((submission) => submission.caller.partner.id))) {
    const provider = await providerFor(tx, partnerId, 'payouts', deps.payments.providers)
    requireCapability(provider, 'bankPayout')
    providers.set(partnerId, provider)
  }
  const rows = submissions.map((submission) => newTransfer(submission, providers.get(submission.caller.partner.id)!))
  // The rows claim their clientReferences, in the batch's one insert (platform/idempotency.ts).
  const transfers = await claimReferences(rows, (claims) => repo.insertTransfers(tx, claims))
  const inserted = new Map(transfers.flatMap((transfer) => (transfer ? [[transfer.id, transfer] as const] : [])))
  const partners = new Map(submissions.map((submission) => [submission.caller.partner.id, submission.caller.partner]))
  const floats = new Map<string, { float: string; settlement: string }>()
  const holds: TransferInput[] = []
  for (const transfer of inserted.values()) {
    let accounts = floats.get(transfer.partnerId)
    if (!accounts) {
      accounts = {
        float: await committedPartnerAccount(deps.pool, transfer.partnerId, FLOAT_CURRENCY, 'float'),
        settlement: await committedPartnerAccount(deps.pool, transfer.partnerId, FLOAT_CURRENCY, 'provider_settlement'),
      }
      floats.set(transfer.partnerId, accounts)
    }
    holds.push(holdOn(transfer, accounts.float, accounts.settlement))
  }
  // The instructions and their jobs go in before the holds: the holds lock the partner's float
  // account, which every submit batch needs, so the less a batch does after taking it, the sooner
  // the next batch can. A transfer the float cannot cover fails below with its instruction unsent.
  await createInstructions(
    tx,
    [...inserted.values()].map((transfer) => payoutInstruction(deps, partners.get(transfer.partnerId)!, transfer, providers.get(transfer.partnerId)!)),
  )
  // Unlinked: each hold succeeds or fails on its own, in order, against the float as the holds before it left it.
  const results = holds.length === 0 ? [] : await createTransfers(tx, holds)
  const holding = [...inserted.values()]
  const held: repo.OutboundTransfer[] = []
  for (const [index, result] of results.entries()) {
    const transfer = holding[index]!
    if (result.result === 'exceeds_credits') {
      const failed = await failForFunds(tx, deps.payments.clock, transfer)
      await failUnsent(tx, deps.payments.clock, transfer.id, 'insufficient_funds')
      transfers[transfers.indexOf(transfer)] = failed
    } else if (result.result === 'ok') {
      held.push(transfer)
    } else {
      throw new Error(`outbound hold ${transfer.holdTransferId}: ${result.result}`)
    }
  }
  await recordPayoutsTo(
    tx,
    held.map((transfer) => ({
      partnerId: transfer.partnerId,
      account: { bankCode: transfer.beneficiaryBankCode, accountNumber: transfer.beneficiaryAccountNumber, accountName: transfer.beneficiaryAccountName },
    })),
  )
  return transfers
}

async function holdTransfer(db: Queryable, transfer: repo.OutboundTransfer): Promise<TransferInput> {
  const source = transfer.sourceAccountId ?? (await ensurePartnerAccount(db, transfer.partnerId, FLOAT_CURRENCY, 'float'))
  return holdOn(transfer, source, await ensurePartnerAccount(db, transfer.partnerId, FLOAT_CURRENCY, 'provider_settlement'))
}

/** The pending transfer holding a transfer's amount on its source (the float, unless told otherwise) while the bank decides. */
function holdOn(transfer: repo.OutboundTransfer, sourceAccountId: string, settlementAccountId: string): TransferInput {
  return {
    id: transfer.holdTransferId!,
    phase: 'pending',
    debitAccountId: sourceAccountId,
    creditAccountId: settlementAccountId,
    amountKobo: transfer.amountKobo,
    currency: transfer.currency,
    code: 'outbound_transfer',
    sourceType: 'outbound_transfer',
    sourceId: transfer.id,
  }
}
