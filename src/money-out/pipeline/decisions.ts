// The payment pipeline's decisions, as pure functions of facts alone: what a step does first with
// the instruction it holds, what it does with the bank's answer (a name enquiry's, a send's, a
// requery's), what "no record" (NIP 25) of a payment means, and when an unknown payment is asked
// about again. No database, no clock, no call: the pipeline's shell (service.ts) gathers the facts
// (the row, the provider's traits, the time), makes the calls, and writes the step decided here
// (docs/decisions/0008-payment-pipeline.md).
import { nipMessage, nipOutcome } from '../../banking/nip/codes.ts'
import { namesMatch } from '../../banking/nip/name-match.ts'
import type { ProviderResult, ProviderTraits } from '../../banking/providers/types.ts'
import type { Instruction, StepFields } from './repo.ts'
import type { InstructionState } from './states.ts'

/**
 * Margin for the provider's clock running behind Rail's: a send's window is taken to run this much
 * longer than the provider states. Banks keep their clocks by NTP; a minute is generous. (A setting:
 * tests beside a sandbox bank on the same clock make it 0.)
 */
export const PROVIDER_CLOCK_SKEW_MS_DEFAULT = 60_000

export interface NoRecordFacts {
  /** Since the latest send was committed, by the pipeline's clock (a sandbox clock shortens it). */
  sinceLastSendMs: number
  requeryFirstDelayMs: number
  sendAttempts: number
  sendAttemptsMax: number
  /** The requery deadline has not passed: after it, the pipeline never sends again. */
  beforeDeadline: boolean
  /** The pipeline's own schedule asked; a look (a partner's GET, an operator's requery) never sends. */
  mayResend: boolean
  deduplicatesReferences: boolean
  /** From the time the latest send is signed with to the moment this requery was made; null when that time is not known. */
  askedAfterSignedMs: number | null
  /** The provider's request validity window; null when it promises none. */
  requestValidityWindowMs: number | null
  /** How far the provider's clock may run behind Rail's. */
  clockSkewMs: number
}

/** wait: ask again later (or go unknown at the deadline); resend: the same reference again; fail: it was never received. */
export type NoRecordDecision = 'wait' | 'resend' | 'fail'

/**
 * "No record" of a payment the bank never acknowledged. Right after a send it may be that send on
 * its way: wait. Before the deadline, on the pipeline's schedule, with sends left and a provider
 * that de-duplicates references: send it again. It was never received only when no send of it can
 * still be acted on — the window of the latest send has passed before this requery was made —
 * else wait: a stalled process may yet make its call, and nothing is decided while it can.
 */
export function onNoRecord(facts: NoRecordFacts): NoRecordDecision {
  if (facts.sinceLastSendMs < facts.requeryFirstDelayMs) return 'wait'
  if (
    facts.mayResend &&
    facts.beforeDeadline &&
    facts.deduplicatesReferences &&
    facts.sendAttempts < facts.sendAttemptsMax
  )
    return 'resend'
  return sendsExpired(facts) ? 'fail' : 'wait'
}

/** No send of the payment can still be acted on by the provider when this requery was made. */
export function sendsExpired(
  facts: Pick<NoRecordFacts, 'askedAfterSignedMs' | 'requestValidityWindowMs' | 'clockSkewMs'>,
): boolean {
  if (facts.requestValidityWindowMs === null || facts.askedAfterSignedMs === null) return false
  return facts.askedAfterSignedMs > facts.requestValidityWindowMs + facts.clockSkewMs
}

/** One phase of the slow schedule: a requery every `everyMs` until `untilMs` after the deadline. */
export interface UnknownPollPhase {
  everyMs: number
  untilMs: number
}

/** When an unknown payment is next asked about, or null when its schedule is spent (an operator decides). */
export function nextUnknownPoll(phases: readonly UnknownPollPhase[], deadlineAt: Date, now: Date): Date | null {
  const pastDeadlineMs = Math.max(0, now.getTime() - deadlineAt.getTime())
  const phase = phases.find((candidate) => pastDeadlineMs < candidate.untilMs)
  return phase ? new Date(now.getTime() + phase.everyMs) : null
}

