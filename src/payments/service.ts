// The payment pipeline: the one module that gives banks instructions — wallet moves, outbound
// transfers, refunds — and learns their outcome. Its rules (docs/decisions/0008-payment-pipeline.md):
// - Persist before you call: an instruction's state is committed before each bank call
//   (`sending`, with the attempt number). Whoever finds an instruction `sending` asks the bank
//   first (requery) and acts on that answer; it never repeats the checks made before a send.
// - Single flight: a worker takes an instruction with a lease, and every write of its step is
//   fenced by the lease's token; any number of processes may hold jobs for one instruction.
// - Name enquiry once, before the first send; a holder that the given name does not name fails
//   the instruction before anything is sent (name_mismatch, NIP 08).
// - NIP answers are read by one table (nip/codes.ts). "No record" (25) on an instruction whose send
//   may not have reached the bank sends it again under the same reference, a bounded number of
//   times, before its deadline; on one the bank accepted it proves nothing. It fails as never
//   received only once no send of it can still be acted on (decisions.ts: each send is signed with
//   its commit time, and the provider's request validity window has run from the latest).
// - Requery on a schedule (live or sandbox) to a deadline, then `unknown`, asked about again on a
//   slow schedule (hourly, then daily): a later requery or an operator's decision with evidence
//   settles it. A requery someone asks for (a partner's GET, an operator) only asks: it never sends.
// - The owner of an instruction (a wallet move, an outbound transfer) hears each change in the
//   same transaction, and moves its own state, ledger and callbacks with it.
import { randomUUID } from 'node:crypto'
import { nipMessage, nipOutcome } from '../nip/codes.ts'
import { namesMatch } from '../nip/name-match.ts'
import type { Clock } from '../platform/clock.ts'
import { Coalescer } from '../platform/coalescer.ts'
import { withTransaction, type Pool, type Queryable, type Tx } from '../platform/db.ts'
import { failpoint } from '../platform/failpoints.ts'
import { getProvider, type ProviderProfile, type ProviderRegistry } from '../providers/service.ts'
import type { ProviderAdapter, ProviderResult } from '../providers/types.ts'
import { nextUnknownPoll, onNoRecord } from './decisions.ts'
import { addPollJob, WORK_TASK } from './queue.ts'
import * as repo from './repo.ts'
import type { PaymentSettings } from './settings.ts'
import { instructionStates, WORKABLE, type InstructionState } from './states.ts'

export type { Instruction, NewInstruction, OwnerType, Operation } from './repo.ts'
export type { InstructionState } from './states.ts'
export * from './settings.ts'
export { payoutNews } from './news.ts'
export { bringForwardPartner, PAYMENTS_CRONTAB, requestRequery, sweepStranded, sweepUnknown, SWEEP_TASK, WORK_TASK } from './queue.ts'
export { requestReversalCheck, REVERSAL_TASK, type Reversal, type ReversalOwner } from './reversals.ts'


/** What the owner of an instruction hears: the bank accepted it, gave no answer, or it ended. */
export type Progress = 'accepted' | 'no_answer' | 'succeeded' | 'failed' | 'unknown'

export interface InstructionChange {
  instruction: repo.Instruction
  progress: Progress
}

/** The module that gave an instruction: it moves its own rows, ledger and callbacks on each change, on the pipeline's transaction. */
export interface InstructionOwner {
  /** `clock` is the pipeline's: what the owner records (its callbacks) is stamped by it. */
  apply(tx: Tx, changes: readonly InstructionChange[], clock: Clock): Promise<void>
}

export type Owners = Record<repo.OwnerType, InstructionOwner>

export interface PaymentsDeps {
  pool: Pool
  providers: ProviderRegistry
  owners: Owners
  settings: PaymentSettings
  clock: Clock
  log: (level: 'info' | 'warn' | 'error', message: string) => void
  /** Coalesces the steps' writes into shared transactions (without it, one transaction each). */
  writer?: Coalescer<StepWrite, repo.Instruction | undefined>
}

