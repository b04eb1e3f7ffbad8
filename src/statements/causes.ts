// Why a statement line moved money: a closed list for partners, read from the ledger transfer's
// `code` and `source_type`, and for a payment out of Rail from its outbound transfer's origin. The
// ledger's codes are open (each feature adds its own), so a code this table does not know maps to
// `other` rather than failing the statement (docs/statements.md, "Causes").

export const CAUSES = [
  'credit', // money received: a wallet credit, a collection (inbound credit) on collections
  'debit', // a wallet debit (spend)
  'payout', // a payment out to a bank account: the partner's outbound transfer, a wallet's bank payout
  'refund', // money paid back to whoever sent it
  'reversal', // a reversal of an earlier movement
  'fee', // a fee charged
  'settlement', // collections settled (to the float or the partner's bank)
  'escrow', // into, out of or on behalf of an escrow (funding, release, disbursement, refund)
  'wallet_transfer', // between two wallets
  'funding', // the float or a wallet funded (sandbox funding, a transfer into a wallet's account)
  'unmatched', // a credit moved to triage (suspense): no owner took it
  'other', // a code this version does not name yet
] as const

export type Cause = (typeof CAUSES)[number]

/** What a line's transfer says about itself; `originType` only for outbound transfers. */
export interface CauseFacts {
  code: string
  sourceType: string | null
  originType: string | null
}

interface CauseRule {
  /** The code exactly, or (ending in `*`) a code prefix. Absent: any code. */
  code?: string
  sourceType?: string
  originType?: string
  cause: Cause
}

/** The one mapping: the first rule that matches names the cause. Specific rules before prefixes. */
export const CAUSE_RULES: readonly CauseRule[] = [
  // Payments out of Rail are outbound transfers of the one pipeline; their origin says why.
  { code: 'outbound_transfer', originType: 'partner', cause: 'payout' },
  { code: 'outbound_transfer', originType: 'refund', cause: 'refund' },
  { code: 'outbound_transfer', originType: 'escrow', cause: 'escrow' },
  { code: 'outbound_transfer', originType: 'settlement', cause: 'settlement' },
  { code: 'outbound_transfer', cause: 'payout' },
  // A transfer into a wallet's account number (an inbound credit landing on a wallet) funds it.
  { code: 'wallet_*', sourceType: 'inbound_credit', cause: 'funding' },
  { code: 'wallet_funding*', cause: 'funding' },
  // Wallet moves (docs/contracts/wallets.md §Moves).
  { code: 'wallet_credit', cause: 'credit' },
  { code: 'wallet_debit', cause: 'debit' },
  { code: 'wallet_transfer', cause: 'wallet_transfer' },
  { code: 'wallet_bank_payout', cause: 'payout' },
  // Collections.
  { code: 'collection_credit', cause: 'credit' },
  { code: 'unmatched_credit', cause: 'unmatched' },
  { code: 'sandbox_float_funding', cause: 'funding' },
  { code: 'float_funding*', cause: 'funding' },
  // Families whose codes other features add: named by their prefix, then by their source object.
  { code: 'escrow_*', cause: 'escrow' },
  { code: 'refund*', cause: 'refund' },
  { code: 'settlement*', cause: 'settlement' },
  { code: 'fee*', cause: 'fee' },
  { code: 'reversal*', cause: 'reversal' },
  { sourceType: 'refund', cause: 'refund' },
  { sourceType: 'escrow', cause: 'escrow' },
  { sourceType: 'settlement', cause: 'settlement' },
  { sourceType: 'settlement_cycle', cause: 'settlement' },
  { sourceType: 'settlement_sweep', cause: 'settlement' },
]

function codeMatches(pattern: string | undefined, code: string): boolean {
  if (pattern === undefined) return true
  return pattern.endsWith('*') ? code.startsWith(pattern.slice(0, -1)) : code === pattern
}

function ruleMatches(rule: CauseRule, facts: CauseFacts): boolean {
  return (
    codeMatches(rule.code, facts.code) &&
    (rule.sourceType === undefined || rule.sourceType === facts.sourceType) &&
    (rule.originType === undefined || rule.originType === facts.originType)
  )
}

export function causeOf(facts: CauseFacts): Cause {
  return CAUSE_RULES.find((rule) => ruleMatches(rule, facts))?.cause ?? 'other'
}
