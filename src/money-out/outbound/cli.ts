// `rail sandbox …` (sandbox conveniences for developers) and `rail outbound …` (operations).
import { type Command, InvalidArgumentError } from 'commander'
import type { WithPayments } from '../pipeline/service.ts'
import type { WithDatabase } from '../../platform/database-runtime.ts'
import { fundFloat } from './float.ts'
import { requeryOutbound, toOutboundJson } from './service.ts'

export function registerOutboundCommands(program: Command, withPayments: WithPayments): void {
  const outbound = program.command('outbound').description('operate outbound transfers')
  outbound
    .command('requery')
    .description(
      'ask the provider now what happened to an outbound transfer (also resolves an unknown one); prints the transfer',
    )
    .argument('<id>', 'outbound transfer id')
    .action(async (id: string) => {
      const transfer = await withPayments((payments) => requeryOutbound({ pool: payments.pool, payments }, id))
      if (!transfer) throw new Error(`no outbound transfer ${id}`)
      console.log(JSON.stringify(toOutboundJson(transfer), null, 2))
    })
}

export function registerSandboxCommands(
  program: Command,
  withDatabase: WithDatabase,
  maxAmountKobo: () => number,
): void {
  const sandbox = program.command('sandbox').description('sandbox conveniences')
  sandbox
    .command('fund-float')
    .description("fund a sandbox partner's float from its provider settlement account (a balanced ledger transfer)")
    .requiredOption('--partner <partnerId>', 'partner id (a sandbox partner)')
    .requiredOption('--amount <kobo>', 'amount in kobo (integer)', parseKobo)
    .requiredOption(
      '--reference <reference>',
      'one reference funds once: running the command again with it moves no money',
    )
    .option('--json', 'print JSON')
    .action(async (options: { partner: string; amount: number; reference: string; json?: boolean }) => {
      const funding = await withDatabase(({ pool }) =>
        fundFloat(pool, options.partner, options.amount, options.reference, maxAmountKobo()),
      )
      if (options.json) console.log(JSON.stringify(funding))
      else
        console.log(
          `${funding.replayed ? 'already funded' : 'funded'} ${options.amount} kobo; float available ${funding.float.availableBalanceKobo} kobo, booked ${funding.float.bookedBalanceKobo} kobo`,
        )
    })
}

function parseKobo(value: string): number {
  const kobo = Number(value)
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(kobo) || kobo <= 0)
    throw new InvalidArgumentError('must be a positive integer number of kobo')
  return kobo
}
