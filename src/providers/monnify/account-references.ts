// Monnify knows a reserved account by the reference it was reserved with, not by its number; Rail
// is asked about accounts by number (archive, list credits). The reference is what this adapter
// answered as the allocation's providerReference, which Rail keeps with the account.
import type { Pool } from '../../platform/db.ts'

/** The reference a reserved account was allocated with at this provider profile; undefined when Rail has no such account. */
export async function reservedAccountReference(pool: Pool, provider: string, accountNumber: string): Promise<string | undefined> {
  const found = await pool.query<{ provider_reference: string }>(
    `SELECT provider_reference FROM virtual_accounts WHERE provider = $1 AND account_number = $2 ORDER BY created_at DESC LIMIT 1`,
    [provider, accountNumber],
  )
  return found.rows[0]?.provider_reference
}
