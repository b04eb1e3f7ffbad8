// NIP (NIBSS Instant Payment) response codes and what each means for a transfer's outcome
// (docs/decisions/0008-payment-pipeline.md). The rule: an outcome is failed only on a final
// failure code; every other answer — and no answer — is pending and is requeried until a final
// code or the deadline. This table is the one classification of NIP answers in Rail.

/**
 * success: final success; pending: requery; failed: final failure; not_found: the bank has no
 * record of the reference (25) — which the payment pipeline reads as "never received" only for an
 * instruction whose send may not have reached the bank (then it sends again, same reference).
 */
export type NipOutcome = 'success' | 'pending' | 'failed' | 'not_found'

export interface NipCode {
  code: string
  message: string
  outcome: NipOutcome
}

export const NIP_CODES: readonly NipCode[] = [
  { code: '00', message: 'Approved or completed successfully', outcome: 'success' },
  { code: '01', message: 'Status unknown, please wait for settlement report', outcome: 'pending' },
  { code: '02', message: 'Awaiting response from destination', outcome: 'pending' },
  { code: '09', message: 'Request processing in progress', outcome: 'pending' },
  // On a requery: not seen. A send whose answer was lost is sent again; an accepted one is requeried.
  { code: '25', message: 'Unable to locate record', outcome: 'not_found' },
  // A duplicate is never debited again; the original is requeried.
  { code: '26', message: 'Duplicate record', outcome: 'pending' },
  { code: '94', message: 'Duplicate transaction', outcome: 'pending' },
  // Requeried before any reversal: the money may have moved.
  { code: '96', message: 'System malfunction', outcome: 'pending' },
  { code: '97', message: 'Timeout waiting for response from destination', outcome: 'pending' },
  { code: '03', message: 'Invalid sender', outcome: 'failed' },
  { code: '05', message: 'Do not honour', outcome: 'failed' },
  { code: '06', message: 'Dormant account', outcome: 'failed' },
  { code: '07', message: 'Invalid account', outcome: 'failed' },
  { code: '08', message: 'Account name mismatch', outcome: 'failed' },
  { code: '12', message: 'Invalid transaction', outcome: 'failed' },
  { code: '13', message: 'Invalid amount', outcome: 'failed' },
  { code: '16', message: 'Unknown bank code', outcome: 'failed' },
  { code: '51', message: 'No sufficient funds', outcome: 'failed' },
  { code: '57', message: 'Transaction not permitted to sender', outcome: 'failed' },
  { code: '58', message: 'Transaction not permitted on channel', outcome: 'failed' },
  { code: '61', message: 'Transfer limit exceeded', outcome: 'failed' },
  { code: '63', message: 'Security violation', outcome: 'failed' },
  { code: '65', message: 'Exceeds withdrawal frequency', outcome: 'failed' },
  { code: '91', message: 'Beneficiary bank not available', outcome: 'failed' },
  { code: '92', message: 'Routing error', outcome: 'failed' },
]

const BY_CODE = new Map(NIP_CODES.map((entry) => [entry.code, entry]))

/**
 * What a response code means for the outcome. A code not in the table is treated as pending:
 * only a code known to be final may fail a transfer (failing one whose money moved would be
 * the worse mistake).
 */
export function nipOutcome(code: string | undefined): NipOutcome {
  return (code !== undefined && BY_CODE.get(code)?.outcome) || 'pending'
}

export function nipMessage(code: string): string {
  return BY_CODE.get(code)?.message ?? `Unrecognised response code ${code}`
}
