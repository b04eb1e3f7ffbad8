// Providers: their profiles and approvals. Approving a capability (or withdrawing it) is an
// operator's act, done with `rail provider set`.
import type { Queryable } from '../platform/db.ts'
import { RailError } from '../platform/errors.ts'
import type { Capability, ProviderProfile } from './capabilities.ts'
import * as repo from './repo.ts'

export { CAPABILITIES, isCapability, requireCapability, type Capabilities, type Capability, type ProviderProfile } from './capabilities.ts'

/** The provider a wallet gets when its creator names none. */
export const DEFAULT_PROVIDER = 'sandbox'

export async function listProviders(db: Queryable): Promise<ProviderProfile[]> {
  return repo.selectProviders(db)
}

export async function getProvider(db: Queryable, name: string): Promise<ProviderProfile> {
  const provider = await repo.selectProvider(db, name)
  if (!provider) throw new RailError('not_found', `Provider ${name} not found`)
  return provider
}

export async function setCapability(db: Queryable, name: string, capability: Capability, enabled: boolean): Promise<ProviderProfile> {
  const provider = await repo.updateCapability(db, name, capability, enabled)
  if (!provider) throw new RailError('not_found', `Provider ${name} not found`)
  return provider
}
