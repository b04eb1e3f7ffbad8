// What a banking provider answers. Expected outcomes are results, not exceptions: a decline is
// `failed` with its code; anything Rail cannot read as a final answer — a timeout, a reset
// connection, a 5xx, an unparseable body — is `unknown`, and leads to a requery, never to a
// failure (the money may have moved).

export type ProviderOutcome = 'successful' | 'failed' | 'pending' | 'unknown'

export type ProviderResult<T> =
  | { outcome: 'successful'; responseCode: string; responseMessage: string; providerReference: string; value: T }
  | {
      outcome: 'failed' | 'pending'
      responseCode: string
      responseMessage: string
      providerReference: string | null
      /** The provider paid, then took the money back (a reversal): nothing was paid in the end. */
      reversed?: true
    }
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
  /**
   * The time this send is signed with: the moment its attempt was committed, not the moment the
   * call is made. A provider with a request validity window refuses it once that window has run
   * from this time, however late a stalled process makes the call (docs/decisions/0008-payment-pipeline.md).
   */
  signedAt?: Date
}

/**
 * What a provider promises about the requests it is sent, and how it speaks, as data beside its
 * capabilities: the payment pipeline's rules depend on it (docs/decisions/0008-payment-pipeline.md
 * §Never received), and `rail provider list` shows it.
 */
export interface ProviderTraits {
  /** A send repeated under the same reference can never move money twice: resending is safe. */
  deduplicatesReferences: boolean
  /**
   * How long after the time a request is signed with the provider still acts on it; null when it
   * promises no such window. Without one, "no record" never proves a payment was not received.
   */
  requestValidityWindowMs: number | null
  /** The references the provider accepts, in words (Rail's reference is mapped into it deterministically). */
  referenceFormat: string
  /** The unit of the amounts on the wire: Rail converts kobo exactly, both ways. */
  amountUnit: 'kobo' | 'naira'
  /** How the provider's webhooks are authenticated, in words (header and scheme). */
  webhookAuthentication: string
}

/** A credit paid into one of the provider's virtual accounts, as the provider reports it. */
export interface ProviderCredit {
  /**
   * The provider's id of the credit, the same in its webhook and its listing: a credit is applied
   * once per id: the sandbox bank's NIP session id, Paystack's transaction reference, Monnify's
   * transaction reference (MNFY|…).
   */
  sessionId: string
  accountNumber: string
  amountKobo: number
  currency: string
  payerName: string | null
  payerAccountNumber: string | null
  payerBankCode: string | null
  narration: string | null
  creditedAt: Date
  /** The reference Rail gave when it allocated the account, when the provider reports it. */
  accountReference: string | null
}

/** What a provider's webhook says of a payout: a hint, acted on by asking the provider (a requery), never by itself. */
export type TransferEvent = 'success' | 'failed' | 'reversed'

/** A webhook from the provider, read: verified and parsed, or refused. */
export type ProviderWebhook =
  | { kind: 'credit'; credit: ProviderCredit }
  /** A payout's news, by Rail's reference (the provider's reference mapped back). */
  | { kind: 'transfer'; reference: string; event: TransferEvent }
  /** Verified, but about nothing Rail acts on: answered 200 so that the provider stops sending it. */
  | { kind: 'ignored'; event: string }
  | { kind: 'unauthorized' }
  | { kind: 'invalid'; message: string }

/** A webhook as received: the raw body, its headers, and the address it came from. */
export interface WebhookRequest {
  pathWithQuery: string
  headers: Record<string, string | string[] | undefined>
  rawBody: string
  /** The sender's IP address, for providers that publish theirs (an optional allowlist). */
  sourceAddress?: string
}

/**
 * What a banking provider does, real or sandbox. An operation the provider cannot do is declared
 * false in its capabilities (capabilities.ts) and never reaches the adapter: Rail fails closed
 * before any call. An adapter asked anyway answers `failed` with code 58 (not permitted on channel).
 */
