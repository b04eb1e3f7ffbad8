// Magic amounts at the sandbox bank (docs/sandbox.md), end to end through Rail's wallet moves:
// each reproduces one path of NIGERIA.md's rules.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { magicAmount } from '../../src/sandbox-bank/magic.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { expectLedgerVerified } from '../support/ledger.ts'

let app: TestApp
let client: RailClient
let walletId: string

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: 'magic-test-secret', providerTimeoutMs: 1_000 })
  client = (await app.newPartner()).client
  walletId = (await client.post<{ walletId: string }>('/wallet', { customerReference: 'magic', name: 'Magic' })).body.walletId
  await client.post('/wallet/credit', { walletId, reference: randomUUID(), amountKobo: 1_000_000, currency: 'NGN' })
})
afterAll(async () => {
  await expectLedgerVerified(app.db.pool)
  await app.close()
})

interface MoveJson {
  status: string
  responseCode: string | null
}

const move = (path: string, amountKobo: number, reference = randomUUID()) => client.post<MoveJson>(path, { walletId, reference, amountKobo, currency: 'NGN' })
const requery = async (reference: string) => (await client.get<MoveJson>(`/transaction/batch/${reference}`)).body

it('knows which amounts are magic', () => {
  expect(magicAmount(19_051)).toEqual({ kind: 'code', code: '51' })
  expect(magicAmount(12_345)).toBeUndefined()
})

it.each([
  [19_051, '51'],
  [19_007, '07'],
])('an amount ending %i is refused with %s: failed, nothing moved', async (amountKobo, code) => {
  const answer = await move('/wallet/debit', amountKobo)
  expect(answer.body).toMatchObject({ status: 'failed', responseCode: code })
})

it('…9009 is pending (09), then successful once settled', async () => {
  const reference = randomUUID()
  expect((await move('/wallet/credit', 19_009, reference)).body).toMatchObject({ status: 'pending', responseCode: '09' })
  await new Promise((resolve) => setTimeout(resolve, 1_100))
  expect(await requery(reference)).toMatchObject({ status: 'successful', responseCode: '00' })
})

it.each([
  [19_097, 'no answer'],
  [19_096, 'a 500'],
])('an amount ending %i gets %s: unknown, and the bank has no record (requery keeps it unknown)', async (amountKobo) => {
  const reference = randomUUID()
  expect((await move('/wallet/debit', amountKobo, reference)).body.status).toBe('unknown')
  expect(await requery(reference)).toMatchObject({ status: 'unknown', responseCode: '25' })
})

it('…9098 loses the answer after the money moved: unknown, then requery finds 00', async () => {
  const reference = randomUUID()
  const before = (await client.get<{ bookedBalanceKobo: number }>(`/wallet/customer?customerId=${walletId}`)).body.bookedBalanceKobo
  expect((await move('/wallet/credit', 19_098, reference)).body.status).toBe('unknown')
  expect(await requery(reference)).toMatchObject({ status: 'successful', responseCode: '00' })
  const after = (await client.get<{ bookedBalanceKobo: number }>(`/wallet/customer?customerId=${walletId}`)).body.bookedBalanceKobo
  expect(after - before).toBe(19_098)
})
