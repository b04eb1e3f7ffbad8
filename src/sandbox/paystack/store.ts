// What the sandbox's Paystack dialect keeps beside the bank's books (migration 0051): transfer
// recipients, the transfers made through it (each the bank's payout of the same reference),
// customers and their dedicated accounts. Raw SQL, one function per question; each SELECT names
// its columns as the fields of the object it reads (AS "camelCase"), so that a row is the object.
import type { Pool, Queryable } from '../../platform/db.ts'
import { SANDBOX_PAYSTACK_PROFILE } from '../dialects.ts'
import { newCode } from './wire.ts'

export interface Recipient {
  id: number
  recipientCode: string
  name: string
  bankCode: string
  accountNumber: string
  accountName: string
  currency: 'NGN'
  description: string
  createdAt: Date
}

const RECIPIENT_COLUMNS = `r.id, r.recipient_code AS "recipientCode", r.name, r.bank_code AS "bankCode",
  r.account_number AS "accountNumber", r.account_name AS "accountName", r.currency, r.description, r.created_at AS "createdAt"`

/** A recipient for a bank account, once: Paystack answers the existing one for the same account. */
export async function createRecipient(
  pool: Pool,
  recipient: { name: string; bankCode: string; accountNumber: string; accountName: string; description: string },
): Promise<Recipient> {
  const inserted = await pool.query<Recipient>(
    `INSERT INTO sandbox_bank.paystack_recipients AS r (recipient_code, type, name, bank_code, account_number, account_name, currency, description)
     VALUES ($1, 'nuban', $2, $3, $4, $5, 'NGN', $6)
     ON CONFLICT ON CONSTRAINT paystack_recipients_one_per_account DO NOTHING
     RETURNING ${RECIPIENT_COLUMNS}`,
    [
      newCode('RCP'),
      recipient.name,
      recipient.bankCode,
      recipient.accountNumber,
      recipient.accountName,
      recipient.description,
    ],
  )
  if (inserted.rows[0]) return inserted.rows[0]
  const existing = await pool.query<Recipient>(
    `SELECT ${RECIPIENT_COLUMNS} FROM sandbox_bank.paystack_recipients r WHERE r.bank_code = $1 AND r.account_number = $2`,
    [recipient.bankCode, recipient.accountNumber],
  )
  return existing.rows[0]!
}

/** By recipient code or numeric id, as Paystack's {id_or_code} paths take either. */
export async function findRecipient(pool: Queryable, idOrCode: string): Promise<Recipient | undefined> {
  const found = await pool.query<Recipient>(
    `SELECT ${RECIPIENT_COLUMNS} FROM sandbox_bank.paystack_recipients r WHERE ${byIdOrCode('r', 'recipient_code')}`,
    [idOrCode],
  )
  return found.rows[0]
}

/** A WHERE clause matching $1 against a code column, or against the id when $1 is all digits. */
function byIdOrCode(alias: string, codeColumn: string): string {
  return `(${alias}.${codeColumn} = $1 OR ($1 ~ '^[0-9]{1,18}$' AND ${alias}.id = CASE WHEN $1 ~ '^[0-9]{1,18}$' THEN $1::bigint END))`
}

/** A transfer made through the dialect, with its payout's state at the bank. */
export interface Transfer {
  id: number
  transferCode: string
  reference: string
  amountKobo: number
  currency: 'NGN'
  reason: string
  createdAt: Date
  recipient: Recipient
  /** The bank's NIP code for the payout: 09 in progress, 00 paid, or the final failure. */
  responseCode: string
  sessionId: string
  /** When the payout settled (its outcome became final), if it has. */
  settledAt: Date | null
  reversedAt: Date | null
}

/** A transfer's own columns (named apart from its recipient's where both have one), then its recipient's. */
interface TransferRow extends Recipient {
  transferId: number
  transferCode: string
  reference: string
  amountKobo: number
  reason: string
  transferCreatedAt: Date
  responseCode: string
  sessionId: string
  settlesAt: Date | null
  reversedAt: Date | null
}

const TRANSFER_SELECT = `SELECT p.id AS "transferId", p.transfer_code AS "transferCode", p.reference, p.amount_kobo AS "amountKobo", p.reason,
       p.created_at AS "transferCreatedAt", t.response_code AS "responseCode", t.session_id AS "sessionId", t.settles_at AS "settlesAt",
       t.reversed_at AS "reversedAt", ${RECIPIENT_COLUMNS}
  FROM sandbox_bank.paystack_transfers p
  JOIN sandbox_bank.transfers t ON t.reference = p.reference
  JOIN sandbox_bank.paystack_recipients r ON r.id = p.recipient_id`

