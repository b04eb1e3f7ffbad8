// The `rail` command: serve | api | worker | migrate | partner … | provider … | ledger … | sandbox … | outbound … | payments … | schema-dump.
// Failures print one line (`rail: <reason>`) and exit non-zero; stack traces only with DEBUG=rail.
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { Command, Option } from 'commander'
import { paymentsDeps } from './app.ts'
import { registerPaymentCommands } from './payments/cli.ts'
import type { PaymentsDeps } from './payments/service.ts'
import { ProviderRegistry } from './providers/registry.ts'
import { systemClock } from './platform/clock.ts'
import { runningApiUrl } from './platform/embedded-db.ts'
import { registerLedgerCommands } from './ledger/cli.ts'
import { registerOutboundCommands, registerSandboxCommands } from './outbound-transfers/cli.ts'
import { registerPartnerCommands } from './partners/cli.ts'
import { registerProviderCommands } from './providers/cli.ts'
import { ConfigError, loadConfig } from './platform/config.ts'
import { openDatabase, type OpenDatabase } from './platform/database-runtime.ts'
import { migrateDatabase } from './platform/migrate.ts'
import { writeSchemaDump } from './platform/schema-dump.ts'
import { runRoles } from './server.ts'

const program = new Command('rail').description('Rail: payments rail for Nigerian partners').showHelpAfterError()

program
  .command('serve')
  .description('migrate, then run the API, the workers and the sandbox bank in one process (embedded PostgreSQL unless DATABASE_URL is set)')
  .action(async () => runRoles(loadConfig(), { api: true, worker: true, ownDatabase: true }))

program
  .command('api')
  .description('run the HTTP API only (production; needs DATABASE_URL, run `rail migrate` first)')
  .action(async () => runRoles(loadConfig(), { api: true, worker: false, ownDatabase: false }))

program
  .command('worker')
  .description('run background workers only (production; needs DATABASE_URL)')
  .action(async () => runRoles(loadConfig(), { api: false, worker: true, ownDatabase: false }))

program
  .command('migrate')
  .description('apply pending database migrations')
  .action(async () =>
    withDatabase(async (database) => {
      await migrateDatabase(database.pool)
      console.log(`migrations applied on ${database.description}`)
    }),
  )

program
  .command('schema-dump')
  .description('write db/schema.sql from a freshly migrated database (development)')
  .addOption(new Option('--out <file>', 'output file').default('db/schema.sql'))
  .action(async (options: { out: string }) =>
    withDatabase(async (database) => {
      await migrateDatabase(database.pool)
      await writeSchemaDump(database.pool, options.out)
      console.log(`wrote ${options.out}`)
    }),
  )

registerPartnerCommands(program, withDatabase)
registerLedgerCommands(program, withDatabase)
registerProviderCommands(program, withDatabase)
registerSandboxCommands(program, withDatabase, () => loadConfig().maxAmountKobo)
registerOutboundCommands(program, withPayments)
registerPaymentCommands(program, withPayments)

/**
 * Runs a command against the database: DATABASE_URL, else the running `rail serve`'s embedded
 * server, else an embedded server started (and migrated) for this command alone.
 */
export async function withDatabase<T>(work: (database: OpenDatabase) => Promise<T>): Promise<T> {
  const database = await openDatabase(loadConfig(), 'share', 2)
  try {
    if (database.embedded) await migrateDatabase(database.pool)
    return await work(database)
  } finally {
    await database.close()
  }
}

/**
 * Runs a command with the payment pipeline: the database as withDatabase finds it, and the bank at
 * SANDBOX_BANK_URL with SANDBOX_BANK_SECRET, or the running `rail serve`'s and its secret file.
 */
async function withPayments<T>(work: (payments: PaymentsDeps) => Promise<T>): Promise<T> {
  const config = loadConfig()
  const secretFile = path.join(config.dataDir, 'sandbox-bank.secret')
  const secret = config.sandboxBankSecret ?? (existsSync(secretFile) ? readFileSync(secretFile, 'utf8').trim() : undefined)
  const url = config.sandboxBankUrl ?? runningApiUrl(config.dataDir)
  if (!secret || !url) throw new Error('set SANDBOX_BANK_URL and SANDBOX_BANK_SECRET (or run this beside `rail serve`)')
  return withDatabase(({ pool }) => {
    const providers = new ProviderRegistry(pool, { sandboxBankUrl: () => url, sandboxBankSecret: secret })
    const log = (level: string, message: string) => console.error(`${level}: ${message}`)
    return work(paymentsDeps({ pool, providers, clock: systemClock, settings: config.payments, log }))
  })
}

try {
  await program.parseAsync(process.argv)
} catch (error) {
  const message = error instanceof Error ? error.message : String(error)
  console.error(`rail: ${message}`)
  if (process.env.DEBUG === 'rail' && error instanceof Error && !(error instanceof ConfigError)) console.error(error.stack)
  process.exit(1)
}
