// The Monnify dialect's SQL: its own tables (db/migrations/0052_sandbox_monnify.sql) and the reads
// of the bank's books it answers from that the bank's service does not offer (a wallet's
// movements with running balances, the merchant's float).
import type { Pool, Queryable } from '../../platform/db.ts'

export type SourceKind = 'main' | 'wallet'

export interface Disbursement {
  reference: string
  sourceAccountNumber: string
  sourceKind: SourceKind
  amountKobo: number
  narration: string
  destinationBankCode: string
  destinationAccountNumber: string
  destinationAccountName: string | null
  createdAt: Date
  completedAt: Date | null
}

const DISBURSEMENT_COLUMNS = `reference, source_account_number, source_kind, amount_kobo, narration, destination_bank_code, destination_account_number,
  destination_account_name, created_at, completed_at`

interface DisbursementRow {
  reference: string
  source_account_number: string
  source_kind: SourceKind
  amount_kobo: number
  narration: string
  destination_bank_code: string
  destination_account_number: string
  destination_account_name: string | null
  created_at: Date
  completed_at: Date | null
}

function toDisbursement(row: DisbursementRow): Disbursement {
  return {
    reference: row.reference,
    sourceAccountNumber: row.source_account_number,
    sourceKind: row.source_kind,
    amountKobo: row.amount_kobo,
    narration: row.narration,
    destinationBankCode: row.destination_bank_code,
    destinationAccountNumber: row.destination_account_number,
    destinationAccountName: row.destination_account_name,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  }
}

/** Records a disbursement's request once; a second record of the same reference keeps the first. */
export async function insertDisbursement(
  db: Queryable,
  disbursement: Omit<Disbursement, 'createdAt' | 'completedAt'>,
  createdAt: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO sandbox_bank.monnify_disbursements (reference, source_account_number, source_kind, amount_kobo, narration, destination_bank_code,
                                                      destination_account_number, destination_account_name, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (reference) DO NOTHING`,
    [
      disbursement.reference,
      disbursement.sourceAccountNumber,
      disbursement.sourceKind,
      disbursement.amountKobo,
      disbursement.narration,
      disbursement.destinationBankCode,
      disbursement.destinationAccountNumber,
      disbursement.destinationAccountName,
      createdAt,
    ],
  )
}

export async function findDisbursement(db: Queryable, reference: string): Promise<Disbursement | undefined> {
  const found = await db.query<DisbursementRow>(
    `SELECT ${DISBURSEMENT_COLUMNS} FROM sandbox_bank.monnify_disbursements WHERE reference = $1`,
    [reference],
  )
  return found.rows[0] && toDisbursement(found.rows[0])
}

/**
 * Claims the announcement of a disbursement's final status: true once only, on the caller's
 * transaction (which queues the webhook), however many look at the settled disbursement.
 */
export async function claimAnnouncement(
  db: Queryable,
  reference: string,
  status: 'SUCCESS' | 'FAILED',
  completedAt: Date,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE sandbox_bank.monnify_disbursements SET announced_status = $2, completed_at = coalesce(completed_at, $3)
      WHERE reference = $1 AND announced_status IS NULL`,
    [reference, status, completedAt],
  )
  return rowCount === 1
}

/** Whether the bank's simulator reversed the payout of this reference after it settled (only a payout can be). */
export async function isReversed(db: Queryable, reference: string): Promise<boolean> {
  const found = await db.query(
    `SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1 AND reversed_at IS NOT NULL`,
    [reference],
  )
  return found.rowCount === 1
}

export interface Wallet {
  walletReference: string
  accountNumber: string
  walletName: string
  customerName: string
  customerEmail: string
  bvn: string | null
  bvnDateOfBirth: string | null
  createdAt: Date
}

const WALLET_COLUMNS =
  'wallet_reference, account_number, wallet_name, customer_name, customer_email, bvn, bvn_date_of_birth, created_at'

interface WalletRow {
  wallet_reference: string
  account_number: string
  wallet_name: string
  customer_name: string
  customer_email: string
  bvn: string | null
  bvn_date_of_birth: string | null
  created_at: Date
}

