// Provider capabilities (docs/design.md §6): what a provider is approved to do. Operations name the
// capability they need; a false one fails closed before anything happens.
import { RailError } from '../platform/errors.ts'

export const CAPABILITIES = ['merchantCredit', 'debit', 'walletTransfer', 'bankPayout', 'nameCheck', 'narration', 'virtualAccounts'] as const
export type Capability = (typeof CAPABILITIES)[number]
export type Capabilities = Record<Capability, boolean>

export interface ProviderProfile {
  name: string
  adapter: 'sandbox'
  capabilities: Capabilities
}

export function isCapability(name: string): name is Capability {
  return (CAPABILITIES as readonly string[]).includes(name)
}

/** Fails closed: 403 capability_disabled naming the capability, before any call or write. */
export function requireCapability(provider: ProviderProfile, capability: Capability): void {
  if (!provider.capabilities[capability]) {
    throw new RailError('capability_disabled', `Provider ${provider.name} is not approved for ${capability}`, { provider: provider.name, capability })
  }
}
