// The `rail` command's commands in full: each with its options, subcommands and action. Loading
// this module loads every feature the commands reach (seconds of work), so src/cli-program.ts
// imports it only when a command is to run or be described in full, never for `rail --help`.
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { Option, type Command } from 'commander'
import { paymentsDeps } from './app.ts'
import { registerPaymentCommands } from './money-out/pipeline/cli.ts'
import type { PaymentsDeps } from './money-out/pipeline/service.ts'
import { ProviderRegistry } from './banking/providers/registry.ts'
import { systemClock } from './platform/clock.ts'
import { runningApiUrl } from './platform/embedded-db.ts'
import { registerLedgerCommands } from './ledger/cli.ts'
import { registerOutboundCommands, registerSandboxCommands } from './money-out/outbound/cli.ts'
import { registerListenCommand } from './events/listen-cli.ts'
import { registerClusterCommand } from './ops/cli.ts'
import { partnerCallbackUrls } from './events/service.ts'
import { registerPartnerCommands } from './partners/cli.ts'
import { registerDashboardCommands } from './web/dashboard/cli.ts'
import { registerProviderCommands } from './banking/providers/cli.ts'
import { loadMasterKey } from './platform/master-key.ts'
import { loadConfig } from './platform/config.ts'
import { openDatabase, type OpenDatabase } from './platform/database-runtime.ts'
import { migrateDatabase } from './platform/migrate.ts'
import { writeSchemaDump } from './platform/schema-dump.ts'
import { runRoles } from './server.ts'

/** Adds every command of `rail` to the program. */
export function registerAllCommands(program: Command): void {
  registerRoleCommands(program)
  registerSchemaCommands(program)
  registerPartnerCommands(program, withDatabase, partnerCallbackUrls)
  registerLedgerCommands(program, withDatabase)
  registerProviderCommands(program, withDatabase)
  registerSandboxCommands(program, withDatabase, () => loadConfig().maxAmountKobo)
  registerOutboundCommands(program, withPayments)
  registerPaymentCommands(program, withPayments)
  registerDashboardCommands(program, withDatabase)
  registerListenCommand(program)
  registerClusterCommand(program)
}

/** serve, api and worker: the processes Rail runs as. */
function registerRoleCommands(program: Command): void {
  program
    .command('serve')
    .description(
      'migrate, then run the API, the workers and the sandbox bank in one process (embedded PostgreSQL unless DATABASE_URL is set)',
    )
    .action(async () => runRoles(loadConfig(), { api: true, worker: true, ownDatabase: true }))

  program
    .command('api')
    .description('run the HTTP API only (production; needs DATABASE_URL, run `rail migrate` first)')
    .action(async () => runRoles(loadConfig(), { api: true, worker: false, ownDatabase: false }))

  program
    .command('worker')
    .description('run background workers only (production; needs DATABASE_URL)')
    .action(async () => runRoles(loadConfig(), { api: false, worker: true, ownDatabase: false }))
}

/** migrate and schema-dump. */
function registerSchemaCommands(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () =>
      withDatabase(async (database) => {
        await migrateDatabase(database.sessionPool)
        console.log(`migrations applied on ${database.description}`)
      }),
    )

  program
    .command('schema-dump')
    .description('write db/schema.sql from a freshly migrated database (development)')
    .addOption(new Option('--out <file>', 'output file').default('db/schema.sql'))
    .action(async (options: { out: string }) =>
      withDatabase(async (database) => {
        await migrateDatabase(database.sessionPool)
        await writeSchemaDump(database.pool, options.out)
        console.log(`wrote ${options.out}`)
      }),
    )
}

/**
 * Runs a command against the database: DATABASE_URL, else the running `rail serve`'s embedded
 * server, else an embedded server started (and migrated) for this command alone.
 */
export async function withDatabase<T>(work: (database: OpenDatabase) => Promise<T>): Promise<T> {
  const database = await openDatabase(loadConfig(), 'share', 2)
  try {
    if (database.embedded) await migrateDatabase(database.sessionPool)
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
  const secret =
    config.sandboxBankSecret ?? (existsSync(secretFile) ? readFileSync(secretFile, 'utf8').trim() : undefined)
  const url = config.sandboxBankUrl ?? runningApiUrl(config.dataDir)
  if (!secret || !url) throw new Error('set SANDBOX_BANK_URL and SANDBOX_BANK_SECRET (or run this beside `rail serve`)')
  return withDatabase(({ pool }) => {
    // The master key opens a real provider's secrets (a requery of a payout it holds).
    const providers = new ProviderRegistry(
      pool,
      { sandboxBankUrl: () => url, sandboxBankSecret: secret },
      undefined,
      loadMasterKey(config),
    )
    const log = (level: string, message: string) => console.error(`${level}: ${message}`)
    return work(paymentsDeps({ pool, providers, clock: systemClock, settings: config.payments, log }))
  })
}
