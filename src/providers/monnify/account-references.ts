// Monnify knows a reserved account by the reference it was reserved with, not by its number; Rail
// is asked about accounts by number (archive, list credits). The reference is what this adapter
// answered as the allocation's providerReference, kept by the providers module (provider_accounts).
import type { Pool } from '../../platform/db.ts'
import { keepAccountReference, selectAccountReference } from '../repo.ts'

/** The reference a reserved account was allocated with at this provider profile; undefined when it allocated no such account. */
export async function reservedAccountReference(pool: Pool, provider: string, accountNumber: string): Promise<string | undefined> {
  return selectAccountReference(pool, provider, accountNumber)
}

/** Keeps the reference a reserved account was allocated with, by its number. */
export async function keepReservedAccountReference(pool: Pool, provider: string, accountNumber: string, accountReference: string): Promise<void> {
  await keepAccountReference(pool, provider, accountNumber, accountReference)
}
