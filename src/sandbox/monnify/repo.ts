// The Monnify dialect's SQL: its own tables (db/migrations/0052_sandbox_monnify.sql) and the reads
// of the bank's books it answers from that the bank's service does not offer (a wallet's
// movements with running balances, the merchant's float). Each SELECT names its columns as the
// fields of the object it reads (AS "camelCase"), so that a row is the object: the mapping is there.
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

const DISBURSEMENT_COLUMNS = `reference, source_account_number AS "sourceAccountNumber", source_kind AS "sourceKind",
  amount_kobo AS "amountKobo", narration, destination_bank_code AS "destinationBankCode",
  destination_account_number AS "destinationAccountNumber", destination_account_name AS "destinationAccountName",
  created_at AS "createdAt", completed_at AS "completedAt"`

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
  const found = await db.query<Disbursement>(
    `SELECT ${DISBURSEMENT_COLUMNS} FROM sandbox_bank.monnify_disbursements WHERE reference = $1`,
    [reference],
  )
  return found.rows[0]
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

const WALLET_COLUMNS = `wallet_reference AS "walletReference", account_number AS "accountNumber", wallet_name AS "walletName",
  customer_name AS "customerName", customer_email AS "customerEmail", bvn, bvn_date_of_birth AS "bvnDateOfBirth",
  created_at AS "createdAt"`

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
  const found = await pool.query<Wallet>(
    `SELECT ${WALLET_COLUMNS} FROM sandbox_bank.monnify_wallets ORDER BY created_at DESC LIMIT ${WALLETS_LISTED_MAX}`,
  )
  return found.rows
}

export async function walletBy(
  db: Queryable,
  column: 'wallet_reference' | 'account_number',
  value: string,
): Promise<Wallet | undefined> {
  const found = await db.query<Wallet>(
    `SELECT ${WALLET_COLUMNS} FROM sandbox_bank.monnify_wallets WHERE ${column} = $1`,
    [value],
  )
  return found.rows[0]
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

const RESERVED_COLUMNS = `account_reference AS "accountReference", account_number AS "accountNumber",
  account_name AS "accountName", currency_code AS "currencyCode", contract_code AS "contractCode",
  customer_email AS "customerEmail", customer_name AS "customerName", created_at AS "createdAt",
  deallocated_at AS "deallocatedAt"`

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
  const found = await db.query<ReservedAccount>(
    `SELECT ${RESERVED_COLUMNS} FROM sandbox_bank.monnify_reserved_accounts WHERE ${column} = $1`,
    [value],
  )
  return found.rows[0]
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
  const { rows } = await pool.query<WalletMovement>(
    `SELECT reference, session_id AS "sessionId", amount_kobo AS "amountKobo", signed_kobo AS "signedKobo",
            (sum(signed_kobo) OVER (ORDER BY created_at, session_id))::bigint AS "balanceAfterKobo", narration,
            created_at AS "createdAt", response_code AS "responseCode", payer_name AS "payerName",
            payer_account_number AS "payerAccountNumber", payer_bank_code AS "payerBankCode"
       FROM (SELECT t.reference, t.session_id, t.amount_kobo, t.narration, t.created_at, t.response_code, t.payer_name, t.payer_account_number, t.payer_bank_code,
                    CASE WHEN t.credit_account_number = $1 THEN t.amount_kobo ELSE -t.amount_kobo END AS signed_kobo
               FROM sandbox_bank.transfers t
              WHERE (t.credit_account_number = $1 OR t.debit_account_number = $1)
                AND (t.response_code = '00' OR (t.response_code = '09' AND t.debit_account_number = $1))) moves
      ORDER BY created_at, session_id LIMIT ${WALLET_MOVEMENTS_MAX}`,
    [accountNumber],
  )
  return rows
}
