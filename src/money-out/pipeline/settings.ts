// The payment pipeline's settings: its requery schedules (live and sandbox), how long a worker
// holds an instruction, how many sends of one reference it makes at most, and how often an
// unknown instruction is asked about again.
import { PROVIDER_CLOCK_SKEW_MS_DEFAULT, type UnknownPollPhase } from './decisions.ts'

export interface RequerySchedule {
  /** The first requery comes this long after a send; each next one twice as long after the last. */
  firstDelayMs: number
  /** From creation to `unknown`. */
  deadlineMs: number
}

export interface PaymentSettings {
  live: RequerySchedule
  /** Sandbox partners' schedule: short enough to watch the `unknown` path end to end. */
  sandbox: RequerySchedule
  /** How long a worker holds an instruction: longer than the bank calls of one step take. */
  leaseMs: number
  /** Sends of one reference at most; a bank that still has no record after them never received it. */
  sendAttemptsMax: number
  /** After the deadline, an unknown instruction is asked about on this slow schedule (phases in order). */
  unknownPolls: readonly UnknownPollPhase[]
  /** How far a provider's clock may run behind Rail's, added to its request validity window. */
  providerClockSkewMs: number
}

export const LIVE_SCHEDULE_DEFAULT: RequerySchedule = { firstDelayMs: 5_000, deadlineMs: 24 * 60 * 60 * 1000 }
export const SANDBOX_SCHEDULE_DEFAULT: RequerySchedule = { firstDelayMs: 5_000, deadlineMs: 3 * 60 * 1000 }
export const LEASE_MS_DEFAULT = 60_000
export const SEND_ATTEMPTS_MAX_DEFAULT = 3
const HOUR_MS = 60 * 60 * 1000
const DAY_MS = 24 * HOUR_MS
/** Hourly for a week, then daily to thirty days: banks settle late answers within days, rarely weeks. */
export const UNKNOWN_POLLS_DEFAULT: readonly UnknownPollPhase[] = [
  { everyMs: HOUR_MS, untilMs: 7 * DAY_MS },
  { everyMs: DAY_MS, untilMs: 30 * DAY_MS },
]

export function paymentSettings(overrides: Partial<PaymentSettings> = {}): PaymentSettings {
  return {
    live: LIVE_SCHEDULE_DEFAULT,
    sandbox: SANDBOX_SCHEDULE_DEFAULT,
    leaseMs: LEASE_MS_DEFAULT,
    sendAttemptsMax: SEND_ATTEMPTS_MAX_DEFAULT,
    unknownPolls: UNKNOWN_POLLS_DEFAULT,
    providerClockSkewMs: PROVIDER_CLOCK_SKEW_MS_DEFAULT,
    ...overrides,
  }
}
