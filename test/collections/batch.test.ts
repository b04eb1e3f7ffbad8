// Credits applied in a batch: many notices stored while no worker runs, then one apply job takes
// them all in one transaction — persistent and FBO accounts, an intent credited three times, an
// archived account, an invoice (its owner paid, then overpaid), an unknown account — with events
// in the order paid and the other credits' jobs dropped. The ledger verifies.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { collectionsDeps } from '../../src/app.ts'
import { applyCreditBatch } from '../../src/collections/credits/batch.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { outboundDeps } from '../../src/money-out/outbound/service.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { BANK_SECRET, bookedKobo, postBankNotice } from './support.ts'

let app: TestApp

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: BANK_SECRET })
})
afterAll(async () => {
  if (app) await expectLedgerVerified(app.db.pool)
  await app?.close()
})

let serial = 0
async function notice(accountNumber: string, amountKobo: number): Promise<string> {
  serial++
  const body = JSON.stringify({
    type: 'credit.received',
    sessionId: `777${String(Date.now()).slice(-10)}${String(serial).padStart(6, '0')}`,
    accountNumber,
    bankCode: '101',
    amountKobo,
    currency: 'NGN',
    payerName: 'Batch Payer',
    payerAccountNumber: null,
    payerBankCode: null,
    narration: null,
    creditedAt: new Date().toISOString(),
  })
  const answer = await postBankNotice(app.baseUrl, body)
  expect(answer.status).toBe(200)
  return ((await answer.json()) as { creditId: string }).creditId
}