/** Runs work with the payment pipeline wired to the database and the bank (built by the composition root). */
export type WithPayments = <T>(work: (payments: PaymentsDeps) => Promise<T>) => Promise<T>

/** An instruction as its owner describes it, before the pipeline fills in its schedule. */
export type InstructionSpec = Omit<repo.NewInstruction, 'requeryFirstDelayMs' | 'deadlineAt' | 'lease' | 'madeAt'>

/** The instruction's row, with the schedule of the partner's environment; `held` when this process works it at once. */
export function newInstruction(settings: PaymentSettings, clock: Clock, environment: 'sandbox' | 'live', spec: InstructionSpec, held = false): repo.NewInstruction {
  const schedule = environment === 'sandbox' ? settings.sandbox : settings.live
  const now = clock.now().getTime()
  return {
    ...spec,
    requeryFirstDelayMs: schedule.firstDelayMs,
    deadlineAt: new Date(now + schedule.deadlineMs),
    lease: held ? { token: randomUUID(), expiresAt: new Date(now + settings.leaseMs) } : undefined,
    madeAt: new Date(now),
  }
}

/** Records instructions in the owner's transaction; those not held get their work job in it too. */
export async function createInstructions(tx: Queryable, instructions: readonly repo.NewInstruction[]): Promise<repo.Instruction[]> {
  return repo.insertInstructions(tx, instructions, WORK_TASK)
}

/** An instruction its owner refused in the transaction that made it (e.g. too little float): it is never sent. */
export async function failUnsent(tx: Queryable, clock: Clock, id: string, failureCode: string): Promise<void> {
  await repo.failUnsent(tx, id, failureCode, 'Refused before anything was sent', clock.now())
}

export async function getInstruction(db: Queryable, id: string): Promise<repo.Instruction | undefined> {
  return repo.selectInstruction(db, id)
}

// ---- working an instruction ------------------------------------------------------------------

/** The work job: takes the instruction if nobody holds it and it is in flight, and moves it on. */
export async function workInstruction(deps: PaymentsDeps, id: string): Promise<repo.Instruction | undefined> {
  const token = randomUUID()
  const leaseUntilMs = leaseEnd(deps)
  // Unknown ones too: their slow requery (the sweep gives them this job when due).
  const claimed = await repo.claimInstruction(deps.pool, id, token, deps.settings.leaseMs, [...WORKABLE, 'unknown'])
  return claimed && runStep(deps, claimed, { token, leaseUntilMs, mode: 'work' })
}

/**
 * When this process's lease ends by its own monotonic clock, counted from before the claim was
 * asked for (so never later than the lease the database holds): a process that stood still past it
 * no longer calls the bank.
 */
function leaseEnd(deps: PaymentsDeps): number {
  return performance.now() + deps.settings.leaseMs
}

/**
 * Moves on an instruction this process created held (a wallet move's request): it sends at once,
 * through `provider` when the creator has just read it (the profile its checks were made against,
 * read in the transaction that created the instruction): no second read of it per send.
 */
export async function workCreated(deps: PaymentsDeps, instruction: repo.Instruction, requestId?: string, provider?: ProviderProfile): Promise<repo.Instruction | undefined> {
  if (instruction.leaseToken === null) throw new Error(`instruction ${instruction.id} was not created held`)
  const mode = instruction.state === 'sending' ? 'send' : 'work'
  return runStep(deps, instruction, { token: instruction.leaseToken, leaseUntilMs: leaseEnd(deps), mode }, requestId, provider)
}

/**
 * Asks the bank now about an instruction not final (an operator, the partner's requery), unknown
 * ones included, and records the answer. It only asks: it never sends (a GET never moves money;
 * resends belong to the pipeline's schedule). Held by another worker: answers it as it stands.
 */
