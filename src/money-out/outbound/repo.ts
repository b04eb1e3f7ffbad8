// SQL of outbound transfers.
import { camelColumns, rowReaders, type Queryable } from '../../platform/db.ts'
import { FINAL_STATES, outboundStates, type OutboundState } from './states.ts'

/**
 * Why Rail makes a payout: the partner's own (`partner`), a refund of a credit (`refund`), an
 * escrow's disbursement to its recipient (`escrow`), or a settlement of collections to the
 * partner's bank (`settlement`).
 */
export type OriginType = 'partner' | 'refund' | 'escrow' | 'settlement'
export const ORIGIN_TYPES: readonly OriginType[] = ['partner', 'refund', 'escrow', 'settlement']

export interface FailureReason {
  code: string
  message: string
  providerResponseCode?: string
}

export interface OutboundTransfer {
  id: string
  partnerId: string
  clientReference: string
  requestHash: string
  state: OutboundState
  consumerId: string | null
  provider: string
  brr: string | null
  providerSessionId: string | null
  providerResponseCode: string | null
  providerResponseMessage: string | null
  failureReason: FailureReason | null
  rail: Record<string, unknown> | null
  settlementAccountName: string | null
  beneficiaryAccountNumber: string
  beneficiaryBankCode: string
  beneficiaryAccountName: string
  amountKobo: number
  currency: string
  narration: string | null
  callbackUrl: string | null
  creatorMetadata: Record<string, unknown>
  holdTransferId: string | null
  /** The ledger account the amount is held from: the float, or suspense for a refund. */
  sourceAccountId: string | null
  /** Why Rail made it (OriginType); originId names the object behind it (null for the partner's own payout). */
  originType: OriginType
  originId: string | null
  /** The handle the partner knows the origin by (an escrow's ref, a refund's reference); null for the partner's own payout. */
  originReference: string | null
  createdAt: Date
  stateChangedAt: Date
  terminalAt: Date | null
}

const COLUMNS =
  camelColumns(`id, partner_id, client_reference, request_hash, state, consumer_id, provider, brr, provider_session_id, provider_response_code,
  provider_response_message, failure_reason, rail, settlement_account_name, beneficiary_account_number, beneficiary_bank_code, beneficiary_account_name,
  amount_kobo, currency, narration, callback_url, creator_metadata, hold_transfer_id, source_account_id, origin_type, origin_id, origin_reference, created_at, state_changed_at, terminal_at`)

const { one, all } = rowReaders((row: OutboundTransfer) => row)

export type NewOutboundTransfer = Pick<
  OutboundTransfer,
  | 'id'
  | 'partnerId'
  | 'clientReference'
  | 'requestHash'
  | 'consumerId'
  | 'provider'
  | 'brr'
  | 'beneficiaryAccountNumber'
  | 'beneficiaryBankCode'
  | 'beneficiaryAccountName'
  | 'amountKobo'
  | 'currency'
  | 'narration'
  | 'callbackUrl'
  | 'creatorMetadata'
  | 'holdTransferId'
  | 'sourceAccountId'
  | 'originType'
  | 'originId'
  | 'originReference'
>

/**
 * Inserts many transfers in one statement; answers those inserted (a taken clientReference is
 * skipped: read the existing one).
 */