function toWallet(row: WalletRow): Wallet {
  return {
    walletReference: row.wallet_reference,
    accountNumber: row.account_number,
    walletName: row.wallet_name,
    customerName: row.customer_name,
    customerEmail: row.customer_email,
    bvn: row.bvn,
    bvnDateOfBirth: row.bvn_date_of_birth,
    createdAt: row.created_at,
  }
}

/** Records a wallet once per reference and answers the wallet as recorded (the first, when asked again). */
export async function upsertWallet(pool: Pool, wallet: Omit<Wallet, 'createdAt'>): Promise<Wallet> {
  await pool.query(
    `INSERT INTO sandbox_bank.monnify_wallets (wallet_reference, account_number, wallet_name, customer_name, customer_email, bvn, bvn_date_of_birth)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (wallet_reference) DO NOTHING`,
    [
      wallet.walletReference,
      wallet.accountNumber,
      wallet.walletName,
      wallet.customerName,
      wallet.customerEmail,
      wallet.bvn,
      wallet.bvnDateOfBirth,
    ],
  )
  return (await walletBy(pool, 'wallet_reference', wallet.walletReference))!
}

/** The most wallets a listing reads (the newest first). */
export const WALLETS_LISTED_MAX = 1_000

export async function allWallets(pool: Pool): Promise<Wallet[]> {
  const found = await pool.query<WalletRow>(
    `SELECT ${WALLET_COLUMNS} FROM sandbox_bank.monnify_wallets ORDER BY created_at DESC LIMIT ${WALLETS_LISTED_MAX}`,
  )
  return found.rows.map(toWallet)
}

export async function walletBy(
  db: Queryable,
  column: 'wallet_reference' | 'account_number',
  value: string,
): Promise<Wallet | undefined> {
  const found = await db.query<WalletRow>(
    `SELECT ${WALLET_COLUMNS} FROM sandbox_bank.monnify_wallets WHERE ${column} = $1`,
    [value],
  )
  return found.rows[0] && toWallet(found.rows[0])
}

export interface ReservedAccount {
  accountReference: string
  accountNumber: string
  accountName: string
  currencyCode: string
  contractCode: string
  customerEmail: string
  customerName: string
  createdAt: Date
  deallocatedAt: Date | null
}

const RESERVED_COLUMNS =
  'account_reference, account_number, account_name, currency_code, contract_code, customer_email, customer_name, created_at, deallocated_at'

interface ReservedRow {
  account_reference: string
  account_number: string
  account_name: string
  currency_code: string
  contract_code: string
  customer_email: string
  customer_name: string
  created_at: Date
  deallocated_at: Date | null
}

function toReserved(row: ReservedRow): ReservedAccount {
  return {
    accountReference: row.account_reference,
    accountNumber: row.account_number,
    accountName: row.account_name,
    currencyCode: row.currency_code,
    contractCode: row.contract_code,
    customerEmail: row.customer_email,
    customerName: row.customer_name,
    createdAt: row.created_at,
    deallocatedAt: row.deallocated_at,
  }
}

/** Records a reserved account once per reference; answers it as recorded. */
export async function upsertReservedAccount(
  pool: Pool,
  account: Omit<ReservedAccount, 'createdAt' | 'deallocatedAt'>,
): Promise<ReservedAccount> {
  await pool.query(
    `INSERT INTO sandbox_bank.monnify_reserved_accounts (account_reference, account_number, account_name, currency_code, contract_code, customer_email, customer_name)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account_reference) DO NOTHING`,
    [
      account.accountReference,
      account.accountNumber,
      account.accountName,
      account.currencyCode,
      account.contractCode,
      account.customerEmail,
      account.customerName,
    ],
  )
  return (await reservedAccountBy(pool, 'account_reference', account.accountReference))!
}

export async function reservedAccountBy(
  db: Queryable,
  column: 'account_reference' | 'account_number',
  value: string,
): Promise<ReservedAccount | undefined> {
  const found = await db.query<ReservedRow>(
    `SELECT ${RESERVED_COLUMNS} FROM sandbox_bank.monnify_reserved_accounts WHERE ${column} = $1`,
    [value],
  )
  return found.rows[0] && toReserved(found.rows[0])
}

export async function markDeallocated(pool: Pool, accountReference: string): Promise<void> {
  await pool.query(
    `UPDATE sandbox_bank.monnify_reserved_accounts SET deallocated_at = coalesce(deallocated_at, now()) WHERE account_reference = $1`,
    [accountReference],
  )
}