/** How long after the deadline unknown payments are still asked about. */
export function unknownPollHorizonMs(phases: readonly UnknownPollPhase[]): number {
  return Math.max(0, ...phases.map((phase) => phase.untilMs))
}

// ---- a step's decisions ----------------------------------------------------------------------

/** What the owner of an instruction hears: the bank accepted it, gave no answer, or it ended. */
export type Progress = 'accepted' | 'no_answer' | 'succeeded' | 'failed' | 'unknown'

/**
 * How a step was started. work: the pipeline's own schedule (prepare and send a ready one, else
 * ask); send: its creator committed its first send; look: someone asked to requery (never sends).
 */
export type StepMode = 'work' | 'send' | 'look'

/** A change of one instruction, written fenced by its holder's lease: its state, what it records, its owner's news, its next poll. */
export interface StepChange {
  next: InstructionState
  fields: StepFields
  /** The lease is given back (false only when a send follows the write). */
  release: boolean
  progress?: Progress
  /** A work job at this time (a scheduled poll). */
  runAt?: Date
}

/** What a step decided: a change to write, and whether a send follows once it is committed (persist before you call). */
export interface Step {
  change: StepChange
  thenSend: boolean
}

/** What the decisions need besides the instruction and the time: how the step was started, the pipeline's settings, the provider's promises. */
export interface StepRules {
  mode: StepMode
  sendAttemptsMax: number
  unknownPolls: readonly UnknownPollPhase[]
  providerClockSkewMs: number
  traits: Pick<ProviderTraits, 'deduplicatesReferences' | 'requestValidityWindowMs'>
}

/** The bank's answer a step decides on: to a name enquiry, to a send, or to a requery made at `askedAt` (by the clock shared with the bank). */
export type Answer =
  | { to: 'name_enquiry'; result: ProviderResult<{ accountName: string }> }
  | { to: 'send'; result: ProviderResult<null> }
  | { to: 'requery'; result: ProviderResult<null>; askedAt: Date }

/**
 * A step's first move: give a look at an unsent one back, fail an unsent one whose deadline passed
 * (neverSent), enquire the name, commit the first send, make the committed send, or ask the bank.
 */
export type Opening = 'give_back' | 'never_sent' | 'name_enquiry' | 'first_send' | 'send' | 'requery'

/**
 * What a step holding `instruction` at `now` does first. Ready: nothing was sent, so a look has
 * nothing to ask; past its deadline it is never sent (neverSent), nor its name asked; else the
 * name enquiry (once, where the provider checks names) or the first send. A send its creator
 * committed is made. Anything else in flight is asked about first: a worker that finds it
 * `sending` never repeats the checks made before a send.
 */
export function opening(
  instruction: Pick<Instruction, 'state' | 'nameCheck' | 'verifiedAccountName' | 'deadlineAt'>,
  mode: StepMode,
  now: Date,
): Opening {
  if (instruction.state === 'ready') {
    if (mode === 'look') return 'give_back'
    if (pastDeadline(instruction, now)) return 'never_sent'
    return instruction.nameCheck && instruction.verifiedAccountName === null ? 'name_enquiry' : 'first_send'
  }
  if (instruction.state === 'sending' && mode === 'send') return 'send'
  return 'requery'
}

function pastDeadline(instruction: Pick<Instruction, 'deadlineAt'>, now: Date): boolean {
  return now.getTime() >= instruction.deadlineAt.getTime()
}

/**
 * A ready instruction whose deadline came before its first send: after the deadline nothing is
 * sent at all (docs/decisions/0008-payment-pipeline.md §Rules), and nothing reached the bank, so it
 * fails as never sent — `provider_unavailable` when its name enquiries went unanswered to the
 * deadline (each counted as a requery), `not_sent` when it was never worked before it (the workers
 * were down, its job was lost).
 */
export function neverSent(instruction: Pick<Instruction, 'requeryAttempts'>): Step {
  if (instruction.requeryAttempts > 0)
    return fail('provider_unavailable', 'Name enquiry gave no answer before the deadline; nothing was sent')
  return fail('not_sent', 'Its deadline came before it was sent; nothing was sent')
}

