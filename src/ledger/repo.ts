// SQL of the ledger. Writes to ledger tables happen here only, and transfers only through the
// database function ledger_create_transfers() (db/migrations/0003_ledger_functions.sql).
import type { Queryable } from '../platform/db.ts'
import type {
  AccountBalance,
  AccountKind,
  AccountStatus,
  TransferInput,
  TransferPhase,
  TransferResultCode,
} from './types.ts'

export interface NewAccount {
  id: string
  partnerId: string | null
  currency: string
  kind: AccountKind
  debitsMustNotExceedCredits: boolean
  creditsMustNotExceedDebits: boolean
}

const INSERT_ACCOUNT = `INSERT INTO ledger_accounts (id, partner_id, currency, kind, debits_must_not_exceed_credits, credits_must_not_exceed_debits)
     VALUES ($1, $2, $3, $4, $5, $6)`

function accountParams(account: NewAccount): unknown[] {
  const { id, partnerId, currency, kind, debitsMustNotExceedCredits, creditsMustNotExceedDebits } = account
  return [id, partnerId, currency, kind, debitsMustNotExceedCredits, creditsMustNotExceedDebits]
}

export async function insertAccount(db: Queryable, account: NewAccount): Promise<void> {
  await db.query(INSERT_ACCOUNT, accountParams(account))
}

/**
 * The partner's account of a singleton kind: found on every use after the first, so it is looked
 * up first and inserted only when missing (a concurrent first use loses the insert harmlessly).
 */
export async function upsertPartnerAccount(db: Queryable, account: NewAccount): Promise<string> {
  const find = async () =>
    (
      await db.query<{ id: string }>(
        `SELECT id FROM ledger_accounts WHERE partner_id = $1 AND currency = $2 AND kind = $3`,
        [account.partnerId, account.currency, account.kind],
      )
    ).rows[0]?.id
  const existing = await find()
  if (existing) return existing
  await db.query(
    `${INSERT_ACCOUNT}
     ON CONFLICT (partner_id, currency, kind) WHERE kind IN ('float', 'collections', 'escrow_holding', 'provider_settlement', 'suspense', 'fees')
     DO NOTHING`,
    accountParams(account),
  )
  return (await find())!
}

/** The account's status before the change, or undefined when there is no such account. A closed account is left as it is. */
export async function updateAccountStatus(
  db: Queryable,
  accountId: string,
  status: AccountStatus,
): Promise<AccountStatus | undefined> {
  const { rows } = await db.query<{ previous: AccountStatus }>(
    `WITH was AS (SELECT id, status FROM ledger_accounts WHERE id = $1 FOR NO KEY UPDATE),
          changed AS (UPDATE ledger_accounts a SET status = $2 FROM was WHERE a.id = was.id AND was.status <> 'closed' RETURNING a.id)
     SELECT status AS previous FROM was`,
    [accountId, status],
  )
  return rows[0]?.previous
}

/** Locks the account's row as a transfer on it does (FOR NO KEY UPDATE), until the transaction ends. */
export async function lockAccount(db: Queryable, accountId: string): Promise<void> {
  await db.query(`SELECT 1 FROM ledger_accounts WHERE id = $1 FOR NO KEY UPDATE`, [accountId])
}

/**
 * How many more kobo each account can be credited before its lifetime credits (posted and
 * pending) leave JavaScript's safe integers — 0 when they are there already. Computed and clamped
 * in SQL, so that an account past the range is read without a number that cannot be held.
 */
export async function selectCreditRoom(db: Queryable, accountIds: readonly string[]): Promise<Map<string, number>> {
  const result = await db.query<{ id: string; room_kobo: string }>(
    `SELECT id, GREATEST(0, 9007199254740991 - credits_posted - credits_pending)::text AS room_kobo
       FROM ledger_accounts WHERE id = ANY ($1::uuid[])`,
    [accountIds],
  )
  return new Map(result.rows.map((row) => [row.id, Number(row.room_kobo)]))
}

export interface AvailableAccount {
  partnerId: string
  currency: string
  accountId: string
  availableKobo: number
}

/**
 * Partners' collections accounts with money available (posted, less pending debits), at most
 * `limit`: every partner's but the excluded ones', or one partner's.
 */
export async function selectCollectionsWithAvailable(
  db: Queryable,
  limit: number,
  excludedPartnerIds: readonly string[],
  partnerId: string | null,
): Promise<AvailableAccount[]> {
  const { rows } = await db.query<{ partner_id: string; currency: string; id: string; available: string }>(
    `SELECT partner_id, currency, id, credits_posted - debits_posted - debits_pending AS available
       FROM ledger_accounts
      WHERE kind = 'collections' AND partner_id <> ALL ($3::uuid[])
        AND credits_posted - debits_posted - debits_pending > 0
        AND ($2::uuid IS NULL OR partner_id = $2)
      LIMIT $1`,
    [limit, partnerId, excludedPartnerIds],
  )
  return rows.map((row) => ({
    partnerId: row.partner_id,
    currency: row.currency,
    accountId: row.id,
    availableKobo: Number(row.available),
  }))
}

export async function selectTransferExists(db: Queryable, transferId: string): Promise<boolean> {
  const result = await db.query(`SELECT 1 FROM ledger_transfers WHERE id = $1`, [transferId])
  return (result.rowCount ?? 0) > 0
}

