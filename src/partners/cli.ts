// `rail partner …`: create partners and rotate or revoke their credentials. Secrets are printed
// once, here, and never again.
import { type Command, InvalidArgumentError, Option } from 'commander'
import { loadConfig } from '../platform/config.ts'
import type { WithDatabase } from '../platform/database-runtime.ts'
import { assertMasterKeyOfDatabase, loadMasterKey } from '../platform/master-key.ts'
import { withTransaction } from '../platform/db.ts'
import { UUID_PATTERN } from '../platform/ids.ts'
import { partnerRoutes, setPartnerRoutes } from '../banking/providers/service.ts'
import { saveRotatedCredential } from './sandbox-file.ts'
import {
  createPartner,
  CUSTOMER_CLASSES,
  getPartner,
  listPartners,
  oldestSealedSigningSecret,
  PARTNER_ENVIRONMENTS,
  revokeSigningKey,
  rotateCallbackSecret,
  rotateEscrowApiKey,
  rotateSigningSecret,
  ROTATION_OVERLAP_DEFAULT_S,
  type CustomerClass,
  type CallbackUrls,
  type PartnerCredentials,
  type PartnerEnvironment,
} from './service.ts'

interface RotateOptions {
  partner: string
  overlapHours: number
  json?: boolean
}

export function registerPartnerCommands(
  program: Command,
  withDatabase: WithDatabase,
  callbackUrls: CallbackUrls,
): void {
  const partner = program
    .command('partner')
    .alias('partners')
    .description('manage partners, their credentials and the providers their money goes through')
  registerRecordCommands(partner, withDatabase, callbackUrls)
  registerCredentialCommands(partner, withDatabase)
  registerRouteCommand(partner, withDatabase)
}

/**
 * `partners providers`: which providers a partner's payouts, collections and new wallets go
 * through (without an option, prints them). Payouts may list several, tried in order by health.
 */
function registerRouteCommand(partner: Command, withDatabase: WithDatabase): void {
  const list = (value: string) => (value.trim() === '' ? [] : value.split(',').map((name) => name.trim()))
  partner
    .command('providers')
    .description(
      "route a partner's money: payouts (refunds, escrow disbursements, settlements), collections (intents, virtual accounts, invoices, FBO, escrow funding) and new wallets; '' returns a purpose to the sandbox",
    )
    .requiredOption('--partner <id>', 'partner id')
    .option('--payouts <names>', 'providers for payouts, comma-separated, in order of preference', list)
    .option('--collections <name>', 'the provider for collections', list)
    .option('--wallets <name>', 'the provider for new wallets', list)
    .option('--json', 'print JSON')
    .action(
      async (options: {
        partner: string
        payouts?: string[]
        collections?: string[]
        wallets?: string[]
        json?: boolean
      }) => {
        const routes = await withDatabase(async ({ pool }) => {
          const known = new RegExp(UUID_PATTERN).test(options.partner) && (await getPartner(pool, options.partner))
          if (!known) throw new InvalidArgumentError(`no partner has id ${options.partner}`)
          const change = { payouts: options.payouts, collections: options.collections, wallets: options.wallets }
          const given = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined))
          return Object.keys(given).length === 0
            ? partnerRoutes(pool, options.partner)
            : withTransaction(pool, (tx) => setPartnerRoutes(tx, options.partner, given))
        })
        if (options.json) console.log(JSON.stringify({ partnerId: options.partner, ...routes }))
        else
          for (const [purpose, providers] of Object.entries(routes))
            console.log(`${purpose.padEnd(12)} ${providers.length === 0 ? 'sandbox (no route)' : providers.join(', ')}`)
      },
    )
}

/** `partner create`, `set-callback-url` and `list`: the partners themselves. */
function registerRecordCommands(partner: Command, withDatabase: WithDatabase, callbackUrls: CallbackUrls): void {
  registerCreateCommand(partner, withDatabase, callbackUrls)
  registerCallbackAndListCommands(partner, withDatabase, callbackUrls)
}

function registerCreateCommand(partner: Command, withDatabase: WithDatabase, callbackUrls: CallbackUrls): void {
  partner
    .command('create')
    .description('create a partner and print its credentials (shown once)')
    .requiredOption('--name <name>', 'display name')
    .addOption(new Option('--class <class>', 'customer class').choices(CUSTOMER_CLASSES).makeOptionMandatory())
    .addOption(new Option('--env <env>', 'environment').choices(PARTNER_ENVIRONMENTS).default('sandbox'))
    .option('--callback-url <url>', 'default callback URL', parseUrl)
    .option('--json', 'print exactly { partnerId, keyId, signingSecret, escrowApiKey, callbackSigningSecret }')
    .action(
      async (options: {
        name: string
        class: CustomerClass
        env: PartnerEnvironment
        callbackUrl?: string
        json?: boolean
      }) => {
        const config = loadConfig()
        const masterKey = loadMasterKey(config)
        if (options.callbackUrl)
          await callbackUrls.assertAllowed(
            options.callbackUrl,
            options.env,
            config.allowLoopbackCallbacks,
            '--callback-url',
          )
        const created = await withDatabase(async ({ pool }) => {
          await assertMasterKeyOfDatabase(pool, masterKey, oldestSealedSigningSecret)
          return createPartner(pool, masterKey, {
            name: options.name,
            customerClass: options.class,
            environment: options.env,
            callbackUrl: options.callbackUrl ?? null,
          })
        })
        if (options.json) {
          const { partnerId, keyId, signingSecret, escrowApiKey, callbackSigningSecret } = created
          console.log(JSON.stringify({ partnerId, keyId, signingSecret, escrowApiKey, callbackSigningSecret }))
          return
        }
        console.log(formatPairs({ ...created, note: 'Secrets are shown once; store them now.' }))
      },
    )
}

