// The bodies of the benches' signed requests, one maker per operation, shared by the closed-loop
// load generators (bench/wallets-load.ts, bench/outbound-load.ts) and the open-loop one
// (bench/latency-load.ts), so that every bench sends the same requests.
import { randomUUID } from 'node:crypto'
import { nuban } from '../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../src/sandbox/names.ts'

/** A wallet transfer between two different wallets picked at random from `wallets`. */
export function walletTransferBody(wallets: readonly string[]): Record<string, unknown> {
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
}

let serial = 0

/** An outbound transfer submit, each to an account of its own (the serial makes the NUBAN). */
export function outboundSubmitBody(): Record<string, unknown> {
  const account = nuban('058', String(100_000_000 + (serial++ % 899_999_999)).slice(0, 9))
  return {
    clientReference: randomUUID(),
    amountKobo: 100 * (10 + Math.floor(Math.random() * 1_000)), // whole naira: never a magic amount of the sandbox bank
    beneficiaryAccountNumber: account,
    beneficiaryBankCode: '058',
    beneficiaryAccountName: syntheticAccountName('058', account), // the holder's name, as the bank answers it
    currency: 'NGN',
  }
}

/** A payment intent of a whole-naira amount, its virtual account allocated at the sandbox bank during the request. */
export function paymentIntentBody(): Record<string, unknown> {
  return { reference: randomUUID(), amountKobo: 100 * (100 + Math.floor(Math.random() * 10_000)) }
}

/** The operations bench:latency measures: each one's path (its route) and the body of each request. */
export const SIGNED_OPERATIONS = {
  wallets: { path: '/transfer/wallet', bodyOf: walletTransferBody },
  outbound: { path: '/api/v1/rail/outbound', bodyOf: () => outboundSubmitBody() },
  intents: { path: '/api/v1/rail/payment/intent', bodyOf: () => paymentIntentBody() },
  // The ceiling's API (bench/wallets-ceiling.ts) reads a clientReference, as an outbound submit has.
  ceiling: { path: '/transfer/wallet', bodyOf: () => outboundSubmitBody() },
} satisfies Record<string, { path: string; bodyOf: (wallets: readonly string[]) => Record<string, unknown> }>

export type SignedOperation = keyof typeof SIGNED_OPERATIONS
