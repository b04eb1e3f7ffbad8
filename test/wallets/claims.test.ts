// Coalesced claims: many callers' moves claimed in one transaction, each caller with its own
// outcome — one caller's too-little-money, unknown wallet or reused reference fails no other.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import type { PartnerCredentials } from '../../src/partners/service.ts'
import { workCreated } from '../../src/payments/service.ts'
import { withTransaction } from '../../src/platform/db.ts'
import { requestHash } from '../../src/platform/idempotency.ts'
import { claimMoves, type Claim, type MoveRequest } from '../../src/wallets/claims.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { expectLedgerVerified } from '../support/ledger.ts'

let app: TestApp
let client: RailClient
let credentials: PartnerCredentials

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: 'claims-test-secret' })
  ;({ client, credentials } = await app.newPartner())
})
afterAll(async () => {
  await expectLedgerVerified(app.db.pool)
  await app.close()
})

async function fundedWallet(amountKobo: number): Promise<{ walletId: string; accountNumber: string }> {
  const wallet = (await client.post<{ walletId: string; accountNumber: string }>('/wallet', { customerReference: randomUUID(), name: 'Claimer' })).body
  if (amountKobo > 0) expect((await client.post('/wallet/credit', { walletId: wallet.walletId, reference: randomUUID(), amountKobo, currency: 'NGN' })).status).toBe(200)
  return wallet
}

const balance = async (walletId: string) => (await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(`/wallet/customer?customerId=${walletId}`)).body
const bankBalance = async (accountNumber: string) =>
  (await app.db.pool.query(`SELECT balance_kobo FROM sandbox_bank.accounts WHERE account_number = $1`, [accountNumber])).rows[0].balance_kobo as number

describe('one batch, each caller its own outcome', () => {
  it('claimed, too little money, no such wallet, a reference used twice in the batch: decided one by one, and the claimed moves complete', async () => {
    const rich = await fundedWallet(5_000)
    const poor = await fundedWallet(1_000)
    const to = await fundedWallet(0)
    const partner = { id: credentials.partnerId, environment: 'sandbox' as const }
    const claim = (request: Omit<MoveRequest, 'currency'>): Claim => {
      const full = { ...request, currency: 'NGN' }
      return { partner, type: 'wallet_transfer', request: full, hash: requestHash({ type: 'wallet_transfer', ...full }) }
    }
    const twice = randomUUID()
    const claims = [
      claim({ walletId: rich.walletId, destinationWalletId: to.walletId, reference: randomUUID(), amountKobo: 2_000 }),
      claim({ walletId: poor.walletId, destinationWalletId: to.walletId, reference: randomUUID(), amountKobo: 1_001 }), // too little
      claim({ walletId: randomUUID(), destinationWalletId: to.walletId, reference: randomUUID(), amountKobo: 1 }), // no such wallet
      claim({ walletId: rich.walletId, destinationWalletId: to.walletId, reference: twice, amountKobo: 1_000 }),
      claim({ walletId: rich.walletId, destinationWalletId: to.walletId, reference: twice, amountKobo: 1_000 }), // same reference, same batch
      claim({ walletId: poor.walletId, destinationWalletId: to.walletId, reference: randomUUID(), amountKobo: 1_000 }), // all it has
    ]
    const payments = app.payments()
    const outcomes = await withTransaction(app.db.pool, (tx) => claimMoves(app.db.pool, payments, tx, claims))

    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['claimed', 'refused', 'refused', 'claimed', 'taken', 'claimed'])
    expect(outcomes[1]!.kind === 'refused' && outcomes[1]!.error.code).toBe('insufficient_funds')
    expect(outcomes[2]!.kind === 'refused' && outcomes[2]!.error.code).toBe('not_found')
    // The refused claims recorded nothing; their references stay free.
    const recorded = await app.db.pool.query(`SELECT reference FROM wallet_moves WHERE reference = ANY ($1::text[])`, [claims.map((entry) => entry.request.reference)])
    expect(recorded.rows.map((row) => row.reference).sort()).toEqual([claims[0]!.request.reference, twice, claims[5]!.request.reference].sort())
    expect(await balance(poor.walletId)).toEqual(expect.objectContaining({ availableBalanceKobo: 0, bookedBalanceKobo: 1_000 }))

    // Each claimed move is sent by its own caller, and ends.
    for (const outcome of outcomes) if (outcome.kind === 'claimed') await workCreated(payments, outcome.instruction)
    const statuses = await app.db.pool.query(`SELECT status FROM wallet_moves WHERE reference = ANY ($1::text[])`, [claims.map((entry) => entry.request.reference)])
    expect(statuses.rows.map((row) => row.status)).toEqual(['successful', 'successful', 'successful'])
    expect(await balance(rich.walletId)).toEqual(expect.objectContaining({ availableBalanceKobo: 2_000, bookedBalanceKobo: 2_000 }))
    expect(await balance(to.walletId)).toEqual(expect.objectContaining({ availableBalanceKobo: 4_000, bookedBalanceKobo: 4_000 }))
    expect([await bankBalance(rich.accountNumber), await bankBalance(poor.accountNumber), await bankBalance(to.accountNumber)]).toEqual([2_000, 0, 4_000])
  })
})

describe('concurrent moves over HTTP', () => {
  it('one wallet overdrawn by many at once: exactly what it holds moves, the rest are 422, others unaffected, nothing 5xx', async () => {
    const shared = await fundedWallet(10_000)
    const others = await Promise.all(Array.from({ length: 4 }, () => fundedWallet(10_000)))
    const to = await fundedWallet(0)
    const fromShared = Array.from({ length: 20 }, () => ({ walletId: shared.walletId, destinationWalletId: to.walletId, reference: randomUUID(), amountKobo: 1_000, currency: 'NGN' }))
    const fromOthers = others.flatMap((wallet) =>
      Array.from({ length: 5 }, () => ({ walletId: wallet.walletId, destinationWalletId: to.walletId, reference: randomUUID(), amountKobo: 500, currency: 'NGN' })),
    )
    const answers = await Promise.all([...fromShared, ...fromOthers].map((body) => client.post<{ status?: string; error?: string }>('/transfer/wallet', body)))

    expect(answers.filter((answer) => answer.status >= 500)).toEqual([])
    const shares = answers.slice(0, 20)
    expect(shares.filter((answer) => answer.status === 200 && answer.body.status === 'successful')).toHaveLength(10)
    expect(shares.filter((answer) => answer.status === 422 && answer.body.error === 'insufficient_funds')).toHaveLength(10)
    expect(answers.slice(20).every((answer) => answer.status === 200 && answer.body.status === 'successful')).toBe(true)
    expect(await balance(shared.walletId)).toEqual(expect.objectContaining({ availableBalanceKobo: 0, bookedBalanceKobo: 0 }))
    expect(await balance(to.walletId)).toEqual(expect.objectContaining({ availableBalanceKobo: 20_000, bookedBalanceKobo: 20_000 }))
    expect(await bankBalance(shared.accountNumber)).toBe(0)
    expect(await bankBalance(to.accountNumber)).toBe(20_000)
  })
})
