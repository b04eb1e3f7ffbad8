// External send (POST /transfer/bank/customer): held in the ledger, accepted by the bank (09),
// settled a moment later and found by requery; magic destinations fail; a name mismatch sends
// nothing; bad destinations are refused.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { systemClock } from '../../src/platform/clock.ts'
import { SETTLE_DELAY_MS } from '../../src/sandbox/magic.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { advanceSandboxClock, testClock } from '../support/clock.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { startRail, type Rail } from '../support/rail.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const SECRET = 'payouts-test-secret'
let app: Rail
let client: RailClient
/** The app's clock, which the sandbox bank settles by: moved on past a transfer's moment instead of waiting for it. */
const clock = testClock()

beforeAll(async () => {
  app = await startRail({ sandboxBankSecret: SECRET, clock })
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
      name: 'Payer',
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

const balance = async (walletId: string) =>
  (
    await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
      `/wallet/customer?customerId=${walletId}`,
    )
  ).body
const bankBalance = async (accountNumber: string) =>
  (await app.db.pool.query(`SELECT balance_kobo FROM sandbox_bank.accounts WHERE account_number = $1`, [accountNumber]))
    .rows[0].balance_kobo as number

function payout(
  walletId: string,
  destinationAccountNumber: string,
  extra: Record<string, unknown> = {},
  reference = randomUUID(),
) {
  return client.post<MoveJson>('/transfer/bank/customer', {
    walletId,
    reference,
    amountKobo: 3_000,
    currency: 'NGN',
    destinationAccountNumber,
    destinationBankCode: '058',
    ...extra,
  })
}

async function settled(reference: string): Promise<MoveJson> {
  clock.advance(SETTLE_DELAY_MS) // the sandbox bank settles a moment after accepting
  return (await client.get<MoveJson>(`/transaction/batch/${reference}`)).body
}

describe('POST /transfer/bank/customer', () => {
  it('holds the amount while the bank processes it, and posts it when requery finds it settled', async () => {
    const wallet = await fundedWallet()
    const account = nuban('058', '123456789')
    const reference = randomUUID()
    const accepted = await payout(
      wallet.walletId,
      account,
      { destinationAccountName: syntheticAccountName('058', account).toLowerCase() },
      reference,
    )
    expect(accepted.status).toBe(200)
    expect(accepted.body).toMatchObject({
      type: 'bank_payout',
      status: 'pending',
      responseCode: '09',
      destinationAccountNumber: account,
      destinationBankCode: '058',
    })
    expect(accepted.body.providerReference).toMatch(/^\d{30}$/)
    expect(await balance(wallet.walletId)).toMatchObject({ availableBalanceKobo: 7_000, bookedBalanceKobo: 10_000 })

    expect(await settled(reference)).toMatchObject({ status: 'successful', responseCode: '00' })
    expect(await balance(wallet.walletId)).toMatchObject({ availableBalanceKobo: 7_000, bookedBalanceKobo: 7_000 })
    expect(await bankBalance(wallet.accountNumber)).toBe(7_000)
  })

  it.each([
    ['005', '05'],
    ['051', '51'],
    ['091', '91'],
  ])(
    'a destination ending %s fails with %s at settlement: the hold is voided and the bank reverses',
    async (ending, code) => {
      const wallet = await fundedWallet()
      const reference = randomUUID()
      expect((await payout(wallet.walletId, nuban('058', `123456${ending}`), {}, reference)).body.status).toBe(
        'pending',
      )
      expect(await settled(reference)).toMatchObject({ status: 'failed', responseCode: code })
      expect(await balance(wallet.walletId)).toMatchObject({ availableBalanceKobo: 10_000, bookedBalanceKobo: 10_000 })
      expect(await bankBalance(wallet.accountNumber)).toBe(10_000)
    },
  )

  it('a name that is not the holder’s fails the move with 08 and sends nothing', async () => {
    const wallet = await fundedWallet()
    const reference = randomUUID()
    const refused = await payout(
      wallet.walletId,
      nuban('058', '222333444'),
      { destinationAccountName: 'Somebody Else' },
      reference,
    )
    expect(refused.status).toBe(200)
    expect(refused.body).toMatchObject({ status: 'failed', responseCode: '08' })
    expect(refused.body.responseMessage).toMatch(/mismatch/i)
    expect(await balance(wallet.walletId)).toMatchObject({ availableBalanceKobo: 10_000, bookedBalanceKobo: 10_000 })
    const sent = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM sandbox_bank.transfers WHERE kind = 'interbank' AND reference = (SELECT id::text FROM wallet_moves WHERE reference = $1)`,
      [reference],
    )
    expect(sent.rows[0].n).toBe(0)
  })

  it('the requery schedule resolves a payout by itself', async () => {
    const wallet = await fundedWallet()
    const reference = randomUUID()
    expect(
      (await payout(wallet.walletId, nuban('033', '444555666'), { destinationBankCode: '033' }, reference)).body.status,
    ).toBe('pending')
    // The workers keep the system's time; only the bank's (the app's clock) and the partner's sandbox clock move.
    await app.startWorkers({ concurrency: 2, clock: systemClock })
    try {
      // Once the bank's clock is past its moment after accepting, the partner's clock moves past the
      // first requery of the schedule (5 s): neither is waited for.
      const id = (
        await app.db.pool.query<{ id: string }>(`SELECT id FROM wallet_moves WHERE reference = $1`, [reference])
      ).rows[0]!.id
      clock.advance(SETTLE_DELAY_MS)
      const bankSettled = async () =>
        (
          await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1 AND settles_at <= $2`, [
            id,
            clock.now(),
          ])
        ).rowCount === 1
      await waitFor(bankSettled, 10_000, 'the bank settled')
      await advanceSandboxClock(client, 5)
      const deadline = Date.now() + 20_000
      let status = 'pending'
      while (status !== 'successful' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250))
        status = (await app.db.pool.query(`SELECT status FROM wallet_moves WHERE reference = $1`, [reference])).rows[0]
          .status
      }
      expect(status).toBe('successful')
    } finally {
      await app.stopWorkers()
    }
  })

  it('a destination that never settles stays pending, its hold in place', async () => {
    const wallet = await fundedWallet()
    const reference = randomUUID()
    await payout(wallet.walletId, nuban('058', '123456999'), {}, reference)
    expect(await settled(reference)).toMatchObject({ status: 'pending', responseCode: '09' })
    expect(await balance(wallet.walletId)).toMatchObject({ availableBalanceKobo: 7_000, bookedBalanceKobo: 10_000 })
  })

  it.each<[string, Record<string, unknown>, number, string, string | undefined]>([
    ['an unknown bank code', { destinationBankCode: '999' }, 422, 'validation_error', 'destinationBankCode'],
    [
      'a bad check digit',
      { destinationAccountNumber: '1234567890' },
      422,
      'validation_error',
      'destinationAccountNumber',
    ],
    [
      'a 9-digit account',
      { destinationAccountNumber: '123456789' },
      422,
      'validation_error',
      'destinationAccountNumber',
    ],
    [
      'no destination account',
      { destinationAccountNumber: undefined },
      422,
      'validation_error',
      'destinationAccountNumber',
    ],
    ['no bank code', { destinationBankCode: undefined }, 422, 'validation_error', 'destinationBankCode'],
    ['more than the balance', { amountKobo: 10_001 }, 422, 'insufficient_funds', undefined],
    ['an unknown field', { beneficiaryPhone: '080' }, 422, 'validation_error', 'beneficiaryPhone'],
  ])('%s → %i %s, nothing recorded', async (_case, over, status, error, field) => {
    const wallet = await fundedWallet()
    const reference = randomUUID()
    const answer = await client.post<{ error: string; details?: { fields?: { field: string }[] } }>(
      '/transfer/bank/customer',
      {
        walletId: wallet.walletId,
        reference,
        amountKobo: 3_000,
        currency: 'NGN',
        destinationAccountNumber: nuban('058', '123456789'),
        destinationBankCode: '058',
        ...over,
      },
    )
    expect(answer.status).toBe(status)
    expect(answer.body.error).toBe(error)
    if (field) expect(answer.body.details?.fields?.map((f) => f.field)).toContain(field)
    expect(
      (await app.db.pool.query(`SELECT count(*)::int AS n FROM wallet_moves WHERE reference = $1`, [reference])).rows[0]
        .n,
    ).toBe(0)
  })
})