it('applies every waiting credit in one job', async () => {
  const { client, credentials } = await app.newPartner({ customerClass: 'government' })
  const persistent = (
    await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
      reference: randomUUID(),
    })
  ).body
  const archived = (
    await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
      reference: randomUUID(),
    })
  ).body
  await client.post(`/api/v1/rail/virtual-account/${archived.trackingId}/archive`)
  const intent = (
    await client.post<{ id: string; virtualAccount: string }>('/api/v1/rail/payment/intent', {
      reference: randomUUID(),
      amountKobo: 30_000,
    })
  ).body
  const fbo = (
    await client.post<{ virtualAccount: string }>('/api/v1/rail/fbo/provision', { holderRef: 'batch-holder' })
  ).body
  const invoice = (
    await client.post<{ reference: string; virtualAccount: string }>('/api/v1/rail/invoice', {
      reference: randomUUID(),
      title: 'Dues',
      amountKobo: 10_000,
      publishOnCreate: true,
    })
  ).body

  const first = await notice(persistent.virtualAccount, 1_000)
  for (let i = 0; i < 4; i++) await notice(persistent.virtualAccount, 1_000)
  for (let i = 0; i < 3; i++) await notice(intent.virtualAccount, 10_000)
  await notice(archived.virtualAccount, 2_500)
  await notice(archived.virtualAccount, 2_500)
  await notice(fbo.virtualAccount, 700)
  await notice(invoice.virtualAccount, 6_000)
  await notice(invoice.virtualAccount, 6_000)
  await notice(nuban('101', '999999992'), 900)

  // The injected clock, moved a day on: the intents credited are stamped by it.
  const creditedAt = new Date(Date.now() + 86_400_000)
  const deps = collectionsDeps(
    outboundDeps({
      pool: app.db.pool,
      allowLoopbackCallbacks: true,
      payments: { ...app.payments(), clock: { now: () => creditedAt } },
    }),
  )
  await applyCreditBatch(deps, first)
  // One job applied every credit, the invoice's and the unknown account's too; the others' jobs are dropped.
  const waiting = await app.db.pool.query(`SELECT count(*)::int AS n FROM inbound_credits WHERE status = 'received'`)
  expect(waiting.rows[0].n).toBe(0)
  const jobs = await app.db.pool.query(
    `SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'inbound_credit_apply'`,
  )
  expect(jobs.rows[0].n).toBe(1) // the first's own (not run by a worker here)

  const statuses = await app.db.pool.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM inbound_credits GROUP BY status ORDER BY status`,
  )
  expect(statuses.rows).toEqual([
    { status: 'applied', n: 11 },
    { status: 'unattributed', n: 1 },
    { status: 'unmatched', n: 3 }, // two to the archived account, and the invoice's excess
  ])
  const brrs = await app.db.pool.query(
    `SELECT count(*)::int AS n FROM inbound_credits WHERE account_number = $1 AND brr ~ '^BRR[0-9]{17}$'`,
    [persistent.virtualAccount],
  )
  expect(brrs.rows[0].n).toBe(5)
  expect((await client.get<{ status: string }>(`/api/v1/rail/payment/intent/${intent.id}`)).body.status).toBe('paid')
  const stamps = await app.db.pool.query<{ owner_type: string | null; status_changed_at: Date; paid_at: Date | null }>(
    `SELECT owner_type, status_changed_at, paid_at FROM payment_intents WHERE partner_id = $1 ORDER BY owner_type NULLS FIRST`,
    [credentials.partnerId],
  )
  // The stand-alone intent and the invoice's (whose owner decides) were paid in the batch.
  expect(stamps.rows).toEqual([
    { owner_type: null, status_changed_at: creditedAt, paid_at: creditedAt },
    { owner_type: 'invoice', status_changed_at: creditedAt, paid_at: creditedAt },
  ])
  expect(
    (await client.get<{ status: string; amountPaidKobo: number }>(`/api/v1/rail/invoice/${invoice.reference}`)).body,
  ).toMatchObject({ status: 'paid', amountPaidKobo: 10_000 })
  const intentEvents = await app.db.pool.query<{ status: string; received: number }>(
    `SELECT body::json -> 'data' -> 'paymentIntent' ->> 'status' AS status, (body::json -> 'data' -> 'paymentIntent' ->> 'amountReceivedKobo')::int AS received
       FROM events WHERE object_id = $1 AND type = 'credit.confirmed' ORDER BY id`,
    [intent.id],
  )
  const stampedAt = await app.db.pool.query(
    `SELECT DISTINCT created_at, body::json ->> 'timestamp' AS timestamp FROM events WHERE partner_id = $1 AND type = 'credit.confirmed'`,
    [credentials.partnerId],
  )
  expect(stampedAt.rows).toEqual([{ created_at: creditedAt, timestamp: creditedAt.toISOString() }])
  expect(intentEvents.rows).toEqual([
    { status: 'partially_paid', received: 10_000 },
    { status: 'partially_paid', received: 20_000 },
    { status: 'paid', received: 30_000 },
  ])
  const fboEvents = await app.db.pool.query(`SELECT 1 FROM events WHERE type = 'fbo.funding' AND partner_id = $1`, [
    credentials.partnerId,
  ])
  expect(fboEvents.rowCount).toBe(1)
  // Money: every applied kobo in collections and on to the float, the archived account's and the excess in suspense.
  // Settled at once from collections to the float (float mode, the default: docs/settlement.md).
  expect(await bookedKobo(app, credentials.partnerId, 'collections')).toBe(0)
  expect(await bookedKobo(app, credentials.partnerId, 'float')).toBe(5_000 + 30_000 + 700 + 10_000)
  expect(await bookedKobo(app, credentials.partnerId, 'suspense')).toBe(5_000 + 2_000)
  // Running it again changes nothing.
  await applyCreditBatch(deps, first)
  // Settled at once from collections to the float (float mode, the default: docs/settlement.md).
  expect(await bookedKobo(app, credentials.partnerId, 'collections')).toBe(0)
  expect(await bookedKobo(app, credentials.partnerId, 'float')).toBe(45_700)
})

it('keeps a credit that fails its batch from blocking the others: each job retries its own credit as a batch of one, and the failing credit is left out of later batches', async () => {
  const { client, credentials } = await app.newPartner({ customerClass: 'government' })
  const persistent = (
    await client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', { reference: randomUUID() })
  ).body
  const invoice = (
    await client.post<{ virtualAccount: string }>('/api/v1/rail/invoice', {
      reference: randomUUID(),
      title: 'Dues',
      amountKobo: 10_000,
      publishOnCreate: true,
    })
  ).body
  const base = collectionsDeps(
    outboundDeps({ pool: app.db.pool, allowLoopbackCallbacks: true, payments: app.payments() }),
  )
  // An owner that fails on every credit: its credit fails any batch it is in, and fails alone.
  const deps = {
    ...base,
    owners: { ...base.owners, invoice: () => Promise.reject(new Error('the invoice owner is down')) },
  }
  const poison = await notice(invoice.virtualAccount, 4_000)
  const plain = [
    await notice(persistent.virtualAccount, 1_000),
    await notice(persistent.virtualAccount, 2_000),
    await notice(persistent.virtualAccount, 3_000),
  ]
  const status = async (id: string) =>
    (
      await app.db.pool.query<{ status: string; apply_failures: number }>(
        `SELECT status, apply_failures FROM inbound_credits WHERE id = $1`,
        [id],
      )
    ).rows[0]

  // The first plain credit's job: its batch takes the poison credit and fails whole; its own credit is applied alone.
  await applyCreditBatch(deps, plain[0]!)
  expect(await status(plain[0]!)).toEqual({ status: 'applied', apply_failures: 0 })
  expect(await status(plain[1]!)).toEqual({ status: 'received', apply_failures: 0 })
  // The poison credit's own job: fails in its batch and alone, is counted, and its job is retried (it throws).
  await expect(applyCreditBatch(deps, poison)).rejects.toThrow(/the invoice owner is down/)
  expect(await status(poison)).toEqual({ status: 'received', apply_failures: 1 })
  // Later batches leave it out: the next job applies every other credit at once.
  await applyCreditBatch(deps, plain[1]!)
  for (const id of plain) expect((await status(id))!.status).toBe('applied')
  expect(await status(poison)).toEqual({ status: 'received', apply_failures: 1 })
  // Its owner back, its job applies it (alone or in a batch: it is the job's own credit).
  await applyCreditBatch(base, poison)
  expect((await status(poison))!.status).toBe('applied')
  expect(await bookedKobo(app, credentials.partnerId, 'float')).toBe(1_000 + 2_000 + 3_000 + 4_000)
})
