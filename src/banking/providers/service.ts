// Providers: their profiles, approvals and routes (the check of a bank account is banking/banks/service.ts).
// Approving a capability (or withdrawing it) is an operator's act, done with `rail provider set`.
import { isIP } from 'node:net'
import type { Pool, Queryable } from '../../platform/db.ts'
import { seal } from '../../platform/crypto.ts'
import { fieldError, RailError } from '../../platform/errors.ts'
import { secretsAssociatedData, type ProviderSecrets } from './adapter-options.ts'
import {
  canOpenWallets,
  requireCapability,
  type AdapterKind,
  type Capabilities,
  type Capability,
  type ProviderProfile,
} from './capabilities.ts'
import { chooseProvider, ProviderHealth, type ProviderHealthReading } from './health.ts'
import type { ProviderRegistry } from './registry.ts'
import * as repo from './repo.ts'

export {
  ADAPTERS,
  CAPABILITIES,
  canOpenWallets,
  isCapability,
  requireCapability,
  type AdapterKind,
  type Capabilities,
  type Capability,
  type ProviderProfile,
} from './capabilities.ts'
export type { ProviderSecrets } from './adapter-options.ts'
export { traitsOf } from './traits.ts'
export type { ProviderRegistry } from './registry.ts'
export { NAME_ENQUIRIES_PER_MINUTE_DEFAULT, type NameEnquiryBudget } from './name-enquiries.ts'
export type { ProviderCall } from './repo.ts'
export type { ProviderHealthReading } from './health.ts'

/** The provider of a partner with no route for a purpose (and of a wallet whose creator names none). */
export const DEFAULT_PROVIDER = 'sandbox'

export type { RoutePurpose } from './repo.ts'

/**
 * The provider a partner's money of one purpose goes through now: its route's (for payouts, the
 * first healthy provider the route lists), or the sandbox when it has none. Payouts, refunds,
 * escrow disbursements and settlements are `payouts`; virtual accounts (intents, invoices, FBO,
 * escrow funding) `collections`; new wallets `wallets`. What one instruction was given to it keeps:
 * an instruction is never moved to another provider.
 */
export async function providerFor(
  db: Queryable,
  partnerId: string,
  purpose: repo.RoutePurpose,
  providers?: ProviderRegistry,
): Promise<ProviderProfile> {
  const route = await repo.selectRouteProfiles(db, partnerId, purpose, DEFAULT_PROVIDER)
  const chosen =
    route.length > 1 && providers
      ? chooseProvider(
          route.map((profile) => profile.name),
          await providers.health.readings(),
        )
      : route[0]?.name
  const provider = route.find((profile) => profile.name === chosen)
  if (!provider) throw new RailError('not_found', `Provider ${DEFAULT_PROVIDER} not found`)
  // A payout is recorded before its provider is called: one this server cannot reach is refused first.
  providers?.assertServes(provider)
  return provider
}

/** What Rail asked the bank under a reference (a send, each requery), and what it answered, oldest first. */
export async function providerCallsFor(db: Queryable, reference: string, limit = 100): Promise<repo.ProviderCall[]> {
  return repo.selectCallsFor(db, reference, limit)
}

/** The oldest sealed provider secrets, to check a master key against before sealing more with it (platform/master-key.ts). */
export async function oldestSealedProviderSecret(
  db: Queryable,
): Promise<{ sealed: Buffer; associatedData: string } | undefined> {
  const oldest = await repo.selectOldestSealedSecrets(db)
  return oldest && { sealed: oldest.sealed, associatedData: secretsAssociatedData(oldest.name) }
}

/** Every provider's health now, read from its recent calls (health.ts). */
export async function providerHealth(db: Pool): Promise<(provider: string) => ProviderHealthReading> {
  return new ProviderHealth(db).readings()
}

export async function listProviders(db: Queryable): Promise<ProviderProfile[]> {
  return repo.selectProviders(db)
}

export async function getProvider(db: Queryable, name: string): Promise<ProviderProfile> {
  const provider = await repo.selectProvider(db, name)
  if (!provider) throw new RailError('not_found', `Provider ${name} not found`)
  return provider
}

