// Wallet moves over signed HTTP against the sandbox bank: credit, debit, wallet transfer and
// requery; fail-closed capabilities; idempotency and races; bad input; and the unknown path,
// where the bank times out and is asked again later.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { addJob } from '../../src/platform/jobs.ts'
import { PROVIDER_TIMEOUT_MS_DEFAULT } from '../../src/banking/providers/http.ts'
import { setCapability } from '../../src/banking/providers/service.ts'
import { WORK_TASK } from '../../src/money-out/pipeline/service.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const SECRET = 'moves-test-secret'
let app: Rail
let client: RailClient
let other: RailClient

// No workers but for one test, which starts them.
beforeAll(async () => {
  app = await startRail({ sandboxBankSecret: SECRET, providerTimeoutMs: 1_000 })
  client = (await app.newPartner()).client
  other = (await app.newPartner()).client
})
afterAll(async () => {
  await expectLedgerVerified(app.db.pool)
  await expectBankAgreesWithLedger()
  await app.close()
})

type MoveJson = Schemas['WalletMove']

async function newWallet(
  as: RailClient = client,
  provider?: string,
): Promise<{ walletId: string; accountNumber: string }> {
  const created = await as.post<{ walletId: string; accountNumber: string }>('/wallet', {
    customerReference: randomUUID(),
    name: 'Test Customer',
    ...(provider ? { provider } : {}),
  })
  expect(created.status).toBe(201)
  return created.body
}

async function balance(
  walletId: string,
  as: RailClient = client,
): Promise<{ availableBalanceKobo: number; bookedBalanceKobo: number }> {
  return (
    await as.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(`/wallet/customer?customerId=${walletId}`)
  ).body
}

async function bankBalance(accountNumber: string): Promise<number> {
  return (
    await app.db.pool.query(`SELECT balance_kobo FROM sandbox_bank.accounts WHERE account_number = $1`, [accountNumber])
  ).rows[0].balance_kobo
}

const credit = (walletId: string, amountKobo: number, reference = randomUUID(), as: RailClient = client) =>
  as.post<MoveJson>('/wallet/credit', { walletId, reference, amountKobo, currency: 'NGN', narration: 'top up' })

/** Every wallet's bank balance equals its booked ledger balance once no move is in flight. */
async function expectBankAgreesWithLedger(): Promise<void> {
  const rows = await app.db.pool.query(
    `SELECT w.id, b.balance_kobo AS bank, a.credits_posted - a.debits_posted AS booked
       FROM wallets w JOIN sandbox_bank.accounts b ON b.account_number = w.account_number JOIN ledger_accounts a ON a.id = w.ledger_account_id
      WHERE NOT EXISTS (SELECT 1 FROM wallet_moves m WHERE m.wallet_id = w.id AND m.status IN ('pending', 'unknown'))`,
  )
  for (const row of rows.rows)
    expect({ wallet: row.id, balance: row.bank }).toEqual({ wallet: row.id, balance: row.booked })
}

