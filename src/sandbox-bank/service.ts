// The sandbox bank's books: accounts with real NUBANs, name enquiry, transfers on its own books
// (between customers, and to and from the merchant's settlement pool) answered with NIP codes,
// and requery by reference. Outcomes follow docs/banking.md.
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { findBank } from '../nip/banks.ts'
import { nipMessage } from '../nip/codes.ts'
import { isValidNuban, nuban } from '../nip/nuban.ts'
import { nipSessionId } from '../nip/session-id.ts'
import { addJob } from '../platform/jobs.ts'
import { interbankOutcome, magicAmount, SETTLE_DELAY_MS } from './magic.ts'
import { syntheticAccountName } from './names.ts'

/** The sandbox bank is Providus (101) unless configured otherwise: NUBANs it issues use this code. */
export const SANDBOX_BANK_CODE_DEFAULT = '101'
const SETTLEMENT_ACCOUNT_NAME = 'RAIL SANDBOX SETTLEMENT'
/**
 * The most a customer account may hold, counting what it has sent that may still come back (an
 * interbank transfer in progress): 2^53 − 1 kobo, so that every balance is an exact JavaScript
 * number. A credit that would pass it is refused with NIP 61 (transfer limit exceeded).
 */
export const ACCOUNT_BALANCE_MAX_KOBO = Number.MAX_SAFE_INTEGER

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

/** The job that announces an inbound credit to the account's client. */
export const NOTIFY_TASK = 'sandbox_bank_notify'
/** graphile-worker backs off exponentially between attempts: 25 attempts span about three days. */
const NOTIFY_ATTEMPTS_MAX = 25

export interface TransferAnswer extends NipAnswer {
  reference: string
  sessionId: string
  amountKobo: number
}

export class SandboxBank {
  readonly #pool: Pool
  readonly bankCode: string

  constructor(pool: Pool, bankCode = SANDBOX_BANK_CODE_DEFAULT) {
    if (!findBank(bankCode)) throw new Error(`sandbox bank code ${bankCode} is not a bank of docs/banking.md`)
    this.#pool = pool
    this.bankCode = bankCode
  }

