// Provider capabilities (docs/design.md §6): what a provider is approved to do. Operations name the
// capability they need; a false one fails closed before anything happens.
import { RailError } from '../../platform/errors.ts'

export const CAPABILITIES = [
  'merchantCredit',
  'debit',
  'walletTransfer',
  'bankPayout',
  'nameCheck',
  'narration',
  'virtualAccounts',
] as const
export type Capability = (typeof CAPABILITIES)[number]
export type Capabilities = Record<Capability, boolean>

/** The code that talks to a provider; several profiles may share an adapter with different approvals. */
export const ADAPTERS = ['sandbox', 'paystack', 'monnify'] as const
export type AdapterKind = (typeof ADAPTERS)[number]

export interface ProviderProfile {
  name: string
  adapter: AdapterKind
  /**
   * The provider's API root; null when this Rail's own sandbox serves it (the sandbox bank, or its
   * /sandbox-paystack and /sandbox-monnify dialects), at the server's own address.
   */
  baseUrl: string | null
  /** What is not secret: Monnify's contractCode and sourceAccountNumber, Paystack's preferredBank. */
  settings: Record<string, string>
  /** When set, the only addresses the provider's webhooks are accepted from. */
  webhookSourceAddresses: string[] | null
  capabilities: Capabilities
}

/**
 * Whether a profile's provider has wallets at all: Paystack has none (its payouts and collections
 * need none), so a wallet is never opened there and a partner's wallets are never routed to it.
 */
export function canOpenWallets(provider: Pick<ProviderProfile, 'adapter'>): boolean {
  return provider.adapter !== 'paystack'
}

export function isCapability(name: string): name is Capability {
  return (CAPABILITIES as readonly string[]).includes(name)
}

/** Fails closed: 403 capability_disabled naming the capability, before any call or write. */
export function requireCapability(provider: ProviderProfile, capability: Capability): void {
  if (!provider.capabilities[capability]) {
    throw new RailError('capability_disabled', `Provider ${provider.name} is not approved for ${capability}`, {
      provider: provider.name,
      capability,
    })
  }
}
