// What the sandbox's Paystack dialect keeps beside the bank's books (migration 0051): transfer
// recipients, the transfers made through it (each the bank's payout of the same reference),
// customers and their dedicated accounts. Raw SQL, one function per question.
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

interface RecipientRow {
  id: string
  recipient_code: string
  name: string
  bank_code: string
  account_number: string
  account_name: string
  description: string
  created_at: Date
}

const RECIPIENT_COLUMNS =
  'r.id, r.recipient_code, r.name, r.bank_code, r.account_number, r.account_name, r.description, r.created_at'

function toRecipient(row: RecipientRow): Recipient {
  return {
    id: Number(row.id),
    recipientCode: row.recipient_code,
    name: row.name,
    bankCode: row.bank_code,
    accountNumber: row.account_number,
    accountName: row.account_name,
    currency: 'NGN',
    description: row.description,
    createdAt: row.created_at,
  }
}

/** A recipient for a bank account, once: Paystack answers the existing one for the same account. */
export async function createRecipient(
  pool: Pool,
  recipient: { name: string; bankCode: string; accountNumber: string; accountName: string; description: string },
): Promise<Recipient> {
  const inserted = await pool.query<RecipientRow>(
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
  if (inserted.rows[0]) return toRecipient(inserted.rows[0])
  const existing = await pool.query<RecipientRow>(
    `SELECT ${RECIPIENT_COLUMNS} FROM sandbox_bank.paystack_recipients r WHERE r.bank_code = $1 AND r.account_number = $2`,
    [recipient.bankCode, recipient.accountNumber],
  )
  return toRecipient(existing.rows[0]!)
}

/** By recipient code or numeric id, as Paystack's {id_or_code} paths take either. */
export async function findRecipient(pool: Queryable, idOrCode: string): Promise<Recipient | undefined> {
  const found = await pool.query<RecipientRow>(
    `SELECT ${RECIPIENT_COLUMNS} FROM sandbox_bank.paystack_recipients r WHERE ${byIdOrCode('r', 'recipient_code')}`,
    [idOrCode],
  )
  return found.rows[0] && toRecipient(found.rows[0])
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

interface TransferRow extends RecipientRow {
  transfer_id: string
  transfer_code: string
  reference: string
  amount_kobo: string
  reason: string
  transfer_created_at: Date
  response_code: string
  session_id: string
  settles_at: Date | null
  reversed_at: Date | null
}

const TRANSFER_SELECT = `SELECT p.id AS transfer_id, p.transfer_code, p.reference, p.amount_kobo, p.reason, p.created_at AS transfer_created_at,
       t.response_code, t.session_id, t.settles_at, t.reversed_at, ${RECIPIENT_COLUMNS}
  FROM sandbox_bank.paystack_transfers p
  JOIN sandbox_bank.transfers t ON t.reference = p.reference
  JOIN sandbox_bank.paystack_recipients r ON r.id = p.recipient_id`

function toTransfer(row: TransferRow): Transfer {
  const settled = row.response_code !== '09'
  return {
    id: Number(row.transfer_id),
    transferCode: row.transfer_code,
    reference: row.reference,
    amountKobo: Number(row.amount_kobo),
    currency: 'NGN',
    reason: row.reason,
    createdAt: row.transfer_created_at,
    recipient: toRecipient(row),
    responseCode: row.response_code,
    sessionId: row.session_id,
    settledAt: settled ? (row.settles_at ?? row.transfer_created_at) : null,
    reversedAt: row.reversed_at,
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

interface CustomerRow {
  id: string
  customer_code: string
  email: string
  first_name: string | null
  last_name: string | null
  phone: string | null
  created_at: Date
  updated_at: Date
}

const CUSTOMER_COLUMNS =
  'c.id, c.customer_code, c.email, c.first_name, c.last_name, c.phone, c.created_at, c.updated_at'

function toCustomer(row: CustomerRow): Customer {
  return {
    id: Number(row.id),
    customerCode: row.customer_code,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    phone: row.phone,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }
}

/** A customer per email, as Paystack keeps them: created once; asked again, the names given fill in or replace the stored ones. */
export async function upsertCustomer(
  pool: Pool,
  customer: { email: string; firstName?: string; lastName?: string; phone?: string },
): Promise<Customer> {
  const result = await pool.query<CustomerRow>(
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
  return toCustomer(result.rows[0]!)
}

export async function findCustomer(db: Queryable, idOrCode: string): Promise<Customer | undefined> {
  const found = await db.query<CustomerRow>(
    `SELECT ${CUSTOMER_COLUMNS} FROM sandbox_bank.paystack_customers c WHERE ${byIdOrCode('c', 'customer_code')}`,
    [idOrCode],
  )
  return found.rows[0] && toCustomer(found.rows[0])
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

interface DedicatedAccountRow extends CustomerRow {
  account_id: string
  account_number: string
  account_name: string
  bank_code: string
  active: boolean
  account_created_at: Date
  account_updated_at: Date
}

const DEDICATED_ACCOUNT_SELECT = `SELECT d.id AS account_id, d.account_number, a.account_name, a.bank_code, d.active, d.created_at AS account_created_at, d.updated_at AS account_updated_at,
       ${CUSTOMER_COLUMNS}
  FROM sandbox_bank.paystack_dedicated_accounts d
  JOIN sandbox_bank.paystack_customers c ON c.id = d.customer_id
  JOIN sandbox_bank.accounts a ON a.account_number = d.account_number`

function toDedicatedAccount(row: DedicatedAccountRow): DedicatedAccount {
  return {
    id: Number(row.account_id),
    accountNumber: row.account_number,
    accountName: row.account_name,
    bankCode: row.bank_code,
    active: row.active,
    createdAt: row.account_created_at,
    updatedAt: row.account_updated_at,
    customer: toCustomer(row),
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
