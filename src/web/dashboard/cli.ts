// `rail dashboard link [--partner ID] [--operator NAME]`: prints a one-time sign-in URL for the partner's dashboard.
import type { Command } from 'commander'
import { systemClock } from '../../platform/clock.ts'
import { loadConfig, type Config } from '../../platform/config.ts'
import type { WithDatabase } from '../../platform/database-runtime.ts'
import { runningApiUrl } from '../../platform/embedded-db.ts'
import { getPartner, readSandboxPartner } from '../../partners/service.ts'
import { createSignInLink, isOperatorName, LINK_LIFETIME_MS, OPERATOR_MAX } from './service.ts'

export function registerDashboardCommands(program: Command, withDatabase: WithDatabase): void {
  const dashboard = program.command('dashboard').description("the partner dashboard's sign-in")
  dashboard
    .command('link')
    .description(
      `print a one-time sign-in URL for the partner's dashboard (valid ${LINK_LIFETIME_MS / 60_000} minutes)`,
    )
    .option('--partner <id>', 'partner id (default: the sandbox partner `rail serve` saved in the data directory)')
    .option(
      '--operator <name>',
      'who will use it (1–100 printable characters): shown on the dashboard and recorded with each action',
    )
    .action(async (options: { partner?: string; operator?: string }) => {
      if (options.operator !== undefined && !isOperatorName(options.operator)) {
        console.error(
          `--operator: a name of 1–${OPERATOR_MAX} printable characters, without leading or trailing spaces`,
        )
        process.exitCode = 1
        return
      }
      const config = loadConfig()
      const partnerId = options.partner ?? readSandboxPartner(config.dataDir)?.partnerId
      if (partnerId === undefined) {
        console.error(
          `--partner: no sandbox partner saved in ${config.dataDir}; name the partner (npx rail partner list)`,
        )
        process.exitCode = 1
        return
      }
      const link = await withDatabase(async ({ pool }) => {
        if (!/^[0-9a-f-]{36}$/i.test(partnerId) || !(await getPartner(pool, partnerId))) return undefined
        return createSignInLink(pool, systemClock, partnerId, dashboardBaseUrl(config), options.operator ?? null)
      })
      if (!link) {
        console.error(`No partner ${partnerId}`)
        process.exitCode = 1
        return
      }
      console.log(link.url)
    })
}

/**
 * Where the link points: PUBLIC_URL, as checkout links do; else the `rail serve` running on this
 * data directory, wherever it listens (as `rail listen` and scripts/rail-curl.sh find it); else
 * this machine at PORT.
 */
function dashboardBaseUrl(config: Config): string {
  return config.publicUrl ?? runningApiUrl(config.dataDir) ?? `http://127.0.0.1:${config.port}`
}