export async function setCapability(
  db: Queryable,
  name: string,
  capability: Capability,
  enabled: boolean,
): Promise<ProviderProfile> {
  const existing = await getProvider(db, name)
  if (enabled && !ADAPTER_CAN[existing.adapter][capability]) {
    throw fieldError('capability', `${existing.adapter} cannot do ${capability}: it stays false for ${name}`)
  }
  const provider = await repo.updateCapability(db, name, capability, enabled)
  if (!provider) throw new RailError('not_found', `Provider ${name} not found`)
  return provider
}

/**
 * What each adapter can do at all: a new profile starts with these approved, and a capability its
 * adapter cannot do is never approved (the operation fails closed, 403 capability_disabled). The
 * real providers have no merchant credit, debit or transfer between wallets (Paystack has no
 * wallets; Monnify's are paid into by transfer and pay out by disbursement).
 */
const REAL_PROVIDER_CAN: Capabilities = {
  merchantCredit: false,
  debit: false,
  walletTransfer: false,
  bankPayout: true,
  nameCheck: true,
  narration: true,
  virtualAccounts: true,
}
const ADAPTER_CAN: Record<AdapterKind, Capabilities> = {
  sandbox: { ...REAL_PROVIDER_CAN, merchantCredit: true, debit: true, walletTransfer: true },
  paystack: REAL_PROVIDER_CAN,
  monnify: REAL_PROVIDER_CAN,
}

/** What each adapter needs to make calls, checked when a profile is added or changed. */
const REQUIRED: Record<AdapterKind, { secrets: (keyof ProviderSecrets)[]; settings: string[] }> = {
  sandbox: { secrets: [], settings: [] },
  paystack: { secrets: ['secretKey'], settings: [] },
  monnify: { secrets: ['apiKey', 'secretKey'], settings: ['contractCode', 'sourceAccountNumber'] },
}

export interface NewProviderProfile {
  name: string
  adapter: AdapterKind
  baseUrl: string | null
  secrets?: ProviderSecrets
  settings?: Record<string, string>
  webhookSourceAddresses?: string[] | null
}

/**
 * Adds a profile: a real provider at its base URL with its secrets sealed with the master key (bound
 * to the profile's name); the sandbox adapter at this server's own sandbox. The capabilities its
 * adapter can do are approved (`rail provider set` withdraws any). 422 for a bad name, URL, missing
 * secret or setting; 409 invalid_state when the name is taken.
 */
export async function addProvider(
  db: Queryable,
  masterKey: Buffer,
  profile: NewProviderProfile,
): Promise<ProviderProfile> {
  if (!/^[a-z][a-z0-9-]{1,31}$/.test(profile.name))
    throw fieldError('name', 'must be 2 to 32 lowercase letters, digits or -, starting with a letter')
  if (profile.adapter === 'sandbox' && profile.baseUrl !== null)
    throw fieldError('baseUrl', "the sandbox adapter talks to this server's own sandbox bank: give no base URL")
  if (profile.adapter !== 'sandbox') {
    if (profile.baseUrl === null)
      throw fieldError('baseUrl', `a ${profile.adapter} profile needs the provider's base URL`)
    checkBaseUrl(profile.baseUrl)
  }
  const required = REQUIRED[profile.adapter]
  for (const secret of required.secrets)
    if (!profile.secrets?.[secret]) throw fieldError(secret, `a ${profile.adapter} profile needs its ${secret}`)
  for (const setting of required.settings)
    if (!profile.settings?.[setting]) throw fieldError(setting, `a ${profile.adapter} profile needs its ${setting}`)
  checkAddresses(profile.webhookSourceAddresses ?? null)
  const sealedSecrets =
    required.secrets.length === 0
      ? null
      : seal(masterKey, JSON.stringify(profile.secrets), secretsAssociatedData(profile.name))
  const added = await repo.insertProvider(db, {
    name: profile.name,
    adapter: profile.adapter,
    baseUrl: profile.baseUrl?.replace(/\/+$/, '') ?? null,
    settings: profile.settings ?? {},
    webhookSourceAddresses: profile.webhookSourceAddresses ?? null,
    capabilities: ADAPTER_CAN[profile.adapter],
    sealedSecrets,
  })
  if (!added)
    throw new RailError(
      'invalid_state',
      `Provider ${profile.name} exists already: change it with \`rail provider set\``,
    )
  return added
}

