// `rail provider list | add | set`: the operator's provider profiles. Secrets are read from a file
// or an environment variable, sealed with the master key at once, and never printed or logged;
// `list` shows each profile's adapter, address, capabilities, what it promises and its health.
import { readFileSync } from 'node:fs'
import { type Command, InvalidArgumentError, Option } from 'commander'
import { loadConfig } from '../../platform/config.ts'
import type { WithDatabase } from '../../platform/database-runtime.ts'
import { assertMasterKeyOfDatabase, loadMasterKey } from '../../platform/master-key.ts'
import { ProviderHealth, type ProviderHealthReading } from './health.ts'
import {
  addProvider,
  ADAPTERS,
  CAPABILITIES,
  changeProvider,
  isCapability,
  listProviders,
  oldestSealedProviderSecret,
  setCapability,
  traitsOf,
  type AdapterKind,
  type Capability,
  type ProviderProfile,
  type ProviderSecrets,
} from './service.ts'

interface ProfileOptions {
  baseUrl?: string
  secretKeyFile?: string
  secretKeyEnv?: string
  apiKeyFile?: string
  apiKeyEnv?: string
  contractCode?: string
  sourceAccount?: string
  preferredBank?: string
  dedicatedAccountBankCode?: string
  customerEmailDomain?: string
  webhookIps?: string
}

export function registerProviderCommands(program: Command, withDatabase: WithDatabase): void {
  const provider = program.command('provider').description('banking providers and their approved capabilities')

  provider
    .command('list')
    .description('list providers: adapter, base URL, capabilities, what each promises, and health (never a secret)')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { providers, health } = await withDatabase(async ({ pool }) => ({
        providers: await listProviders(pool),
        health: await new ProviderHealth(pool).readings(),
      }))
      const shown = providers.map((p) => ({ ...p, traits: traitsOf(p.adapter), health: health(p.name) }))
      if (options.json) console.log(JSON.stringify(shown))
      else for (const p of shown) console.log(describe(p, p.health))
    })

  profileOptions(
    provider
      .command('add')
      .description(
        'add a provider profile (its secrets from files or environment variables, sealed with the master key)',
      )
      .argument('<name>', 'profile name: lowercase letters, digits and -, 2 to 32 characters')
      .addOption(
        new Option('--adapter <adapter>', 'the code that talks to it').choices(ADAPTERS).makeOptionMandatory(),
      ),
  ).action(async (name: string, options: ProfileOptions & { adapter: AdapterKind }) => {
    const masterKey = loadMasterKey(loadConfig())
    const added = await withDatabase(async ({ pool }) => {
      // Sealed with another key than the running processes', the secrets would never open.
      await assertMasterKeyOfDatabase(pool, masterKey, oldestSealedProviderSecret)
      return addProvider(pool, masterKey, {
        name,
        adapter: options.adapter,
        baseUrl: options.baseUrl ?? null,
        ...profileChange(options),
      })
    })
    console.log(describe(added))
  })

  profileOptions(
    provider
      .command('set')
      .description(
        `change a profile: approve or withdraw capabilities (${CAPABILITIES.join(', ')}), its base URL, settings or secrets`,
      )
      .argument('<name>', 'provider name')
      .argument('[capability=value...]', 'e.g. debit=true', collectSetting, []),
  ).action(async (name: string, settings: { capability: Capability; enabled: boolean }[], options: ProfileOptions) => {
    const change = profileChange(options)
    const masterKey = change.secrets ? loadMasterKey(loadConfig()) : undefined
    const updated = await withDatabase(async ({ pool }) => {
      if (masterKey) await assertMasterKeyOfDatabase(pool, masterKey, oldestSealedProviderSecret)
      let profile: ProviderProfile | undefined
      if (
        options.baseUrl !== undefined ||
        change.secrets ||
        change.settings ||
        change.webhookSourceAddresses !== undefined
      ) {
        profile = await changeProvider(pool, masterKey, name, { baseUrl: options.baseUrl, ...change })
      }
      for (const setting of settings) profile = await setCapability(pool, name, setting.capability, setting.enabled)
      if (!profile) throw new InvalidArgumentError('nothing to change: give CAPABILITY=true|false or an option')
      return profile
    })
    console.log(describe(updated))
  })
}