export async function insertTransfers(
  db: Queryable,
  transfers: readonly NewOutboundTransfer[],
): Promise<OutboundTransfer[]> {
  const column = <T>(pick: (transfer: NewOutboundTransfer) => T) => transfers.map(pick)
  return all(
    db,
    `INSERT INTO outbound_transfers (id, partner_id, client_reference, request_hash, state, consumer_id, provider, brr, beneficiary_account_number,
                                     beneficiary_bank_code, beneficiary_account_name, amount_kobo, currency, narration, callback_url, creator_metadata,
                                     hold_transfer_id, source_account_id, origin_type, origin_id, origin_reference)
     SELECT id, partner_id, client_reference, request_hash, 'pending', consumer_id, provider, brr, beneficiary_account_number, beneficiary_bank_code,
            beneficiary_account_name, amount_kobo, currency, narration, callback_url, creator_metadata, hold_transfer_id, source_account_id, origin_type, origin_id,
            origin_reference
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::bigint[],
                   $12::text[], $13::text[], $14::text[], $15::jsonb[], $16::uuid[], $17::uuid[], $18::text[], $19::uuid[], $20::text[])
         AS t(id, partner_id, client_reference, request_hash, consumer_id, provider, brr, beneficiary_account_number, beneficiary_bank_code,
              beneficiary_account_name, amount_kobo, currency, narration, callback_url, creator_metadata, hold_transfer_id, source_account_id, origin_type, origin_id,
              origin_reference)
     ON CONFLICT (partner_id, client_reference) DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      column((transfer) => transfer.id),
      column((transfer) => transfer.partnerId),
      column((transfer) => transfer.clientReference),
      column((transfer) => transfer.requestHash),
      column((transfer) => transfer.consumerId),
      column((transfer) => transfer.provider),
      column((transfer) => transfer.brr),
      column((transfer) => transfer.beneficiaryAccountNumber),
      column((transfer) => transfer.beneficiaryBankCode),
      column((transfer) => transfer.beneficiaryAccountName),
      column((transfer) => transfer.amountKobo),
      column((transfer) => transfer.currency),
      column((transfer) => transfer.narration),
      column((transfer) => transfer.callbackUrl),
      column((transfer) => JSON.stringify(transfer.creatorMetadata)),
      column((transfer) => transfer.holdTransferId),
      column((transfer) => transfer.sourceAccountId),
      column((transfer) => transfer.originType),
      column((transfer) => transfer.originId),
      column((transfer) => transfer.originReference),
    ],
  )
}

export async function selectTransfer(db: Queryable, id: string): Promise<OutboundTransfer | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM outbound_transfers WHERE id = $1`, [id])
}

export async function selectPartnerTransfer(
  db: Queryable,
  partnerId: string,
  id: string,
): Promise<OutboundTransfer | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM outbound_transfers WHERE id = $1 AND partner_id = $2`, [id, partnerId])
}

export async function selectByReference(
  db: Queryable,
  partnerId: string,
  clientReference: string,
): Promise<OutboundTransfer | undefined> {
  return one(db, `SELECT ${COLUMNS} FROM outbound_transfers WHERE partner_id = $1 AND client_reference = $2`, [
    partnerId,
    clientReference,
  ])
}

export interface ListFilter {
  partnerId: string
  clientReference?: string
  state?: OutboundState
  originType?: OriginType
  beforeId?: string
  /** Created at or after this instant. */
  createdFrom?: Date
  /** Created before this instant. */
  createdBefore?: Date
  limit: number
}

/** Newest first. */
export async function selectTransfers(db: Queryable, filter: ListFilter): Promise<OutboundTransfer[]> {
  return all(
    db,
    `SELECT ${COLUMNS} FROM outbound_transfers
      WHERE partner_id = $1 AND ($2::text IS NULL OR client_reference = $2) AND ($3::text IS NULL OR state = $3) AND ($4::uuid IS NULL OR id < $4)
        AND ($6::text IS NULL OR origin_type = $6)
        AND ($7::timestamptz IS NULL OR created_at >= $7) AND ($8::timestamptz IS NULL OR created_at < $8)
      ORDER BY id DESC LIMIT $5`,
    [
      filter.partnerId,
      filter.clientReference ?? null,
      filter.state ?? null,
      filter.beforeId ?? null,
      filter.limit,
      filter.originType ?? null,
      filter.createdFrom ?? null,
      filter.createdBefore ?? null,
    ],
  )
}

/** What a provider said, recorded with a change of state. */
export interface ProviderAnswer {
  providerSessionId?: string | null
  providerResponseCode?: string | null
  providerResponseMessage?: string | null
  failureReason?: FailureReason | null
  rail?: Record<string, unknown> | null
  settlementAccountName?: string | null
}

/**
 * Moves a transfer to `next` at `at` (the caller's clock) if its state allows it (the transition
 * table, in SQL); a final state (FINAL_STATES) stamps its terminal moment. Returns the changed
 * transfer, or undefined when it was already elsewhere (a late or duplicate answer).
 */
export async function transition(
  db: Queryable,
  id: string,
  next: OutboundState,
  at: Date,
  answer: ProviderAnswer = {},
): Promise<OutboundTransfer | undefined> {
  return one(
    db,
    `UPDATE outbound_transfers
        SET state = $2,
            state_changed_at = $11,
            terminal_at = CASE WHEN $2 = ANY ($10::text[]) THEN $11::timestamptz ELSE NULL END,
            provider_session_id = coalesce($4, provider_session_id),
            provider_response_code = coalesce($5, provider_response_code),
            provider_response_message = coalesce($6, provider_response_message),
            failure_reason = coalesce($7::jsonb, failure_reason),
            rail = coalesce($8::jsonb, rail),
            settlement_account_name = coalesce($9, settlement_account_name)
      WHERE id = $1 AND state = ANY ($3::text[])
      RETURNING ${COLUMNS}`,
    [
      id,
      next,
      outboundStates.from(next),
      answer.providerSessionId ?? null,
      answer.providerResponseCode ?? null,
      answer.providerResponseMessage ?? null,
      answer.failureReason ? JSON.stringify(answer.failureReason) : null,
      answer.rail ? JSON.stringify(answer.rail) : null,
      answer.settlementAccountName ?? null,
      FINAL_STATES,
      at,
    ],
  )
}

/** One state a transfer has been in, and when it began. */
export interface StateMoment {
  state: OutboundState
  at: Date
}

/** Every state the transfer has been in, oldest first (kept by the database: migration 0045). */
export async function selectStateHistory(db: Queryable, id: string): Promise<StateMoment[]> {
  const { rows } = await db.query<{ state: OutboundState; at: Date }>(
    `SELECT state, at FROM outbound_transfer_states WHERE transfer_id = $1 ORDER BY seq`,
    [id],
  )
  return rows.map((row) => ({ state: row.state, at: row.at }))
}

/** A transfer refused for want of float holds nothing. */
export async function clearHold(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE outbound_transfers SET hold_transfer_id = NULL WHERE id = $1`, [id])
}

