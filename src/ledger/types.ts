// The ledger's vocabulary: account kinds, transfer phases and the closed list of result codes.

export type AccountKind =
  'wallet' | 'float' | 'collections' | 'escrow_holding' | 'provider_settlement' | 'suspense' | 'payable' | 'fees'
/** Kinds of which a partner has exactly one per currency. */
export const PARTNER_SINGLETON_KINDS: readonly AccountKind[] = [
  'float',
  'collections',
  'escrow_holding',
  'provider_settlement',
  'suspense',
  'fees',
]

export type AccountStatus = 'open' | 'frozen' | 'closed'

/** single: posted at once; pending: reserved (two-phase); post / void: resolve a pending transfer. */
export type TransferPhase = 'single' | 'pending' | 'post' | 'void'

/**
 * Every outcome of creating a transfer, named after the rule that was broken. `ok` created it;
 * `exists` found the same transfer already made (an idempotent retry). Everything else wrote
 * nothing. The database function returns the codes from `exists_*` to `linked_event_failed`;
 * the others are refused in TypeScript before any query.
 */
export const TRANSFER_RESULTS = [
  'ok',
  'exists',
  // Checked in TypeScript before the write (and again by the database's constraints).
  'id_must_be_uuid',
  'amount_must_be_positive_safe_integer',
  'currency_must_be_iso_4217',
  'code_must_be_snake_case',
  'phase_invalid',
  'accounts_required',
  'pending_id_required',
  'pending_id_not_allowed',
  'timeout_only_for_pending',
  'timeout_invalid',
  // Checked by ledger_create_transfers().
  'accounts_must_be_different',
  'debit_account_not_found',
  'credit_account_not_found',
  'accounts_must_have_the_transfer_currency',
  'debit_account_not_open',
  'credit_account_not_open',
  'exceeds_credits',
  'exceeds_debits',
  'pending_transfer_not_found',
  'pending_transfer_not_pending',
  'pending_transfer_already_posted',
  'pending_transfer_already_voided',
  'pending_transfer_expired',
  'pending_transfer_has_different_accounts',
  'pending_transfer_has_different_currency',
  'pending_transfer_has_different_amount',
  'exceeds_pending_transfer_amount',
  'exists_with_different_phase',
  'exists_with_different_pending_id',
  'exists_with_different_debit_account_id',
  'exists_with_different_credit_account_id',
  'exists_with_different_amount',
  'exists_with_different_currency',
  'exists_with_different_code',
  'exists_with_different_source_type',
  'exists_with_different_source_id',
  'exists_with_different_timeout',
  'linked_event_failed',
] as const

export type TransferResultCode = (typeof TRANSFER_RESULTS)[number]

export interface TransferInput {
  /** Chosen by the caller (a UUID), so that a retry finds the transfer it already made. */
  id: string
  /** Default `single`. */
  phase?: TransferPhase
  /** Required for single and pending; optional (checked if given) for post and void. */
  debitAccountId?: string
  creditAccountId?: string
  /** Required for single and pending; for post, the amount to post (default all); for void, optional. */
  amountKobo?: number
  currency?: string
  /** The pending transfer a post or void resolves. */
  pendingId?: string
  /** Why the money moves, snake_case (e.g. `wallet_credit`). */
  code: string
  /** A pending transfer's reservation ends after this many seconds (the sweep voids it). */
  timeoutS?: number
  /** The business object that caused the transfer. */
  sourceType?: string
  sourceId?: string
}

export interface TransferResult {
  id: string
  result: TransferResultCode
}

export interface AccountBalance {
  accountId: string
  currency: string
  kind: AccountKind
  status: AccountStatus
  debitsPendingKobo: number
  debitsPostedKobo: number
  creditsPendingKobo: number
  creditsPostedKobo: number
  /** credits posted − debits posted */
  bookedKobo: number
  /** booked − debits pending: what can be spent now */
  availableKobo: number
}

export class LedgerError extends Error {
  readonly result: TransferResultCode
  constructor(result: TransferResultCode, message: string) {
    super(message)
    this.name = 'LedgerError'
    this.result = result
  }
}
