// The sandbox bank: accounts with real NUBANs (accounts.ts), name enquiry (here), transfers on its
// own books answered with NIP codes and requery by reference (transfers.ts), and inbound credits
// announced to the account's client (inbound.ts). Outcomes follow docs/banking.md. This class is
// the bank as its routes and jobs see it: one set of books, one bank code, one clock.
import { findBank } from '../banking/nip/banks.ts'
import { nipMessage } from '../banking/nip/codes.ts'
import { isValidNuban } from '../banking/nip/nuban.ts'
import { nipSessionId } from '../banking/nip/session-id.ts'
import { systemClock, type Clock } from '../platform/clock.ts'
import type { Pool } from '../platform/db.ts'
import * as accounts from './accounts.ts'
import * as inbound from './inbound.ts'
import { syntheticAccountName } from './names.ts'
import * as transfers from './transfers.ts'
import type {
  BankAccount,
  InboundCreditAnswer,
  InboundCreditNotice,
  InboundCreditRequest,
  NameEnquiryAnswer,
  TransferAnswer,
  TransferRequest,
} from './types.ts'

export type * from './types.ts'
export { ACCOUNT_BALANCE_MAX_KOBO } from './accounts.ts'
export { NOTIFY_TASK } from './inbound.ts'
export { PAYOUT_FAILED_CODE } from './transfers.ts'

/** The sandbox bank is Providus (101) unless configured otherwise: NUBANs it issues use this code. */
export const SANDBOX_BANK_CODE_DEFAULT = '101'

export class SandboxBank {
  readonly #books: accounts.BankBooks
  readonly #payoutListeners: transfers.PayoutListener[] = []
  readonly bankCode: string

  constructor(pool: Pool, bankCode = SANDBOX_BANK_CODE_DEFAULT, clock: Clock = systemClock) {
    if (!findBank(bankCode)) throw new Error(`sandbox bank code ${bankCode} is not a bank of docs/banking.md`)
    this.#books = { pool, bankCode, clock }
    this.bankCode = bankCode
  }

  /** accounts.ts openAccount: once per opening reference; `reference_taken` when it opened an account in another name. */
  openAccount(
    accountName: string,
    openingReference?: string,
    client?: string,
  ): Promise<BankAccount | 'reference_taken'> {
    return accounts.openAccount(this.#books, accountName, openingReference, client)
  }

  getAccount(accountNumber: string): Promise<BankAccount | undefined> {
    return accounts.getAccount(this.#books.pool, accountNumber)
  }

  allocateVirtualAccount(client: string, clientReference: string, accountName: string): Promise<BankAccount> {
    return accounts.allocateVirtualAccount(this.#books, client, clientReference, accountName)
  }

  archiveVirtualAccount(client: string, accountNumber: string): Promise<boolean> {
    return accounts.archiveVirtualAccount(this.#books.pool, client, accountNumber)
  }

  /** Who holds an account: this bank's books for its own accounts, a stable made-up name elsewhere. */
  async nameEnquiry(bankCode: string, accountNumber: string): Promise<NameEnquiryAnswer> {
    const sequence = await this.#books.pool.query<{ sequence: number }>(
      `SELECT nextval('sandbox_bank.session_sequence') AS sequence`,
    )
    const sessionId = nipSessionId(`000${this.bankCode}`, this.#books.clock.now(), sequence.rows[0]!.sequence)
    const answer = (responseCode: string, accountName: string | null): NameEnquiryAnswer => ({
      responseCode,
      responseMessage: nipMessage(responseCode),
      bankCode,
      accountNumber,
      accountName,
      sessionId,
    })
    if (!findBank(bankCode)) return answer('16', null)
    if (!isValidNuban(bankCode, accountNumber)) return answer('07', null)
    if (bankCode !== this.bankCode) return answer('00', syntheticAccountName(bankCode, accountNumber))
    const account = await this.getAccount(accountNumber)
    if (!account) return answer('07', null)
    if (account.status === 'dormant') return answer('06', account.accountName)
    return answer('00', account.accountName)
  }

  /** transfers.ts transfer: 00 or the refusal's NIP code; a reference used before answers 26 and moves nothing. */
  transfer(request: TransferRequest): Promise<TransferAnswer> {
    return transfers.transfer(this.#books, request)
  }

  dropFirstSubmission(reference: string): Promise<boolean> {
    return transfers.dropFirstSubmission(this.#books.pool, reference)
  }

  registerOutcome(reference: string, outcome: 'confirmed' | 'failed'): Promise<boolean> {
    return transfers.registerOutcome(this.#books, reference, outcome, this.#payoutListeners)
  }

  /** transfers.ts reversePayout: a settled payout's money comes back; `not_reversible` unless it settled with 00 and was not reversed. */
  reversePayout(reference: string): Promise<'reversed' | 'not_reversible'> {
    return transfers.reversePayout(this.#books, reference, this.#payoutListeners)
  }

  /** A provider dialect hears of each change to a payout (an outcome registered, a reversal) in the transaction that makes it. */
  onPayoutChange(listener: transfers.PayoutListener): void {
    this.#payoutListeners.push(listener)
  }

  requery(reference: string): Promise<TransferAnswer> {
    return transfers.requery(this.#books, reference)
  }

  receiveInboundCredit(credit: InboundCreditRequest): Promise<InboundCreditAnswer | undefined> {
    return inbound.receiveInboundCredit(this.#books, credit)
  }

  inboundCredits(client: string, accountNumber: string, since?: Date): Promise<InboundCreditNotice[] | undefined> {
    return inbound.inboundCredits(this.#books.pool, client, accountNumber, since)
  }

  inboundNotice(sessionId: string): Promise<{ client: string; notice: InboundCreditNotice } | undefined> {
    return inbound.inboundNotice(this.#books.pool, sessionId)
  }

  markNotified(sessionId: string): Promise<void> {
    return inbound.markNotified(this.#books.pool, sessionId)
  }
}