function toTransfer(row: TransferRow): Transfer {
  const { transferId, transferCode, reference, amountKobo, reason, transferCreatedAt, ...rest } = row
  const { responseCode, sessionId, settlesAt, reversedAt, ...recipient } = rest
  return {
    id: transferId,
    transferCode,
    reference,
    amountKobo,
    currency: 'NGN',
    reason,
    createdAt: transferCreatedAt,
    recipient,
    responseCode,
    sessionId,
    settledAt: responseCode !== '09' ? (settlesAt ?? transferCreatedAt) : null,
    reversedAt,
  }
}

export async function transferByReference(db: Queryable, reference: string): Promise<Transfer | undefined> {
  const found = await db.query<TransferRow>(`${TRANSFER_SELECT} WHERE p.reference = $1`, [reference])
  return found.rows[0] && toTransfer(found.rows[0])
}

export async function transferByIdOrCode(db: Queryable, idOrCode: string): Promise<Transfer | undefined> {
  const found = await db.query<TransferRow>(`${TRANSFER_SELECT} WHERE ${byIdOrCode('p', 'transfer_code')}`, [idOrCode])
  return found.rows[0] && toTransfer(found.rows[0])
}

/**
 * Records the dialect's side of a payout the bank holds under `reference`, once: true when this
 * call recorded it. Only a payout to the recipient's account for the same amount is recorded (a
 * transfer whose answer was lost before it was recorded here is found again this way).
 */