  /**
   * Opens a customer's account. With an opening reference, once: asked again with it (a retry, a
   * concurrent duplicate, a request whose answer was lost), the bank answers the account it opened
   * — or `reference_taken` when that account was opened in another name (another request). With a
   * client (the provider profile opening a wallet), the bank announces credits paid into it to
   * that client, as it does for virtual accounts.
   */
  async openAccount(accountName: string, openingReference?: string, client?: string): Promise<BankAccount | 'reference_taken'> {
    const opened = (account: BankAccount) => (account.accountName === accountName ? account : 'reference_taken')
    if (openingReference !== undefined) {
      const existing = await this.#accountByOpeningReference(openingReference)
      if (existing) return opened(existing)
    }
    const accountNumber = nuban(this.bankCode, await this.#nextSerial())
    const result = await this.#pool.query<AccountRow>(
      `INSERT INTO sandbox_bank.accounts (account_number, bank_code, account_name, kind, opening_reference, client) VALUES ($1, $2, $3, 'customer', $4, $5)
       ON CONFLICT ON CONSTRAINT accounts_one_per_opening_reference DO NOTHING
       RETURNING ${ACCOUNT_COLUMNS}`,
      [accountNumber, this.bankCode, accountName, openingReference ?? null, client ?? null],
    )
    if (result.rows[0]) return toAccount(result.rows[0])
    // A concurrent opening with the same reference committed first: its account is the answer.
    return opened((await this.#accountByOpeningReference(openingReference!))!)
  }

  async #accountByOpeningReference(openingReference: string): Promise<BankAccount | undefined> {
    const found = await this.#pool.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM sandbox_bank.accounts WHERE opening_reference = $1`, [openingReference])
    return found.rows[0] && toAccount(found.rows[0])
  }

  async getAccount(accountNumber: string): Promise<BankAccount | undefined> {
    const result = await this.#pool.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM sandbox_bank.accounts WHERE account_number = $1 AND kind = 'customer'`, [
      accountNumber,
    ])
    return result.rows[0] && toAccount(result.rows[0])
  }

  /** Who holds an account: this bank's books for its own accounts, a stable made-up name elsewhere. */
  async nameEnquiry(bankCode: string, accountNumber: string): Promise<NameEnquiryAnswer> {
    const sessionId = await this.#nextSessionId()
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

  /**
   * A transfer on the bank's own books, answered at once: 00, or the NIP code of the refusal. A
   * reference is used once: asked again, the bank answers 26 (duplicate) and moves nothing.
   */
  async transfer(request: TransferRequest): Promise<TransferAnswer> {
    try {
      return await withTransaction(this.#pool, (tx) => this.#transferOnce(tx, request))
    } catch (error) {
      // The reference was used already (or, concurrently, is being used and that transfer
      // committed first): whatever this attempt moved was rolled back with it. The unique
      // reference is the check, so the usual transfer pays no look-up for duplicates.
      if ((error as { constraint?: string }).constraint !== 'transfers_reference_key') throw error
      const original = await this.#pool.query<{ session_id: string }>(`SELECT session_id FROM sandbox_bank.transfers WHERE reference = $1`, [request.reference])
      return transferAnswer(request, '26', original.rows[0]!.session_id)
    }
  }

  async #transferOnce(tx: Queryable, request: TransferRequest): Promise<TransferAnswer> {
    if (request.kind === 'payout') return this.#payoutOnce(tx, request)
    const interbank = request.kind === 'interbank'
    // Only credits, debits and interbank transfers touch the settlement pool.
    const settlement = request.kind === 'book' ? '' : await this.#settlementAccount(tx)
    const debit = request.kind === 'credit' ? settlement : (request.debitAccountNumber ?? '')
    const credit = request.kind === 'debit' || interbank ? settlement : (request.creditAccountNumber ?? '')
    const magic = magicAmount(request.amountKobo)
    const refusal =
      (magic?.kind === 'code' ? magic.code : undefined) ??
      (interbank ? refuseDestination(request.destinationBankCode ?? '', request.destinationAccountNumber ?? '') : undefined)
    let responseCode = refusal ?? (await this.#applyTransfer(tx, debit, credit, request.amountKobo, settlement))
    // An accepted interbank transfer has left the account; it is in progress until it settles.
    // So is any transfer of the magic "pending, then success" amount.
    const inProgress = responseCode === '00' && (interbank || magic?.kind === 'pending_then_success')
    if (inProgress) responseCode = '09'
    const finalCode = !inProgress ? null : interbank ? interbankOutcome(request.destinationAccountNumber!).finalCode : '00'
    // Refused transfers are recorded too: the reference is spent, and a requery says why. The
    // NIP session id (nip/session-id.ts: institution code, yyMMddHHmmss UTC, 12-digit sequence)
    // is made in the INSERT itself, saving the round trip of asking for the sequence first.
    const inserted = await tx.query<{ session_id: string }>(
      `INSERT INTO sandbox_bank.transfers (session_id, reference, kind, debit_account_number, credit_account_number, amount_kobo, narration, response_code,
                                           destination_bank_code, destination_account_number, settles_at, final_code)
       VALUES ($1 || to_char(now() AT TIME ZONE 'UTC', 'YYMMDDHH24MISS') || lpad(nextval('sandbox_bank.session_sequence')::text, 12, '0'),
               $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       RETURNING session_id`,
      [
        `000${this.bankCode}`,
        request.reference,
        request.kind,
        debit,
        credit,
        request.amountKobo,
        request.narration ?? null,
        responseCode,
        interbank ? request.destinationBankCode : null,
        interbank ? request.destinationAccountNumber : null,
        inProgress ? new Date(Date.now() + SETTLE_DELAY_MS) : null,
        finalCode,
      ],
    )
    return transferAnswer(request, responseCode, inserted.rows[0]!.session_id)
  }

  /**
   * A payout from the settlement pool (the merchant's funds at the bank) to an account at another
   * bank: checked, then in progress (09) until an outcome is registered for it (registerOutcome);
   * the money leaves the pool when it settles with 00.
   */
  async #payoutOnce(tx: Queryable, request: TransferRequest): Promise<TransferAnswer> {
    const settlement = await this.#settlementAccount(tx)
    const magic = magicAmount(request.amountKobo)
    const refusal = (magic?.kind === 'code' ? magic.code : undefined) ?? refuseDestination(request.destinationBankCode ?? '', request.destinationAccountNumber ?? '')
    const inserted = await tx.query<{ session_id: string }>(
      `INSERT INTO sandbox_bank.transfers (session_id, reference, kind, debit_account_number, credit_account_number, amount_kobo, narration, response_code,
                                           destination_bank_code, destination_account_number, final_code)
       VALUES ($1 || to_char(now() AT TIME ZONE 'UTC', 'YYMMDDHH24MISS') || lpad(nextval('sandbox_bank.session_sequence')::text, 12, '0'),
               $2, 'payout', $3, $4, $5, $6, $7, $8, $4, $9)
       RETURNING session_id`,
      [
        `000${this.bankCode}`,
        request.reference,
        settlement,
        request.destinationAccountNumber,
        request.amountKobo,
        request.narration ?? null,
        refusal ?? '09',
        request.destinationBankCode,
        refusal ? null : '09', // nothing registered yet: in progress for good
      ],
    )
    return transferAnswer(request, refusal ?? '09', inserted.rows[0]!.session_id)
  }

  /**
   * Whether to drop this submission of `reference` unprocessed (the magic amount of a lost
   * request): true the first time only, whichever process serving the bank is asked, and however
   * many ask at once.
   */
  async dropFirstSubmission(reference: string): Promise<boolean> {
    const { rowCount } = await this.#pool.query(`INSERT INTO sandbox_bank.dropped_submissions (reference) VALUES ($1) ON CONFLICT (reference) DO NOTHING`, [reference])
    return rowCount === 1
  }

  /**
   * The sandbox simulator's outcome for a payout in progress; registering again before it settles
   * replaces the earlier one. It settles at the next requery. False when no payout in progress has
   * this reference.
   */
  async registerOutcome(reference: string, outcome: 'confirmed' | 'failed'): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `UPDATE sandbox_bank.transfers SET final_code = $2, settles_at = now() WHERE reference = $1 AND kind = 'payout' AND response_code = '09'`,
      [reference, outcome === 'confirmed' ? '00' : PAYOUT_FAILED_CODE],
    )
    return rowCount === 1
  }

  /**
   * Allocates a virtual account (a collection NUBAN) for a client — the provider profile that asks —
   * once per client reference: asked again, the bank answers the account it allocated before.
   */
  async allocateVirtualAccount(client: string, clientReference: string, accountName: string): Promise<BankAccount> {
    const existing = await this.#virtualAccountByReference(client, clientReference)
    if (existing) return existing
    const accountNumber = nuban(this.bankCode, await this.#nextSerial())
    const inserted = await this.#pool.query<AccountRow>(
      `INSERT INTO sandbox_bank.accounts (account_number, bank_code, account_name, kind, client, client_reference)
       VALUES ($1, $2, $3, 'virtual', $4, $5)
       ON CONFLICT (client, client_reference) WHERE kind = 'virtual' DO NOTHING
       RETURNING ${ACCOUNT_COLUMNS}`,
      [accountNumber, this.bankCode, accountName, client, clientReference],
    )
    // A concurrent allocation with the same reference won: answer its account.
    return inserted.rows[0] ? toAccount(inserted.rows[0]) : (await this.#virtualAccountByReference(client, clientReference))!
  }

  async #virtualAccountByReference(client: string, clientReference: string): Promise<BankAccount | undefined> {
    const found = await this.#pool.query<AccountRow>(
      `SELECT ${ACCOUNT_COLUMNS} FROM sandbox_bank.accounts WHERE kind = 'virtual' AND client = $1 AND client_reference = $2`,
      [client, clientReference],
    )
    return found.rows[0] && toAccount(found.rows[0])
  }

  /** Archives a virtual account; false when it is no virtual account of this client. Archiving twice is fine. */
  async archiveVirtualAccount(client: string, accountNumber: string): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `UPDATE sandbox_bank.accounts SET archived_at = coalesce(archived_at, now()) WHERE account_number = $1 AND kind = 'virtual' AND client = $2`,
      [accountNumber, client],
    )
    return rowCount === 1
  }

  /**
   * Someone at any bank pays into one of this bank's accounts that has a client — a virtual
   * account, or a wallet's customer account: the credit is recorded under a new NIP session id,
   * and a job announces it to the account's client (unless a magic amount says the announcement
   * is lost). Paid into a virtual account, the money lands in the settlement pool; into a
   * customer account, it is that customer's (refused with 61 past ACCOUNT_BALANCE_MAX_KOBO).
   * Archived accounts still receive: the bank leaves it to its client to triage them, as many
   * providers do.
   */
  async receiveInboundCredit(credit: InboundCreditRequest): Promise<InboundCreditAnswer | undefined> {
    return withTransaction(this.#pool, async (tx) => {
      const account = await tx.query<{ client: string; kind: 'virtual' | 'customer' }>(
        `SELECT client, kind FROM sandbox_bank.accounts WHERE account_number = $1 AND kind IN ('virtual', 'customer') AND client IS NOT NULL`,
        [credit.accountNumber],
      )
      const found = account.rows[0]
      if (!found) return undefined
      // Into the settlement pool, which is not booked (#applyTransfer): nothing to update. Into a customer's account: its balance.
      if (found.kind === 'customer' && !(await this.#creditCustomer(tx, credit.accountNumber, credit.amountKobo))) {
        return { sessionId: '', accountNumber: credit.accountNumber, amountKobo: credit.amountKobo, creditedAt: new Date().toISOString(), notified: false, responseCode: '61', responseMessage: nipMessage('61') }
      }
      const inserted = await tx.query<{ session_id: string; created_at: Date }>(
        `INSERT INTO sandbox_bank.transfers (session_id, reference, kind, debit_account_number, credit_account_number, amount_kobo, narration, response_code,
                                             payer_name, payer_account_number, payer_bank_code)
         VALUES ($1 || to_char(now() AT TIME ZONE 'UTC', 'YYMMDDHH24MISS') || lpad(nextval('sandbox_bank.session_sequence')::text, 12, '0'),
                 'inbound-' || gen_random_uuid(), 'inbound', coalesce($4, 'external'), $2, $3, $5, '00', $6, $4, $7)
         RETURNING session_id, created_at`,
        [
          `000${credit.payerBankCode ?? this.bankCode}`.slice(-6),
          credit.accountNumber,
          credit.amountKobo,
          credit.payerAccountNumber ?? null,
          credit.narration ?? null,
          credit.payerName ?? null,
          credit.payerBankCode ?? null,
        ],
      )
      const { session_id: sessionId, created_at: creditedAt } = inserted.rows[0]!
      const notify = magicAmount(credit.amountKobo)?.kind !== 'lost_notification'
      if (notify) await addJob(tx, NOTIFY_TASK, { sessionId }, { maxAttempts: NOTIFY_ATTEMPTS_MAX })
      return { sessionId, accountNumber: credit.accountNumber, amountKobo: credit.amountKobo, creditedAt: creditedAt.toISOString(), notified: notify, responseCode: '00', responseMessage: nipMessage('00') }
    })
  }

  /**
   * An inbound credit into a customer's account: its balance grows, within what it may hold
   * (counting what it has sent that may come back, as #applyTransfer does). False when refused.
   */
  async #creditCustomer(tx: Queryable, accountNumber: string, amountKobo: number): Promise<boolean> {
    const { rowCount } = await tx.query(
      `UPDATE sandbox_bank.accounts c SET balance_kobo = balance_kobo + $2::bigint
        WHERE account_number = $1 AND kind = 'customer'
          AND c.balance_kobo + $2::numeric + coalesce((SELECT sum(t.amount_kobo) FROM sandbox_bank.transfers t
                                                        WHERE t.debit_account_number = c.account_number AND t.kind = 'interbank' AND t.response_code = '09'), 0)
              <= $3::numeric`,
      [accountNumber, amountKobo, ACCOUNT_BALANCE_MAX_KOBO],
    )
    return rowCount === 1
  }

  /** The inbound credits of an account of a client (a virtual account or a wallet's), oldest first: what a client requeries for credits it missed. */
  async inboundCredits(client: string, accountNumber: string): Promise<InboundCreditNotice[] | undefined> {
    const account = await this.#pool.query(`SELECT 1 FROM sandbox_bank.accounts WHERE account_number = $1 AND kind IN ('virtual', 'customer') AND client = $2`, [
      accountNumber,
      client,
    ])
    if (account.rowCount === 0) return undefined
    const found = await this.#pool.query<InboundRow>(`${INBOUND_SELECT} WHERE t.kind = 'inbound' AND t.credit_account_number = $1 ORDER BY t.created_at, t.session_id LIMIT 1000`, [
      accountNumber,
    ])
    return found.rows.map(toInboundNotice)
  }

  /** The announcement of one inbound credit, and the client it goes to. */
  async inboundNotice(sessionId: string): Promise<{ client: string; notice: InboundCreditNotice } | undefined> {
    const found = await this.#pool.query<InboundRow>(`${INBOUND_SELECT} WHERE t.session_id = $1 AND t.kind = 'inbound'`, [sessionId])
    const row = found.rows[0]
    return row && { client: row.client, notice: toInboundNotice(row) }
  }

  async markNotified(sessionId: string): Promise<void> {
    await this.#pool.query(`UPDATE sandbox_bank.transfers SET notified_at = coalesce(notified_at, now()) WHERE session_id = $1`, [sessionId])
  }

  /** What happened to a reference: the transfer's own code, or 25 when the bank has no record. */
  async requery(reference: string): Promise<TransferAnswer> {
    await this.#settleIfDue(reference)
    const found = await this.#pool.query<{ session_id: string; response_code: string; amount_kobo: number }>(
      `SELECT session_id, response_code, amount_kobo FROM sandbox_bank.transfers WHERE reference = $1`,
      [reference],
    )
    const row = found.rows[0]
    if (!row) return { reference, sessionId: '', amountKobo: 0, responseCode: '25', responseMessage: nipMessage('25') }
    return { reference, sessionId: row.session_id, amountKobo: row.amount_kobo, responseCode: row.response_code, responseMessage: nipMessage(row.response_code) }
  }

  /**
   * Settles a transfer in progress whose moment has come: its final code is recorded and, for a
   * failure, the money goes back to the customer — once, under the transfer's row lock. The bank
   * settles when asked about a transfer, which is how its outcome becomes visible anyway.
   */
  async #settleIfDue(reference: string): Promise<void> {
    await withTransaction(this.#pool, async (tx) => {
      const due = await tx.query<{ kind: TransferKind; debit_account_number: string; credit_account_number: string; amount_kobo: number; final_code: string }>(
        `SELECT kind, debit_account_number, credit_account_number, amount_kobo, final_code FROM sandbox_bank.transfers
          WHERE reference = $1 AND response_code = '09' AND final_code <> '09' AND settles_at <= now()
          FOR UPDATE`,
        [reference],
      )
      const transfer = due.rows[0]
      if (!transfer) return
      // A payout leaves the settlement pool, which is not booked (#applyTransfer): settling it moves
      // no customer's money. A failed transfer gives the money back to its customer; its room under
      // ACCOUNT_BALANCE_MAX_KOBO was kept while it was in progress.
      if (transfer.kind !== 'payout' && transfer.final_code !== '00') {
        await tx.query(
          `UPDATE sandbox_bank.accounts SET balance_kobo = balance_kobo + CASE WHEN account_number = $1 THEN -$3::bigint ELSE $3::bigint END
            WHERE account_number IN ($1, $2) AND kind <> 'settlement'`,
          [transfer.credit_account_number, transfer.debit_account_number, transfer.amount_kobo],
        )
      }
      await tx.query(`UPDATE sandbox_bank.transfers SET response_code = final_code WHERE reference = $1`, [reference])
    })
  }

  /**
   * Locks the customer accounts of a transfer (in account-number order), checks them, moves the
   * money; returns the NIP code.
   *
   * The settlement pool (`settlement`) is the bank's own side of every client's credits, debits,
   * sends and inbound credits: it is never checked, so it is not locked, and it is not booked —
   * its position is the sum of its transfers. A running balance shared by every client would let
   * one client's volume leave the range of BIGINT or of JavaScript numbers and break every other
   * client's transfers (and make every credit in the bank wait on one row). Customer balances are
   * checked in SQL and never pass ACCOUNT_BALANCE_MAX_KOBO.
   */
  async #applyTransfer(tx: Queryable, debit: string, credit: string, amountKobo: number, settlement: string): Promise<string> {
    if (debit === credit) return '12'
    const locked = await tx.query<{ account_number: string; status: 'active' | 'dormant'; covers: boolean }>(
      `SELECT account_number, status, balance_kobo >= $2::bigint AS covers FROM sandbox_bank.accounts
        WHERE account_number = ANY ($1::text[]) AND kind <> 'settlement' ORDER BY account_number FOR UPDATE`,
      [[debit, credit], amountKobo],
    )
    const byNumber = new Map(locked.rows.map((row) => [row.account_number, row]))
    const from = debit === settlement ? 'pool' : byNumber.get(debit)
    const to = credit === settlement ? 'pool' : byNumber.get(credit)
    if (!from || !to) return '07'
    if ((from !== 'pool' && from.status === 'dormant') || (to !== 'pool' && to.status === 'dormant')) return '06'
    // The rows are locked: the balance checked is the balance the update changes.
    if (from !== 'pool' && !from.covers) return '51'
    // The credited customer's room is judged in this later statement, which sees every transfer in
    // progress from it (a new one needs the lock held here): what it holds, plus what it has sent
    // that may come back, plus this amount, stays within ACCOUNT_BALANCE_MAX_KOBO. Summed in SQL.
    const moved = await tx.query(
      `UPDATE sandbox_bank.accounts SET balance_kobo = balance_kobo + CASE WHEN account_number = $1 THEN -$3::bigint ELSE $3::bigint END
        WHERE account_number IN ($1, $2) AND kind <> 'settlement'
          AND (SELECT c.balance_kobo + $3::numeric + coalesce((SELECT sum(t.amount_kobo) FROM sandbox_bank.transfers t
                                                                WHERE t.debit_account_number = c.account_number AND t.kind = 'interbank' AND t.response_code = '09'), 0)
                 <= $4::numeric
                 FROM sandbox_bank.accounts c WHERE c.account_number = $2 AND c.kind <> 'settlement') IS NOT FALSE`,
      [debit, credit, amountKobo, ACCOUNT_BALANCE_MAX_KOBO],
    )
    const customers = (from === 'pool' ? 0 : 1) + (to === 'pool' ? 0 : 1)
    return moved.rowCount === customers ? '00' : '61'
  }

  async #settlementAccount(tx: Queryable): Promise<string> {
    const found = await tx.query<{ account_number: string }>(`SELECT account_number FROM sandbox_bank.accounts WHERE kind = 'settlement' AND bank_code = $1`, [this.bankCode])
    if (found.rows[0]) return found.rows[0].account_number
    // First use: the settlement pool gets the first serial; a concurrent first use loses the race harmlessly.
    const accountNumber = nuban(this.bankCode, '000000001')
    await tx.query(
      `INSERT INTO sandbox_bank.accounts (account_number, bank_code, account_name, kind) VALUES ($1, $2, $3, 'settlement') ON CONFLICT (account_number) DO NOTHING`,
      [accountNumber, this.bankCode, SETTLEMENT_ACCOUNT_NAME],
    )
    return accountNumber
  }

  async #nextSerial(): Promise<string> {
    const result = await this.#pool.query<{ serial: string }>(`SELECT lpad(nextval('sandbox_bank.account_serial')::text, 9, '0') AS serial`)
    return result.rows[0]!.serial
  }

  async #nextSessionId(db: Queryable = this.#pool): Promise<string> {
    const result = await db.query<{ sequence: number }>(`SELECT nextval('sandbox_bank.session_sequence') AS sequence`)
    return nipSessionId(`000${this.bankCode}`, new Date(), result.rows[0]!.sequence)
  }
}

