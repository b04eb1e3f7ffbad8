// The payment pipeline's settings: its requery schedules (live and sandbox), how long a worker
// holds an instruction, and how many sends of one reference it makes at most.
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
}

export const LIVE_SCHEDULE_DEFAULT: RequerySchedule = { firstDelayMs: 5_000, deadlineMs: 24 * 60 * 60 * 1000 }
export const SANDBOX_SCHEDULE_DEFAULT: RequerySchedule = { firstDelayMs: 5_000, deadlineMs: 3 * 60 * 1000 }
export const LEASE_MS_DEFAULT = 60_000
export const SEND_ATTEMPTS_MAX_DEFAULT = 3

export function paymentSettings(overrides: Partial<PaymentSettings> = {}): PaymentSettings {
  return { live: LIVE_SCHEDULE_DEFAULT, sandbox: SANDBOX_SCHEDULE_DEFAULT, leaseMs: LEASE_MS_DEFAULT, sendAttemptsMax: SEND_ATTEMPTS_MAX_DEFAULT, ...overrides }
}
