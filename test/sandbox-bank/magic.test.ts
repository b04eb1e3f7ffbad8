// Magic amounts at the sandbox bank (docs/sandbox.md), end to end through Rail's wallet moves:
// each reproduces one path of docs/banking.md's rules.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { TIMESTAMP_TOLERANCE_S } from '../../src/client/signing.ts'
import { PROVIDER_CLOCK_SKEW_MS_DEFAULT } from '../../src/money-out/pipeline/decisions.ts'
import { workInstruction } from '../../src/money-out/pipeline/service.ts'
import { getProvider } from '../../src/banking/providers/service.ts'
import { magicAmount, SETTLE_DELAY_MS } from '../../src/sandbox/magic.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { testClock } from '../support/clock.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

/**
 * The payment pipeline's first requery delay here: "no record" sooner than this after a send may
 * be the send still on its way. Long, so that a slow machine never reaches it by itself: the test
 * moves the app's clock past it instead of sleeping.
 */
const FIRST_DELAY_MS = 30_000
const clock = testClock()
let app: TestApp
let client: RailClient
let walletId: string

beforeAll(async () => {
  app = await startTestApp({
    clock,
    sandboxBankSecret: 'magic-test-secret',
    providerTimeoutMs: 1_000,
    payments: { sandbox: { firstDelayMs: FIRST_DELAY_MS, deadlineMs: 10 * FIRST_DELAY_MS } },
  })
  client = (await app.newPartner()).client
  walletId = (await client.post<{ walletId: string }>('/wallet', { customerReference: 'magic', name: 'Magic' })).body
    .walletId
  await client.post('/wallet/credit', { walletId, reference: randomUUID(), amountKobo: 1_000_000, currency: 'NGN' })
})
afterAll(async () => {
  await expectLedgerVerified(app.db.pool)
  await app.close()
})

type MoveJson = Schemas['WalletMove']

/** Requests are signed by the app's clock, which the tests move (Rail checks signatures by it). */
const signedNow = () => ({ timestampS: Math.floor(clock.now().getTime() / 1000) })
const move = (path: string, amountKobo: number, reference = randomUUID()) =>
  client.post<MoveJson>(path, { walletId, reference, amountKobo, currency: 'NGN' }, signedNow())
const requery = async (reference: string) =>
  (await client.get<MoveJson>(`/transaction/batch/${reference}`, signedNow())).body
const moveId = async (reference: string) =>
  (await app.db.pool.query<{ id: string }>(`SELECT id FROM wallet_moves WHERE reference = $1`, [reference])).rows[0]!.id
/** The pipeline's own scheduled step (there are no background workers here): it may send again; a partner's requery never does. */
const pipelineStep = async (reference: string) => workInstruction(app.payments(), await moveId(reference))

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
  expect((await move('/wallet/credit', 19_009, reference)).body).toMatchObject({
    status: 'pending',
    responseCode: '09',
  })
  clock.advance(SETTLE_DELAY_MS + 100)
  expect(await requery(reference)).toMatchObject({ status: 'successful', responseCode: '00' })
})

it('…9097 is a lost request: the first submission gets no answer and the bank has no record (25); sent again, it is done once', async () => {
  const reference = randomUUID()
  expect((await move('/wallet/debit', 19_097, reference)).body.status).toBe('unknown')
  expect(await requery(reference)).toMatchObject({ status: 'unknown', responseCode: '25' })
  clock.advance(FIRST_DELAY_MS + 50)
  // Still no record well after the send: the partner's requery only asks (it sends nothing)...
  expect(await requery(reference)).toMatchObject({ status: 'unknown', responseCode: '25' })
  expect(
    (
      await app.db.pool.query(`SELECT count(*)::int AS n FROM sandbox_bank.transfers WHERE reference = $1`, [
        await moveId(reference),
      ])
    ).rows[0].n,
  ).toBe(0)
  // ...and the pipeline's schedule sends it again, same reference, and the bank does it.
  await pipelineStep(reference)
  expect(await requery(reference)).toMatchObject({ status: 'successful', responseCode: '00' })
  const id = (await app.db.pool.query(`SELECT id FROM wallet_moves WHERE reference = $1`, [reference])).rows[0].id
  expect(
    (await app.db.pool.query(`SELECT count(*)::int AS n FROM sandbox_bank.transfers WHERE reference = $1`, [id]))
      .rows[0].n,
  ).toBe(1)
})