/** The first send, committed (`sending`, its attempt counted) before the call; the name the enquiry found kept with it. */
export function firstSend(instruction: Pick<Instruction, 'sendAttempts'>, verifiedAccountName?: string): Step {
  return {
    change: {
      next: 'sending',
      fields: { sendAttempts: instruction.sendAttempts + 1, verifiedAccountName },
      release: false,
    },
    thenSend: true,
  }
}

/** What a step does with the bank's answer at `now`. A requery's answer counts that requery first. */
export function decide(instruction: Instruction, answer: Answer, now: Date, rules: StepRules): Step {
  if (answer.to === 'name_enquiry') return onNameEnquiry(instruction, answer.result, now, rules)
  const asked =
    answer.to === 'requery' ? { ...instruction, requeryAttempts: instruction.requeryAttempts + 1 } : instruction
  return onBankAnswer(asked, answer.result, answer.to === 'requery' ? answer.askedAt : 'send', now, rules)
}

/**
 * The name enquiry before the first send. Refused, or naming someone other than the given name:
 * failed, nothing sent (name_mismatch is NIP 08). No answer: asked again later, backing off as
 * requeries do; at the deadline failed (nothing was sent). Else the first send, unless the deadline
 * came meanwhile (neverSent).
 */
function onNameEnquiry(
  instruction: Instruction,
  enquiry: ProviderResult<{ accountName: string }>,
  now: Date,
  rules: StepRules,
): Step {
  if (enquiry.outcome === 'failed') {
    return fail('name_enquiry_failed', `Name enquiry refused: ${enquiry.responseMessage}`, {
      responseCode: enquiry.responseCode,
      responseMessage: enquiry.responseMessage,
    })
  }
  if (enquiry.outcome !== 'successful') {
    if (pastDeadline(instruction, now)) return neverSent({ requeryAttempts: instruction.requeryAttempts + 1 })
    const asked = instruction.requeryAttempts + 1
    return later({ ...instruction, requeryAttempts: asked }, 'ready', { requeryAttempts: asked }, now, rules)
  }
  const verifiedAccountName = enquiry.value.accountName
  if (instruction.expectedAccountName !== null && !namesMatch(instruction.expectedAccountName, verifiedAccountName)) {
    return fail('name_mismatch', `Account name mismatch: the account is held by ${verifiedAccountName}`, {
      responseCode: '08',
      responseMessage: nipMessage('08'),
      verifiedAccountName,
    })
  }
  // Answered only once the deadline came: nothing is sent after it.
  if (pastDeadline(instruction, now)) return neverSent(instruction)
  return firstSend(instruction, verifiedAccountName)
}

/** How the pipeline reads a bank's answer (by the NIP table), whatever the call was. */
export type Meaning = 'succeeded' | 'failed' | 'in_progress' | 'not_found' | 'no_answer'

export function meaningOf(result: ProviderResult<null>): Meaning {
  if (result.outcome === 'unknown') return 'no_answer'
  // Paid, then given back by the provider: nothing was paid in the end.
  if (result.outcome === 'failed' && result.reversed) return 'failed'
  const outcome = nipOutcome(result.responseCode)
  return outcome === 'success'
    ? 'succeeded'
    : outcome === 'failed'
      ? 'failed'
      : outcome === 'not_found'
        ? 'not_found'
        : 'in_progress'
}

/**
 * An answer to a send (`send`) or to a requery made at `askedAt` (`instruction.requeryAttempts`
 * already counts it): final only on a final code; "no record" of one the bank may never have had
 * is onNoRecord's; in progress moves a send to `sent`; no answer (or "no record" of a payment the
 * bank accepted, which proves nothing) asks again later.
 */