/** The NIP code a payout fails with when the simulator registers `failed`: 05, do not honour. */
export const PAYOUT_FAILED_CODE = '05'

/** The NIP code refusing an interbank destination, or undefined when it is a valid account at a known bank. */
function refuseDestination(bankCode: string, accountNumber: string): string | undefined {
  if (!findBank(bankCode)) return '16'
  if (!isValidNuban(bankCode, accountNumber)) return '07'
  return undefined
}

function transferAnswer(request: TransferRequest, responseCode: string, sessionId: string): TransferAnswer {
  return { reference: request.reference, sessionId, amountKobo: request.amountKobo, responseCode, responseMessage: nipMessage(responseCode) }
}

interface AccountRow {
  account_number: string
  bank_code: string
  account_name: string
  balance_kobo: number
  status: 'active' | 'dormant'
}

const ACCOUNT_COLUMNS = 'account_number, bank_code, account_name, balance_kobo, status'

interface InboundRow {
  session_id: string
  credit_account_number: string
  bank_code: string
  client: string
  client_reference: string
  amount_kobo: number
  payer_name: string | null
  payer_account_number: string | null
  payer_bank_code: string | null
  narration: string | null
  created_at: Date
}

// A wallet's account has no client reference of its own: its opening reference is the one its client gave.
const INBOUND_SELECT = `SELECT t.session_id, t.credit_account_number, a.bank_code, a.client, coalesce(a.client_reference, a.opening_reference, a.account_number) AS client_reference, t.amount_kobo, t.payer_name, t.payer_account_number, t.payer_bank_code, t.narration, t.created_at
  FROM sandbox_bank.transfers t JOIN sandbox_bank.accounts a ON a.account_number = t.credit_account_number`

function toInboundNotice(row: InboundRow): InboundCreditNotice {
  return {
    type: 'credit.received',
    sessionId: row.session_id,
    accountNumber: row.credit_account_number,
    bankCode: row.bank_code,
    amountKobo: row.amount_kobo,
    currency: 'NGN',
    payerName: row.payer_name,
    payerAccountNumber: row.payer_account_number,
    payerBankCode: row.payer_bank_code,
    narration: row.narration,
    creditedAt: row.created_at.toISOString(),
    clientReference: row.client_reference,
  }
}

function toAccount(row: AccountRow): BankAccount {
  return { bankCode: row.bank_code, accountNumber: row.account_number, accountName: row.account_name, balanceKobo: row.balance_kobo, status: row.status }
}
