// The load generator of bench:wallets, in a process of its own (as bench:outbound's and the
// ceiling's; bench/signed-load.ts): signed `POST /transfer/wallet` requests between random pairs of
// the wallets listed in BENCH_WALLETS_FILE (a JSON array of wallet ids).
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { runSignedLoad } from './signed-load.ts'

const wallets = JSON.parse(readFileSync(process.env.BENCH_WALLETS_FILE!, 'utf8')) as string[]

await runSignedLoad('/transfer/wallet', () => {
  const from = wallets[Math.floor(Math.random() * wallets.length)]!
  let to = from
  while (to === from) to = wallets[Math.floor(Math.random() * wallets.length)]!
  // 1..1,000 kobo: never a magic amount of the sandbox bank (those end in 9xxx).
  return {
    walletId: from,
    destinationWalletId: to,
    reference: randomUUID(),
    amountKobo: 1 + Math.floor(Math.random() * 1_000),
    currency: 'NGN',
  }
})