interface AccountRow {
  id: string
  currency: string
  kind: AccountKind
  status: AccountStatus
  debits_pending: number
  debits_posted: number
  credits_pending: number
  credits_posted: number
}

export async function selectBalances(db: Queryable, accountIds: string[]): Promise<AccountBalance[]> {
  const result = await db.query<AccountRow>(
    `SELECT id, currency, kind, status, debits_pending, debits_posted, credits_pending, credits_posted
       FROM ledger_accounts WHERE id = ANY ($1::uuid[])`,
    [accountIds],
  )
  return result.rows.map((row) => ({
    accountId: row.id,
    currency: row.currency,
    kind: row.kind,
    status: row.status,
    debitsPendingKobo: row.debits_pending,
    debitsPostedKobo: row.debits_posted,
    creditsPendingKobo: row.credits_pending,
    creditsPostedKobo: row.credits_posted,
    bookedKobo: row.credits_posted - row.debits_posted,
    availableKobo: row.credits_posted - row.debits_posted - row.debits_pending,
  }))
}

/**
 * One round trip for the whole batch; the function returns one result code per transfer.
 * `linkedWithNext[i]` chains transfer i to the next (a chain succeeds or fails as a whole).
 */
export async function callCreateTransfers(
  db: Queryable,
  transfers: readonly TransferInput[],
  linkedWithNext: readonly boolean[],
): Promise<TransferResultCode[]> {
  const column = <T>(pick: (transfer: TransferInput) => T | undefined) =>
    transfers.map((transfer) => pick(transfer) ?? null)
  const result = await db.query<{ results: TransferResultCode[] }>(
    `SELECT ledger_create_transfers($1::uuid[], $2::uuid[], $3::uuid[], $4::bigint[], $5::text[], $6::text[],
                                    $7::uuid[], $8::text[], $9::int[], $10::text[], $11::text[], $12::boolean[]) AS results`,
    [
      column((t) => t.id),
      column((t) => t.debitAccountId),
      column((t) => t.creditAccountId),
      column((t) => t.amountKobo),
      column((t) => t.currency),
      column((t): TransferPhase => t.phase ?? 'single'),
      column((t) => t.pendingId),
      column((t) => t.code),
      column((t) => t.timeoutS),
      column((t) => t.sourceType),
      column((t) => t.sourceId),
      linkedWithNext,
    ],
  )
  return result.rows[0]!.results
}

export interface StatementRow {
  transferId: string
  sequence: number
  phase: TransferPhase
  code: string
  /** Positive when the account was credited, negative when debited. */
  amountKobo: number
  counterpartyAccountId: string
  pendingId: string | null
  sourceType: string | null
  sourceId: string | null
  bookedAfterKobo: number
  availableAfterKobo: number
  createdAt: Date
}

/** Transfers touching an account, oldest first, after the given sequence (the cursor). */
export async function selectStatement(
  db: Queryable,
  accountId: string,
  afterSequence: number,
  limit: number,
): Promise<StatementRow[]> {
  const result = await db.query<{
    id: string
    sequence: number
    phase: TransferPhase
    code: string
    amount_kobo: number
    is_debit: boolean
    counterparty: string
    pending_id: string | null
    source_type: string | null
    source_id: string | null
    booked_after: number
    available_after: number
    created_at: Date
  }>(
    `SELECT * FROM (
       SELECT id, sequence, phase, code, amount_kobo, true AS is_debit, credit_account_id AS counterparty, pending_id, source_type, source_id,
              debit_booked_after AS booked_after, debit_available_after AS available_after, created_at
         FROM ledger_transfers WHERE debit_account_id = $1 AND sequence > $2
       UNION ALL
       SELECT id, sequence, phase, code, amount_kobo, false, debit_account_id, pending_id, source_type, source_id,
              credit_booked_after, credit_available_after, created_at
         FROM ledger_transfers WHERE credit_account_id = $1 AND sequence > $2
     ) entries ORDER BY sequence LIMIT $3`,
    [accountId, afterSequence, limit],
  )
  return result.rows.map((row) => ({
    transferId: row.id,
    sequence: row.sequence,
    phase: row.phase,
    code: row.code,
    amountKobo: row.is_debit ? -row.amount_kobo : row.amount_kobo,
    counterpartyAccountId: row.counterparty,
    pendingId: row.pending_id,
    sourceType: row.source_type,
    sourceId: row.source_id,
    bookedAfterKobo: row.booked_after,
    availableAfterKobo: row.available_after,
    createdAt: row.created_at,
  }))
}

/**
 * Pending transfers past their timeout and not yet resolved, oldest first. timeout_at is the
 * database's clock both ways: ledger_create_transfers() writes it as now() plus the timeout
 * and judges it by now(), so the sweep does too (no application clock reaches the ledger's SQL).
 */
export async function selectTimedOutPendingIds(db: Queryable, limit: number): Promise<string[]> {
  const result = await db.query<{ transfer_id: string }>(
    `SELECT transfer_id FROM ledger_pending_transfers
      WHERE status = 'pending' AND timeout_at <= now()
      ORDER BY timeout_at LIMIT $1`,
    [limit],
  )
  return result.rows.map((row) => row.transfer_id)
}
