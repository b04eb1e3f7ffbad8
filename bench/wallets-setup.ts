// The funded wallets a bench moves money between (bench:wallets, bench:latency): created and
// credited through the real API, as a partner would.
import type { RailClient } from '../src/client/index.ts'

const SETUP_CONCURRENCY = 32
const OPENING_KOBO = 1_000_000_000

/** Creates and funds `count` wallets, SETUP_CONCURRENCY at a time, and answers their ids. */
export async function setUpWallets(client: RailClient, count: number): Promise<string[]> {
  const wallets: string[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async () => {
      while (next < count) {
        const index = next++
        const created = await client.post<{ walletId: string }>('/wallet', {
          customerReference: `bench-${index}`,
          name: `Bench Customer ${index}`,
        })
        if (created.status !== 201) throw new Error(`wallet creation answered ${created.status}`)
        const funded = await client.post<{ status: string }>('/wallet/credit', {
          walletId: created.body.walletId,
          reference: `fund-${index}`,
          amountKobo: OPENING_KOBO,
          currency: 'NGN',
        })
        if (funded.body.status !== 'successful') throw new Error(`funding answered ${funded.body.status}`)
        wallets.push(created.body.walletId)
      }
    }),
  )
  return wallets
}