function onBankAnswer(
  instruction: Instruction,
  result: ProviderResult<null>,
  askedAt: Date | 'send',
  now: Date,
  rules: StepRules,
): Step {
  const answer: StepFields =
    result.outcome === 'unknown'
      ? { requeryAttempts: instruction.requeryAttempts }
      : {
          requeryAttempts: instruction.requeryAttempts,
          providerReference: result.providerReference || null,
          responseCode: result.responseCode,
          responseMessage: result.responseMessage,
        }
  const meaning = meaningOf(result)
  if (meaning === 'succeeded')
    return {
      change: { next: 'succeeded', fields: { ...answer, accepted: true }, release: true, progress: 'succeeded' },
      thenSend: false,
    }
  if (meaning === 'failed')
    return fail('provider_declined', result.outcome === 'unknown' ? '' : result.responseMessage, answer)
  const sending = instruction.state === 'sending'
  // Its sends may never have reached the bank: it is `sending`, or `unknown` without the bank ever having had it.
  const neverHad = sending || (instruction.state === 'unknown' && instruction.acceptedAt === null)
  if (meaning === 'not_found' && askedAt !== 'send' && neverHad)
    return notReceived(instruction, answer, askedAt, now, rules)
  if (meaning === 'in_progress')
    return later(
      instruction,
      sending ? 'sent' : instruction.state,
      { ...answer, accepted: true },
      now,
      rules,
      sending ? 'accepted' : undefined,
    )
  return later(instruction, instruction.state, answer, now, rules, sending ? 'no_answer' : undefined)
}

/**
 * The bank has no record of a send (onNoRecord decides what that means): sent again under the same
 * reference, asked about again later, or failed as never received once no send of it can still be
 * acted on by the bank.
 */
function notReceived(instruction: Instruction, answer: StepFields, askedAt: Date, now: Date, rules: StepRules): Step {
  const nowMs = now.getTime()
  const decision = onNoRecord({
    sinceLastSendMs: instruction.lastSentAt ? nowMs - instruction.lastSentAt.getTime() : Number.POSITIVE_INFINITY,
    requeryFirstDelayMs: instruction.requeryFirstDelayMs,
    sendAttempts: instruction.sendAttempts,
    sendAttemptsMax: rules.sendAttemptsMax,
    beforeDeadline: nowMs < instruction.deadlineAt.getTime(),
    mayResend: rules.mode !== 'look',
    deduplicatesReferences: rules.traits.deduplicatesReferences,
    askedAfterSignedMs: instruction.lastSignedAt ? askedAt.getTime() - instruction.lastSignedAt.getTime() : null,
    requestValidityWindowMs: rules.traits.requestValidityWindowMs,
    clockSkewMs: rules.providerClockSkewMs,
  })
  if (decision === 'wait')
    return later(
      instruction,
      instruction.state,
      answer,
      now,
      rules,
      instruction.state === 'sending' ? 'no_answer' : undefined,
    )
  if (decision === 'fail') {
    const message = `The bank has no record of this payment after ${instruction.sendAttempts} sends, asked once none of them could still be acted on; nothing was paid`
    return fail('not_received', message, answer)
  }
  return {
    change: { next: 'sending', fields: { ...answer, sendAttempts: instruction.sendAttempts + 1 }, release: false },
    thenSend: true,
  }
}

function fail(failureCode: string, failureMessage: string, fields: StepFields = {}): Step {
  return {
    change: { next: 'failed', fields: { ...fields, failureCode, failureMessage }, release: true, progress: 'failed' },
    thenSend: false,
  }
}

/** No final answer: the next requery on the schedule (doubling from the first delay, never past the deadline), or at the deadline `unknown`. */
function later(
  instruction: Instruction,
  next: InstructionState,
  fields: StepFields,
  now: Date,
  rules: StepRules,
  progress?: Progress,
): Step {
  const nowMs = now.getTime()
  const deadlineMs = instruction.deadlineAt.getTime()
  // Unknown (already, or now at the deadline): asked about again on the slow schedule, whose sweep gives it a job when due.
  const nextPoll = nextUnknownPoll(rules.unknownPolls, instruction.deadlineAt, now) ?? undefined
  if (instruction.state === 'unknown')
    return {
      change: { next: 'unknown', fields: { ...fields, nextAttemptAt: nextPoll }, release: true },
      thenSend: false,
    }
  if (nowMs >= deadlineMs && next !== 'ready')
    return {
      change: { next: 'unknown', fields: { ...fields, nextAttemptAt: nextPoll }, release: true, progress: 'unknown' },
      thenSend: false,
    }
  const delayMs = instruction.requeryFirstDelayMs * 2 ** Math.min(instruction.requeryAttempts, 30)
  const runAt = new Date(Math.min(nowMs + delayMs, Math.max(deadlineMs, nowMs)))
  return {
    change: { next, fields: { ...fields, nextAttemptAt: runAt }, release: true, progress, runAt },
    thenSend: false,
  }
}
