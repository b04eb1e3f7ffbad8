// SQL of the providers module. Capabilities are columns (snake_case) mapped to their camelCase
// names here and nowhere else.
import type { Queryable } from '../../platform/db.ts'
import type { AdapterKind, Capabilities, Capability, ProviderProfile } from './capabilities.ts'

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
  adapter: AdapterKind
  base_url: string | null
  settings: Record<string, string>
  webhook_source_addresses: string[] | null
  merchant_credit: boolean
  debit: boolean
  wallet_transfer: boolean
  bank_payout: boolean
  name_check: boolean
  narration: boolean
  virtual_accounts: boolean
}

const COLUMNS =
  'name, adapter, base_url, settings, webhook_source_addresses, merchant_credit, debit, wallet_transfer, bank_payout, name_check, narration, virtual_accounts'

function toProfile(row: ProviderRow): ProviderProfile {
  return {
    name: row.name,
    adapter: row.adapter,
    baseUrl: row.base_url,
    settings: row.settings,
    webhookSourceAddresses: row.webhook_source_addresses,
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

export async function updateCapability(
  db: Queryable,
  name: string,
  capability: Capability,
  enabled: boolean,
): Promise<ProviderProfile | undefined> {
  // The column name comes from the closed map above, never from input.
  const result = await db.query<ProviderRow>(
    `UPDATE providers SET ${COLUMN[capability]} = $2, updated_at = now() WHERE name = $1 RETURNING ${COLUMNS}`,
    [name, enabled],
  )
  return result.rows[0] && toProfile(result.rows[0])
}

/** A new profile, with no capability approved but what its adapter can do (the operator approves more with `rail provider set`). */
export async function insertProvider(
  db: Queryable,
  profile: Omit<ProviderProfile, 'capabilities'> & { capabilities: Capabilities; sealedSecrets: Buffer | null },
): Promise<ProviderProfile | undefined> {
  const c = profile.capabilities
  const result = await db.query<ProviderRow>(
    `INSERT INTO providers (name, adapter, base_url, settings, webhook_source_addresses, sealed_secrets,
                            merchant_credit, debit, wallet_transfer, bank_payout, name_check, narration, virtual_accounts)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (name) DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      profile.name,
      profile.adapter,
      profile.baseUrl,
      profile.settings,
      profile.webhookSourceAddresses,
      profile.sealedSecrets,
      c.merchantCredit,
      c.debit,
      c.walletTransfer,
      c.bankPayout,
      c.nameCheck,
      c.narration,
      c.virtualAccounts,
    ],
  )
  return result.rows[0] && toProfile(result.rows[0])
}

/** What `rail provider set` changes besides capabilities; a field absent is kept. */
export interface ProviderChange {
  baseUrl?: string
  settings?: Record<string, string>
  webhookSourceAddresses?: string[] | null
  sealedSecrets?: Buffer
}

export async function updateProvider(
  db: Queryable,
  name: string,
  change: ProviderChange,
): Promise<ProviderProfile | undefined> {
  const result = await db.query<ProviderRow>(
    `UPDATE providers
        SET base_url = CASE WHEN $2 THEN $3 ELSE base_url END,
            settings = CASE WHEN $4 THEN settings || $5::jsonb ELSE settings END,
            webhook_source_addresses = CASE WHEN $6 THEN $7::text[] ELSE webhook_source_addresses END,
            sealed_secrets = COALESCE($8, sealed_secrets),
            updated_at = now()
      WHERE name = $1
      RETURNING ${COLUMNS}`,
    [
      name,
      change.baseUrl !== undefined,
      change.baseUrl ?? null,
      change.settings !== undefined,
      change.settings ?? {},
      change.webhookSourceAddresses !== undefined,
      change.webhookSourceAddresses ?? null,
      change.sealedSecrets ?? null,
    ],
  )
  return result.rows[0] && toProfile(result.rows[0])
}

export async function selectOldestSealedSecrets(db: Queryable): Promise<{ name: string; sealed: Buffer } | undefined> {
  const result = await db.query<{ name: string; sealed: Buffer }>(
    `SELECT name, sealed_secrets AS sealed FROM providers WHERE sealed_secrets IS NOT NULL ORDER BY created_at, name LIMIT 1`,
  )
  return result.rows[0]
}

/** A profile's sealed secrets, to be opened only to make calls; null when it has none. */
export async function selectSealedSecrets(db: Queryable, name: string): Promise<Buffer | null> {
  const result = await db.query<{ sealed_secrets: Buffer | null }>(
    `SELECT sealed_secrets FROM providers WHERE name = $1`,
    [name],
  )
  return result.rows[0]?.sealed_secrets ?? null
}

export type RoutePurpose = 'payouts' | 'collections' | 'wallets'

/** A partner's routes, by purpose, each the providers in order. */
export async function selectRoutes(db: Queryable, partnerId: string): Promise<Record<RoutePurpose, string[]>> {
  const result = await db.query<{ purpose: RoutePurpose; provider: string }>(
    `SELECT purpose, provider FROM partner_provider_routes WHERE partner_id = $1 ORDER BY purpose, position`,
    [partnerId],
  )
  const routes: Record<RoutePurpose, string[]> = { payouts: [], collections: [], wallets: [] }
  for (const row of result.rows) routes[row.purpose].push(row.provider)
  return routes
}

/**
 * The profiles a partner's route for one purpose lists, in order; without a route, the
 * `unrouted` profile alone. One round trip either way: a payout's submit reads it.
 */
export async function selectRouteProfiles(
  db: Queryable,
  partnerId: string,
  purpose: RoutePurpose,
  unrouted: string,
): Promise<ProviderProfile[]> {
  const result = await db.query<ProviderRow>(
    `SELECT ${COLUMNS}, r.position FROM partner_provider_routes r JOIN providers ON name = r.provider WHERE r.partner_id = $1 AND r.purpose = $2
     UNION ALL
     SELECT ${COLUMNS}, 0 FROM providers WHERE name = $3 AND NOT EXISTS (SELECT FROM partner_provider_routes WHERE partner_id = $1 AND purpose = $2)
     ORDER BY position`,
    [partnerId, purpose, unrouted],
  )
  return result.rows.map(toProfile)
}

/** Replaces a partner's route for one purpose (an empty list removes it: the sandbox again). */
export async function replaceRoute(
  db: Queryable,
  partnerId: string,
  purpose: RoutePurpose,
  providers: readonly string[],
): Promise<void> {
  await db.query(`DELETE FROM partner_provider_routes WHERE partner_id = $1 AND purpose = $2`, [partnerId, purpose])
  if (providers.length === 0) return
  await db.query(
    `INSERT INTO partner_provider_routes (partner_id, purpose, position, provider)
     SELECT $1, $2, ordinality, provider FROM unnest($3::text[]) WITH ORDINALITY AS route (provider, ordinality)`,
    [partnerId, purpose, providers],
  )
}

/** Each provider's calls over the last `windowS` seconds, by operation: how many, and how many got no readable answer (no answer, 5xx). */
export async function selectCallCounts(
  db: Queryable,
  windowS: number,
): Promise<
  Map<string, { calls: number; unanswered: number; byOperation: Record<string, { calls: number; unanswered: number }> }>
> {
  const result = await db.query<{ provider: string; operation: string; calls: number; unanswered: number }>(
    `SELECT provider, operation, count(*)::int AS calls, count(*) FILTER (WHERE outcome = 'unknown')::int AS unanswered
       FROM provider_calls WHERE created_at > now() - make_interval(secs => $1) GROUP BY provider, operation`,
    [windowS],
  )
  const counts = new Map<
    string,
    { calls: number; unanswered: number; byOperation: Record<string, { calls: number; unanswered: number }> }
  >()
  for (const row of result.rows) {
    const provider = counts.get(row.provider) ?? { calls: 0, unanswered: 0, byOperation: {} }
    provider.calls += row.calls
    provider.unanswered += row.unanswered
    provider.byOperation[row.operation] = { calls: row.calls, unanswered: row.unanswered }
    counts.set(row.provider, provider)
  }
  return counts
}

/** Keeps what a provider knows an allocated account by (its answer's providerReference), by account number. */
export async function keepAccountReference(
  db: Queryable,
  provider: string,
  accountNumber: string,
  providerReference: string,
): Promise<void> {
  await db.query(
    `INSERT INTO provider_accounts (provider, account_number, provider_reference) VALUES ($1, $2, $3)
     ON CONFLICT (provider, account_number) DO UPDATE SET provider_reference = EXCLUDED.provider_reference`,
    [provider, accountNumber, providerReference],
  )
}

/** What the provider knows an account by; undefined when this provider never allocated it. */
export async function selectAccountReference(
  db: Queryable,
  provider: string,
  accountNumber: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ provider_reference: string }>(
    `SELECT provider_reference FROM provider_accounts WHERE provider = $1 AND account_number = $2`,
    [provider, accountNumber],
  )
  return rows[0]?.provider_reference
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
  /** The provider profile called. */
  provider: string
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
  const { rows } = await db.query<{
    provider: string
    operation: string
    outcome: ProviderCall['outcome']
    http_status: number | null
    response_code: string | null
    error: string | null
    latency_ms: number
    created_at: Date
  }>(
    `SELECT provider, operation, outcome, http_status, response_code, error, latency_ms, created_at FROM provider_calls WHERE reference = $1 ORDER BY created_at, id LIMIT $2`,
    [reference, limit],
  )
  return rows.map((row) => ({
    provider: row.provider,
    operation: row.operation,
    outcome: row.outcome,
    httpStatus: row.http_status,
    responseCode: row.response_code,
    error: row.error,
    latencyMs: row.latency_ms,
    at: row.created_at,
  }))
}
