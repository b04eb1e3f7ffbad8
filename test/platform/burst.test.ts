// A burst far larger than the pool, at once, on the wallet, payout and collection routes: every
// request is served or refused before anything is claimed (503 overloaded with Retry-After),
// never a 500; every move that was accepted ends; money is conserved.
import { randomUUID } from 'node:crypto'
import type { Runner } from 'graphile-worker'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startBackgroundWorkers } from '../../src/app.ts'
import type { RailClient, RailResponse } from '../../src/client/index.ts'
import { workerPoolMax } from '../../src/platform/connections.ts'
import { createPool, type Pool } from '../../src/platform/db.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { fundFloat } from '../support/float.ts'
import { PAYEE } from '../support/payments.ts'
import { waitFor } from '../support/wait.ts'

const BANK_SECRET = 'burst-bank-secret'
/** The API's pool: 5 connections, so 20 requests run at once and 80 wait (admissionLimitsFor). */
const POOL_MAX = 5
const WALLETS = 10
const WALLET_OPENING_KOBO = 1_000_000
const FLOAT_KOBO = 10_000_000
const MOVE_KOBO = 1_000
const PER_ROUTE = 350

let app: TestApp
let client: RailClient
let partnerId: string
let workers: Runner
let workerPool: Pool
const walletIds: string[] = []

beforeAll(async () => {
  app = await startTestApp({ poolMax: POOL_MAX, sandboxBankSecret: BANK_SECRET })
  ;({
    client,
    credentials: { partnerId },
  } = await app.newPartner())
  expect((await fundFloat(client, FLOAT_KOBO)).status).toBe(200)
  for (let i = 0; i < WALLETS; i++) {
    const wallet = await client.post<{ walletId: string }>('/wallet', {
      customerReference: `burst-${i}`,
      name: `Burst Holder ${i}`,
    })
    expect(wallet.status).toBe(201)
    walletIds.push(wallet.body.walletId)
    const credit = await client.post('/wallet/credit', {
      walletId: wallet.body.walletId,
      reference: `open-${i}`,
      amountKobo: WALLET_OPENING_KOBO,
      currency: 'NGN',
    })
    expect(credit.status).toBe(200)
  }
  // Workers on a pool of their own, as `rail serve` and `rail worker` run them.
  const concurrency = 8
  workerPool = createPool(app.db.url, workerPoolMax(concurrency), 'rail-worker')
  workers = await startBackgroundWorkers({
    pool: workerPool,
    masterKey: app.masterKey,
    concurrency,
    providers: { sandboxBankUrl: () => app.baseUrl, sandboxBankSecret: BANK_SECRET },
    events: { allowLoopbackCallbacks: true },
  })
}, 120_000)

afterAll(async () => {
  await workers?.stop()
  await workerPool?.end()
  await app?.close()
})

type Kind = 'wallet transfer' | 'outbound' | 'payment intent'

interface Body {
  error?: string
  id?: string
}

interface Sent {
  kind: Kind
  reference: string
  response: RailResponse<Body>
}

function request(kind: Kind, i: number): Promise<Sent> {
  const reference = `${kind.replace(' ', '-')}-${i}-${randomUUID()}`
  const answer = (response: Sent['response']): Sent => ({ kind, reference, response })
  if (kind === 'wallet transfer') {
    const from = walletIds[i % WALLETS]!
    const to = walletIds[(i + 1 + (i % (WALLETS - 1))) % WALLETS]!
    return client
      .post<Body>('/transfer/wallet', {
        walletId: from,
        destinationWalletId: to,
        reference,
        amountKobo: MOVE_KOBO,
        currency: 'NGN',
      })
      .then(answer)
  }
  if (kind === 'outbound') {
    return client
      .post<Body>('/api/v1/rail/outbound', {
        clientReference: reference,
        amountKobo: MOVE_KOBO,
        beneficiaryAccountNumber: PAYEE.accountNumber,
        beneficiaryBankCode: PAYEE.bankCode,
        beneficiaryAccountName: PAYEE.accountName,
        currency: 'NGN',
      })
      .then(answer)
  }
  return client.post<Body>('/api/v1/rail/payment/intent', { reference, amountKobo: MOVE_KOBO }).then(answer)
}