export async function requeryNow(deps: PaymentsDeps, id: string, requestId?: string): Promise<repo.Instruction | undefined> {
  const token = randomUUID()
  const leaseUntilMs = leaseEnd(deps)
  const claimed = await repo.claimInstruction(deps.pool, id, token, deps.settings.leaseMs, [...WORKABLE, 'unknown'])
  if (!claimed) return repo.selectInstruction(deps.pool, id)
  return (await runStep(deps, claimed, { token, leaseUntilMs, mode: 'look' }, requestId)) ?? repo.selectInstruction(deps.pool, id)
}

/**
 * How a step was started. work: the pipeline's own schedule (prepare and send a ready one, else
 * ask); send: its creator committed its first send; look: someone asked to requery (never sends).
 */
type StepMode = 'work' | 'send' | 'look'

interface Holding {
  token: string
  /** The end of this process's lease by performance.now(): no bank call starts after it. */
  leaseUntilMs: number
  mode: StepMode
}

async function runStep(deps: PaymentsDeps, instruction: repo.Instruction, holding: Holding, requestId?: string, provider?: ProviderProfile): Promise<repo.Instruction | undefined> {
  const { token, mode } = holding
  try {
    const adapter = await deps.providers.adapterFor(provider ?? (await getProvider(deps.pool, instruction.provider)), requestId)
    const run: Step = { deps, adapter, ...holding }
    if (instruction.state === 'ready') return mode === 'look' ? await giveBack(run, instruction) : await prepare(run, instruction)
    if (instruction.state === 'sending' && mode === 'send') return await send(run, instruction)
    return await ask(run, instruction)
  } catch (error) {
    // Nothing is decided from an exception: the instruction is given back, and whoever takes it
    // next (the job's retry, the sweep) asks the bank first.
    await repo.releaseInstruction(deps.pool, instruction.id, token).catch(() => {})
    throw error
  }
}

interface Step extends Holding {
  deps: PaymentsDeps
  adapter: ProviderAdapter
}

/** Gives the instruction back unchanged (a look at one never sent: there is nothing to ask), answering it as it stands. */
async function giveBack(step: Step, instruction: repo.Instruction): Promise<repo.Instruction | undefined> {
  await repo.releaseInstruction(step.deps.pool, instruction.id, step.token)
  return repo.selectInstruction(step.deps.pool, instruction.id)
}

/** Before the first send: the name enquiry, once, where the provider checks names; then the send, committed first. */
async function prepare(step: Step, instruction: repo.Instruction): Promise<repo.Instruction | undefined> {
  let verifiedAccountName: string | undefined
  if (instruction.nameCheck && instruction.verifiedAccountName === null) {
    const enquiry = await step.adapter.nameEnquiry({ bankCode: instruction.destinationBankCode!, accountNumber: instruction.destinationAccountNumber! })
    if (enquiry.outcome === 'failed') {
      return fail(step, instruction, 'name_enquiry_failed', `Name enquiry refused: ${enquiry.responseMessage}`, { responseCode: enquiry.responseCode, responseMessage: enquiry.responseMessage })
    }
    if (enquiry.outcome !== 'successful') {
      if (step.deps.clock.now() >= instruction.deadlineAt) return fail(step, instruction, 'provider_unavailable', 'Name enquiry gave no answer before the deadline; nothing was sent')
      // Asked again later, backing off as requeries do (the count doubles the delay).
      const asked = instruction.requeryAttempts + 1
      return later(step, { ...instruction, requeryAttempts: asked }, 'ready', { requeryAttempts: asked })
    }
    verifiedAccountName = enquiry.value.accountName
    if (instruction.expectedAccountName !== null && !namesMatch(instruction.expectedAccountName, verifiedAccountName)) {
      return fail(step, instruction, 'name_mismatch', `Account name mismatch: the account is held by ${verifiedAccountName}`, {
        responseCode: '08',
        responseMessage: nipMessage('08'),
        verifiedAccountName,
      })
    }
  }
  const sending = await write(step, instruction, { next: 'sending', fields: { sendAttempts: instruction.sendAttempts + 1, verifiedAccountName }, release: false })
  return sending && send(step, sending)
}

