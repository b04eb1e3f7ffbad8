// SQL of the wallets module; row ↔ object mapping lives here.
import { camelColumns, rowReaders, type Queryable } from '../platform/db.ts'

export interface Wallet {
  id: string
  partnerId: string
  customerReference: string
  name: string
  provider: string
  currency: string
  ledgerAccountId: string
  bankCode: string
  accountNumber: string
  requestHash: string
  createdAt: Date
}

const COLUMNS = camelColumns(
  'id, partner_id, customer_reference, name, provider, currency, ledger_account_id, bank_code, account_number, request_hash, created_at',
)

const { one, all } = rowReaders((row: Wallet) => row)

/** The new wallet, or undefined when the partner's customer reference has one already (a concurrent creation committed first). */
export async function insertWallet(db: Queryable, wallet: Omit<Wallet, 'createdAt'>): Promise<Wallet | undefined> {
  return one(
    db,
    `INSERT INTO wallets (id, partner_id, customer_reference, name, provider, currency, ledger_account_id, bank_code, account_number, request_hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT ON CONSTRAINT wallets_one_per_customer_reference DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      wallet.id,
      wallet.partnerId,
      wallet.customerReference,
      wallet.name,
      wallet.provider,
      wallet.currency,
      wallet.ledgerAccountId,
      wallet.bankCode,
      wallet.accountNumber,
      wallet.requestHash,
    ],
  )
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The partner's wallet; another partner's, or a handle that is no wallet id at all, is not found. */
export async function selectWallet(db: Queryable, partnerId: string, walletId: string): Promise<Wallet | undefined> {
  if (!UUID.test(walletId)) return undefined
  return one(db, `SELECT ${COLUMNS} FROM wallets WHERE id = $2 AND partner_id = $1`, [partnerId, walletId])
}

/** Wallets by id, whoever's they are (a claim batch checks each caller's own); ids that are no UUID match nothing. */
export async function selectWalletsByIds(db: Queryable, walletIds: readonly string[]): Promise<Wallet[]> {
  const ids = [...new Set(walletIds.filter((id) => UUID.test(id)))]
  if (ids.length === 0) return []
  return all(db, `SELECT ${COLUMNS} FROM wallets WHERE id = ANY ($1::uuid[])`, [ids])
}

export async function selectWalletByCustomerReference(
  db: Queryable,
  partnerId: string,
  customerReference: string,
): Promise<Wallet | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM wallets WHERE partner_id = $1 AND customer_reference = $2`, [
    partnerId,
    customerReference,
  ])
}

/**
 * The wallet an inbound credit was paid into: by the provider and the account number the bank
 * reported. The oldest, should a provider ever have given one number to two wallets.
 */
export async function selectWalletByAccountNumber(
  db: Queryable,
  provider: string,
  accountNumber: string,
): Promise<Wallet | undefined> {
  return one(
    db,
    `SELECT ${COLUMNS} FROM wallets WHERE provider = $1 AND account_number = $2 ORDER BY created_at, id LIMIT 1`,
    [provider, accountNumber],
  )
}

/** The partner's wallet with this account number (at any provider); another partner's is not found. */
export async function selectPartnerWalletByAccountNumber(
  db: Queryable,
  partnerId: string,
  accountNumber: string,
): Promise<Wallet | undefined> {
  return one(
    db,
    `SELECT ${COLUMNS} FROM wallets WHERE partner_id = $1 AND account_number = $2 ORDER BY created_at, id LIMIT 1`,
    [partnerId, accountNumber],
  )
}

export interface WalletListFilter {
  partnerId: string
  customerReference?: string
  /** Only wallets older than this one (the cursor: ids are UUIDv7, ordered by creation). */
  beforeId?: string
  limit: number
}

/** The partner's wallets, newest first. */
export async function selectWallets(db: Queryable, filter: WalletListFilter): Promise<Wallet[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM wallets
      WHERE partner_id = $1 AND ($2::text IS NULL OR customer_reference = $2) AND ($3::uuid IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [filter.partnerId, filter.customerReference ?? null, filter.beforeId ?? null, filter.limit],
  )
}

/** Wallets' account numbers in (provider, account number) order after `after`: the accounts a sweep asks the provider about. */
export async function selectAccountNumbersAfter(
  db: Queryable,
  after: { provider: string; accountNumber: string } | null,
  limit: number,
): Promise<{ provider: string; accountNumber: string }[]> {
  const result = await db.query<{ provider: string; account_number: string }>(
    `SELECT provider, account_number FROM wallets
      WHERE ($1::text IS NULL OR (provider, account_number) > ($1, $2))
      ORDER BY provider, account_number LIMIT $3`,
    [after?.provider ?? null, after?.accountNumber ?? null, limit],
  )
  return result.rows.map((row) => ({ provider: row.provider, accountNumber: row.account_number }))
}
