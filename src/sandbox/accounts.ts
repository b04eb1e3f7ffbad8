// The sandbox bank's accounts: customers' accounts (opened once per opening reference), virtual
// accounts allocated to a client (once per client reference), and the bank's settlement pool.
import { nuban } from '../banking/nip/nuban.ts'
import type { Clock } from '../platform/clock.ts'
import type { Pool, Queryable } from '../platform/db.ts'
import type { BankAccount } from './types.ts'

const SETTLEMENT_ACCOUNT_NAME = 'RAIL SANDBOX SETTLEMENT'
/**
 * The most a customer account may hold, counting what it has sent that may still come back (an
 * interbank transfer in progress): 2^53 − 1 kobo, so that every balance is an exact JavaScript
 * number. A credit that would pass it is refused with NIP 61 (transfer limit exceeded).
 */
export const ACCOUNT_BALANCE_MAX_KOBO = Number.MAX_SAFE_INTEGER

/** Where the bank keeps its books, the bank code of the NUBANs it issues, and the bank's time. */
export interface BankBooks {
  pool: Pool
  bankCode: string
  clock: Clock
}

// The columns as BankAccount's fields: a row is the account.
const ACCOUNT_COLUMNS =
  'bank_code AS "bankCode", account_number AS "accountNumber", account_name AS "accountName", balance_kobo AS "balanceKobo", status'

/**
 * Opens a customer's account. With an opening reference, once: asked again with it (a retry, a
 * concurrent duplicate, a request whose answer was lost), the bank answers the account it opened
 * — or `reference_taken` when that account was opened in another name (another request). With a
 * client (the provider profile opening a wallet), the bank announces credits paid into it to
 * that client, as it does for virtual accounts.
 */
export async function openAccount(
  bank: BankBooks,
  accountName: string,
  openingReference?: string,
  client?: string,
): Promise<BankAccount | 'reference_taken'> {
  const opened = (account: BankAccount) => (account.accountName === accountName ? account : 'reference_taken')
  if (openingReference !== undefined) {
    const existing = await accountByOpeningReference(bank.pool, openingReference)
    if (existing) return opened(existing)
  }
  const accountNumber = nuban(bank.bankCode, await nextSerial(bank.pool))
  const result = await bank.pool.query<BankAccount>(
    `INSERT INTO sandbox_bank.accounts (account_number, bank_code, account_name, kind, opening_reference, client) VALUES ($1, $2, $3, 'customer', $4, $5)
     ON CONFLICT ON CONSTRAINT accounts_one_per_opening_reference DO NOTHING
     RETURNING ${ACCOUNT_COLUMNS}`,
    [accountNumber, bank.bankCode, accountName, openingReference ?? null, client ?? null],
  )
  if (result.rows[0]) return result.rows[0]
  // A concurrent opening with the same reference committed first: its account is the answer.
  return opened((await accountByOpeningReference(bank.pool, openingReference!))!)
}

async function accountByOpeningReference(pool: Pool, openingReference: string): Promise<BankAccount | undefined> {
  const found = await pool.query<BankAccount>(
    `SELECT ${ACCOUNT_COLUMNS} FROM sandbox_bank.accounts WHERE opening_reference = $1`,
    [openingReference],
  )
  return found.rows[0]
}

export async function getAccount(pool: Pool, accountNumber: string): Promise<BankAccount | undefined> {
  const result = await pool.query<BankAccount>(
    `SELECT ${ACCOUNT_COLUMNS} FROM sandbox_bank.accounts WHERE account_number = $1 AND kind = 'customer'`,
    [accountNumber],
  )
  return result.rows[0]
}

/**
 * Allocates a virtual account (a collection NUBAN) for a client — the provider profile that asks —
 * once per client reference: asked again, the bank answers the account it allocated before.
 */
export async function allocateVirtualAccount(
  bank: BankBooks,
  client: string,
  clientReference: string,
  accountName: string,
): Promise<BankAccount> {
  const existing = await virtualAccountByReference(bank.pool, client, clientReference)
  if (existing) return existing
  const accountNumber = nuban(bank.bankCode, await nextSerial(bank.pool))
  const inserted = await bank.pool.query<BankAccount>(
    `INSERT INTO sandbox_bank.accounts (account_number, bank_code, account_name, kind, client, client_reference)
     VALUES ($1, $2, $3, 'virtual', $4, $5)
     ON CONFLICT (client, client_reference) WHERE kind = 'virtual' DO NOTHING
     RETURNING ${ACCOUNT_COLUMNS}`,
    [accountNumber, bank.bankCode, accountName, client, clientReference],
  )
  // A concurrent allocation with the same reference won: answer its account.
  return inserted.rows[0] ?? (await virtualAccountByReference(bank.pool, client, clientReference))!
}

async function virtualAccountByReference(
  pool: Pool,
  client: string,
  clientReference: string,
): Promise<BankAccount | undefined> {
  const found = await pool.query<BankAccount>(
    `SELECT ${ACCOUNT_COLUMNS} FROM sandbox_bank.accounts WHERE kind = 'virtual' AND client = $1 AND client_reference = $2`,
    [client, clientReference],
  )
  return found.rows[0]
}

/** Archives a virtual account; false when it is no virtual account of this client. Archiving twice is fine. */
export async function archiveVirtualAccount(pool: Pool, client: string, accountNumber: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE sandbox_bank.accounts SET archived_at = coalesce(archived_at, now()) WHERE account_number = $1 AND kind = 'virtual' AND client = $2`,
    [accountNumber, client],
  )
  return rowCount === 1
}

/** The settlement pool's account number: the bank's own side of its clients' credits, debits and sends. */
export async function settlementAccount(tx: Queryable, bankCode: string): Promise<string> {
  const found = await tx.query<{ account_number: string }>(
    `SELECT account_number FROM sandbox_bank.accounts WHERE kind = 'settlement' AND bank_code = $1`,
    [bankCode],
  )
  if (found.rows[0]) return found.rows[0].account_number
  // First use: the settlement pool gets the first serial; a concurrent first use loses the race harmlessly.
  const accountNumber = nuban(bankCode, '000000001')
  await tx.query(
    `INSERT INTO sandbox_bank.accounts (account_number, bank_code, account_name, kind) VALUES ($1, $2, $3, 'settlement') ON CONFLICT (account_number) DO NOTHING`,
    [accountNumber, bankCode, SETTLEMENT_ACCOUNT_NAME],
  )
  return accountNumber
}

async function nextSerial(pool: Pool): Promise<string> {
  const result = await pool.query<{ serial: string }>(
    `SELECT lpad(nextval('sandbox_bank.account_serial')::text, 9, '0') AS serial`,
  )
  return result.rows[0]!.serial
}