it(`${PER_ROUTE} wallet transfers, ${PER_ROUTE} payouts and ${PER_ROUTE} payment intents at once, on a pool of ${POOL_MAX}: no 5xx but 503 overloaded; everything accepted ends; money conserved`, async () => {
  const kinds: Kind[] = ['wallet transfer', 'outbound', 'payment intent']
  const sent = await Promise.all(
    Array.from({ length: PER_ROUTE * kinds.length }, (_, i) =>
      request(kinds[i % kinds.length]!, Math.floor(i / kinds.length)),
    ),
  )

  const counts: Record<string, number> = {}
  for (const { kind, response } of sent) {
    const key = `${kind} ${response.status}`
    counts[key] = (counts[key] ?? 0) + 1
    if (response.status === 503) {
      expect(response.body.error).toBe('overloaded')
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    } else {
      expect([200, 201, 202], `${kind}: ${response.status} ${JSON.stringify(response.body)}`).toContain(response.status)
    }
  }
  console.log('burst statuses', counts)
  // Larger than the pool by far: some of each kind were served, and the gate refused some.
  for (const kind of kinds)
    expect(
      sent.some((one) => one.kind === kind && one.response.status < 300),
      kind,
    ).toBe(true)
  expect(sent.some((one) => one.response.status === 503)).toBe(true)

  const accepted = (kind: Kind) => sent.filter((one) => one.kind === kind && one.response.status < 300)
  const refused = (kind: Kind) => sent.filter((one) => one.kind === kind && one.response.status === 503)

  // A refused request claimed nothing: no move, payout or intent under its reference.
  const references = (kind: Kind) => refused(kind).map((one) => one.reference)
  expect(
    (
      await app.db.pool.query(`SELECT 1 FROM wallet_moves WHERE partner_id = $1 AND reference = ANY($2)`, [
        partnerId,
        references('wallet transfer'),
      ])
    ).rowCount,
  ).toBe(0)
  expect(
    (
      await app.db.pool.query(`SELECT 1 FROM outbound_transfers WHERE partner_id = $1 AND client_reference = ANY($2)`, [
        partnerId,
        references('outbound'),
      ])
    ).rowCount,
  ).toBe(0)
  expect(
    (
      await app.db.pool.query(`SELECT 1 FROM payment_intents WHERE partner_id = $1 AND reference = ANY($2)`, [
        partnerId,
        references('payment intent'),
      ])
    ).rowCount,
  ).toBe(0)

  // Every accepted wallet transfer ends, and each wallet's available equals its booked balance.
  const moveReferences = accepted('wallet transfer').map((one) => one.reference)
  await waitFor(
    async () => {
      const open = await app.db.pool.query(
        `SELECT 1 FROM wallet_moves WHERE partner_id = $1 AND reference = ANY($2) AND status NOT IN ('successful', 'failed')`,
        [partnerId, moveReferences],
      )
      return open.rowCount === 0
    },
    60_000,
    'accepted wallet transfers to end',
  )
  let bookedTotalKobo = 0
  for (const walletId of walletIds) {
    const balance = await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
      `/wallet/customer?customerId=${walletId}`,
    )
    expect(balance.status).toBe(200)
    expect(balance.body.availableBalanceKobo).toBe(balance.body.bookedBalanceKobo)
    bookedTotalKobo += balance.body.bookedBalanceKobo
  }
  expect(bookedTotalKobo).toBe(WALLETS * WALLET_OPENING_KOBO)

  // Every accepted payout ends: registered confirmed at the sandbox bank once it has it in progress.
  const payoutIds = accepted('outbound').map((one) => one.response.body.id!)
  const registered = new Set<string>()
  await waitFor(
    async () => {
      const { rows } = await app.db.pool.query<{ id: string; status: string }>(
        `SELECT id, state AS status FROM outbound_transfers WHERE id = ANY($1)`,
        [payoutIds],
      )
      for (const row of rows.filter((one) => one.status === 'submitted' && !registered.has(one.id)).slice(0, 20)) {
        const answer = await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: row.id,
          outcome: 'confirmed',
        })
        if (answer.status === 200) registered.add(row.id)
      }
      return rows.every((row) => row.status === 'confirmed' || row.status === 'failed')
    },
    90_000,
    'accepted payouts to end',
  )
  const float = await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>('/api/v1/rail/float')
  const confirmed = (
    await app.db.pool.query<{ total: number }>(
      `SELECT coalesce(sum(amount_kobo), 0)::bigint AS total FROM outbound_transfers WHERE id = ANY($1) AND state = 'confirmed'`,
      [payoutIds],
    )
  ).rows[0]!.total
  expect(float.body.availableBalanceKobo).toBe(float.body.bookedBalanceKobo)
  expect(float.body.bookedBalanceKobo).toBe(FLOAT_KOBO - confirmed)

  // Every accepted payment intent exists once, with its account.
  const intents = await app.db.pool.query(
    `SELECT 1 FROM payment_intents WHERE partner_id = $1 AND reference = ANY($2)`,
    [partnerId, accepted('payment intent').map((one) => one.reference)],
  )
  expect(intents.rowCount).toBe(accepted('payment intent').length)
}, 240_000)
