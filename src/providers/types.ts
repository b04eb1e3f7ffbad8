// What a banking provider answers. Expected outcomes are results, not exceptions: a decline is
// `failed` with its code; anything Rail cannot read as a final answer — a timeout, a reset
// connection, a 5xx, an unparseable body — is `unknown`, and leads to a requery, never to a
// failure (the money may have moved).

export type ProviderOutcome = 'successful' | 'failed' | 'pending' | 'unknown'

export type ProviderResult<T> =
  | { outcome: 'successful'; responseCode: string; responseMessage: string; providerReference: string; value: T }
  | { outcome: 'failed' | 'pending'; responseCode: string; responseMessage: string; providerReference: string | null }
  | { outcome: 'unknown'; error: string }

export interface ProviderAccount {
  bankCode: string
  accountNumber: string
  accountName: string
}

export interface MoveRequest {
  /** The move's reference: the provider sees it once; a retry is a duplicate, never a second move. */
  reference: string
  amountKobo: number
  narration?: string
}

/** Operations of a provider adapter that exist today; the interface grows with the features. */
export interface ProviderAdapter {
  /** Opens the account that backs a customer's wallet. */
  createWallet(request: { customerReference: string; accountName: string }): Promise<ProviderResult<ProviderAccount>>
  /** Merchant-initiated funding of a wallet account. */
  credit(request: MoveRequest & { accountNumber: string }): Promise<ProviderResult<null>>
  /** Spends from a wallet account (approval-gated). */
  debit(request: MoveRequest & { accountNumber: string }): Promise<ProviderResult<null>>
  /** Between two wallet accounts at the same provider. */
  walletTransfer(request: MoveRequest & { fromAccountNumber: string; toAccountNumber: string }): Promise<ProviderResult<null>>
  /** Pays an account at any bank from a wallet account; the outcome is usually known only by requery. */
  sendToBank(request: MoveRequest & { fromAccountNumber: string; destinationBankCode: string; destinationAccountNumber: string }): Promise<ProviderResult<null>>
  /** Who holds an account at any bank. */
  nameEnquiry(request: { bankCode: string; accountNumber: string }): Promise<ProviderResult<{ accountName: string }>>
  /** Pays an account at any bank from the merchant's funds at the provider (an outbound transfer); the outcome comes by requery. */
  payout(request: MoveRequest & { destinationBankCode: string; destinationAccountNumber: string }): Promise<ProviderResult<null>>
  /** What happened to a move, by its reference. */
  requery(reference: string): Promise<ProviderResult<null>>
  /** Sandbox providers only: registers the outcome of a payout in progress (the settlement simulator). */
  registerPayoutOutcome(reference: string, outcome: 'confirmed' | 'failed'): Promise<{ registered: boolean }>
}
