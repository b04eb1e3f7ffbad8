// SQL of the providers module. Capabilities are columns (snake_case) mapped to their camelCase
// names here and nowhere else.
import type { Queryable } from '../platform/db.ts'
import type { Capability, ProviderProfile } from './capabilities.ts'

const COLUMN: Record<Capability, string> = {
  merchantCredit: 'merchant_credit',
  debit: 'debit',
  walletTransfer: 'wallet_transfer',
  bankPayout: 'bank_payout',
  nameCheck: 'name_check',
  narration: 'narration',
  virtualAccounts: 'virtual_accounts',
}

interface ProviderRow {
  name: string
  adapter: 'sandbox'
  merchant_credit: boolean
  debit: boolean
  wallet_transfer: boolean
  bank_payout: boolean
  name_check: boolean
  narration: boolean
  virtual_accounts: boolean
}

const COLUMNS = 'name, adapter, merchant_credit, debit, wallet_transfer, bank_payout, name_check, narration, virtual_accounts'

function toProfile(row: ProviderRow): ProviderProfile {
  return {
    name: row.name,
    adapter: row.adapter,
    capabilities: {
      merchantCredit: row.merchant_credit,
      debit: row.debit,
      walletTransfer: row.wallet_transfer,
      bankPayout: row.bank_payout,
      nameCheck: row.name_check,
      narration: row.narration,
      virtualAccounts: row.virtual_accounts,
    },
  }
}

export async function selectProviders(db: Queryable): Promise<ProviderProfile[]> {
  const result = await db.query<ProviderRow>(`SELECT ${COLUMNS} FROM providers ORDER BY name`)
  return result.rows.map(toProfile)
}

export async function selectProvider(db: Queryable, name: string): Promise<ProviderProfile | undefined> {
  const result = await db.query<ProviderRow>(`SELECT ${COLUMNS} FROM providers WHERE name = $1`, [name])
  return result.rows[0] && toProfile(result.rows[0])
}

export async function updateCapability(db: Queryable, name: string, capability: Capability, enabled: boolean): Promise<ProviderProfile | undefined> {
  // The column name comes from the closed map above, never from input.
  const result = await db.query<ProviderRow>(
    `UPDATE providers SET ${COLUMN[capability]} = $2, updated_at = now() WHERE name = $1 RETURNING ${COLUMNS}`,
    [name, enabled],
  )
  return result.rows[0] && toProfile(result.rows[0])
}

/** One call as the adapter records it when its answer came (or did not). */
export interface NewProviderCall {
  id: string
  provider: string
  operation: string
  reference: string
  requestId: string | null
  outcome: ProviderCall['outcome']
  httpStatus: number | null
  responseCode: string | null
  error: string | null
  latencyMs: number
}

/** Records many calls in one statement (the calls of concurrent requests, coalesced). */
export async function insertCalls(db: Queryable, calls: readonly NewProviderCall[]): Promise<void> {
  if (calls.length === 0) return
  await db.query(
    `INSERT INTO provider_calls (id, provider, operation, reference, request_id, outcome, http_status, response_code, error, latency_ms)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::int[])`,
    [
      calls.map((call) => call.id),
      calls.map((call) => call.provider),
      calls.map((call) => call.operation),
      calls.map((call) => call.reference),
      calls.map((call) => call.requestId),
      calls.map((call) => call.outcome),
      calls.map((call) => call.httpStatus),
      calls.map((call) => call.responseCode),
      calls.map((call) => call.error),
      calls.map((call) => call.latencyMs),
    ],
  )
}

/** One call Rail made to a provider, as recorded when its answer came (or did not). */
export interface ProviderCall {
  operation: string
  outcome: 'successful' | 'failed' | 'pending' | 'unknown'
  httpStatus: number | null
  responseCode: string | null
  error: string | null
  latencyMs: number
  at: Date
}

/** The calls made under one reference (an instruction's id), oldest first, at most `limit`. */
export async function selectCallsFor(db: Queryable, reference: string, limit: number): Promise<ProviderCall[]> {
  const { rows } = await db.query<{ operation: string; outcome: ProviderCall['outcome']; http_status: number | null; response_code: string | null; error: string | null; latency_ms: number; created_at: Date }>(
    `SELECT operation, outcome, http_status, response_code, error, latency_ms, created_at FROM provider_calls WHERE reference = $1 ORDER BY created_at, id LIMIT $2`,
    [reference, limit],
  )
  return rows.map((row) => ({
    operation: row.operation,
    outcome: row.outcome,
    httpStatus: row.http_status,
    responseCode: row.response_code,
    error: row.error,
    latencyMs: row.latency_ms,
    at: row.created_at,
  }))
}