function registerCallbackAndListCommands(
  partner: Command,
  withDatabase: WithDatabase,
  callbackUrls: CallbackUrls,
): void {
  partner
    .command('set-callback-url')
    .description("set a partner's default callback URL (checked like PATCH /api/v1/rail/settings); --none removes it")
    .requiredOption('--partner <partnerId>', 'partner id')
    .option('--url <url>', 'the callback URL', parseUrl)
    .option('--none', 'remove the default callback URL')
    .action(async (options: { partner: string; url?: string; none?: boolean }) => {
      if ((options.url === undefined) === (options.none === undefined))
        throw new InvalidArgumentError('give exactly one of --url <url> or --none')
      const config = loadConfig()
      const updated = await withDatabase(async ({ pool }) => {
        const found = await getPartner(pool, options.partner)
        if (!found) throw new Error(`no partner ${options.partner}`)
        return callbackUrls.set(pool, found, options.url ?? null, config.allowLoopbackCallbacks)
      })
      console.log(`callbackUrl  ${updated.callbackUrl ?? '(none)'}`)
    })

  partner
    .command('list')
    .description('list partners')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const partners = await withDatabase(({ pool }) => listPartners(pool))
      if (options.json) {
        console.log(JSON.stringify(partners))
        return
      }
      for (const p of partners)
        console.log(`${p.id}  ${p.environment.padEnd(7)}  ${p.customerClass.padEnd(10)}  ${p.name}`)
    })
}

/** Rotating and revoking a partner's credentials. */
function registerCredentialCommands(partner: Command, withDatabase: WithDatabase): void {
  rotateCommand(
    partner,
    'rotate-secret',
    'issue a new key id and signing secret; the old ones stay valid for the overlap',
    async (o) => {
      const masterKey = loadMasterKey(loadConfig())
      return withDatabase(async ({ pool }) => {
        await assertMasterKeyOfDatabase(pool, masterKey, oldestSealedSigningSecret)
        return rotateSigningSecret(pool, masterKey, o.partner, Math.round(o.overlapHours * 3600))
      })
    },
  )
  rotateCommand(
    partner,
    'rotate-api-key',
    'issue a new escrow API key; the old one stays valid for the overlap',
    async (o) => withDatabase(({ pool }) => rotateEscrowApiKey(pool, o.partner, Math.round(o.overlapHours * 3600))),
  )
  rotateCommand(
    partner,
    'rotate-callback-secret',
    'issue a new callback-signing secret; callbacks are signed with it at once',
    async (o) => {
      const masterKey = loadMasterKey(loadConfig())
      return withDatabase(async ({ pool }) => {
        await assertMasterKeyOfDatabase(pool, masterKey, oldestSealedSigningSecret)
        return rotateCallbackSecret(pool, masterKey, o.partner, Math.round(o.overlapHours * 3600))
      })
    },
  )

  partner
    .command('revoke-key')
    .description('revoke a request-signing key id at once')
    .requiredOption('--key-id <keyId>', 'the key id to revoke')
    .action(async (options: { keyId: string }) => {
      const revoked = await withDatabase(({ pool }) => revokeSigningKey(pool, options.keyId))
      if (!revoked) throw new Error(`no live key id ${options.keyId}`)
      console.log(`revoked ${options.keyId}`)
    })
}

function rotateCommand(
  partner: Command,
  name: string,
  description: string,
  rotate: (
    options: RotateOptions,
  ) => Promise<{ issued: Partial<Omit<PartnerCredentials, 'partnerId'>>; previousValidUntil: Date }>,
): void {
  partner
    .command(name)
    .description(description)
    .requiredOption('--partner <partnerId>', 'partner id')
    .option(
      '--overlap-hours <hours>',
      'how long the previous credential stays valid',
      parseHours,
      ROTATION_OVERLAP_DEFAULT_S / 3600,
    )
    .option('--json', 'print JSON')
    .action(async (options: RotateOptions) => {
      const rotation = await rotate(options)
      const output = {
        partnerId: options.partner,
        ...rotation.issued,
        previousValidUntil: rotation.previousValidUntil.toISOString(),
      }
      console.log(options.json ? JSON.stringify(output) : formatPairs(output))
      // The development sandbox partner: its saved file (and so the start banner and the scripts) takes the new credential.
      const updated = saveRotatedCredential(loadConfig().dataDir, options.partner, rotation.issued)
      if (updated) console.error(`updated ${updated}`)
    })
}

function formatPairs(values: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(values).map((key) => key.length))
  return Object.entries(values)
    .map(([key, value]) => `${key.padEnd(width)}  ${String(value)}`)
    .join('\n')
}

function parseHours(value: string): number {
  const hours = Number(value)
  if (!Number.isFinite(hours) || hours < 0) throw new InvalidArgumentError('must be a non-negative number of hours')
  return hours
}

function parseUrl(value: string): string {
  try {
    const url = new URL(value)
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not http(s)')
    return value
  } catch {
    throw new InvalidArgumentError('must be an http(s) URL')
  }
}
