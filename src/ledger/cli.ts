// `rail ledger verify`: recompute every balance from the transfers and check the invariants.
import type { Command } from 'commander'
import type { WithDatabase } from '../platform/database-runtime.ts'
import { verifyLedger } from './verify.ts'

export function registerLedgerCommands(program: Command, withDatabase: WithDatabase): void {
  const ledger = program.command('ledger').description('inspect the ledger')
  ledger
    .command('verify')
    .description('recompute every balance from the transfers and check the invariants; exits 1 on any discrepancy')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const verification = await withDatabase(({ pool }) => verifyLedger(pool))
      if (options.json) console.log(JSON.stringify(verification))
      else {
        console.log(
          `${verification.ok ? 'ok' : 'DISCREPANCIES'}: ${verification.accountsChecked} accounts, ${verification.transfersChecked} transfers`,
        )
        for (const problem of verification.problems) console.log(`  ${problem}`)
      }
      if (!verification.ok) process.exitCode = 1
    })
}
