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