/**
 * The float's movements: credits to reserved accounts, disbursements from the main account paid
 * (a reversed one came back: not counted) and those still waiting for their outcome.
 */
export async function mainAccountMovements(
  pool: Pool,
): Promise<{ creditedKobo: number; settledOutKobo: number; pendingOutKobo: number }> {
  const { rows } = await pool.query<{ credited_kobo: string; settled_out_kobo: string; pending_out_kobo: string }>(
    `SELECT
       (SELECT coalesce(sum(t.amount_kobo), 0) FROM sandbox_bank.transfers t JOIN sandbox_bank.monnify_reserved_accounts r ON r.account_number = t.credit_account_number
         WHERE t.kind = 'inbound' AND t.response_code = '00') AS credited_kobo,
       (SELECT coalesce(sum(t.amount_kobo), 0) FROM sandbox_bank.transfers t JOIN sandbox_bank.monnify_disbursements d ON d.reference = t.reference
         WHERE d.source_kind = 'main' AND t.response_code = '00' AND t.reversed_at IS NULL) AS settled_out_kobo,
       (SELECT coalesce(sum(t.amount_kobo), 0) FROM sandbox_bank.transfers t JOIN sandbox_bank.monnify_disbursements d ON d.reference = t.reference
         WHERE d.source_kind = 'main' AND t.response_code = '09') AS pending_out_kobo`,
  )
  const row = rows[0]!
  return {
    creditedKobo: Number(row.credited_kobo),
    settledOutKobo: Number(row.settled_out_kobo),
    pendingOutKobo: Number(row.pending_out_kobo),
  }
}

export interface WalletMovement {
  reference: string
  sessionId: string
  amountKobo: number
  /** Signed: positive into the wallet, negative out of it. */
  signedKobo: number
  balanceAfterKobo: number
  narration: string | null
  createdAt: Date
  responseCode: string
  /** Who paid a credit from another bank, when the bank knows. */
  payerName: string | null
  payerAccountNumber: string | null
  payerBankCode: string | null
}

/** The most movements a wallet's listing reads (the oldest first). */
export const WALLET_MOVEMENTS_MAX = 1_000

/**
 * The movements of a customer account, oldest first, with its balance after each: what is in it
 * (credits, book transfers in, inbound credits) and what left it (debits, book transfers out,
 * interbank sends, in progress or paid). A send that failed gave its money back: it is not listed.
 */
export async function walletMovements(pool: Pool, accountNumber: string): Promise<WalletMovement[]> {
  const { rows } = await pool.query<{
    reference: string
    session_id: string
    amount_kobo: number
    signed_kobo: string
    balance_after_kobo: string
    narration: string | null
    created_at: Date
    response_code: string
    payer_name: string | null
    payer_account_number: string | null
    payer_bank_code: string | null
  }>(
    `SELECT reference, session_id, amount_kobo, signed_kobo, sum(signed_kobo) OVER (ORDER BY created_at, session_id) AS balance_after_kobo, narration, created_at, response_code,
            payer_name, payer_account_number, payer_bank_code
       FROM (SELECT t.reference, t.session_id, t.amount_kobo, t.narration, t.created_at, t.response_code, t.payer_name, t.payer_account_number, t.payer_bank_code,
                    CASE WHEN t.credit_account_number = $1 THEN t.amount_kobo ELSE -t.amount_kobo END AS signed_kobo
               FROM sandbox_bank.transfers t
              WHERE (t.credit_account_number = $1 OR t.debit_account_number = $1)
                AND (t.response_code = '00' OR (t.response_code = '09' AND t.debit_account_number = $1))) moves
      ORDER BY created_at, session_id LIMIT ${WALLET_MOVEMENTS_MAX}`,
    [accountNumber],
  )
  return rows.map((row) => ({
    reference: row.reference,
    sessionId: row.session_id,
    amountKobo: row.amount_kobo,
    signedKobo: Number(row.signed_kobo),
    balanceAfterKobo: Number(row.balance_after_kobo),
    narration: row.narration,
    createdAt: row.created_at,
    responseCode: row.response_code,
    payerName: row.payer_name,
    payerAccountNumber: row.payer_account_number,
    payerBankCode: row.payer_bank_code,
  }))
}
