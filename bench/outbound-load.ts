// The load generator of bench:outbound, in a process of its own (bench/signed-load.ts): signed
// `POST /api/v1/rail/outbound` submits (BENCH_PATH overrides the path), each to an account of its
// own. The warm-up makes the figure the API's steady state, not its JIT compiling and its database
// connections opening.
import { randomUUID } from 'node:crypto'
import { nuban } from '../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../src/sandbox/names.ts'
import { runSignedLoad } from './signed-load.ts'

let serial = 0

await runSignedLoad(process.env.BENCH_PATH ?? '/api/v1/rail/outbound', () => {
  const account = nuban('058', String(100_000_000 + (serial++ % 899_999_999)).slice(0, 9))
  return {
    clientReference: randomUUID(),
    amountKobo: 100 * (10 + Math.floor(Math.random() * 1_000)), // whole naira: never a magic amount of the sandbox bank
    beneficiaryAccountNumber: account,
    beneficiaryBankCode: '058',
    beneficiaryAccountName: syntheticAccountName('058', account), // the holder's name, as the bank answers it
    currency: 'NGN',
  }
})
