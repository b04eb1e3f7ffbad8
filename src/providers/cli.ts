// `rail provider list` and `rail provider set NAME CAPABILITY=true|false`.
import { type Command, InvalidArgumentError } from 'commander'
import type { WithDatabase } from '../platform/database-runtime.ts'
import { CAPABILITIES, isCapability, listProviders, setCapability, type Capability, type ProviderProfile } from './service.ts'

export function registerProviderCommands(program: Command, withDatabase: WithDatabase): void {
  const provider = program.command('provider').description('banking providers and their approved capabilities')

  provider
    .command('list')
    .description('list providers with their capabilities')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const providers = await withDatabase(({ pool }) => listProviders(pool))
      if (options.json) console.log(JSON.stringify(providers))
      else for (const p of providers) console.log(describe(p))
    })

  provider
    .command('set')
    .description(`approve or withdraw a capability (${CAPABILITIES.join(', ')})`)
    .argument('<name>', 'provider name')
    .argument('<capability=value>', 'e.g. debit=true', parseSetting)
    .action(async (name: string, setting: { capability: Capability; enabled: boolean }) => {
      const updated = await withDatabase(({ pool }) => setCapability(pool, name, setting.capability, setting.enabled))
      console.log(describe(updated))
    })
}

function describe(provider: ProviderProfile): string {
  const flags = CAPABILITIES.map((capability) => `${capability}=${provider.capabilities[capability]}`).join(' ')
  return `${provider.name.padEnd(20)} adapter=${provider.adapter} ${flags}`
}

function parseSetting(value: string): { capability: Capability; enabled: boolean } {
  const match = /^([A-Za-z]+)=(true|false)$/.exec(value)
  if (!match || !isCapability(match[1]!)) throw new InvalidArgumentError(`expected CAPABILITY=true|false with CAPABILITY one of ${CAPABILITIES.join(', ')}`)
  return { capability: match[1], enabled: match[2] === 'true' }
}
