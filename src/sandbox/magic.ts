// Magic values of the sandbox bank: the destination account of an interbank transfer decides
// its final outcome, so that tests and partners can reproduce every path (as Stripe's test cards
// do). Documented in docs/sandbox.md. Any other valid account settles with 00.

export interface InterbankOutcome {
  /** The NIP code the transfer settles with; 09 means it never settles (in progress for good). */
  finalCode: string
}

/** The last three digits of the serial (digits 7–9 of the NUBAN) pick the outcome. */
const BY_SERIAL_ENDING: Record<string, string> = {
  '005': '05', // do not honour
  '051': '51', // insufficient funds (at the sending side's clearing)
  '091': '91', // beneficiary bank not available
  '999': '09', // never settles: requery keeps answering 09 until Rail's deadline
}

export function interbankOutcome(destinationAccountNumber: string): InterbankOutcome {
  return { finalCode: BY_SERIAL_ENDING[destinationAccountNumber.slice(6, 9)] ?? '00' }
}

/**
 * Magic amounts, for every kind of transfer: the last four digits of amountKobo pick a behaviour,
 * so that one request reproduces one path. Amounts ending otherwise behave normally.
 */
export type MagicAmount =
  | { kind: 'code'; code: string } // refused at once with this NIP code, nothing moves
  | { kind: 'pending_then_success' } // accepted with 09; a requery after settlement says 00
  | { kind: 'fault'; fault: 'no_answer' | 'error' | 'lose_response' } // see faults.ts
  | { kind: 'drop_first_submission' } // a lost request: the first transfer of a reference is dropped unprocessed (no answer); a resend is processed
  | { kind: 'lost_notification' } // inbound credits only: received, but never announced to the client

const BY_AMOUNT_ENDING: Record<number, MagicAmount> = {
  9051: { kind: 'code', code: '51' },
  9007: { kind: 'code', code: '07' },
  9009: { kind: 'pending_then_success' },
  9097: { kind: 'drop_first_submission' },
  9096: { kind: 'fault', fault: 'error' },
  9098: { kind: 'fault', fault: 'lose_response' },
  9404: { kind: 'lost_notification' },
}

export function magicAmount(amountKobo: number): MagicAmount | undefined {
  return BY_AMOUNT_ENDING[amountKobo % 10_000]
}

/** How long an interbank transfer stays in progress before it settles. */
export const SETTLE_DELAY_MS = 1_000