/**
 * One send, committed as `sending` before this call, and signed with the time it was committed;
 * its answer read like any other. A process that stood still past its lease does not call: another
 * worker may have taken the instruction on (the signing time is what makes a call that still goes
 * out late harmless: decisions.ts).
 */
async function send(step: Step, instruction: repo.Instruction): Promise<repo.Instruction | undefined> {
  await failpoint('payments.before_send', { id: instruction.id })
  if (performance.now() >= step.leaseUntilMs) {
    step.deps.log('warn', `payment ${instruction.id}: not sent; this worker's lease ran out before its call`)
    return giveBack(step, instruction)
  }
  await failpoint('payments.in_flight', { id: instruction.id }) // checked, and not yet at the bank
  const result = await callBank(step.adapter, instruction)
  await failpoint('payments.after_send', { id: instruction.id })
  return decide(step, instruction, result, 'send')
}

/** A requery: what the bank did with the reference, and when it was asked (by the clock shared with the bank). */
async function ask(step: Step, instruction: repo.Instruction): Promise<repo.Instruction | undefined> {
  const askedAt = step.deps.clock.now()
  const result = await step.adapter.requery(instruction.id)
  await failpoint('payments.after_requery', { id: instruction.id }) // the bank's answer in hand, nothing written
  return decide(step, { ...instruction, requeryAttempts: instruction.requeryAttempts + 1 }, result, askedAt)
}

function callBank(adapter: ProviderAdapter, instruction: repo.Instruction): Promise<ProviderResult<null>> {
  const base = { reference: instruction.id, amountKobo: instruction.amountKobo, narration: instruction.narration ?? undefined, signedAt: instruction.lastSignedAt ?? undefined }
  const destination = { destinationBankCode: instruction.destinationBankCode!, destinationAccountNumber: instruction.destinationAccountNumber! }
  switch (instruction.operation) {
    case 'credit':
      return adapter.credit({ ...base, accountNumber: instruction.creditAccountNumber! })
    case 'debit':
      return adapter.debit({ ...base, accountNumber: instruction.debitAccountNumber! })
    case 'book':
      return adapter.walletTransfer({ ...base, fromAccountNumber: instruction.debitAccountNumber!, toAccountNumber: instruction.creditAccountNumber! })
    case 'interbank':
      return adapter.sendToBank({ ...base, fromAccountNumber: instruction.debitAccountNumber!, ...destination })
    case 'payout':
      return adapter.payout({ ...base, ...destination })
  }
}

/** How the pipeline reads a bank's answer (by the NIP table), whatever the call was. */
type Meaning = 'succeeded' | 'failed' | 'in_progress' | 'not_found' | 'no_answer'

function meaningOf(result: ProviderResult<null>): Meaning {
  if (result.outcome === 'unknown') return 'no_answer'
  // Paid, then given back by the provider: nothing was paid in the end.
  if (result.outcome === 'failed' && result.reversed) return 'failed'
  const outcome = nipOutcome(result.responseCode)
  return outcome === 'success' ? 'succeeded' : outcome === 'failed' ? 'failed' : outcome === 'not_found' ? 'not_found' : 'in_progress'
}

/**
 * Acts on an answer to a send (`send`) or to a requery made at `askedAt`.
 * `instruction.requeryAttempts` already counts this requery.
 */
