// Outbound transfers (seed 001): payouts from the partner's float to an account at any bank.
// Submit records the transfer and holds the amount on the float (a pending ledger transfer) in
// one transaction with its submit job, and answers 202. Jobs then ask the provider (name
// enquiry, payout) and requery on a schedule until a final code — confirmed posts the hold,
// failed voids it — or the deadline (unknown: the hold stays until a later requery decides).
// Every change of state is checked against the transition table in SQL, and each terminal or
// unknown state emits its callback through the events module, in the same transaction.
import { recordPayoutsTo, recordPayoutTo, recordVerifiedName } from '../counterparties/service.ts'
import { assertCallbackUrlAllowed, recordEvent, recordEvents, type NewEvent } from '../events/service.ts'
import { committedPartnerAccount, createTransfers, derivedId, ensurePartnerAccount, type TransferInput } from '../ledger/service.ts'
import { findBank } from '../nip/banks.ts'
import { generateBrr } from '../nip/brr.ts'
import { isValidNuban } from '../nip/nuban.ts'
import type { Partner } from '../partners/service.ts'
import { requireCapability } from '../providers/capabilities.ts'
import type { ProviderRegistry } from '../providers/registry.ts'
import { DEFAULT_PROVIDER, getProvider } from '../providers/service.ts'
import type { ProviderResult } from '../providers/types.ts'
import { withTransaction, type Pool, type Queryable, type Tx } from '../platform/db.ts'
import { fieldError, notFound, RailError } from '../platform/errors.ts'
import { requestHash } from '../platform/idempotency.ts'
import { uuidv7 } from '../platform/ids.ts'
import { addJob } from '../platform/jobs.ts'
import { Coalescer } from '../platform/coalescer.ts'
import { pageQueryLimit, toPage } from '../platform/pagination.ts'
import { FLOAT_CURRENCY } from './float.ts'
import * as repo from './repo.ts'
import { isTerminal, type OutboundState } from './states.ts'

export const SUBMIT_TASK = 'outbound_submit'
export const REQUERY_TASK = 'outbound_requery'
export const SWEEP_PENDING_TASK = 'outbound_sweep_pending'
/** Every minute: transfers left pending (a worker died around the provider call) are requeried. */
export const OUTBOUND_CRONTAB = `* * * * * ${SWEEP_PENDING_TASK}`
/** A transfer pending longer than this is taken as stranded; its submit job may be held by a dead worker. */
const PENDING_GRACE_S = 30
/** DESIGN §10: requery after ~5 s, 10 s, 20 s, 40 s, doubling, until a 24 h deadline (then unknown). */
export const REQUERY_FIRST_DELAY_MS_DEFAULT = 5_000
export const REQUERY_DEADLINE_MS_DEFAULT = 24 * 60 * 60 * 1000

export interface OutboundSettings {
  requeryFirstDelayMs?: number
  requeryDeadlineMs?: number
}