export interface ProviderAdapter {
  /** What the provider promises about its requests (reference de-duplication, validity window) and how it speaks. */
  readonly traits: ProviderTraits
  /**
   * Opens the account that backs a customer's wallet. With a reference, once: asked again with it,
   * the provider answers the account it opened (failed, 26, when that was for another request).
   */
  createWallet(request: {
    customerReference: string
    accountName: string
    reference?: string
  }): Promise<ProviderResult<ProviderAccount>>
  /** Merchant-initiated funding of a wallet account. */
  credit(request: MoveRequest & { accountNumber: string }): Promise<ProviderResult<null>>
  /** Spends from a wallet account (approval-gated). */
  debit(request: MoveRequest & { accountNumber: string }): Promise<ProviderResult<null>>
  /** Between two wallet accounts at the same provider. */
  walletTransfer(
    request: MoveRequest & { fromAccountNumber: string; toAccountNumber: string },
  ): Promise<ProviderResult<null>>
  /** Pays an account at any bank from a wallet account; the outcome is usually known only by requery. */
  sendToBank(
    request: MoveRequest & { fromAccountNumber: string; destinationBankCode: string; destinationAccountNumber: string },
  ): Promise<ProviderResult<null>>
  /** Who holds an account at any bank. */
  nameEnquiry(request: { bankCode: string; accountNumber: string }): Promise<ProviderResult<{ accountName: string }>>
  /** Pays an account at any bank from the merchant's funds at the provider (an outbound transfer); the outcome comes by requery. */
  payout(
    request: MoveRequest & { destinationBankCode: string; destinationAccountNumber: string },
  ): Promise<ProviderResult<null>>
  /**
   * What happened to a move, by Rail's reference, in the NIP vocabulary the pipeline reads
   * (src/banking/nip/codes.ts): 00 paid, 09 in progress, 25 no record, a final failure code. An answer the
   * adapter cannot place (a status it does not know) is `unknown`, never `failed`.
   */
  requery(reference: string): Promise<ProviderResult<null>>
  /** Allocates a collection NUBAN in the account name; idempotent on the reference at the provider. */
  allocateVirtualAccount(request: { reference: string; accountName: string }): Promise<ProviderResult<ProviderAccount>>
  /** Stops a virtual account collecting for its owner (credits to it then go to triage). */
  archiveVirtualAccount(accountNumber: string): Promise<ProviderResult<null>>
  /**
   * Every credit the provider has for a virtual account (or a wallet's account), oldest first; with
   * `since`, those credited at or after it: the requery and the sweep for credits whose webhook was missed.
   */
  listCredits(accountNumber: string, since?: Date): Promise<ProviderResult<ProviderCredit[]>>
  /** The merchant's funds at the provider (its float), in kobo. */
  balance(): Promise<ProviderResult<{ balanceKobo: number }>>
  /** Verifies and reads a webhook the provider sent (the raw body as received, and its headers). */
  readWebhook(request: WebhookRequest): ProviderWebhook
}

/**
 * The sandbox's controls: what a simulator does to the sandbox bank's books, which no real provider
 * offers. They act on the sandbox bank whatever dialect a sandbox profile speaks (its own,
 * /sandbox-paystack or /sandbox-monnify); a real provider's profile has none.
 */
export interface SandboxControls {
  /** Someone pays into a virtual account (the bank then announces it, in the account's dialect). */
  simulateInboundCredit(request: {
    accountNumber: string
    amountKobo: number
    payerName?: string
    payerAccountNumber?: string
    payerBankCode?: string
  }): Promise<ProviderResult<{ sessionId: string; notified: boolean }>>
  /**
   * Registers the outcome of a payout in progress (the settlement simulator), by the reference the
   * provider was sent. Failed: no payout in progress has the reference; unknown: the answer was lost.
   */
  registerPayoutOutcome(reference: string, outcome: 'confirmed' | 'failed'): Promise<ProviderResult<null>>
}