it('…9097 at the bank itself: one of two concurrent first submissions is dropped, the other done', async () => {
  const reference = randomUUID()
  const accountNumber = (await app.db.pool.query(`SELECT account_number FROM wallets WHERE id = $1`, [walletId]))
    .rows[0].account_number as string
  const adapter = await app.payments().providers.adapterFor(await getProvider(app.db.pool, 'sandbox'))
  const submit = () => adapter.credit({ reference, accountNumber, amountKobo: 29_097 })
  const answers = await Promise.all([submit(), submit()])
  expect(answers.map((answer) => answer.outcome).sort()).toEqual(['successful', 'unknown'])
  expect(
    (await app.db.pool.query(`SELECT count(*)::int AS n FROM sandbox_bank.transfers WHERE reference = $1`, [reference]))
      .rows[0].n,
  ).toBe(1)
  expect(
    (
      await app.db.pool.query(`SELECT count(*)::int AS n FROM sandbox_bank.dropped_submissions WHERE reference = $1`, [
        reference,
      ])
    ).rows[0].n,
  ).toBe(1)
})

it('…9096 gets a 500 every time: nothing happens at the bank, each send is retried after "no record", and after 3 sends — once none can still be acted on — it fails as never received', async () => {
  const reference = randomUUID()
  expect((await move('/wallet/debit', 19_096, reference)).body.status).toBe('unknown')
  for (let send = 2; send <= 3; send++) {
    clock.advance(FIRST_DELAY_MS + 50)
    await pipelineStep(reference) // no record: sent again, and 500 again
    expect((await requery(reference)).status).toBe('unknown')
  }
  clock.advance(FIRST_DELAY_MS + 50)
  // Sends spent, no record: but the last send could still reach the bank within its validity window.
  await pipelineStep(reference)
  expect((await requery(reference)).status).toBe('unknown')
  clock.advance(TIMESTAMP_TOLERANCE_S * 1000 + PROVIDER_CLOCK_SKEW_MS_DEFAULT)
  await pipelineStep(reference)
  expect(await requery(reference)).toMatchObject({ status: 'failed', responseCode: '25' })
  const balance = (
    await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
      `/wallet/customer?customerId=${walletId}`,
      signedNow(),
    )
  ).body
  expect(balance.availableBalanceKobo).toBe(balance.bookedBalanceKobo) // the hold was voided
  const id = (await app.db.pool.query(`SELECT id FROM wallet_moves WHERE reference = $1`, [reference])).rows[0].id
  expect(
    (
      await app.db.pool.query(
        `SELECT count(*)::int AS n FROM provider_calls WHERE reference = $1 AND operation = 'debit'`,
        [id],
      )
    ).rows[0].n,
  ).toBe(3)
  expect(
    (await app.db.pool.query(`SELECT count(*)::int AS n FROM sandbox_bank.transfers WHERE reference = $1`, [id]))
      .rows[0].n,
  ).toBe(0)
})

it('…9098 loses the answer after the money moved: unknown, then requery finds 00', async () => {
  const reference = randomUUID()
  const before = (
    await client.get<{ bookedBalanceKobo: number }>(`/wallet/customer?customerId=${walletId}`, signedNow())
  ).body.bookedBalanceKobo
  expect((await move('/wallet/credit', 19_098, reference)).body.status).toBe('unknown')
  expect(await requery(reference)).toMatchObject({ status: 'successful', responseCode: '00' })
  const after = (
    await client.get<{ bookedBalanceKobo: number }>(`/wallet/customer?customerId=${walletId}`, signedNow())
  ).body.bookedBalanceKobo
  expect(after - before).toBe(19_098)
})