function profileOptions(command: Command): Command {
  return command
    .option('--base-url <url>', "the provider's API root, e.g. https://api.paystack.co or https://api.monnify.com")
    .option(
      '--secret-key-file <path>',
      "a file holding the secret key (Paystack's secret key, Monnify's client secret)",
    )
    .option('--secret-key-env <variable>', 'an environment variable holding the secret key')
    .option('--api-key-file <path>', "a file holding Monnify's API key")
    .option('--api-key-env <variable>', "an environment variable holding Monnify's API key")
    .option('--contract-code <code>', "Monnify's contract code")
    .option('--source-account <number>', 'Monnify: the wallet account disbursements are paid from')
    .option(
      '--preferred-bank <bank>',
      'the bank of collection accounts: Paystack by slug (e.g. wema-bank, titan-paystack), Monnify by CBN code (e.g. 50515)',
    )
    .option(
      '--dedicated-account-bank-code <code>',
      "Paystack: the CBN code of the preferred bank, when Rail cannot tell it from the bank's slug",
    )
    .option(
      '--customer-email-domain <domain>',
      'Monnify: the domain of the customer emails Rail derives for reserved accounts and wallets',
    )
    .option(
      '--webhook-ips <addresses>',
      "comma-separated addresses the provider's webhooks may come from ('' removes the allowlist)",
    )
}

function profileChange(options: ProfileOptions): {
  secrets?: ProviderSecrets
  settings?: Record<string, string>
  webhookSourceAddresses?: string[] | null
} {
  const secretKey = secretFrom(options.secretKeyFile, options.secretKeyEnv, 'secret key')
  const apiKey = secretFrom(options.apiKeyFile, options.apiKeyEnv, 'API key')
  const secrets =
    secretKey === undefined && apiKey === undefined
      ? undefined
      : { ...(secretKey === undefined ? {} : { secretKey }), ...(apiKey === undefined ? {} : { apiKey }) }
  const settings: Record<string, string> = {}
  if (options.contractCode !== undefined) settings.contractCode = options.contractCode
  if (options.sourceAccount !== undefined) settings.sourceAccountNumber = options.sourceAccount
  if (options.preferredBank !== undefined) settings.preferredBank = options.preferredBank
  if (options.dedicatedAccountBankCode !== undefined)
    settings.dedicatedAccountBankCode = options.dedicatedAccountBankCode
  if (options.customerEmailDomain !== undefined) settings.customerEmailDomain = options.customerEmailDomain
  const webhookSourceAddresses =
    options.webhookIps === undefined
      ? undefined
      : options.webhookIps.trim() === ''
        ? null
        : options.webhookIps.split(',').map((address) => address.trim())
  return { secrets, settings: Object.keys(settings).length > 0 ? settings : undefined, webhookSourceAddresses }
}

/** A secret from a file (its content, trimmed) or an environment variable; never from the command line, where `ps` and shell history would show it. */
function secretFrom(file: string | undefined, variable: string | undefined, what: string): string | undefined {
  if (file !== undefined && variable !== undefined)
    throw new InvalidArgumentError(`give the ${what} by a file or an environment variable, not both`)
  if (file !== undefined) {
    const value = readFileSync(file, 'utf8').trim()
    if (value === '') throw new InvalidArgumentError(`the ${what} file ${file} is empty`)
    return value
  }
  if (variable !== undefined) {
    const value = process.env[variable]?.trim()
    if (!value) throw new InvalidArgumentError(`the environment variable ${variable} holding the ${what} is not set`)
    return value
  }
  return undefined
}

function describe(provider: ProviderProfile, health?: ProviderHealthReading): string {
  const flags = CAPABILITIES.map((capability) => `${capability}=${provider.capabilities[capability]}`).join(' ')
  const where = provider.baseUrl ?? "this server's sandbox"
  const traits = traitsOf(provider.adapter)
  const promises = `dedupesReferences=${traits.deduplicatesReferences} validityWindow=${traits.requestValidityWindowMs === null ? 'none' : `${traits.requestValidityWindowMs / 1000}s`} amounts=${traits.amountUnit}`
  const failing = health?.failingOperation ? `; ${health.failingOperation} failing` : ''
  const healthText = health
    ? ` health=${health.healthy ? 'healthy' : 'unhealthy'} (${health.unanswered}/${health.calls} unanswered in ${health.windowS}s${failing})`
    : ''
  return `${provider.name.padEnd(20)} adapter=${provider.adapter} baseUrl=${where} ${flags} ${promises}${healthText}`
}

function collectSetting(
  value: string,
  previous: { capability: Capability; enabled: boolean }[],
): { capability: Capability; enabled: boolean }[] {
  const match = /^([A-Za-z]+)=(true|false)$/.exec(value)
  if (!match || !isCapability(match[1]!))
    throw new InvalidArgumentError(`expected CAPABILITY=true|false with CAPABILITY one of ${CAPABILITIES.join(', ')}`)
  return [...previous, { capability: match[1], enabled: match[2] === 'true' }]
}