export interface OutboundDeps {
  pool: Pool
  providers: ProviderRegistry
  allowLoopbackCallbacks: boolean
  settings?: OutboundSettings
  /** The API's coalescer of concurrent submits (without it, each submit is its own transaction). */
  submitBatcher?: Coalescer<Submission, repo.OutboundTransfer | undefined>
  /** The workers' coalescer of final answers (without it, each answer is its own transaction). */
  finishBatcher?: Coalescer<Finish, void>
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

/** The outbound transfer object of seed 001. */
export function toOutboundJson(transfer: repo.OutboundTransfer) {
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
    createdAt: transfer.createdAt.toISOString(),
    stateChangedAt: transfer.stateChangedAt.toISOString(),
    terminalAt: transfer.terminalAt?.toISOString() ?? null,
  }
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
  const partnerId = caller.partner.id
  const hash = requestHash(request)
  if (deps.submitBatcher) return submitInBatch(deps, deps.submitBatcher, caller, request, hash)
  const known = await repo.selectByReference(deps.pool, partnerId, request.clientReference)
  if (known) return replay(known, hash)
  await assertSubmittable(caller, request, deps.allowLoopbackCallbacks)
  const provider = await getProvider(deps.pool, DEFAULT_PROVIDER)
  requireCapability(provider, 'bankPayout')
  return withTransaction(deps.pool, (tx) => recordSubmission(deps, tx, caller, request, provider.name, hash))
}

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
  hash: string,
): Promise<{ transfer: repo.OutboundTransfer; replayed: boolean }> {
  const known = () => repo.selectByReference(deps.pool, caller.partner.id, request.clientReference)
  try {
    await assertSubmittable(caller, request, deps.allowLoopbackCallbacks)
    const transfer = await batcher.run({ caller, request, hash })
    return transfer ? { transfer, replayed: false } : replay((await known())!, hash)
  } catch (error) {
    // A reference recorded before is answered as it was, whatever changed since (as the direct path does).
    const stored = error instanceof RailError ? await known() : undefined
    if (stored) return replay(stored, hash)
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

/**
 * A payout Rail makes on the partner's behalf (the refund of an unmatched credit), on the
 * caller's transaction: recorded and held on the float like a submit, with its submit job.
 * The caller has put the amount on the float in the same transaction and checked the request.
 */
export async function submitOutboundInTransaction(deps: OutboundDeps, tx: Queryable, caller: Caller, request: SubmitRequest): Promise<repo.OutboundTransfer> {
  const provider = await getProvider(tx, DEFAULT_PROVIDER)
  requireCapability(provider, 'bankPayout')
  const { transfer } = await recordSubmission(deps, tx, caller, request, provider.name, requestHash(request))
  return transfer
}

async function recordSubmission(
  deps: OutboundDeps,
  tx: Queryable,
  caller: Caller,
  request: SubmitRequest,
  providerName: string,
  hash: string,
): Promise<{ transfer: repo.OutboundTransfer; replayed: boolean }> {
  const partnerId = caller.partner.id
  const inserted = await repo.insertTransfer(tx, newTransfer(deps, { caller, request, hash }, providerName))
  // A concurrent submit with this clientReference committed first (the insert waited for it).
  if (!inserted) return replay((await repo.selectByReference(tx, partnerId, request.clientReference))!, hash)
  const [hold] = await createTransfers(tx, [await holdTransfer(tx, inserted)])
  if (hold!.result === 'exceeds_credits') return { transfer: await failForFunds(tx, inserted), replayed: false }
  if (hold!.result !== 'ok') throw new Error(`outbound hold ${inserted.holdTransferId}: ${hold!.result}`)
  await recordPayoutTo(tx, partnerId, { bankCode: request.beneficiaryBankCode, accountNumber: request.beneficiaryAccountNumber, accountName: request.beneficiaryAccountName })
  await addJob(tx, SUBMIT_TASK, { id: inserted.id })
  return { transfer: inserted, replayed: false }
}

/** A checked submit, ready to record. */
export interface Submission {
  caller: Caller
  request: SubmitRequest
  hash: string
}

function newTransfer(deps: OutboundDeps, { caller, request, hash }: Submission, providerName: string): repo.NewOutboundTransfer {
  const partnerId = caller.partner.id
  const id = uuidv7()
  const brrBearing = caller.partner.customerClass === 'government' || caller.partner.customerClass === 'corporate'
  const deadlineMs = deps.settings?.requeryDeadlineMs ?? REQUERY_DEADLINE_MS_DEFAULT
  return {
    id,
    partnerId,
    clientReference: request.clientReference,
    requestHash: hash,
    consumerId: request.consumerId ?? null,
    provider: providerName,
    brr: brrBearing ? generateBrr() : null,
    beneficiaryAccountNumber: request.beneficiaryAccountNumber,
    beneficiaryBankCode: request.beneficiaryBankCode,
    beneficiaryAccountName: request.beneficiaryAccountName,
    amountKobo: request.amountKobo,
    currency: request.currency,
    narration: request.narration ?? null,
    callbackUrl: request.callbackUrl ?? null,
    creatorMetadata: { partnerId, credentialId: caller.credentialId, requestId: caller.requestId ?? null },
    holdTransferId: derivedId(id, 'hold'),
    requeryDeadlineAt: new Date(Date.now() + deadlineMs),
  }
}

/** Too little float: the transfer is recorded failed with insufficient_funds, nothing held, and called back. */
async function failForFunds(tx: Queryable, transfer: repo.OutboundTransfer): Promise<repo.OutboundTransfer> {
  await repo.clearHold(tx, transfer.id)
  const failed = await repo.transition(tx, transfer.id, 'failed', {
    failureReason: { code: 'insufficient_funds', message: `The float's available balance is less than ${transfer.amountKobo} kobo; nothing was held` },
  })
  await emit(tx, failed!)
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
  const provider = await getProvider(tx, DEFAULT_PROVIDER)
  requireCapability(provider, 'bankPayout')
  const rows = submissions.map((submission) => newTransfer(deps, submission, provider.name))
  const inserted = new Map((await repo.insertTransfers(tx, rows)).map((transfer) => [transfer.id, transfer]))
  const transfers = rows.map((row) => inserted.get(row.id))
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
  // The submit jobs go in before the holds: the holds lock the partner's float account, which every
  // submit batch needs, so the less a batch does after taking it, the sooner the next batch can.
  // A transfer the float cannot cover is failed below, and its job finds nothing to send.
  await repo.addSubmitJobs(tx, SUBMIT_TASK, [...inserted.keys()])
  // Unlinked: each hold succeeds or fails on its own, in order, against the float as the holds before it left it.
  const results = holds.length === 0 ? [] : await createTransfers(tx, holds)
  const holding = [...inserted.values()]
  const held: repo.OutboundTransfer[] = []
  for (const [index, result] of results.entries()) {
    const transfer = holding[index]!
    if (result.result === 'exceeds_credits') {
      const failed = await failForFunds(tx, transfer)
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

function replay(known: repo.OutboundTransfer, hash: string): { transfer: repo.OutboundTransfer; replayed: boolean } {
  if (known.requestHash !== hash) {
    throw new RailError('idempotency_conflict', `clientReference ${known.clientReference} was already used with a different request`, { transferId: known.id })
  }
  return { transfer: known, replayed: true }
}

async function holdTransfer(db: Queryable, transfer: repo.OutboundTransfer): Promise<TransferInput> {
  const float = await ensurePartnerAccount(db, transfer.partnerId, FLOAT_CURRENCY, 'float')
  return holdOn(transfer, float, await ensurePartnerAccount(db, transfer.partnerId, FLOAT_CURRENCY, 'provider_settlement'))
}

/** The pending transfer holding a transfer's amount on the float while the provider decides. */
function holdOn(transfer: repo.OutboundTransfer, floatAccountId: string, settlementAccountId: string): TransferInput {
  return {
    id: transfer.holdTransferId!,
    phase: 'pending',
    debitAccountId: floatAccountId,
    creditAccountId: settlementAccountId,
    amountKobo: transfer.amountKobo,
    currency: transfer.currency,
    code: 'outbound_transfer',
    sourceType: 'outbound_transfer',
    sourceId: transfer.id,
  }
}

/** The callback of a state the partner hears about: terminal states, and unknown. */
async function emit(tx: Queryable, transfer: repo.OutboundTransfer): Promise<void> {
  await recordEvent(tx, callbackEvent(transfer))
}

function callbackType(state: OutboundState): string | undefined {
  return state === 'confirmed' ? 'transfer.confirmed' : state === 'failed' ? 'transfer.failed' : state === 'unknown' ? 'transfer.unknown' : undefined
}

/** The callback of a transfer in a state that has one (confirmed, failed, unknown). */
function callbackEvent(transfer: repo.OutboundTransfer): NewEvent {
  const type = callbackType(transfer.state)
  if (!type) throw new Error(`outbound transfer ${transfer.id} in ${transfer.state} has no callback`)
  return { partnerId: transfer.partnerId, type, objectType: 'outbound_transfer', objectId: transfer.id, data: toOutboundJson(transfer), callbackUrl: transfer.callbackUrl }
}

/** The submit job: name enquiry where the provider checks names, then the payout. */
export async function processSubmit(deps: OutboundDeps, id: string): Promise<void> {
  const transfer = await repo.selectTransfer(deps.pool, id)
  if (!transfer || transfer.state !== 'pending') return
  const provider = await getProvider(deps.pool, transfer.provider)
  const adapter = deps.providers.adapterFor(provider)
  let settlementAccountName: string | undefined
  if (provider.capabilities.nameCheck) {
    const enquiry = await adapter.nameEnquiry({ bankCode: transfer.beneficiaryBankCode, accountNumber: transfer.beneficiaryAccountNumber })
    if (enquiry.outcome === 'failed') {
      await finish(deps, transfer, 'failed', {
        providerResponseCode: enquiry.responseCode,
        providerResponseMessage: enquiry.responseMessage,
        failureReason: { code: 'name_enquiry_failed', message: enquiry.responseMessage, providerResponseCode: enquiry.responseCode },
      })
      return
    }
    if (enquiry.outcome !== 'successful') {
      // Nothing was sent: ask again later, and give up (failed: no money left) at the deadline.
      await retrySubmitOrFail(deps, transfer, enquiry.outcome === 'unknown' ? enquiry.error : enquiry.responseMessage)
      return
    }
    settlementAccountName = enquiry.value.accountName
    await recordVerifiedName(deps.pool, transfer.partnerId, transfer.beneficiaryBankCode, transfer.beneficiaryAccountNumber, settlementAccountName)
  }
  const result = await adapter.payout({
    reference: transfer.id,
    amountKobo: transfer.amountKobo,
    destinationBankCode: transfer.beneficiaryBankCode,
    destinationAccountNumber: transfer.beneficiaryAccountNumber,
    narration: provider.capabilities.narration ? (transfer.narration ?? undefined) : undefined,
  })
  await applyProviderResult(deps, transfer, result, settlementAccountName)
}

async function retrySubmitOrFail(deps: OutboundDeps, transfer: repo.OutboundTransfer, reason: string): Promise<void> {
  if (Date.now() >= transfer.requeryDeadlineAt.getTime()) {
    await finish(deps, transfer, 'failed', { failureReason: { code: 'provider_unavailable', message: `Name enquiry gave no answer before the deadline: ${reason}` } })
    return
  }
  await addJob(deps.pool, SUBMIT_TASK, { id: transfer.id }, { runAt: new Date(Date.now() + firstDelayMs(deps)) })
}

/** The requery job (and `rail outbound requery`): what happened to the payout. */
export async function requeryOutbound(deps: OutboundDeps, id: string): Promise<repo.OutboundTransfer | undefined> {
  const transfer = await repo.selectTransfer(deps.pool, id)
  if (!transfer || isTerminal(transfer.state)) return transfer
  const adapter = deps.providers.adapterFor(await getProvider(deps.pool, transfer.provider))
  await applyProviderResult(deps, transfer, await adapter.requery(transfer.id))
  return repo.selectTransfer(deps.pool, id)
}

async function applyProviderResult(deps: OutboundDeps, transfer: repo.OutboundTransfer, result: ProviderResult<null>, settlementAccountName?: string): Promise<void> {
  if (result.outcome === 'unknown') return scheduleRequery(deps, transfer)
  const answer: repo.ProviderAnswer = {
    providerSessionId: result.providerReference,
    providerResponseCode: result.responseCode,
    providerResponseMessage: result.responseMessage,
    settlementAccountName: settlementAccountName ?? null,
    rail: { scheme: 'NIP', destinationBankCode: transfer.beneficiaryBankCode },
  }
  if (result.outcome === 'successful') return finish(deps, transfer, 'confirmed', answer)
  if (result.outcome === 'failed') {
    // 25: the bank has no record. For a pending transfer the payout never arrived, and sending it
    // again is safe (same reference). For one the bank had accepted, it proves nothing: keep asking.
    if (result.responseCode === '25') {
      if (transfer.state === 'pending') await addJob(deps.pool, SUBMIT_TASK, { id: transfer.id })
      else await scheduleRequery(deps, transfer)
      return
    }
    return finish(deps, transfer, 'failed', {
      ...answer,
      failureReason: { code: 'provider_declined', message: result.responseMessage, providerResponseCode: result.responseCode },
    })
  }
  // In progress (09): the provider has it.
  if (transfer.state === 'pending') {
    await withTransaction(deps.pool, async (tx) => {
      const submitted = await repo.transition(tx, transfer.id, 'submitted', answer)
      if (submitted) {
        await addJob(tx, REQUERY_TASK, { id: transfer.id }, { runAt: new Date(Date.now() + firstDelayMs(deps)), jobKey: requeryJobKey(transfer.id), priority: REQUERY_POLL_PRIORITY })
      }
    })
    return
  }
  return scheduleRequery(deps, transfer)
}

function firstDelayMs(deps: OutboundDeps): number {
  return deps.settings?.requeryFirstDelayMs ?? REQUERY_FIRST_DELAY_MS_DEFAULT
}

/**
 * Scheduled requeries are background polls of transfers the bank still has in progress: they run
 * after interactive work (a requery the simulator or an operator asked for, first callback
 * attempts), which graphile-worker takes first (lower priority first). Without it, a wave of
 * polls for thousands of pending payouts held every asked-for requery, and its callback, behind it.
 */
const REQUERY_POLL_PRIORITY = 1

export function requeryJobKey(id: string): string {
  return `outbound_requery:${id}`
}

/** The next requery on the doubling schedule, or at the deadline the transfer becomes unknown. */
async function scheduleRequery(deps: OutboundDeps, transfer: repo.OutboundTransfer): Promise<void> {
  if (transfer.state === 'unknown') return // past its deadline: only an explicit requery asks again
  const attempts = await repo.countRequery(deps.pool, transfer.id)
  const remainingMs = transfer.requeryDeadlineAt.getTime() - Date.now()
  if (remainingMs <= 0) {
    await withTransaction(deps.pool, async (tx) => {
      const unknown = await repo.transition(tx, transfer.id, 'unknown')
      if (unknown) await emit(tx, unknown)
    })
    return
  }
  const delayMs = Math.min(firstDelayMs(deps) * 2 ** Math.min(attempts - 1, 30), remainingMs)
  await addJob(deps.pool, REQUERY_TASK, { id: transfer.id }, { runAt: new Date(Date.now() + delayMs), jobKey: requeryJobKey(transfer.id), priority: REQUERY_POLL_PRIORITY })
}

/** A final answer for one transfer: its state, the hold posted (confirmed) or voided (failed), and its callback. */
export interface Finish {
  transfer: repo.OutboundTransfer
  state: 'confirmed' | 'failed'
  answer: repo.ProviderAnswer
}

/**
 * A final answer, written in one transaction with its hold's resolution and its callback — through
 * the workers' finish batcher where there is one: every final answer posts or voids a hold on the
 * partner's float account, so answers written one transaction each queue on that account's lock,
 * commit after commit (~100 answers/s here); a batch takes it once.
 */
async function finish(deps: OutboundDeps, transfer: repo.OutboundTransfer, state: Finish['state'], answer: repo.ProviderAnswer): Promise<void> {
  const decided: Finish = { transfer, state, answer }
  if (deps.finishBatcher) await deps.finishBatcher.run(decided)
  else await withTransaction(deps.pool, (tx) => writeFinishes(tx, [decided]))
}

/** The workers' coalescer of final answers (writeFinishes on shared transactions). */
export function finishBatcherFor(deps: OutboundDeps): Coalescer<Finish, void> {
  return new Coalescer(deps.pool, writeFinishes)
}

/**
 * Final answers of many transfers in the caller's transaction: each transition checked in SQL (a
 * late or duplicate answer changes nothing), one ledger call posting or voiding the holds of those
 * that changed, one statement recording their callbacks. Transfers are locked in id order, so two
 * batches holding one transfer each cannot deadlock.
 */
async function writeFinishes(tx: Tx, finishes: readonly Finish[]): Promise<void[]> {
  const changed: repo.OutboundTransfer[] = []
  for (const decided of [...finishes].sort((a, b) => (a.transfer.id < b.transfer.id ? -1 : a.transfer.id > b.transfer.id ? 1 : 0))) {
    const transfer = await repo.transition(tx, decided.transfer.id, decided.state, decided.answer)
    if (transfer) changed.push(transfer) // else a late or duplicate answer: decided already
  }
  const resolutions = changed.filter((transfer) => transfer.holdTransferId).map(holdResolution)
  const outcomes = resolutions.length > 0 ? await createTransfers(tx, resolutions) : []
  outcomes.forEach((outcome, index) => {
    if (outcome.result !== 'ok' && outcome.result !== 'exists') throw new Error(`outbound ${resolutions[index]!.sourceId}: hold resolution ${outcome.result}`)
  })
  await recordEvents(tx, changed.map(callbackEvent))
  return finishes.map(() => undefined)
}

/** Confirmed posts the hold; failed voids it. The id is derived, so a retried answer cannot resolve it twice. */
function holdResolution(transfer: repo.OutboundTransfer): TransferInput {
  const phase = transfer.state === 'confirmed' ? 'post' : 'void'
  return { id: derivedId(transfer.id, phase), phase, pendingId: transfer.holdTransferId!, code: 'outbound_transfer', sourceType: 'outbound_transfer', sourceId: transfer.id }
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
export async function simulateSettlement(deps: OutboundDeps, partner: Partner, request: SimulationRequest) {
  if ((request.transferId === undefined) === (request.clientReference === undefined)) {
    throw fieldError('transferId', 'give exactly one of transferId and clientReference')
  }
  const transfer =
    request.transferId !== undefined ? await repo.selectPartnerTransfer(deps.pool, partner.id, request.transferId) : await repo.selectByReference(deps.pool, partner.id, request.clientReference!)
  if (!transfer) throw notFound('Outbound transfer')
  assertSubmitted(transfer.state, transfer.id)
  const adapter = deps.providers.adapterFor(await getProvider(deps.pool, transfer.provider))
  const { registered } = await adapter.registerPayoutOutcome(transfer.id, request.outcome)
  if (!registered) {
    throw new RailError('invalid_state', `Outbound transfer ${transfer.id} is no longer in progress at the bank; it resolves at its next requery`, { state: transfer.state })
  }
  await addJob(deps.pool, REQUERY_TASK, { id: transfer.id }, { jobKey: requeryJobKey(transfer.id) })
  return {
    transferId: transfer.id,
    clientReference: transfer.clientReference,
    registeredOutcome: request.outcome,
    message: `Outcome ${request.outcome} registered; the transfer resolves through requery and its signed callback follows within seconds`,
  }
}

function assertSubmitted(state: OutboundState, id: string): void {
  if (state !== 'submitted') throw new RailError('invalid_state', `Outbound transfer ${id} is ${state}; only a submitted transfer can be settled`, { state })
}

/**
 * Requeries transfers still pending after PENDING_GRACE_S: a worker died between the provider
 * call and recording its answer (graphile-worker holds a dead worker's job for hours). The
 * requery finds what the bank did: 09 → submitted, a final code → confirmed or failed, 25 (no
 * record) → submitted again under the same reference, which the bank accepts once.
 */
export async function sweepPendingTransfers(pool: Pool): Promise<number> {
  const ids = await repo.selectStrandedPending(pool, PENDING_GRACE_S, 1_000)
  for (const id of ids) await addJob(pool, REQUERY_TASK, { id }, { jobKey: requeryJobKey(id) })
  return ids.length
}

export async function getOutbound(pool: Pool, partnerId: string, id: string): Promise<repo.OutboundTransfer> {
  const transfer = await repo.selectPartnerTransfer(pool, partnerId, id)
  if (!transfer) throw notFound('Outbound transfer')
  return transfer
}

export const OUTBOUND_PAGE_MAX = 100

export async function listOutbound(pool: Pool, filter: Omit<repo.ListFilter, 'beforeId'> & { cursor?: string }) {
  const rows = await repo.selectTransfers(pool, { ...filter, beforeId: filter.cursor, limit: pageQueryLimit(filter.limit) })
  const page = toPage(rows, filter.limit)
  return { transfers: page.items, nextCursor: page.nextCursor }
}
