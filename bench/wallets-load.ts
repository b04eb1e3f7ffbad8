// The load generator of bench:wallets, in a process of its own (as bench:outbound's and the
// ceiling's; bench/signed-load.ts): signed `POST /transfer/wallet` requests between random pairs of
// the wallets listed in BENCH_WALLETS_FILE (a JSON array of wallet ids).
import { readFileSync } from 'node:fs'
import { walletTransferBody } from './request-bodies.ts'
import { runSignedLoad } from './signed-load.ts'

const wallets = JSON.parse(readFileSync(process.env.BENCH_WALLETS_FILE!, 'utf8')) as string[]

await runSignedLoad('/transfer/wallet', () => walletTransferBody(wallets))