/** What the partner sent in a period: transfers created in it, and how many of them ended confirmed or failed. */
export interface OutboundVolume {
  count: number
  amountKobo: number
  confirmedCount: number
  confirmedKobo: number
  failedCount: number
}

export async function selectVolume(
  db: Queryable,
  partnerId: string,
  from: Date,
  before: Date,
): Promise<OutboundVolume> {
  const { rows } = await db.query<{
    count: number
    amount_kobo: string
    confirmed_count: number
    confirmed_kobo: string
    failed_count: number
  }>(
    `SELECT count(*)::int AS count, coalesce(sum(amount_kobo), 0)::text AS amount_kobo,
            (count(*) FILTER (WHERE state = 'confirmed'))::int AS confirmed_count,
            coalesce(sum(amount_kobo) FILTER (WHERE state = 'confirmed'), 0)::text AS confirmed_kobo,
            (count(*) FILTER (WHERE state = 'failed'))::int AS failed_count
       FROM outbound_transfers WHERE partner_id = $1 AND created_at >= $2 AND created_at < $3`,
    [partnerId, from, before],
  )
  const row = rows[0]!
  return {
    count: row.count,
    amountKobo: Number(row.amount_kobo),
    confirmedCount: row.confirmed_count,
    confirmedKobo: Number(row.confirmed_kobo),
    failedCount: row.failed_count,
  }
}

/** What a statement line shows of the payouts behind it: each one's origin, the partner's reference and its narration. */
export async function selectStatementFacts(
  db: Queryable,
  ids: readonly string[],
): Promise<{ id: string; originType: string; clientReference: string | null; narration: string | null }[]> {
  const { rows } = await db.query<{
    id: string
    origin_type: string
    client_reference: string | null
    narration: string | null
  }>(`SELECT id, origin_type, client_reference, narration FROM outbound_transfers WHERE id = ANY ($1::uuid[])`, [ids])
  return rows.map((row) => ({
    id: row.id,
    originType: row.origin_type,
    clientReference: row.client_reference,
    narration: row.narration,
  }))
}

/** The hold transfers of the partner's payouts in one currency that are not final yet (pending, submitted or unknown). */
export async function selectInFlightHoldIds(db: Queryable, partnerId: string, currency: string): Promise<string[]> {
  const { rows } = await db.query<{ hold_transfer_id: string }>(
    `SELECT hold_transfer_id FROM outbound_transfers
      WHERE partner_id = $1 AND currency = $2 AND state IN ('pending', 'submitted', 'unknown') AND hold_transfer_id IS NOT NULL`,
    [partnerId, currency],
  )
  return rows.map((row) => row.hold_transfer_id)
}
