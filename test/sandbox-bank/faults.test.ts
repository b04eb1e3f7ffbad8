// Fault injection at the sandbox bank, and what Rail makes of it: silence and errors are
// unknown, never failed; a lost answer after the money moved is found by requery and posted once.
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { canonicalRequest, computeSignature } from '../../src/client/signing.ts'
import { decideFault } from '../../src/sandbox/faults.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { expectLedgerVerified } from '../support/ledger.ts'

const SECRET = 'faults-test-secret'
let app: TestApp
let client: RailClient

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: SECRET, providerTimeoutMs: 1_000 })
  client = (await app.newPartner()).client
})
afterEach(async () => setFaults({ noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 }))
afterAll(async () => {
  await expectLedgerVerified(app.db.pool)
  await app.close()
})

async function setFaults(faults: {
  noAnswerRate: number
  errorRate: number
  lostResponseRate: number
  delayMs: number
}): Promise<{ status: number; body: unknown }> {
  const path = '/sandbox-bank/v1/faults'
  const text = JSON.stringify(faults)
  const timestampS = Math.floor(Date.now() / 1000)
  const response = await fetch(`${app.baseUrl}${path}`, {
    method: 'PUT',
    headers: {
      'Content-Type': 'application/json',
      'X-Sandbox-Timestamp': String(timestampS),
      'X-Sandbox-Signature': computeSignature(SECRET, canonicalRequest(timestampS, 'PUT', path, text)),
    },
    body: text,
  })
  return { status: response.status, body: await response.json() }
}

async function newWallet(): Promise<{ walletId: string; accountNumber: string }> {
  return (
    await client.post<{ walletId: string; accountNumber: string }>('/wallet', {
      customerReference: randomUUID(),
      name: 'Fault Test',
    })
  ).body
}

describe('fault switches', () => {
  it('are set and read back, within bounds', async () => {
    expect(await setFaults({ noAnswerRate: 0.1, errorRate: 0.2, lostResponseRate: 0.3, delayMs: 5 })).toEqual({
      status: 200,
      body: { noAnswerRate: 0.1, errorRate: 0.2, lostResponseRate: 0.3, delayMs: 5 },
    })
    expect((await setFaults({ noAnswerRate: 2, errorRate: 0, lostResponseRate: 0, delayMs: 0 })).status).toBe(422)
  })

  it('draw each fault at its rate', () => {
    const draws = [0.05, 0.5, 0.5]
    expect(
      decideFault({ noAnswerRate: 0.1, errorRate: 0, lostResponseRate: 0, delayMs: 0 }, () => draws.shift()!),
    ).toBe('no_answer')
    expect(decideFault({ noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 })).toBe('none')
    expect(decideFault({ noAnswerRate: 0, errorRate: 1, lostResponseRate: 0, delayMs: 0 })).toBe('error')
    expect(decideFault({ noAnswerRate: 0, errorRate: 0, lostResponseRate: 1, delayMs: 0 })).toBe('lose_response')
  })
})

describe('Rail under faults', () => {
  it.each([
    ['no answer', { noAnswerRate: 1, errorRate: 0, lostResponseRate: 0, delayMs: 0 }],
    ['a 500', { noAnswerRate: 0, errorRate: 1, lostResponseRate: 0, delayMs: 0 }],
    ['a slow answer', { noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 1_500 }],
  ])('%s makes the move unknown, never failed, with the amount still held', async (_case, faults) => {
    const wallet = await newWallet()
    const reference = randomUUID()
    await setFaults({ noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 })
    await client.post('/wallet/credit', {
      walletId: wallet.walletId,
      reference: randomUUID(),
      amountKobo: 1_000,
      currency: 'NGN',
    })
    await setFaults(faults)
    const answer = await client.post<{ status: string }>('/wallet/debit', {
      walletId: wallet.walletId,
      reference,
      amountKobo: 400,
      currency: 'NGN',
    })
    expect(answer.body.status).toBe('unknown')
    const balance = await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
      `/wallet/customer?customerId=${wallet.walletId}`,
    )
    expect(balance.body).toEqual(expect.objectContaining({ availableBalanceKobo: 600, bookedBalanceKobo: 1_000 }))
  })

  it('a lost answer after the bank moved the money: requery finds 00 and the ledger posts it once', async () => {
    const wallet = await newWallet()
    await setFaults({ noAnswerRate: 0, errorRate: 0, lostResponseRate: 1, delayMs: 0 })
    const reference = randomUUID()
    const lost = await client.post<{ status: string }>('/wallet/credit', {
      walletId: wallet.walletId,
      reference,
      amountKobo: 2_500,
      currency: 'NGN',
    })
    expect(lost.body.status).toBe('unknown')
    const bank = await app.db.pool.query(`SELECT balance_kobo FROM sandbox_bank.accounts WHERE account_number = $1`, [
      wallet.accountNumber,
    ])
    expect(bank.rows[0].balance_kobo).toBe(2_500) // the bank did move it
    expect(
      (await client.get<{ bookedBalanceKobo: number }>(`/wallet/customer?customerId=${wallet.walletId}`)).body
        .bookedBalanceKobo,
    ).toBe(0)

    await setFaults({ noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 })
    const found = await client.get<{ status: string; responseCode: string }>(`/transaction/batch/${reference}`)
    expect(found.body).toMatchObject({ status: 'successful', responseCode: '00' })
    await client.get(`/transaction/batch/${reference}`)
    expect(
      (await client.get<{ bookedBalanceKobo: number }>(`/wallet/customer?customerId=${wallet.walletId}`)).body
        .bookedBalanceKobo,
    ).toBe(2_500)
    const credits = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM ledger_transfers WHERE code = 'wallet_credit' AND source_id = (SELECT id::text FROM wallet_moves WHERE reference = $1)`,
      [reference],
    )
    expect(credits.rows[0].n).toBe(1)
  })
})
