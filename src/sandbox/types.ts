// What the sandbox bank answers and is asked: its accounts, NIP answers, transfers and the inbound
// credits it announces to its clients.

export interface BankAccount {
  bankCode: string
  accountNumber: string
  accountName: string
  balanceKobo: number
  status: 'active' | 'dormant'
}

export interface NipAnswer {
  responseCode: string
  responseMessage: string
}

export interface NameEnquiryAnswer extends NipAnswer {
  bankCode: string
  accountNumber: string
  accountName: string | null
  sessionId: string
}

export type TransferKind = 'book' | 'credit' | 'debit' | 'interbank' | 'payout'

export interface TransferRequest {
  reference: string
  kind: TransferKind
  /** book and debit: the customer account paying. */
  debitAccountNumber?: string
  /** book and credit: the customer account paid. */
  creditAccountNumber?: string
  /** interbank and payout: the account paid at another bank. */
  destinationBankCode?: string
  destinationAccountNumber?: string
  amountKobo: number
  narration?: string
}

export interface InboundCreditRequest {
  accountNumber: string
  amountKobo: number
  payerName?: string
  payerAccountNumber?: string
  payerBankCode?: string
  narration?: string
}

export interface InboundCreditAnswer extends NipAnswer {
  sessionId: string
  accountNumber: string
  amountKobo: number
  creditedAt: string
  /** False when a magic amount made the bank lose the announcement (a requery finds the credit). */
  notified: boolean
}

/** What the bank tells its client about an inbound credit: the webhook body, and each item of a requery. */
export interface InboundCreditNotice {
  type: 'credit.received'
  sessionId: string
  accountNumber: string
  bankCode: string
  amountKobo: number
  currency: 'NGN'
  payerName: string | null
  payerAccountNumber: string | null
  payerBankCode: string | null
  narration: string | null
  creditedAt: string
  /** The reference the client gave when it allocated the account. */
  clientReference: string
}

export interface TransferAnswer extends NipAnswer {
  reference: string
  sessionId: string
  amountKobo: number
}
