// Settlement rows: each partner's configuration, the settlements of bank cycles with their
// reports, and the queue of credits waiting for a bank cycle.
import { rowReaders, type Queryable } from '../platform/db.ts'
import { settlementStates, type SettlementMode, type SettlementState } from './states.ts'

export const DEFAULT_CUTOFF = '17:00'

export interface SettlementSettings {
  partnerId: string
  mode: SettlementMode
  bankAccount: {
    bankCode: string
    accountNumber: string
    accountName: string
    verifiedAccountName: string | null
  } | null
  cutoffTime: string
  bankSince: Date | null
  updatedAt: Date | null
}

interface SettingsRow {
  partner_id: string
  mode: SettlementMode
  bank_code: string | null
  account_number: string | null
  account_name: string | null
  verified_account_name: string | null
  cutoff_time: string
  bank_since: Date | null
  updated_at: Date
}

function toSettings(row: SettingsRow): SettlementSettings {
  return {
    partnerId: row.partner_id,
    mode: row.mode,
    bankAccount:
      row.bank_code && row.account_number && row.account_name
        ? {
            bankCode: row.bank_code,
            accountNumber: row.account_number,
            accountName: row.account_name,
            verifiedAccountName: row.verified_account_name,
          }
        : null,
    cutoffTime: row.cutoff_time,
    bankSince: row.bank_since,
    updatedAt: row.updated_at,
  }
}

const settingsRows = rowReaders(toSettings)

/** The settings a partner without a row has: float, the default cut-off. */
export function defaultSettings(partnerId: string): SettlementSettings {
  return { partnerId, mode: 'float', bankAccount: null, cutoffTime: DEFAULT_CUTOFF, bankSince: null, updatedAt: null }
}

export async function selectSettings(db: Queryable, partnerId: string): Promise<SettlementSettings | undefined> {
  return settingsRows.one(db, `SELECT * FROM settlement_settings WHERE partner_id = $1`, [partnerId])
}

/** The partner's row, made with the defaults if missing, locked for a change. */
export async function lockSettings(db: Queryable, partnerId: string): Promise<SettlementSettings> {
  await db.query(`INSERT INTO settlement_settings (partner_id) VALUES ($1) ON CONFLICT DO NOTHING`, [partnerId])
  const { rows } = await db.query<SettingsRow>(`SELECT * FROM settlement_settings WHERE partner_id = $1 FOR UPDATE`, [
    partnerId,
  ])
  return toSettings(rows[0]!)
}

/**
 * The modes of these partners (no row: float). Read without a lock: a credit applied while its
 * partner changes mode settles by either mode, and both end right — one queued after a switch to
 * float is swept to the float by the next run (sweepFloatLeftovers), one moved to the float after
 * a switch to bank is the float's. Taking no lock here keeps credits out of the settings rows'
 * lock order (a cycle locks its settings row, then collections).
 */
export async function modes(db: Queryable, partnerIds: readonly string[]): Promise<Map<string, SettlementMode>> {
  const { rows } = await db.query<{ partner_id: string; mode: SettlementMode }>(
    `SELECT partner_id, mode FROM settlement_settings WHERE partner_id = ANY ($1::uuid[])`,
    [partnerIds],
  )
  return new Map(rows.map((row) => [row.partner_id, row.mode]))
}

export async function updateSettings(
  db: Queryable,
  partnerId: string,
  values: Omit<SettlementSettings, 'partnerId' | 'updatedAt'>,
): Promise<SettlementSettings> {
  const { rows } = await db.query<SettingsRow>(
    `UPDATE settlement_settings
        SET mode = $2, bank_code = $3, account_number = $4, account_name = $5, verified_account_name = $6, cutoff_time = $7, bank_since = $8,
            updated_at = now()
      WHERE partner_id = $1
      RETURNING *`,
    [
      partnerId,
      values.mode,
      values.bankAccount?.bankCode ?? null,
      values.bankAccount?.accountNumber ?? null,
      values.bankAccount?.accountName ?? null,
      values.bankAccount?.verifiedAccountName ?? null,
      values.cutoffTime,
      values.bankSince,
    ],
  )
  return toSettings(rows[0]!)
}

/** Every partner settling to a bank account, with its cut-off. */
export async function selectBankModePartners(db: Queryable): Promise<SettlementSettings[]> {
  return settingsRows.all(db, `SELECT * FROM settlement_settings WHERE mode = 'bank' ORDER BY partner_id`)
}