export async function recordTransfer(
  tx: Queryable,
  transfer: { reference: string; recipient: Recipient; amountKobo: number; reason: string },
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO sandbox_bank.paystack_transfers (transfer_code, reference, recipient_id, amount_kobo, currency, reason)
     SELECT $1, t.reference, $3, t.amount_kobo, 'NGN', $5 FROM sandbox_bank.transfers t
      WHERE t.reference = $2 AND t.kind = 'payout' AND t.amount_kobo = $4 AND t.destination_bank_code = $6 AND t.destination_account_number = $7
     ON CONFLICT ON CONSTRAINT paystack_transfers_reference_key DO NOTHING`,
    [
      newCode('TRF'),
      transfer.reference,
      transfer.recipient.id,
      transfer.amountKobo,
      transfer.reason,
      transfer.recipient.bankCode,
      transfer.recipient.accountNumber,
    ],
  )
  return rowCount === 1
}

export interface Customer {
  id: number
  customerCode: string
  email: string
  firstName: string | null
  lastName: string | null
  phone: string | null
  createdAt: Date
  updatedAt: Date
}

const CUSTOMER_COLUMNS = `c.id, c.customer_code AS "customerCode", c.email, c.first_name AS "firstName", c.last_name AS "lastName",
  c.phone, c.created_at AS "createdAt", c.updated_at AS "updatedAt"`

/** A customer per email, as Paystack keeps them: created once; asked again, the names given fill in or replace the stored ones. */
export async function upsertCustomer(
  pool: Pool,
  customer: { email: string; firstName?: string; lastName?: string; phone?: string },
): Promise<Customer> {
  const result = await pool.query<Customer>(
    `INSERT INTO sandbox_bank.paystack_customers AS c (customer_code, email, first_name, last_name, phone) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT ON CONSTRAINT paystack_customers_email_key DO UPDATE
       SET first_name = coalesce(EXCLUDED.first_name, c.first_name), last_name = coalesce(EXCLUDED.last_name, c.last_name),
           phone = coalesce(EXCLUDED.phone, c.phone), updated_at = now()
     RETURNING ${CUSTOMER_COLUMNS}`,
    [
      newCode('CUS'),
      customer.email.toLowerCase(),
      customer.firstName ?? null,
      customer.lastName ?? null,
      customer.phone ?? null,
    ],
  )
  return result.rows[0]!
}

export async function findCustomer(db: Queryable, idOrCode: string): Promise<Customer | undefined> {
  const found = await db.query<Customer>(
    `SELECT ${CUSTOMER_COLUMNS} FROM sandbox_bank.paystack_customers c WHERE ${byIdOrCode('c', 'customer_code')}`,
    [idOrCode],
  )
  return found.rows[0]
}

export interface DedicatedAccount {
  id: number
  accountNumber: string
  accountName: string
  bankCode: string
  active: boolean
  createdAt: Date
  updatedAt: Date
  customer: Customer
}

/** A dedicated account's own columns (named apart from its customer's where both have one), then its customer's. */
interface DedicatedAccountRow extends Customer {
  accountId: number
  accountNumber: string
  accountName: string
  bankCode: string
  active: boolean
  accountCreatedAt: Date
  accountUpdatedAt: Date
}

const DEDICATED_ACCOUNT_SELECT = `SELECT d.id AS "accountId", d.account_number AS "accountNumber", a.account_name AS "accountName",
       a.bank_code AS "bankCode", d.active, d.created_at AS "accountCreatedAt", d.updated_at AS "accountUpdatedAt", ${CUSTOMER_COLUMNS}
  FROM sandbox_bank.paystack_dedicated_accounts d
  JOIN sandbox_bank.paystack_customers c ON c.id = d.customer_id
  JOIN sandbox_bank.accounts a ON a.account_number = d.account_number`

function toDedicatedAccount(row: DedicatedAccountRow): DedicatedAccount {
  const { accountId, accountCreatedAt, accountUpdatedAt, ...rest } = row
  const { accountNumber, accountName, bankCode, active, ...customer } = rest
  return {
    id: accountId,
    accountNumber,
    accountName,
    bankCode,
    active,
    createdAt: accountCreatedAt,
    updatedAt: accountUpdatedAt,
    customer,
  }
}

export async function activeDedicatedAccount(db: Queryable, customerId: number): Promise<DedicatedAccount | undefined> {
  const found = await db.query<DedicatedAccountRow>(
    `${DEDICATED_ACCOUNT_SELECT} WHERE d.customer_id = $1 AND d.active`,
    [customerId],
  )
  return found.rows[0] && toDedicatedAccount(found.rows[0])
}

/** How many dedicated accounts a customer has had: the next one's reference at the bank counts them. */
export async function dedicatedAccountCount(db: Queryable, customerId: number): Promise<number> {
  const found = await db.query<{ count: string }>(
    `SELECT count(*) AS count FROM sandbox_bank.paystack_dedicated_accounts WHERE customer_id = $1`,
    [customerId],
  )
  return Number(found.rows[0]!.count)
}

/** Records the customer's dedicated account on an account the bank allocated; a concurrent request's record wins and is answered. */
export async function recordDedicatedAccount(
  pool: Pool,
  customerId: number,
  accountNumber: string,
  preferredBank: string,
): Promise<DedicatedAccount> {
  await pool.query(
    `INSERT INTO sandbox_bank.paystack_dedicated_accounts (customer_id, account_number, preferred_bank) VALUES ($1, $2, $3)
     ON CONFLICT DO NOTHING`,
    [customerId, accountNumber, preferredBank],
  )
  return (await dedicatedAccountByNumber(pool, accountNumber))!
}

export async function findDedicatedAccount(db: Queryable, id: string): Promise<DedicatedAccount | undefined> {
  if (!/^[0-9]{1,18}$/.test(id)) return undefined
  const found = await db.query<DedicatedAccountRow>(`${DEDICATED_ACCOUNT_SELECT} WHERE d.id = $1`, [id])
  return found.rows[0] && toDedicatedAccount(found.rows[0])
}

export async function dedicatedAccountByNumber(
  db: Queryable,
  accountNumber: string,
): Promise<DedicatedAccount | undefined> {
  const found = await db.query<DedicatedAccountRow>(`${DEDICATED_ACCOUNT_SELECT} WHERE d.account_number = $1`, [
    accountNumber,
  ])
  return found.rows[0] && toDedicatedAccount(found.rows[0])
}

/** The dedicated accounts of a customer, or of every customer: what the transaction list reads credits from. */
export async function dedicatedAccountsOf(db: Queryable, customerId: number | undefined): Promise<DedicatedAccount[]> {
  const found = await db.query<DedicatedAccountRow>(
    `${DEDICATED_ACCOUNT_SELECT} WHERE ($1::bigint IS NULL OR d.customer_id = $1) ORDER BY d.id`,
    [customerId ?? null],
  )
  return found.rows.map(toDedicatedAccount)
}

export async function deactivateDedicatedAccount(db: Queryable, id: number): Promise<void> {
  await db.query(
    `UPDATE sandbox_bank.paystack_dedicated_accounts SET active = false, updated_at = now() WHERE id = $1 AND active`,
    [id],
  )
}

/**
 * The integration's balance: the opening float, plus every credit paid into its dedicated
 * accounts, less every transfer it made that has not failed or been reversed (Paystack takes a
 * transfer's amount when it is made and gives it back if it fails or is reversed).
 */
export async function balanceKobo(db: Queryable, openingKobo: number): Promise<number> {
  const found = await db.query<{ collected: string; paid: string }>(
    `SELECT (SELECT coalesce(sum(t.amount_kobo), 0) FROM sandbox_bank.transfers t JOIN sandbox_bank.accounts a ON a.account_number = t.credit_account_number
              WHERE t.kind = 'inbound' AND a.client = $1) AS collected,
            (SELECT coalesce(sum(t.amount_kobo), 0) FROM sandbox_bank.paystack_transfers p JOIN sandbox_bank.transfers t ON t.reference = p.reference
              WHERE t.response_code IN ('00', '09') AND t.reversed_at IS NULL) AS paid`,
    [SANDBOX_PAYSTACK_PROFILE],
  )
  const row = found.rows[0]!
  return openingKobo + Number(row.collected) - Number(row.paid)
}
