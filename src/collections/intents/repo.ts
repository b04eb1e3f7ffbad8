// SQL of payment intents.
import { camelColumns, rowReaders, type Queryable } from '../../platform/db.ts'
import type { AccountHolder } from '../virtual-accounts/service.ts'
import { intentStates, type IntentStatus } from './states.ts'

export type { IntentStatus } from './states.ts'
export type IntentOwnerType = 'invoice' | 'escrow'

export interface PaymentIntent {
  id: string
  partnerId: string
  reference: string
  requestHash: string
  virtualAccountId: string
  status: IntentStatus
  amountKobo: number | null
  amountReceivedKobo: number
  currency: string
  expiresAt: Date
  checkoutToken: string
  merchantDisplayName: string
  returnUrl: string | null
  callbackUrl: string | null
  purposeTag: string | null
  holder: AccountHolder | null
  ownerType: IntentOwnerType | null
  ownerId: string | null
  creatorMetadata: Record<string, unknown>
  createdAt: Date
  statusChangedAt: Date
  paidAt: Date | null
}

const COLUMNS =
  camelColumns(`id, partner_id, reference, request_hash, virtual_account_id, status, amount_kobo, amount_received_kobo, currency, expires_at, checkout_token,
  merchant_display_name, return_url, callback_url, purpose_tag, holder, owner_type, owner_id, creator_metadata, created_at, status_changed_at, paid_at`)

const { one, all } = rowReaders((row: PaymentIntent) => row)

export type NewIntent = Omit<
  PaymentIntent,
  'status' | 'amountReceivedKobo' | 'createdAt' | 'statusChangedAt' | 'paidAt'
>

export async function insertIntent(db: Queryable, intent: NewIntent): Promise<PaymentIntent> {
  const result = await db.query<PaymentIntent>(
    `INSERT INTO payment_intents (id, partner_id, reference, request_hash, virtual_account_id, status, amount_kobo, currency, expires_at, checkout_token,
                                  merchant_display_name, return_url, callback_url, purpose_tag, holder, owner_type, owner_id, creator_metadata)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
     RETURNING ${COLUMNS}`,
    [
      intent.id,
      intent.partnerId,
      intent.reference,
      intent.requestHash,
      intent.virtualAccountId,
      intent.amountKobo,
      intent.currency,
      intent.expiresAt,
      intent.checkoutToken,
      intent.merchantDisplayName,
      intent.returnUrl,
      intent.callbackUrl,
      intent.purposeTag,
      intent.holder === null ? null : JSON.stringify(intent.holder),
      intent.ownerType,
      intent.ownerId,
      JSON.stringify(intent.creatorMetadata),
    ],
  )
  return result.rows[0]!
}

export async function selectByReference(
  db: Queryable,
  partnerId: string,
  reference: string,
): Promise<PaymentIntent | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM payment_intents WHERE partner_id = $1 AND reference = $2`, [
    partnerId,
    reference,
  ])
}

export async function selectByCheckoutToken(db: Queryable, token: string): Promise<PaymentIntent | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM payment_intents WHERE checkout_token = $1`, [token])
}

export async function selectById(db: Queryable, id: string): Promise<PaymentIntent | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM payment_intents WHERE id = $1`, [id])
}

/**
 * The caller's intent by id, tracking id or reference, in that order. `trackedAccountId`: the
 * account whose tracking id the key is, if any (virtual accounts own tracking ids).
 */
export async function selectByKey(
  db: Queryable,
  partnerId: string,
  key: string,
  trackedAccountId: string | null,
): Promise<PaymentIntent | undefined> {
  return one(
    db,
    `SELECT ${COLUMNS}
       FROM payment_intents
      WHERE partner_id = $1 AND (id::text = $2 OR virtual_account_id = $3::uuid OR reference = $2)
      ORDER BY (id::text = $2) DESC, (virtual_account_id = $3::uuid) IS TRUE DESC
      LIMIT 1`,
    [partnerId, key, trackedAccountId],
  )
}

export async function lockByAccount(db: Queryable, virtualAccountId: string): Promise<PaymentIntent | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM payment_intents WHERE virtual_account_id = $1 FOR UPDATE`, [virtualAccountId])
}