async function decide(step: Step, instruction: repo.Instruction, result: ProviderResult<null>, askedAt: Date | 'send'): Promise<repo.Instruction | undefined> {
  const answer: repo.StepFields =
    result.outcome === 'unknown'
      ? { requeryAttempts: instruction.requeryAttempts }
      : { requeryAttempts: instruction.requeryAttempts, providerReference: result.providerReference || null, responseCode: result.responseCode, responseMessage: result.responseMessage }
  const meaning = meaningOf(result)
  if (meaning === 'succeeded') return write(step, instruction, { next: 'succeeded', fields: { ...answer, accepted: true }, release: true, progress: 'succeeded' })
  if (meaning === 'failed') return fail(step, instruction, 'provider_declined', result.outcome === 'unknown' ? '' : result.responseMessage, answer)
  const sending = instruction.state === 'sending'
  // Its sends may never have reached the bank: it is `sending`, or `unknown` without the bank ever having had it.
  const neverHad = sending || (instruction.state === 'unknown' && instruction.acceptedAt === null)
  if (meaning === 'not_found' && askedAt !== 'send' && neverHad) return notReceived(step, instruction, answer, askedAt)
  if (meaning === 'in_progress') return later(step, instruction, sending ? 'sent' : instruction.state, { ...answer, accepted: true }, sending ? 'accepted' : undefined)
  // No answer (or "no record" of a send the bank accepted, which proves nothing): ask again later.
  return later(step, instruction, instruction.state, answer, sending ? 'no_answer' : undefined)
}

/**
 * The bank has no record of a send (decisions.ts decides what that means): sent again under the same
 * reference, asked about again later, or failed as never received once no send of it can still be
 * acted on by the bank.
 */
async function notReceived(step: Step, instruction: repo.Instruction, answer: repo.StepFields, askedAt: Date): Promise<repo.Instruction | undefined> {
  const nowMs = step.deps.clock.now().getTime()
  const decision = onNoRecord({
    sinceLastSendMs: instruction.lastSentAt ? nowMs - instruction.lastSentAt.getTime() : Number.POSITIVE_INFINITY,
    requeryFirstDelayMs: instruction.requeryFirstDelayMs,
    sendAttempts: instruction.sendAttempts,
    sendAttemptsMax: step.deps.settings.sendAttemptsMax,
    beforeDeadline: nowMs < instruction.deadlineAt.getTime(),
    mayResend: step.mode !== 'look',
    deduplicatesReferences: step.adapter.traits.deduplicatesReferences,
    askedAfterSignedMs: instruction.lastSignedAt ? askedAt.getTime() - instruction.lastSignedAt.getTime() : null,
    requestValidityWindowMs: step.adapter.traits.requestValidityWindowMs,
    clockSkewMs: step.deps.settings.providerClockSkewMs,
  })
  if (decision === 'wait') return later(step, instruction, instruction.state, answer, instruction.state === 'sending' ? 'no_answer' : undefined)
  if (decision === 'fail') {
    const message = `The bank has no record of this payment after ${instruction.sendAttempts} sends, asked once none of them could still be acted on; nothing was paid`
    return fail(step, instruction, 'not_received', message, answer)
  }
  const again = await write(step, instruction, { next: 'sending', fields: { ...answer, sendAttempts: instruction.sendAttempts + 1 }, release: false })
  return again && send(step, again)
}

async function fail(step: Step, instruction: repo.Instruction, failureCode: string, failureMessage: string, fields: repo.StepFields = {}): Promise<repo.Instruction | undefined> {
  return write(step, instruction, { next: 'failed', fields: { ...fields, failureCode, failureMessage }, release: true, progress: 'failed' })
}

/** No final answer: the next requery on the schedule, or at the deadline `unknown`. */
async function later(step: Step, instruction: repo.Instruction, next: InstructionState, fields: repo.StepFields, progress?: Progress): Promise<repo.Instruction | undefined> {
  const now = step.deps.clock.now()
  const nowMs = now.getTime()
  const deadlineMs = instruction.deadlineAt.getTime()
  // Unknown (already, or now at the deadline): asked about again on the slow schedule, whose sweep gives it a job when due.
  const nextPoll = nextUnknownPoll(step.deps.settings.unknownPolls, instruction.deadlineAt, now) ?? undefined
  if (instruction.state === 'unknown') return write(step, instruction, { next: 'unknown', fields: { ...fields, nextAttemptAt: nextPoll }, release: true })
  if (nowMs >= deadlineMs && next !== 'ready') return write(step, instruction, { next: 'unknown', fields: { ...fields, nextAttemptAt: nextPoll }, release: true, progress: 'unknown' })
  const delayMs = instruction.requeryFirstDelayMs * 2 ** Math.min(instruction.requeryAttempts, 30)
  const runAt = new Date(Math.min(nowMs + delayMs, Math.max(deadlineMs, nowMs)))
  return write(step, instruction, { next, fields: { ...fields, nextAttemptAt: runAt }, release: true, progress, runAt })
}

