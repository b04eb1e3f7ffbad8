// `rail dashboard link --partner ID [--operator NAME]`: prints a one-time sign-in URL for the partner's dashboard.
import type { Command } from 'commander'
import { systemClock } from '../platform/clock.ts'
import { loadConfig } from '../platform/config.ts'
import type { WithDatabase } from '../platform/database-runtime.ts'
import { getPartner } from '../partners/service.ts'
import { createSignInLink, isOperatorName, LINK_LIFETIME_MS, OPERATOR_MAX } from './service.ts'

export function registerDashboardCommands(program: Command, withDatabase: WithDatabase): void {
  const dashboard = program.command('dashboard').description("the partner dashboard's sign-in")
  dashboard
    .command('link')
    .description(`print a one-time sign-in URL for the partner's dashboard (valid ${LINK_LIFETIME_MS / 60_000} minutes)`)
    .requiredOption('--partner <id>', 'partner id')
    .option('--operator <name>', "who will use it (1–100 printable characters): shown on the dashboard and recorded with each action")
    .action(async (options: { partner: string; operator?: string }) => {
      if (options.operator !== undefined && !isOperatorName(options.operator)) {
        console.error(`--operator: a name of 1–${OPERATOR_MAX} printable characters, without leading or trailing spaces`)
        process.exitCode = 1
        return
      }
      const config = loadConfig()
      // The server's address when PUBLIC_URL is not set, as checkout links do.
      const baseUrl = config.publicUrl ?? `http://127.0.0.1:${config.port}`
      const link = await withDatabase(async ({ pool }) => {
        if (!/^[0-9a-f-]{36}$/i.test(options.partner) || !(await getPartner(pool, options.partner))) return undefined
        return createSignInLink(pool, systemClock, options.partner, baseUrl, options.operator ?? null)
      })
      if (!link) {
        console.error(`No partner ${options.partner}`)
        process.exitCode = 1
        return
      }
      console.log(link.url)
    })
}
