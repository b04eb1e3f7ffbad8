// The sandbox bank's books: accounts with real NUBANs, name enquiry, transfers on its own books
// (between customers, and to and from the merchant's settlement pool) answered with NIP codes,
// and requery by reference. Outcomes follow ../shared/NIGERIA.md.
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { findBank } from '../nip/banks.ts'
import { nipMessage } from '../nip/codes.ts'
import { isValidNuban, nuban } from '../nip/nuban.ts'
import { nipSessionId } from '../nip/session-id.ts'
import { interbankOutcome, magicAmount, SETTLE_DELAY_MS } from './magic.ts'
import { syntheticAccountName } from './names.ts'

/** The sandbox bank is Providus (101) unless configured otherwise: NUBANs it issues use this code. */
export const SANDBOX_BANK_CODE_DEFAULT = '101'
const SETTLEMENT_ACCOUNT_NAME = 'RAIL SANDBOX SETTLEMENT'

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

export interface TransferAnswer extends NipAnswer {
  reference: string
  sessionId: string
  amountKobo: number
}

export class SandboxBank {
  readonly #pool: Pool
  readonly bankCode: string

  constructor(pool: Pool, bankCode = SANDBOX_BANK_CODE_DEFAULT) {
    if (!findBank(bankCode)) throw new Error(`sandbox bank code ${bankCode} is not a bank of NIGERIA.md`)
    this.#pool = pool
    this.bankCode = bankCode
  }

  async openAccount(accountName: string): Promise<BankAccount> {
    const serial = await this.#nextSerial()
    const accountNumber = nuban(this.bankCode, serial)
    const result = await this.#pool.query<AccountRow>(
      `INSERT INTO sandbox_bank.accounts (account_number, bank_code, account_name, kind) VALUES ($1, $2, $3, 'customer') RETURNING ${ACCOUNT_COLUMNS}`,
      [accountNumber, this.bankCode, accountName],
    )
    return toAccount(result.rows[0]!)
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
    let responseCode = refusal ?? (await this.#applyTransfer(tx, debit, credit, request.amountKobo))
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
      if (transfer.kind === 'payout') {
        // A payout moved nothing yet: on success the money leaves the pool; a failure moves nothing.
        if (transfer.final_code === '00') {
          await tx.query(`UPDATE sandbox_bank.accounts SET balance_kobo = balance_kobo - $2 WHERE account_number = $1`, [transfer.debit_account_number, transfer.amount_kobo])
        }
      } else if (transfer.final_code !== '00') {
        await tx.query(`UPDATE sandbox_bank.accounts SET balance_kobo = balance_kobo - $2 WHERE account_number = $1`, [transfer.credit_account_number, transfer.amount_kobo])
        await tx.query(`UPDATE sandbox_bank.accounts SET balance_kobo = balance_kobo + $2 WHERE account_number = $1`, [transfer.debit_account_number, transfer.amount_kobo])
      }
      await tx.query(`UPDATE sandbox_bank.transfers SET response_code = final_code WHERE reference = $1`, [reference])
    })
  }

  /** Locks both accounts (in account-number order), checks them, moves the money; returns the NIP code. */
  async #applyTransfer(tx: Queryable, debit: string, credit: string, amountKobo: number): Promise<string> {
    if (debit === credit) return '12'
    const locked = await tx.query<AccountRow & { kind: 'customer' | 'settlement' }>(
      `SELECT ${ACCOUNT_COLUMNS}, kind FROM sandbox_bank.accounts WHERE account_number = ANY ($1::text[]) ORDER BY account_number FOR UPDATE`,
      [[debit, credit]],
    )
    const byNumber = new Map(locked.rows.map((row) => [row.account_number, row]))
    const from = byNumber.get(debit)
    const to = byNumber.get(credit)
    if (!from || !to) return '07'
    if (from.status === 'dormant' || to.status === 'dormant') return '06'
    // The rows are locked: the balance read is the balance the update changes.
    if (from.kind !== 'settlement' && from.balance_kobo < amountKobo) return '51'
    await tx.query(
      `UPDATE sandbox_bank.accounts SET balance_kobo = balance_kobo + CASE WHEN account_number = $1 THEN -$3::bigint ELSE $3::bigint END
        WHERE account_number IN ($1, $2)`,
      [debit, credit, amountKobo],
    )
    return '00'
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

function toAccount(row: AccountRow): BankAccount {
  return { bankCode: row.bank_code, accountNumber: row.account_number, accountName: row.account_name, balanceKobo: row.balance_kobo, status: row.status }
}