// ---- writing steps ---------------------------------------------------------------------------

/** One step's write: the instruction's change, what its owner hears, and its next job. */
export interface StepWrite {
  id: string
  token: string
  next: InstructionState
  fields: repo.StepFields
  release: boolean
  progress?: Progress
  /** A work job at this time (a scheduled poll). */
  runAt?: Date
}

async function write(step: Step, instruction: repo.Instruction, change: Omit<StepWrite, 'id' | 'token'>): Promise<repo.Instruction | undefined> {
  const stepWrite: StepWrite = { id: instruction.id, token: step.token, ...change }
  const { deps } = step
  const written = deps.writer ? await deps.writer.run(stepWrite) : (await withTransaction(deps.pool, (tx) => writeSteps(deps, tx, [stepWrite])))[0]
  if (!written) {
    // A late, duplicate or contradicting answer: the instruction moved on (another worker, an
    // operator) or this worker's lease ran out. Nothing changes; it is logged — a warning when the
    // answer would have changed it, a note when it only repeats the final state it found.
    const current = await repo.selectInstruction(deps.pool, instruction.id)
    const repeats = current !== undefined && current.state === change.next && instructionStates.isTerminal(current.state)
    deps.log(
      repeats ? 'info' : 'warn',
      `payment ${instruction.id}: ${change.next} not applied; it is ${current?.state ?? 'gone'}${current?.leaseToken && current.leaseToken !== step.token ? ', held by another worker' : ''}`,
    )
  }
  return written
}

/** The writer of these deps: steps arriving together share one transaction. */
export function stepWriterFor(deps: PaymentsDeps): Coalescer<StepWrite, repo.Instruction | undefined> {
  return new Coalescer(deps.pool, (tx, writes) => writeSteps(deps, tx, writes))
}

/**
 * Writes steps in the caller's transaction, in one statement: each instruction's change fenced by
 * its lease; then, in id order (owners lock their rows in that order too), the owners told of what
 * changed, and the next jobs.
 */
async function writeSteps(deps: PaymentsDeps, tx: Tx, writes: readonly StepWrite[]): Promise<(repo.Instruction | undefined)[]> {
  const changes: Record<repo.OwnerType, InstructionChange[]> = { wallet_move: [], outbound_transfer: [] }
  const polls: { id: string; runAt: Date }[] = []
  const results = await repo.writeSteps(tx, writes, deps.clock.now())
  const order = writes.map((_write, index) => index).sort((a, b) => (writes[a]!.id < writes[b]!.id ? -1 : writes[a]!.id > writes[b]!.id ? 1 : 0))
  for (const index of order) {
    const { id, progress, runAt } = writes[index]!
    const written = results[index]
    if (!written) continue
    if (progress) {
      await failpoint('payments.before_owner', { id }) // the answer recorded, its owner's ledger not yet written
      changes[written.ownerType].push({ instruction: written, progress })
    }
    if (runAt) polls.push({ id, runAt })
  }
  for (const ownerType of Object.keys(changes) as repo.OwnerType[]) {
    if (changes[ownerType].length > 0) await deps.owners[ownerType].apply(tx, changes[ownerType], deps.clock)
  }
  for (const poll of polls) await addPollJob(tx, poll.id, poll.runAt)
  return results
}


