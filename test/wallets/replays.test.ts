// A replayed move answers at once with the move as stored — pending included — and never waits
// for the first request of its reference (it once waited up to 15 s; these tests' 10 s limit
// would fail that).
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

let app: TestApp
let client: RailClient

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: 'replays-test-secret' })
  client = (await app.newPartner()).client
})
afterAll(async () => {
  await expectLedgerVerified(app.db.pool)
  await app.close()
})

type MoveJson = Schemas['WalletMove']

async function fundedWallet(amountKobo = 10_000): Promise<{ walletId: string; accountNumber: string }> {
  const wallet = (
    await client.post<{ walletId: string; accountNumber: string }>('/wallet', {
      customerReference: randomUUID(),
      name: 'Replayer',
    })
  ).body
  expect(
    (
      await client.post('/wallet/credit', {
        walletId: wallet.walletId,
        reference: randomUUID(),
        amountKobo,
        currency: 'NGN',
      })
    ).status,
  ).toBe(200)
  return wallet
}

describe('replays answer at once', () => {
  it('a pending external send: 200 with its stored pending state', { timeout: 10_000 }, async () => {
    const wallet = await fundedWallet()
    // A destination whose transfers the sandbox bank keeps in progress (09) for good.
    const body = {
      walletId: wallet.walletId,
      reference: randomUUID(),
      amountKobo: 3_000,
      currency: 'NGN',
      destinationAccountNumber: nuban('058', '123456999'),
      destinationBankCode: '058',
    }
    const first = await client.post<MoveJson>('/transfer/bank/customer', body)
    expect(first.body).toMatchObject({ status: 'pending', responseCode: '09' })
    const again = await client.post<MoveJson>('/transfer/bank/customer', body)
    expect(again.status).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(first.body)
  })

  it(
    'while the first request is still at the bank: the claimed move, pending, without waiting for the first',
    { timeout: 10_000 },
    async () => {
      const wallet = await fundedWallet()
      const body = { walletId: wallet.walletId, reference: randomUUID(), amountKobo: 4_000, currency: 'NGN' }
      // The bank waits on the wallet's account row, so the first request's send stays in flight.
      const bankLock = await app.db.pool.connect()
      let firstAnswered = false
      try {
        await bankLock.query('BEGIN')
        await bankLock.query(`SELECT 1 FROM sandbox_bank.accounts WHERE account_number = $1 FOR UPDATE`, [
          wallet.accountNumber,
        ])
        const first = client.post<MoveJson>('/wallet/debit', body).finally(() => (firstAnswered = true))
        await waitFor(
          async () =>
            (await app.db.pool.query(`SELECT 1 FROM wallet_moves WHERE reference = $1`, [body.reference])).rowCount ===
            1,
        )

        const again = await client.post<MoveJson>('/wallet/debit', body)
        expect(again.status).toBe(200)
        expect(again.headers.get('idempotent-replayed')).toBe('true')
        expect(again.body).toMatchObject({ reference: body.reference, status: 'pending' })
        expect(firstAnswered).toBe(false) // the bank still holds the first request

        await bankLock.query('COMMIT')
        expect((await first).body.status).toBe('successful')
      } finally {
        await bankLock.query('ROLLBACK').catch(() => {})
        bankLock.release()
      }
      const final = await client.post<MoveJson>('/wallet/debit', body)
      expect(final.body.status).toBe('successful')
    },
  )
})
