// SQL of virtual accounts: every NUBAN Rail allocated at a provider, whatever it collects for.
import { camelColumns, rowReaders, type Queryable } from '../../platform/db.ts'
import { virtualAccountStates, type VirtualAccountStatus } from './states.ts'

export type VirtualAccountPurpose = 'payment_intent' | 'persistent' | 'fbo'
export type { VirtualAccountStatus } from './states.ts'

/** What the partner said about the account's holder (persistent accounts and payment intents). */
export interface AccountHolder {
  name?: string
  firstName?: string
  lastName?: string
  email?: string
  phone?: string
}

export interface VirtualAccount {
  id: string
  partnerId: string
  trackingId: string
  purpose: VirtualAccountPurpose
  reference: string | null
  requestHash: string | null
  provider: string
  providerChannel: string
  providerReference: string
  bankCode: string
  accountNumber: string
  accountName: string
  currency: string
  purposeTag: string | null
  callbackUrl: string | null
  holder: AccountHolder | null
  holderRef: string | null
  brr: string | null
  status: VirtualAccountStatus
  creatorMetadata: Record<string, unknown>
  createdAt: Date
  archivedAt: Date | null
}

const COLUMNS =
  camelColumns(`id, partner_id, tracking_id, purpose, reference, request_hash, provider, provider_channel, provider_reference, bank_code, account_number,
  account_name, currency, purpose_tag, callback_url, holder, holder_ref, brr, status, creator_metadata, created_at, archived_at`)

const { one, all } = rowReaders((row: VirtualAccount) => row)

export type NewVirtualAccount = Omit<VirtualAccount, 'status' | 'createdAt' | 'archivedAt'>

/**
 * The new account, or undefined when one of its unique keys is taken — the partner's reference or
 * holder, or the NUBAN the provider allocated for them (a concurrent duplicate of the same request
 * is handed the same account): the claim of platform/idempotency.ts. Every unique key is an
 * arbiter, so a duplicate racing on any of them waits for the first and does nothing.
 */
export async function insertVirtualAccount(
  db: Queryable,
  account: NewVirtualAccount,
): Promise<VirtualAccount | undefined> {
  return one(
    db,
    `INSERT INTO virtual_accounts (id, partner_id, tracking_id, purpose, reference, request_hash, provider, provider_channel, provider_reference, bank_code,
                                   account_number, account_name, currency, purpose_tag, callback_url, holder, holder_ref, brr, creator_metadata)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
     ON CONFLICT DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      account.id,
      account.partnerId,
      account.trackingId,
      account.purpose,
      account.reference,
      account.requestHash,
      account.provider,
      account.providerChannel,
      account.providerReference,
      account.bankCode,
      account.accountNumber,
      account.accountName,
      account.currency,
      account.purposeTag,
      account.callbackUrl,
      account.holder === null ? null : JSON.stringify(account.holder),
      account.holderRef,
      account.brr,
      JSON.stringify(account.creatorMetadata),
    ],
  )
}

export async function selectById(db: Queryable, id: string): Promise<VirtualAccount | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM virtual_accounts WHERE id = $1`, [id])
}

/** The partner's account with this account number, of any purpose. */
export async function selectByPartnerAndNumber(
  db: Queryable,
  partnerId: string,
  accountNumber: string,
): Promise<VirtualAccount | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM virtual_accounts WHERE partner_id = $1 AND account_number = $2`, [
    partnerId,
    accountNumber,
  ])
}

/** The caller's account by tracking id, of the given purposes. */
export async function selectByTrackingId(
  db: Queryable,
  partnerId: string,
  trackingId: string,
  purposes: VirtualAccountPurpose[],
): Promise<VirtualAccount | undefined> {
  return one(
    db,
    `SELECT ${COLUMNS} FROM virtual_accounts WHERE partner_id = $1 AND tracking_id = $2 AND purpose = ANY ($3::text[])`,
    [partnerId, trackingId, purposes],
  )
}

export async function selectPersistentByReference(
  db: Queryable,
  partnerId: string,
  reference: string,
): Promise<VirtualAccount | undefined> {
  return one(
    db,
    `SELECT ${COLUMNS} FROM virtual_accounts WHERE partner_id = $1 AND purpose = 'persistent' AND reference = $2`,
    [partnerId, reference],
  )
}

export async function selectFboByHolder(
  db: Queryable,
  partnerId: string,
  holderRef: string,
  purposeTag: string | null,
): Promise<VirtualAccount | undefined> {
  return one(
    db,
    `SELECT ${COLUMNS} FROM virtual_accounts WHERE partner_id = $1 AND purpose = 'fbo' AND holder_ref = $2 AND coalesce(purpose_tag, '') = coalesce($3, '')`,
    [partnerId, holderRef, purposeTag],
  )
}

export async function selectByBrr(db: Queryable, partnerId: string, brr: string): Promise<VirtualAccount | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM virtual_accounts WHERE partner_id = $1 AND brr = $2`, [partnerId, brr])
}

