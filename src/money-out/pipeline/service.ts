// The payment pipeline: the one module that gives banks instructions — wallet moves, outbound
// transfers, refunds — and learns their outcome. Its rules (docs/decisions/0008-payment-pipeline.md):
// - Persist before you call: an instruction's state is committed before each bank call
//   (`sending`, with the attempt number). Whoever finds an instruction `sending` asks the bank
//   first (requery) and acts on that answer; it never repeats the checks made before a send.
// - Single flight: a worker takes an instruction with a lease, and every write of its step is
//   fenced by the lease's token; any number of processes may hold jobs for one instruction.
// - Name enquiry once, before the first send; a holder that the given name does not name fails
//   the instruction before anything is sent (name_mismatch, NIP 08).
// - NIP answers are read by one table (banking/nip/codes.ts). "No record" (25) on an instruction whose send
//   may not have reached the bank sends it again under the same reference, a bounded number of
//   times, before its deadline; on one the bank accepted it proves nothing. It fails as never
//   received only once no send of it can still be acted on (decisions.ts: each send is signed with
//   its commit time, and the provider's request validity window has run from the latest).
// - Requery on a schedule (live or sandbox) to a deadline, then `unknown`, asked about again on a
//   slow schedule (hourly, then daily): a later requery or an operator's decision with evidence
//   settles it. A requery someone asks for (a partner's GET, an operator) only asks: it never sends.
// - The owner of an instruction (a wallet move, an outbound transfer) hears each change in the
//   same transaction, and moves its own state, ledger and callbacks with it.
// What a step does is decided by pure functions (decisions.ts: opening, decide); this module is
// their shell: it claims, calls the bank, and writes the step decided through its one write path,
// the step writer (a step alone is a batch of one).
import { randomUUID } from 'node:crypto'
import type { Clock } from '../../platform/clock.ts'
import { Coalescer } from '../../platform/coalescer.ts'
import type { Pool, Queryable, Tx } from '../../platform/db.ts'
import { failpoint } from '../../platform/failpoints.ts'
import { askAccountName } from '../../banking/banks/service.ts'
import { getProvider, type ProviderProfile, type ProviderRegistry } from '../../banking/providers/service.ts'
import type { ProviderAdapter, ProviderResult } from '../../banking/providers/types.ts'
import {
  decide,
  firstSend,
  neverSent,
  opening,
  type Answer,
  type Progress,
  type Step,
  type StepChange,
  type StepMode,
  type StepRules,
} from './decisions.ts'
import { addPollJob, WORK_TASK } from './queue.ts'
import * as repo from './repo.ts'
import type { PaymentSettings } from './settings.ts'
import { instructionStates, WORKABLE } from './states.ts'

export type { Instruction, NewInstruction, OwnerType, Operation } from './repo.ts'
export type { InstructionState } from './states.ts'
export type { Progress } from './decisions.ts'
export * from './settings.ts'
export { payoutNews } from './news.ts'
export {
  bringForwardPartner,
  PAYMENTS_CRONTAB,
  requestRequery,
  sweepStranded,
  sweepUnknown,
  SWEEP_TASK,
  WORK_TASK,
} from './queue.ts'
export { requestReversalCheck, REVERSAL_TASK, type Reversal, type ReversalOwner } from './reversals.ts'

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
  /** The one write path of steps: those arriving together share one transaction; one alone is a batch of one. */
  writer: Coalescer<StepWrite, repo.Instruction | undefined>
}

/** Runs work with the payment pipeline wired to the database and the bank (built by the composition root). */
export type WithPayments = <T>(work: (payments: PaymentsDeps) => Promise<T>) => Promise<T>

/** An instruction as its owner describes it, before the pipeline fills in its schedule. */
export type InstructionSpec = Omit<repo.NewInstruction, 'requeryFirstDelayMs' | 'deadlineAt' | 'lease' | 'madeAt'>

/** The instruction's row, with the schedule of the partner's environment; `held` when this process works it at once. */
export function newInstruction(
  settings: PaymentSettings,
  clock: Clock,
  environment: 'sandbox' | 'live',
  spec: InstructionSpec,
  held = false,
): repo.NewInstruction {
  const schedule = environment === 'sandbox' ? settings.sandbox : settings.live
  const now = clock.now().getTime()
  return {
    ...spec,
    requeryFirstDelayMs: schedule.firstDelayMs,
    deadlineAt: new Date(now + schedule.deadlineMs),
    // The lease bounds this process's I/O, so it is wall time, as claimInstruction's (the database's now()).
    lease: held ? { token: randomUUID(), expiresAt: new Date(Date.now() + settings.leaseMs) } : undefined,
    madeAt: new Date(now),
  }
}