describe('credit, debit and wallet transfer', () => {
  it('move money at the bank and in the ledger, in step', async () => {
    const ada = await newWallet()
    const obi = await newWallet()
    const funded = await credit(ada.walletId, 10_000)
    expect(funded.status).toBe(200)
    expect(funded.body).toMatchObject({
      type: 'credit',
      status: 'successful',
      walletId: ada.walletId,
      amountKobo: 10_000,
      currency: 'NGN',
      narration: 'top up',
      provider: 'sandbox',
      responseCode: '00',
    })
    expect(funded.body.providerReference).toMatch(/^\d{30}$/)
    expect(funded.body.completedAt).not.toBeNull()

    const moved = await client.post<MoveJson>('/transfer/wallet', {
      walletId: ada.walletId,
      destinationWalletId: obi.walletId,
      reference: randomUUID(),
      amountKobo: 2_500,
      currency: 'NGN',
    })
    expect(moved.body).toMatchObject({
      type: 'wallet_transfer',
      status: 'successful',
      destinationWalletId: obi.walletId,
      narration: null,
    })
    const spent = await client.post<MoveJson>('/wallet/debit', {
      walletId: obi.walletId,
      reference: randomUUID(),
      amountKobo: 500,
      currency: 'NGN',
    })
    expect(spent.body).toMatchObject({ type: 'debit', status: 'successful' })

    expect(await balance(ada.walletId)).toMatchObject({ availableBalanceKobo: 7_500, bookedBalanceKobo: 7_500 })
    expect(await balance(obi.walletId)).toMatchObject({ availableBalanceKobo: 2_000, bookedBalanceKobo: 2_000 })
    expect([await bankBalance(ada.accountNumber), await bankBalance(obi.accountNumber)]).toEqual([7_500, 2_000])
  })

  it('beyond the available balance: 422 insufficient_funds, nothing recorded, the bank never asked', async () => {
    const wallet = await newWallet()
    await credit(wallet.walletId, 1_000)
    const destinationWalletId = (await newWallet()).walletId
    const calls = await app.db.pool.query(`SELECT count(*)::int AS n FROM provider_calls`)
    for (const [path, extra] of [
      ['/wallet/debit', {}],
      ['/transfer/wallet', { destinationWalletId }],
    ] as const) {
      const reference = randomUUID()
      const refused = await client.post<{ error: string }>(path, {
        walletId: wallet.walletId,
        reference,
        amountKobo: 1_001,
        currency: 'NGN',
        ...extra,
      })
      expect(refused.status).toBe(422)
      expect(refused.body.error).toBe('insufficient_funds')
      expect(
        (await app.db.pool.query(`SELECT count(*)::int AS n FROM wallet_moves WHERE reference = $1`, [reference]))
          .rows[0].n,
      ).toBe(0)
    }
    expect((await app.db.pool.query(`SELECT count(*)::int AS n FROM provider_calls`)).rows[0].n).toBe(calls.rows[0].n)
    expect(await balance(wallet.walletId)).toMatchObject({ availableBalanceKobo: 1_000 })
  })

  it('a decline at the bank fails the move and releases the hold', async () => {
    const wallet = await newWallet()
    await credit(wallet.walletId, 1_000)
    // The bank's books say less than Rail's (money left outside Rail): the bank answers 51.
    await app.db.pool.query(`UPDATE sandbox_bank.accounts SET balance_kobo = 100 WHERE account_number = $1`, [
      wallet.accountNumber,
    ])
    const declined = await client.post<MoveJson>('/wallet/debit', {
      walletId: wallet.walletId,
      reference: randomUUID(),
      amountKobo: 500,
      currency: 'NGN',
    })
    expect(declined.status).toBe(200)
    expect(declined.body).toMatchObject({ status: 'failed', responseCode: '51' })
    expect(await balance(wallet.walletId)).toMatchObject({ availableBalanceKobo: 1_000, bookedBalanceKobo: 1_000 })
    await app.db.pool.query(`UPDATE sandbox_bank.accounts SET balance_kobo = 1000 WHERE account_number = $1`, [
      wallet.accountNumber,
    ])
  })
})