// ---- the queue of credits waiting for a bank cycle ---------------------------------------------

export interface QueuedCredit {
  creditId: string
  partnerId: string
  currency: string
  amountKobo: number
}

export async function enqueue(db: Queryable, credits: readonly QueuedCredit[]): Promise<void> {
  if (credits.length === 0) return
  await db.query(
    `INSERT INTO settlement_queue (credit_id, partner_id, currency, amount_kobo)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bigint[])
     ON CONFLICT (credit_id) DO NOTHING`,
    [
      credits.map((credit) => credit.creditId),
      credits.map((credit) => credit.partnerId),
      credits.map((credit) => credit.currency),
      credits.map((credit) => credit.amountKobo),
    ],
  )
}

/** The partner's credits waiting for a cycle (in no settlement), oldest first, locked for the cycle taking some of them. */
export async function lockWaiting(
  db: Queryable,
  partnerId: string,
  currency: string,
): Promise<{ creditId: string; amountKobo: number; collectedAt: Date }[]> {
  const { rows } = await db.query<{ credit_id: string; amount_kobo: string; collected_at: Date }>(
    `SELECT credit_id, amount_kobo, collected_at FROM settlement_queue
      WHERE partner_id = $1 AND currency = $2 AND settlement_id IS NULL
      ORDER BY collected_at, credit_id FOR UPDATE`,
    [partnerId, currency],
  )
  return rows.map((row) => ({
    creditId: row.credit_id,
    amountKobo: Number(row.amount_kobo),
    collectedAt: row.collected_at,
  }))
}

/** A float-mode partner's waiting credits are no longer waited for: their money is swept to the float. */
export async function forgetWaiting(db: Queryable, partnerId: string, currency: string): Promise<void> {
  await db.query(`DELETE FROM settlement_queue WHERE partner_id = $1 AND currency = $2 AND settlement_id IS NULL`, [
    partnerId,
    currency,
  ])
}

// ---- settlements -------------------------------------------------------------------------------

export interface Settlement {
  id: string
  partnerId: string
  currency: string
  cycle: string
  cutoffAt: Date
  state: SettlementState
  amountKobo: number
  creditsTotalKobo: number
  creditCount: number
  destination: { bankCode: string; accountNumber: string; accountName: string }
  outboundTransferId: string | null
  failureReason: { code: string; message: string } | null
  createdAt: Date
  stateChangedAt: Date
}

interface SettlementRow {
  id: string
  partner_id: string
  currency: string
  cycle: string
  cutoff_at: Date
  state: SettlementState
  amount_kobo: string
  credits_total_kobo: string
  credit_count: number
  bank_code: string
  account_number: string
  account_name: string
  outbound_transfer_id: string | null
  failure_reason: { code: string; message: string } | null
  created_at: Date
  state_changed_at: Date
}

function toSettlement(row: SettlementRow): Settlement {
  return {
    id: row.id,
    partnerId: row.partner_id,
    currency: row.currency,
    cycle: row.cycle,
    cutoffAt: row.cutoff_at,
    state: row.state,
    amountKobo: Number(row.amount_kobo),
    creditsTotalKobo: Number(row.credits_total_kobo),
    creditCount: row.credit_count,
    destination: { bankCode: row.bank_code, accountNumber: row.account_number, accountName: row.account_name },
    outboundTransferId: row.outbound_transfer_id,
    failureReason: row.failure_reason,
    createdAt: row.created_at,
    stateChangedAt: row.state_changed_at,
  }
}

const settlementRows = rowReaders(toSettlement)

export type NewSettlement = Omit<
  Settlement,
  'state' | 'outboundTransferId' | 'failureReason' | 'createdAt' | 'stateChangedAt'
>

/** Inserts the cycle's settlement; undefined when the cycle has one already (the unique key). */
export async function insertSettlement(db: Queryable, settlement: NewSettlement): Promise<Settlement | undefined> {
  return settlementRows.one(
    db,
    `INSERT INTO settlements (id, partner_id, currency, cycle, cutoff_at, state, amount_kobo, credits_total_kobo, credit_count, bank_code, account_number, account_name)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, $10, $11)
     ON CONFLICT (partner_id, currency, cycle) DO NOTHING
     RETURNING *`,
    [
      settlement.id,
      settlement.partnerId,
      settlement.currency,
      settlement.cycle,
      settlement.cutoffAt,
      settlement.amountKobo,
      settlement.creditsTotalKobo,
      settlement.creditCount,
      settlement.destination.bankCode,
      settlement.destination.accountNumber,
      settlement.destination.accountName,
    ],
  )
}