export async function lockByAccounts(db: Queryable, virtualAccountIds: string[]): Promise<PaymentIntent[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM payment_intents WHERE virtual_account_id = ANY ($1::uuid[]) ORDER BY id FOR UPDATE`,
    [virtualAccountIds],
  )
}

/** Writes what credits made of an intent (the caller holds its lock and computed the values). */
export async function saveReceived(db: Queryable, intent: PaymentIntent): Promise<void> {
  await db.query(
    `UPDATE payment_intents SET amount_received_kobo = $2, status = $3, status_changed_at = $4, paid_at = $5 WHERE id = $1`,
    [intent.id, intent.amountReceivedKobo, intent.status, intent.statusChangedAt, intent.paidAt],
  )
}

/** Adds a received amount and sets the status it leads to, stamped `at` (the caller holds the intent's lock). */
export async function recordReceived(
  db: Queryable,
  id: string,
  amountKobo: number,
  status: IntentStatus,
  at: Date,
): Promise<PaymentIntent> {
  const result = await db.query<PaymentIntent>(
    `UPDATE payment_intents
        SET amount_received_kobo = amount_received_kobo + $2,
            status = $3,
            status_changed_at = CASE WHEN status = $3 THEN status_changed_at ELSE $4 END,
            paid_at = CASE WHEN $3 IN ('paid', 'overpaid') THEN coalesce(paid_at, $4) ELSE paid_at END
      WHERE id = $1
      RETURNING ${COLUMNS}`,
    [id, amountKobo, status, at],
  )
  return result.rows[0]!
}

/**
 * The accounts of open stand-alone intents past their expiry, soonest expiry first, at most
 * `limit`: the expiry sweep's candidates, whose accounts it locks before their intents change.
 * `furthestOffsetS`: how far the furthest sandbox clock is ahead (no partner's time is later than
 * `now` plus it).
 */
export async function selectDueAccounts(
  db: Queryable,
  now: Date,
  furthestOffsetS: number,
  limit: number,
): Promise<string[]> {
  const result = await db.query<{ virtual_account_id: string }>(
    `SELECT virtual_account_id FROM payment_intents
      WHERE status = ANY ($3::text[]) AND expires_at <= partner_now(partner_id, $2) AND owner_type IS NULL
        -- A constant bound (no partner's time is later), so the expiry index is scanned as a range.
        AND expires_at <= $2::timestamptz + make_interval(secs => $4::bigint)
      ORDER BY expires_at LIMIT $1`,
    [limit, now, intentStates.from('expired'), furthestOffsetS],
  )
  return result.rows.map((row) => row.virtual_account_id)
}

/** Expires the intents of these accounts that are still open and due (the caller holds the accounts' locks); answers them. */
export async function expireOfAccounts(
  db: Queryable,
  virtualAccountIds: readonly string[],
  now: Date,
): Promise<{ intentId: string; virtualAccountId: string }[]> {
  const result = await db.query<{ intent_id: string; virtual_account_id: string }>(
    `UPDATE payment_intents SET status = 'expired', status_changed_at = $2
      WHERE virtual_account_id = ANY ($1::uuid[]) AND status = ANY ($3::text[]) AND expires_at <= partner_now(partner_id, $2)
      RETURNING id AS intent_id, virtual_account_id`,
    [virtualAccountIds, now, intentStates.from('expired')],
  )
  return result.rows.map((row) => ({ intentId: row.intent_id, virtualAccountId: row.virtual_account_id }))
}

/** Who composed the payment intent of a virtual account (an invoice, an escrow), if anyone. */
export async function selectOwnerTypeByAccount(
  db: Queryable,
  virtualAccountId: string,
): Promise<IntentOwnerType | null> {
  const result = await db.query<{ owner_type: IntentOwnerType | null }>(
    `SELECT owner_type FROM payment_intents WHERE virtual_account_id = $1`,
    [virtualAccountId],
  )
  return result.rows[0]?.owner_type ?? null
}

/** The virtual account of one of the partner's payment intents. */
export async function selectAccountIdOfIntent(
  db: Queryable,
  partnerId: string,
  id: string,
): Promise<string | undefined> {
  const result = await db.query<{ virtual_account_id: string }>(
    `SELECT virtual_account_id FROM payment_intents WHERE partner_id = $1 AND id = $2`,
    [partnerId, id],
  )
  return result.rows[0]?.virtual_account_id
}

/**
 * The partner's own intents, newest first. An intent an invoice or escrow made to collect its
 * payment is part of that object and is read through it: its own status says nothing of the
 * owner's (a cancelled invoice's intent is not cancelled), so it is not listed.
 */
export async function list(
  db: Queryable,
  query: { partnerId: string; status?: IntentStatus; limit: number; cursor?: string },
): Promise<PaymentIntent[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM payment_intents
      WHERE partner_id = $1 AND owner_type IS NULL AND ($2::text IS NULL OR status = $2) AND ($3::uuid IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [query.partnerId, query.status ?? null, query.cursor ?? null, query.limit],
  )
}