describe('capabilities fail closed', () => {
  it('credit and debit on the restricted provider: 403 naming the capability, nothing recorded; after approval the same reference works', async () => {
    const wallet = await newWallet(client, 'sandbox-restricted')
    const reference = randomUUID()
    const calls = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM provider_calls WHERE provider = 'sandbox-restricted'`,
    )
    const refused = await credit(wallet.walletId, 500, reference)
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({
      error: 'capability_disabled',
      details: { capability: 'merchantCredit', provider: 'sandbox-restricted' },
    })
    const debit = await client.post<{ error: string; details: { capability: string } }>('/wallet/debit', {
      walletId: wallet.walletId,
      reference: randomUUID(),
      amountKobo: 1,
      currency: 'NGN',
    })
    expect(debit.status).toBe(403)
    expect(debit.body.details.capability).toBe('debit')
    expect(
      (await app.db.pool.query(`SELECT count(*)::int AS n FROM wallet_moves WHERE wallet_id = $1`, [wallet.walletId]))
        .rows[0].n,
    ).toBe(0)
    expect(
      (await app.db.pool.query(`SELECT count(*)::int AS n FROM provider_calls WHERE provider = 'sandbox-restricted'`))
        .rows[0].n,
    ).toBe(calls.rows[0].n)

    await setCapability(app.db.pool, 'sandbox-restricted', 'merchantCredit', true)
    try {
      const approved = await credit(wallet.walletId, 500, reference)
      expect(approved.status).toBe(200)
      expect(approved.body.status).toBe('successful')
    } finally {
      await setCapability(app.db.pool, 'sandbox-restricted', 'merchantCredit', false)
    }
  })

  it('on a provider without narration, the move says none was applied (the bank got none)', async () => {
    const wallet = await newWallet(client, 'sandbox-restricted')
    await setCapability(app.db.pool, 'sandbox-restricted', 'merchantCredit', true)
    await setCapability(app.db.pool, 'sandbox-restricted', 'narration', false)
    try {
      const reference = randomUUID()
      const answer = await client.post<MoveJson>('/wallet/credit', {
        walletId: wallet.walletId,
        reference,
        amountKobo: 700,
        currency: 'NGN',
        narration: 'top up',
      })
      expect(answer.status).toBe(200)
      expect(answer.body).toMatchObject({ status: 'successful', narration: null })
      const sent = await app.db.pool.query(
        `SELECT b.narration FROM bank_instructions b JOIN wallet_moves m ON m.id = b.id WHERE m.reference = $1`,
        [reference],
      )
      expect(sent.rows).toEqual([{ narration: null }])
      // The same request again is the same move (the narration is part of what was asked).
      const again = await client.post<MoveJson>('/wallet/credit', {
        walletId: wallet.walletId,
        reference,
        amountKobo: 700,
        currency: 'NGN',
        narration: 'top up',
      })
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect(again.body).toEqual(answer.body)
    } finally {
      await setCapability(app.db.pool, 'sandbox-restricted', 'merchantCredit', false)
      await setCapability(app.db.pool, 'sandbox-restricted', 'narration', true)
    }
  })
})

describe('idempotency', () => {
  it('a replay returns the stored result with Idempotent-Replayed; another body is 409', async () => {
    const wallet = await newWallet()
    const reference = randomUUID()
    const first = await credit(wallet.walletId, 300, reference)
    const again = await credit(wallet.walletId, 300, reference)
    expect(again.status).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(first.body)
    const conflict = await credit(wallet.walletId, 301, reference)
    expect(conflict.status).toBe(409)
    expect((conflict.body as unknown as { error: string }).error).toBe('idempotency_conflict')
    const otherType = await client.post<{ error: string }>('/wallet/debit', {
      walletId: wallet.walletId,
      reference,
      amountKobo: 300,
      currency: 'NGN',
      narration: 'top up',
    })
    expect(otherType.status).toBe(409)
    expect(await balance(wallet.walletId)).toMatchObject({ bookedBalanceKobo: 300 })
  })

  it('concurrent requests with one reference make one move; the others answer at once with it as it stands', async () => {
    const wallet = await newWallet()
    const reference = randomUUID()
    const answers = await Promise.all(Array.from({ length: 6 }, () => credit(wallet.walletId, 700, reference)))
    // The first answers the move's outcome; each other answers at once, never waiting on the first:
    // the stored move as it stands (pending while the bank is asked), or, while the first has not
    // yet recorded it, 409 request_in_progress with Retry-After.
    const first = answers.filter((a) => a.status === 200 && a.headers.get('idempotent-replayed') !== 'true')
    expect(first).toHaveLength(1)
    expect(first[0]!.body.status).toBe('successful')
    for (const replay of answers.filter((a) => a !== first[0])) {
      if (replay.status === 409) {
        expect(replay.body).toMatchObject({ error: 'request_in_progress' })
        expect(Number(replay.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      } else {
        expect(replay.status).toBe(200)
        expect(replay.headers.get('idempotent-replayed')).toBe('true')
        expect(['pending', 'successful']).toContain(replay.body.status)
      }
    }
    // Asked again once it has ended, every replay answers the outcome.
    const again = await credit(wallet.walletId, 700, reference)
    expect(again.status).toBe(200)
    expect(again.body.status).toBe('successful')
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(await bankBalance(wallet.accountNumber)).toBe(700)
    expect(await balance(wallet.walletId)).toMatchObject({ bookedBalanceKobo: 700 })
  })

  it('references are per partner', async () => {
    const mine = await newWallet()
    const theirs = await newWallet(other)
    const reference = randomUUID()
    expect((await credit(mine.walletId, 1, reference)).status).toBe(200)
    expect((await credit(theirs.walletId, 1, reference, other)).status).toBe(200)
  })
})

describe('bad input', () => {
  let walletId: string
  let destinationWalletId: string
  beforeAll(async () => {
    walletId = (await newWallet()).walletId
    destinationWalletId = (await newWallet()).walletId
  })
  const body = (over: Record<string, unknown>) => ({
    walletId,
    reference: randomUUID(),
    amountKobo: 100,
    currency: 'NGN',
    ...over,
  })

  it.each<[string, Record<string, unknown>, number, string]>([
    ['missing walletId', { walletId: undefined }, 422, 'validation_error'],
    ['missing reference', { reference: undefined }, 422, 'validation_error'],
    ['missing amountKobo', { amountKobo: undefined }, 422, 'validation_error'],
    ['missing currency', { currency: undefined }, 422, 'validation_error'],
    ['amount as text', { amountKobo: '100' }, 422, 'validation_error'],
    ['zero amount', { amountKobo: 0 }, 422, 'validation_error'],
    ['negative amount', { amountKobo: -5 }, 422, 'validation_error'],
    ['fractional amount', { amountKobo: 10.5 }, 422, 'validation_error'],
    ['unsafe amount', { amountKobo: 2 ** 53 }, 422, 'validation_error'],
    ['malformed currency', { currency: 'naira' }, 422, 'validation_error'],
    ['another currency', { currency: 'USD' }, 422, 'unsupported_currency'],
    ['unknown field', { fee: 1 }, 422, 'validation_error'],
    ['oversize narration', { narration: 'n'.repeat(101) }, 422, 'validation_error'],
    ['oversize reference', { reference: 'r'.repeat(65) }, 422, 'validation_error'],
    ['unknown wallet', { walletId: '01a20000-0000-7000-8000-000000000000' }, 404, 'not_found'],
  ])('%s → %i %s on every move endpoint, nothing recorded', async (_case, over, status, error) => {
    const endpoints: [string, Record<string, unknown>][] = [
      ['/wallet/credit', {}],
      ['/wallet/debit', {}],
      ['/transfer/wallet', { destinationWalletId }],
      ['/transfer/bank/customer', { destinationAccountNumber: '0000014579', destinationBankCode: '011' }],
    ]
    for (const [path, extra] of endpoints) {
      const request = body({ ...extra, ...over })
      const answer = await client.post<{ error: string }>(path, request)
      expect({ path, status: answer.status, error: answer.body.error }).toEqual({ path, status, error })
      if (typeof request.reference === 'string') {
        expect(
          (
            await app.db.pool.query(`SELECT count(*)::int AS n FROM wallet_moves WHERE reference = $1`, [
              request.reference,
            ])
          ).rows[0].n,
        ).toBe(0)
      }
    }
  })

  it('another partner’s wallet is not found, as source or destination', async () => {
    const theirs = await newWallet(other)
    expect((await credit(theirs.walletId, 1)).status).toBe(404)
    const toTheirs = await client.post('/transfer/wallet', body({ destinationWalletId: theirs.walletId }))
    expect(toTheirs.status).toBe(404)
  })

  it.each<[string, Record<string, unknown>]>([
    ['no destination', {}],
    ['itself as destination', { destinationWalletId: 'self' }],
  ])('wallet transfer with %s → 422', async (_case, over) => {
    const answer = await client.post(
      '/transfer/wallet',
      body(over.destinationWalletId === 'self' ? { destinationWalletId: walletId } : over),
    )
    expect(answer.status).toBe(422)
  })

  it('a wallet at another provider is not a wallet-transfer destination', async () => {
    const restricted = await newWallet(client, 'sandbox-restricted')
    const answer = await client.post<{ details: { fields: { field: string }[] } }>(
      '/transfer/wallet',
      body({ destinationWalletId: restricted.walletId }),
    )
    expect(answer.status).toBe(422)
    expect(answer.body.details.fields[0]!.field).toBe('destinationWalletId')
    expect(destinationWalletId).toBeTruthy()
  })

  it('requery with an oversize reference is 422', async () => {
    const answer = await client.get<{ error: string }>(`/transaction/batch/${'r'.repeat(65)}`)
    expect(answer.status).toBe(422)
    expect(answer.body.error).toBe('validation_error')
  })

  it('requery of an unknown or another partner’s reference is 404', async () => {
    expect((await client.get(`/transaction/batch/${randomUUID()}`)).status).toBe(404)
    const theirs = await newWallet(other)
    const reference = randomUUID()
    await credit(theirs.walletId, 1, reference, other)
    expect((await client.get(`/transaction/batch/${reference}`)).status).toBe(404)
    expect((await other.get<MoveJson>(`/transaction/batch/${reference}`)).body.status).toBe('successful')
  })
})

describe('when the bank does not answer in time', () => {
  it('the move is unknown and the amount held; a later requery that finds 00 posts it exactly once', async () => {
    const wallet = await newWallet()
    const destination = await newWallet()
    await credit(wallet.walletId, 5_000)
    const reference = randomUUID()
    // Hold the bank's row lock on the account: its transfer waits, and Rail's call times out.
    const blocker = await lockBankAccount(wallet.accountNumber)
    let timedOut: MoveJson
    try {
      timedOut = (
        await client.post<MoveJson>('/transfer/wallet', {
          walletId: wallet.walletId,
          destinationWalletId: destination.walletId,
          reference,
          amountKobo: 2_000,
          currency: 'NGN',
        })
      ).body
    } finally {
      await blocker.query('COMMIT')
      blocker.release()
    }
    expect(timedOut.status).toBe('unknown')
    expect(await balance(wallet.walletId)).toMatchObject({ availableBalanceKobo: 3_000, bookedBalanceKobo: 5_000 })

    // The bank finishes the transfer once the lock is gone; requery finds 00 and posts the hold.
    await waitFor(
      async () =>
        (
          await app.db.pool.query(
            `SELECT count(*)::int AS n FROM sandbox_bank.transfers WHERE response_code = '00' AND reference IN (SELECT id::text FROM wallet_moves WHERE reference = $1)`,
            [reference],
          )
        ).rows[0].n === 1,
    )
    const resolved = await client.get<MoveJson>(`/transaction/batch/${reference}`)
    expect(resolved.body).toMatchObject({ status: 'successful', responseCode: '00' })
    const again = await client.get<MoveJson>(`/transaction/batch/${reference}`)
    expect(again.body.status).toBe('successful')
    expect(await balance(wallet.walletId)).toMatchObject({ availableBalanceKobo: 3_000, bookedBalanceKobo: 3_000 })
    expect(await balance(destination.walletId)).toMatchObject({ bookedBalanceKobo: 2_000 })
    const posts = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM ledger_transfers WHERE source_type = 'wallet_move' AND phase = 'post' AND source_id = (SELECT id::text FROM wallet_moves WHERE reference = $1)`,
      [reference],
    )
    expect(posts.rows[0].n).toBe(1)
  })

  it('a requery that finds 51 voids the hold; the resolve job does it on its own', async () => {
    const wallet = await newWallet()
    await credit(wallet.walletId, 5_000)
    const reference = randomUUID()
    const blocker = await lockBankAccount(wallet.accountNumber)
    let timedOut: MoveJson
    try {
      timedOut = (
        await client.post<MoveJson>('/wallet/debit', {
          walletId: wallet.walletId,
          reference,
          amountKobo: 4_000,
          currency: 'NGN',
        })
      ).body
      // Meanwhile the money leaves the account at the bank by another channel: the bank will answer 51.
      await blocker.query(`UPDATE sandbox_bank.accounts SET balance_kobo = 1000 WHERE account_number = $1`, [
        wallet.accountNumber,
      ])
    } finally {
      await blocker.query('COMMIT')
      blocker.release()
    }
    expect(timedOut.status).toBe('unknown')
    await waitFor(
      async () =>
        (
          await app.db.pool.query(
            `SELECT count(*)::int AS n FROM sandbox_bank.transfers WHERE reference IN (SELECT id::text FROM wallet_moves WHERE reference = $1)`,
            [reference],
          )
        ).rows[0].n === 1,
    )

    const moveId = (await app.db.pool.query(`SELECT id FROM wallet_moves WHERE reference = $1`, [reference])).rows[0].id
    await addJob(app.db.pool, WORK_TASK, { id: moveId })
    // The workers ask the bank with production's time limit (the app's 1 s is for the debit that timed out).
    await app.startWorkers({ concurrency: 2, providers: { timeoutMs: PROVIDER_TIMEOUT_MS_DEFAULT } })
    try {
      await waitFor(
        async () => (await client.get<MoveJson>(`/transaction/batch/${reference}`)).body.status === 'failed',
      )
    } finally {
      await app.stopWorkers()
    }
    const failed = await client.get<MoveJson>(`/transaction/batch/${reference}`)
    expect(failed.body).toMatchObject({ status: 'failed', responseCode: '51' })
    expect(await balance(wallet.walletId)).toMatchObject({ availableBalanceKobo: 5_000, bookedBalanceKobo: 5_000 })
    // Put the bank back in step with the ledger for the final agreement check.
    await app.db.pool.query(`UPDATE sandbox_bank.accounts SET balance_kobo = 5000 WHERE account_number = $1`, [
      wallet.accountNumber,
    ])
  })
})

/** A transaction holding the bank's lock on an account, so that the bank's transfers on it wait. */
async function lockBankAccount(accountNumber: string) {
  const blocker = await app.db.pool.connect()
  await blocker.query('BEGIN')
  await blocker.query(`SELECT 1 FROM sandbox_bank.accounts WHERE account_number = $1 FOR UPDATE`, [accountNumber])
  return blocker
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