/** The credits a settlement takes: its report, and the queue rows now paid by it. */
export async function attachCredits(
  db: Queryable,
  settlementId: string,
  credits: readonly { creditId: string; amountKobo: number; collectedAt: Date }[],
): Promise<void> {
  if (credits.length === 0) return
  const ids = credits.map((credit) => credit.creditId)
  await db.query(
    `INSERT INTO settlement_credits (settlement_id, credit_id, amount_kobo, collected_at)
     SELECT $1, * FROM unnest($2::uuid[], $3::bigint[], $4::timestamptz[])`,
    [settlementId, ids, credits.map((credit) => credit.amountKobo), credits.map((credit) => credit.collectedAt)],
  )
  await db.query(`UPDATE settlement_queue SET settlement_id = $1 WHERE credit_id = ANY ($2::uuid[])`, [
    settlementId,
    ids,
  ])
}

export async function setOutboundTransfer(
  db: Queryable,
  settlementId: string,
  transferId: string,
): Promise<Settlement> {
  const { rows } = await db.query<SettlementRow>(
    `UPDATE settlements SET outbound_transfer_id = $2 WHERE id = $1 RETURNING *`,
    [settlementId, transferId],
  )
  return toSettlement(rows[0]!)
}

/** Moves a settlement to `next` at `at` (the caller's clock) if it may (the transition table); undefined when it had moved on. */
export async function transition(
  db: Queryable,
  settlementId: string,
  next: SettlementState,
  at: Date,
  failureReason: Settlement['failureReason'] = null,
): Promise<Settlement | undefined> {
  return settlementRows.one(
    db,
    `UPDATE settlements SET state = $2, failure_reason = $3, state_changed_at = $5
      WHERE id = $1 AND state = ANY ($4::text[])
      RETURNING *`,
    [
      settlementId,
      next,
      failureReason === null ? null : JSON.stringify(failureReason),
      settlementStates.from(next),
      at,
    ],
  )
}

/** A failed settlement gives its credits back to the queue: the next cycle takes them. */
export async function releaseCredits(db: Queryable, settlementId: string): Promise<void> {
  await db.query(`UPDATE settlement_queue SET settlement_id = NULL WHERE settlement_id = $1`, [settlementId])
}

export async function selectByCycle(
  db: Queryable,
  partnerId: string,
  currency: string,
  cycle: string,
): Promise<Settlement | undefined> {
  return settlementRows.one(db, `SELECT * FROM settlements WHERE partner_id = $1 AND currency = $2 AND cycle = $3`, [
    partnerId,
    currency,
    cycle,
  ])
}

export async function selectPartnerSettlement(
  db: Queryable,
  partnerId: string,
  id: string,
): Promise<Settlement | undefined> {
  return settlementRows.one(db, `SELECT * FROM settlements WHERE partner_id = $1 AND id = $2`, [partnerId, id])
}

export async function selectSettlements(
  db: Queryable,
  filter: { partnerId: string; state?: SettlementState; beforeId?: string; limit: number },
): Promise<Settlement[]> {
  return settlementRows.all(
    db,
    `SELECT * FROM settlements
      WHERE partner_id = $1 AND ($2::text IS NULL OR state = $2) AND ($3::uuid IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [filter.partnerId, filter.state ?? null, filter.beforeId ?? null, filter.limit],
  )
}

export async function selectReport(
  db: Queryable,
  settlementId: string,
  limit: number,
): Promise<{ creditId: string; amountKobo: number; collectedAt: Date }[]> {
  const { rows } = await db.query<{ credit_id: string; amount_kobo: string; collected_at: Date }>(
    `SELECT credit_id, amount_kobo, collected_at FROM settlement_credits WHERE settlement_id = $1 ORDER BY collected_at, credit_id LIMIT $2`,
    [settlementId, limit],
  )
  return rows.map((row) => ({
    creditId: row.credit_id,
    amountKobo: Number(row.amount_kobo),
    collectedAt: row.collected_at,
  }))
}