/** Changes a profile's base URL, settings (merged), webhook allowlist or secrets (all replaced, sealed anew). */
export async function changeProvider(
  db: Queryable,
  masterKey: Buffer | undefined,
  name: string,
  change: {
    baseUrl?: string
    secrets?: ProviderSecrets
    settings?: Record<string, string>
    webhookSourceAddresses?: string[] | null
  },
): Promise<ProviderProfile> {
  const existing = await getProvider(db, name)
  if (change.baseUrl !== undefined) {
    if (existing.adapter === 'sandbox' || existing.baseUrl === null)
      throw fieldError('baseUrl', `${name} is served by this server's sandbox: its address is the server's own`)
    checkBaseUrl(change.baseUrl)
  }
  if (change.secrets) {
    if (existing.baseUrl === null)
      throw fieldError(
        'secrets',
        `${name} is served by this server's sandbox: its credentials derive from the sandbox bank's secret`,
      )
    for (const secret of REQUIRED[existing.adapter].secrets)
      if (!change.secrets[secret])
        throw fieldError(
          secret,
          `give every secret of a ${existing.adapter} profile together (${REQUIRED[existing.adapter].secrets.join(', ')})`,
        )
  }
  if (change.webhookSourceAddresses !== undefined) checkAddresses(change.webhookSourceAddresses)
  if (change.secrets && !masterKey) throw new Error('a master key is needed to seal secrets')
  const updated = await repo.updateProvider(db, name, {
    baseUrl: change.baseUrl?.replace(/\/+$/, ''),
    settings: change.settings,
    webhookSourceAddresses: change.webhookSourceAddresses,
    sealedSecrets:
      change.secrets && masterKey
        ? seal(masterKey, JSON.stringify(change.secrets), secretsAssociatedData(name))
        : undefined,
  })
  if (!updated) throw new RailError('not_found', `Provider ${name} not found`)
  return updated
}

/** A provider's base URL: https (http only to this machine, for a local provider or the sandbox's dialects), no credentials, no query. */
function checkBaseUrl(baseUrl: string): void {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    throw fieldError('baseUrl', 'is not a URL')
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw fieldError('baseUrl', 'must be https (http only on this machine)')
  if (url.username || url.password || url.search || url.hash)
    throw fieldError('baseUrl', 'must carry no credentials, query or fragment')
  if (baseUrl.length > 300) throw fieldError('baseUrl', 'must be at most 300 characters')
}

function checkAddresses(addresses: string[] | null): void {
  if (addresses === null) return
  if (addresses.length === 0 || addresses.length > 32 || addresses.some((address) => isIP(address) === 0)) {
    throw fieldError('webhookSourceAddresses', 'must be 1 to 32 IP addresses, comma-separated')
  }
}

/** A partner's routes: for each purpose the providers it goes through, in order (empty: the sandbox). */
export async function partnerRoutes(db: Queryable, partnerId: string): Promise<Record<repo.RoutePurpose, string[]>> {
  return repo.selectRoutes(db, partnerId)
}

/**
 * Sets a partner's routes for the purposes given (others kept). Every provider must exist and be
 * approved for what the purpose needs (payouts: bankPayout; collections: virtualAccounts); wallets
 * and collections take one provider, payouts up to eight, in the order new payouts try them.
 */
export async function setPartnerRoutes(
  db: Queryable,
  partnerId: string,
  routes: Partial<Record<repo.RoutePurpose, string[]>>,
): Promise<Record<repo.RoutePurpose, string[]>> {
  for (const [purpose, providers] of Object.entries(routes) as [repo.RoutePurpose, string[]][]) {
    if (providers.length > (purpose === 'payouts' ? 8 : 1))
      throw fieldError(purpose, purpose === 'payouts' ? 'lists at most 8 providers' : 'takes one provider')
    if (new Set(providers).size !== providers.length) throw fieldError(purpose, 'names a provider twice')
    for (const name of providers) {
      const provider = await getProvider(db, name).catch(() => {
        throw fieldError(purpose, `${name} is not a known provider`)
      })
      if (purpose === 'payouts') requireCapability(provider, 'bankPayout')
      if (purpose === 'collections') requireCapability(provider, 'virtualAccounts')
      if (purpose === 'wallets' && !canOpenWallets(provider))
        throw fieldError(purpose, `${name} (${provider.adapter}) has no wallets`)
    }
  }
  for (const [purpose, providers] of Object.entries(routes) as [repo.RoutePurpose, string[]][])
    await repo.replaceRoute(db, partnerId, purpose, providers)
  return repo.selectRoutes(db, partnerId)
}