/**
 * Locks the account a credit was paid into. Every path that changes an account and what it
 * collects for (credits, archiving, expiry, an invoice's cancel) locks the account first, so that
 * they serialise in one order and never deadlock.
 */
export async function lockByNumber(
  db: Queryable,
  provider: string,
  accountNumber: string,
): Promise<VirtualAccount | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM virtual_accounts WHERE provider = $1 AND account_number = $2 FOR UPDATE`, [
    provider,
    accountNumber,
  ])
}

/** Locks the accounts these credits were paid into, in id order (a batch of credits). */
export async function lockByNumbers(
  db: Queryable,
  keys: { provider: string; accountNumber: string }[],
): Promise<VirtualAccount[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM virtual_accounts
      WHERE (provider, account_number) IN (SELECT * FROM unnest($1::text[], $2::text[]))
      ORDER BY id FOR UPDATE`,
    [keys.map((key) => key.provider), keys.map((key) => key.accountNumber)],
  )
}

/**
 * Locks those of these accounts nobody holds right now and answers their ids, skipping the rest:
 * a sweep takes what is free (a credit may be applying to an account) and leaves the others to its
 * next run.
 */
export async function lockFreeByIds(db: Queryable, ids: readonly string[]): Promise<string[]> {
  const result = await db.query<{ id: string }>(
    `SELECT id FROM virtual_accounts WHERE id = ANY ($1::uuid[]) ORDER BY id FOR UPDATE SKIP LOCKED`,
    [ids],
  )
  return result.rows.map((row) => row.id)
}

/** The id of the partner's account with this tracking id, of any purpose, if any. */
export async function selectIdByTrackingId(
  db: Queryable,
  partnerId: string,
  trackingId: string,
): Promise<string | undefined> {
  const result = await db.query<{ id: string }>(
    `SELECT id FROM virtual_accounts WHERE partner_id = $1 AND tracking_id = $2`,
    [partnerId, trackingId],
  )
  return result.rows[0]?.id
}

export async function lockById(db: Queryable, id: string): Promise<VirtualAccount | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM virtual_accounts WHERE id = $1 FOR UPDATE`, [id])
}

/** Archives an active account at `at` (the caller's clock); undefined when it was archived already. */
export async function archive(db: Queryable, id: string, at: Date): Promise<VirtualAccount | undefined> {
  return one(
    db,
    `UPDATE virtual_accounts SET status = 'archived', archived_at = $3 WHERE id = $1 AND status = ANY ($2::text[]) RETURNING ${COLUMNS}`,
    [id, virtualAccountStates.from('archived'), at],
  )
}

export async function list(
  db: Queryable,
  query: {
    partnerId: string
    purpose: VirtualAccountPurpose
    status?: VirtualAccountStatus
    limit: number
    cursor?: string
  },
): Promise<VirtualAccount[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM virtual_accounts
      WHERE partner_id = $1 AND purpose = $2 AND ($3::text IS NULL OR status = $3) AND ($4::uuid IS NULL OR id < $4)
      ORDER BY id DESC LIMIT $5`,
    [query.partnerId, query.purpose, query.status ?? null, query.cursor ?? null, query.limit],
  )
}

/** An account a provider may be asked about by number: whose provider, which number. */
export interface ReceivingAccount {
  provider: string
  accountNumber: string
}

/**
 * The accounts that can receive money, in (provider, account number) order after `after`: every
 * active one, and those archived since `archivedSince` (the bank still takes payments into an
 * archived account; Rail triages them). Payment intents' accounts (an escrow's funding account
 * among them) are virtual accounts too. The unique (provider, account_number) index serves the order.
 */
export async function selectReceivingAfter(
  db: Queryable,
  after: ReceivingAccount | null,
  archivedSince: Date,
  limit: number,
): Promise<ReceivingAccount[]> {
  const result = await db.query<{ provider: string; account_number: string }>(
    `SELECT provider, account_number FROM virtual_accounts
      WHERE ($1::text IS NULL OR (provider, account_number) > ($1, $2))
        AND (status = 'active' OR archived_at >= $3)
      ORDER BY provider, account_number LIMIT $4`,
    [after?.provider ?? null, after?.accountNumber ?? null, archivedSince, limit],
  )
  return result.rows.map((row) => ({ provider: row.provider, accountNumber: row.account_number }))
}