/** Records instructions in the owner's transaction; those not held get their work job in it too. */
export async function createInstructions(
  tx: Queryable,
  instructions: readonly repo.NewInstruction[],
): Promise<repo.Instruction[]> {
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
export async function workCreated(
  deps: PaymentsDeps,
  instruction: repo.Instruction,
  requestId?: string,
  provider?: ProviderProfile,
): Promise<repo.Instruction | undefined> {
  if (instruction.leaseToken === null) throw new Error(`instruction ${instruction.id} was not created held`)
  const mode = instruction.state === 'sending' ? 'send' : 'work'
  return runStep(
    deps,
    instruction,
    { token: instruction.leaseToken, leaseUntilMs: leaseEnd(deps), mode },
    requestId,
    provider,
  )
}

/**
 * Asks the bank now about an instruction not final (an operator, the partner's requery), unknown
 * ones included, and records the answer. It only asks: it never sends (a GET never moves money;
 * resends belong to the pipeline's schedule). Held by another worker: answers it as it stands.
 */
export async function requeryNow(
  deps: PaymentsDeps,
  id: string,
  requestId?: string,
): Promise<repo.Instruction | undefined> {
  const token = randomUUID()
  const leaseUntilMs = leaseEnd(deps)
  const claimed = await repo.claimInstruction(deps.pool, id, token, deps.settings.leaseMs, [...WORKABLE, 'unknown'])
  if (!claimed) return repo.selectInstruction(deps.pool, id)
  return (
    (await runStep(deps, claimed, { token, leaseUntilMs, mode: 'look' }, requestId)) ??
    repo.selectInstruction(deps.pool, id)
  )
}

interface Holding {
  token: string
  /** The end of this process's lease by performance.now(): no bank call starts after it. */
  leaseUntilMs: number
  mode: StepMode
}

/** A step under way: this process's hold of the instruction and the provider it is asked through. */
interface Run extends Holding {
  deps: PaymentsDeps
  adapter: ProviderAdapter
}

async function runStep(
  deps: PaymentsDeps,
  instruction: repo.Instruction,
  holding: Holding,
  requestId?: string,
  provider?: ProviderProfile,
): Promise<repo.Instruction | undefined> {
  try {
    const adapter = await deps.providers.adapterFor(
      provider ?? (await getProvider(deps.pool, instruction.provider)),
      requestId,
    )
    return await begin({ deps, adapter, ...holding }, instruction)
  } catch (error) {
    // Nothing is decided from an exception: the instruction is given back, and whoever takes it
    // next (the job's retry, the sweep) asks the bank first.
    await repo.releaseInstruction(deps.pool, instruction.id, holding.token).catch(() => {})
    throw error
  }
}

/** The step's first move (decisions.ts: opening). */
async function begin(run: Run, instruction: repo.Instruction): Promise<repo.Instruction | undefined> {
  switch (opening(instruction, run.mode, run.deps.clock.now())) {
    case 'give_back':
      return giveBack(run, instruction)
    case 'never_sent':
      return apply(run, instruction, neverSent(instruction))
    case 'name_enquiry':
      return enquire(run, instruction)
    case 'first_send':
      return apply(run, instruction, firstSend(instruction))
    case 'send':
      return send(run, instruction)
    case 'requery':
      return ask(run, instruction)
  }
}

/** Gives the instruction back unchanged (a look at one never sent: there is nothing to ask), answering it as it stands. */
async function giveBack(run: Run, instruction: repo.Instruction): Promise<repo.Instruction | undefined> {
  await repo.releaseInstruction(run.deps.pool, instruction.id, run.token)
  return repo.selectInstruction(run.deps.pool, instruction.id)
}

/**
 * The name enquiry before the first send, where the provider checks names, asked through banking's
 * one call of it (askAccountName); its answer decided like any other.
 */
async function enquire(run: Run, instruction: repo.Instruction): Promise<repo.Instruction | undefined> {
  const result = await askAccountName(run.adapter, {
    bankCode: instruction.destinationBankCode!,
    accountNumber: instruction.destinationAccountNumber!,
  })
  return decideAndApply(run, instruction, { to: 'name_enquiry', result })
}

/**
 * One send, committed as `sending` before this call, and signed with the time it was committed;
 * its answer read like any other. A process that stood still past its lease does not call: another
 * worker may have taken the instruction on (the signing time is what makes a call that still goes
 * out late harmless: decisions.ts).
 */
async function send(run: Run, instruction: repo.Instruction): Promise<repo.Instruction | undefined> {
  await failpoint('payments.before_send', { id: instruction.id })
  if (performance.now() >= run.leaseUntilMs) {
    run.deps.log('warn', `payment ${instruction.id}: not sent; this worker's lease ran out before its call`)
    return giveBack(run, instruction)
  }
  await failpoint('payments.in_flight', { id: instruction.id }) // checked, and not yet at the bank
  const result = await callBank(run.adapter, instruction)
  await failpoint('payments.after_send', { id: instruction.id })
  return decideAndApply(run, instruction, { to: 'send', result })
}

/** A requery: what the bank did with the reference, and when it was asked (by the clock shared with the bank). */
async function ask(run: Run, instruction: repo.Instruction): Promise<repo.Instruction | undefined> {
  const askedAt = run.deps.clock.now()
  const result = await run.adapter.requery(instruction.id)
  await failpoint('payments.after_requery', { id: instruction.id }) // the bank's answer in hand, nothing written
  return decideAndApply(run, instruction, { to: 'requery', result, askedAt })
}

function callBank(adapter: ProviderAdapter, instruction: repo.Instruction): Promise<ProviderResult<null>> {
  const base = {
    reference: instruction.id,
    amountKobo: instruction.amountKobo,
    narration: instruction.narration ?? undefined,
    signedAt: instruction.lastSignedAt ?? undefined,
  }
  const destination = {
    destinationBankCode: instruction.destinationBankCode!,
    destinationAccountNumber: instruction.destinationAccountNumber!,
  }
  switch (instruction.operation) {
    case 'credit':
      return adapter.credit({ ...base, accountNumber: instruction.creditAccountNumber! })
    case 'debit':
      return adapter.debit({ ...base, accountNumber: instruction.debitAccountNumber! })
    case 'book':
      return adapter.walletTransfer({
        ...base,
        fromAccountNumber: instruction.debitAccountNumber!,
        toAccountNumber: instruction.creditAccountNumber!,
      })
    case 'interbank':
      return adapter.sendToBank({ ...base, fromAccountNumber: instruction.debitAccountNumber!, ...destination })
    case 'payout':
      return adapter.payout({ ...base, ...destination })
  }
}

/** Decides on the answer now, by the pipeline's settings and the provider's promises, and applies the step. */
function decideAndApply(
  run: Run,
  instruction: repo.Instruction,
  answer: Answer,
): Promise<repo.Instruction | undefined> {
  const { settings } = run.deps
  const rules: StepRules = {
    mode: run.mode,
    sendAttemptsMax: settings.sendAttemptsMax,
    unknownPolls: settings.unknownPolls,
    providerClockSkewMs: settings.providerClockSkewMs,
    traits: run.adapter.traits,
  }
  return apply(run, instruction, decide(instruction, answer, run.deps.clock.now(), rules))
}

/** Writes a decided step; a committed send is then made (persist before you call). */
async function apply(run: Run, instruction: repo.Instruction, step: Step): Promise<repo.Instruction | undefined> {
  const written = await write(run, instruction, step.change)
  return written && step.thenSend ? send(run, written) : written
}

// ---- writing steps ---------------------------------------------------------------------------

/** One step's write: the instruction's change, what its owner hears, and its next job. */
export interface StepWrite extends StepChange {
  id: string
  token: string
}

async function write(
  run: Run,
  instruction: repo.Instruction,
  change: StepChange,
): Promise<repo.Instruction | undefined> {
  const { deps } = run
  const written = await deps.writer.run({ id: instruction.id, token: run.token, ...change })
  if (!written) {
    // A late, duplicate or contradicting answer: the instruction moved on (another worker, an
    // operator) or this worker's lease ran out. Nothing changes; it is logged — a warning when the
    // answer would have changed it, a note when it only repeats the final state it found.
    const current = await repo.selectInstruction(deps.pool, instruction.id)
    const repeats =
      current !== undefined && current.state === change.next && instructionStates.isTerminal(current.state)
    deps.log(
      repeats ? 'info' : 'warn',
      `payment ${instruction.id}: ${change.next} not applied; it is ${current?.state ?? 'gone'}${current?.leaseToken && current.leaseToken !== run.token ? ', held by another worker' : ''}`,
    )
  }
  return written
}

/** The parts of the pipeline, and the writer every step's write goes through (none is written on its own). */
export type PaymentsParts = Omit<PaymentsDeps, 'writer'>

/** The pipeline with its step writer: steps arriving together share one transaction, a step alone is a batch of one. */
export function withStepWriter(parts: PaymentsParts): PaymentsDeps {
  return { ...parts, writer: new Coalescer(parts.pool, (tx, writes) => writeSteps(parts, tx, writes)) }
}

/**
 * Writes steps in the caller's transaction, in one statement: each instruction's change fenced by
 * its lease; then, in id order (owners lock their rows in that order too), the owners told of what
 * changed, and the next jobs.
 */
async function writeSteps(
  deps: PaymentsParts,
  tx: Tx,
  writes: readonly StepWrite[],
): Promise<(repo.Instruction | undefined)[]> {
  const changes: Record<repo.OwnerType, InstructionChange[]> = { wallet_move: [], outbound_transfer: [] }
  const polls: { id: string; runAt: Date }[] = []
  const now = deps.clock.now()
  const results = await repo.writeSteps(tx, writes, now)
  const order = writes
    .map((_write, index) => index)
    .sort((a, b) => (writes[a]!.id < writes[b]!.id ? -1 : writes[a]!.id > writes[b]!.id ? 1 : 0))
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
  for (const poll of polls) await addPollJob(tx, poll.id, poll.runAt.getTime() - now.getTime())
  return results
}
