// The payment pipeline's decisions that depend on facts alone, as pure functions: what "no record"
// (NIP 25) of a payment means, and when an unknown payment is asked about again. The pipeline
// gathers the facts (its row, the provider's traits, its clock) and acts on the answer
// (docs/decisions/0008-payment-pipeline.md).

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
  if (facts.mayResend && facts.beforeDeadline && facts.deduplicatesReferences && facts.sendAttempts < facts.sendAttemptsMax) return 'resend'
  return sendsExpired(facts) ? 'fail' : 'wait'
}

/** No send of the payment can still be acted on by the provider when this requery was made. */
export function sendsExpired(facts: Pick<NoRecordFacts, 'askedAfterSignedMs' | 'requestValidityWindowMs' | 'clockSkewMs'>): boolean {
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
