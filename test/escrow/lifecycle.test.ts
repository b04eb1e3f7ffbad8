// Escrow end to end over HTTP with real workers: every row of the contract's state table (docs/contracts/escrow.md §Statuses) and every
// refused transition, the money of each (ledger balances, verifyLedger after), funding through
// the collections seam, expiry by the sweep job, and reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCrontab } from '../../src/app.ts'
import { expireDueEscrows, EXPIRY_SWEEP_TASK } from '../../src/escrow/service.ts'
import type { Clock } from '../../src/platform/clock.ts'
import { addJob } from '../../src/platform/jobs.ts'
import { creditEscrow, createRequest, escrowClient, expiryDeps, moneyOf, type EscrowClient } from '../support/escrow.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { startRail, type Rail } from '../support/rail.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const HOUR_MS = 3_600_000
let app: Rail
/** The workers judge expiry by this clock; tests move it. */
let workerOffsetMs = 0
const workerClock: Clock = { now: () => new Date(Date.now() + workerOffsetMs) }

beforeAll(async () => {
  app = await startRail({ workers: { clock: workerClock } })
})
// Closing verifies the ledger before the database is dropped.
afterAll(() => app?.close())

type Created = Schemas['EscrowCreated']
type EscrowJson = Schemas['Escrow']
type ErrorJson = Schemas['ErrorBody']

async function partner() {
  const { credentials } = await app.newPartner()
  return { partnerId: credentials.partnerId, api: escrowClient(app.baseUrl, credentials.escrowApiKey) }
}

async function created(api: EscrowClient, overrides: Record<string, unknown> = {}): Promise<Created> {
  const response = await api.create<Created>(createRequest(overrides))
  expect(response.status).toBe(201)
  return response.body
}

const read = async (api: EscrowClient, ref: string) =>
  (await api.get<{ success: boolean; escrow: EscrowJson }>(ref)).body.escrow

async function funded(partnerId: string, api: EscrowClient, amount = 50_000) {
  const escrow = await created(api, { amount })
  expect(await creditEscrow(app.db.pool, { partnerId, ref: escrow.ref, amountKobo: amount })).toBe('applied')
  expect((await read(api, escrow.ref)).status).toBe('funded')
  return escrow
}

function expectRefused(response: { status: number; body: unknown }, current: string) {
  expect(response.status).toBe(400)
  expect(response.body).toEqual({
    statusCode: 400,
    error: 'invalid_escrow_status',
    message: expect.stringContaining(` is ${current};`),
  })
}

describe('create and get', () => {
  it('creates an initiated escrow with a contract-shaped ref, expiresAt from ttlHours, and a funding account; get returns the escrow object', async () => {
    const { api } = await partner()
    const before = Date.now()
    const response = await api.create<Created>(
      createRequest({ type: 'services', amount: 10_000, ttlHours: 48, metadata: { orderId: 'A-1', nested: { n: 1 } } }),
    )
    expect(response.status).toBe(201)
    expect(response.headers.get('idempotent-replayed')).toBeNull()
    const body = response.body
    expect(body).toEqual({
      success: true,
      ref: expect.stringMatching(/^EPT-\d+-[A-Za-z0-9]+$/),
      status: 'initiated',
      amount: 10_000,
      currency: 'NGN',
      expiresAt: expect.any(String),
      message: expect.any(String),
      funding: {
        virtualAccount: expect.stringMatching(/^[0-9]{10}$/),
        virtualAccountName: expect.any(String),
        bankCode: '101',
        bankName: 'Providus Bank',
        trackingId: expect.stringMatching(/^trk_/),
        checkoutToken: expect.any(String),
        checkoutUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/checkout\/cht_/),
        amountKobo: 10_000,
        currency: 'NGN',
        expiresAt: body.expiresAt,
      },
    })
    const ttlMs = Date.parse(body.expiresAt) - before
    expect(ttlMs).toBeGreaterThanOrEqual(48 * HOUR_MS - 1_000)
    expect(ttlMs).toBeLessThanOrEqual(48 * HOUR_MS + 5_000)

    const got = await api.get<{ success: boolean; escrow: EscrowJson }>(body.ref)
    expect(got.status).toBe(200)
    expect(got.body.success).toBe(true)
    expect(got.body.escrow).toEqual(
      expect.objectContaining({
        ref: body.ref,
        type: 'services',
        status: 'initiated',
        amount: 10_000,
        fundedAmount: 0,
        currency: 'NGN',
        description: 'A used bicycle',
        payerEmail: 'payer@example.com',
        recipientEmail: 'recipient@example.com',
        metadata: { orderId: 'A-1', nested: { n: 1 } },
        createdAt: expect.any(String),
        expiresAt: body.expiresAt,
        releasedAt: null,
        cancelledAt: null,
        funding: body.funding,
      }),
    )
  })

  it('ttlHours defaults to 24 and metadata to {}', async () => {
    const { api } = await partner()
    const escrow = await created(api)
    const json = await read(api, escrow.ref)
    expect(Date.parse(json.expiresAt) - Date.parse(json.createdAt)).toBe(24 * HOUR_MS)
    expect(json.metadata).toEqual({})
  })

  it("lists the caller's escrows newest first, filtered by status, with a cursor", async () => {
    const { partnerId, api } = await partner()
    const first = await created(api)
    const second = await funded(partnerId, api)
    const third = await created(api)
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await api.list<{ data: EscrowJson[] }>('?limit=100')).body.data.length === 3,
      20_000,
      'the escrows listed',
    )
    const page = await api.list<{ success: boolean; data: EscrowJson[]; nextCursor: string | null }>('?limit=2')
    expect(page.status).toBe(200)
    expect(page.body.data.map((e) => e.ref)).toEqual([third.ref, second.ref])
    const next = await api.list<{ data: EscrowJson[]; nextCursor: string | null }>(
      `?limit=2&cursor=${page.body.nextCursor}`,
    )
    expect(next.body.data.map((e) => e.ref)).toEqual([first.ref])
    expect(next.body.nextCursor).toBeNull()
    const fundedOnly = await api.list<{ data: EscrowJson[] }>('?status=funded')
    expect(fundedOnly.body.data.map((e) => e.ref)).toEqual([second.ref])
  })
})

describe('funding (the collections seam)', () => {
  it('partial credits keep it initiated with the funded amount visible; reaching the amount makes it funded and moves money into holding', async () => {
    const { partnerId, api } = await partner()
    const escrow = await created(api, { amount: 30_000 })
    expect(await creditEscrow(app.db.pool, { partnerId, ref: escrow.ref, amountKobo: 10_000 })).toBe('applied')
    let json = await read(api, escrow.ref)
    expect(json).toEqual(expect.objectContaining({ status: 'initiated', fundedAmount: 10_000, fundedAt: null }))
    expect(await moneyOf(app.db.pool, partnerId, escrow.ref)).toEqual({
      holdingKobo: 10_000,
      payingOutKobo: 0,
      collectionsKobo: 0,
      floatKobo: 0,
    })

    expect(await creditEscrow(app.db.pool, { partnerId, ref: escrow.ref, amountKobo: 20_000 })).toBe('applied')
    json = await read(api, escrow.ref)
    expect(json).toEqual(
      expect.objectContaining({ status: 'funded', fundedAmount: 30_000, fundedAt: expect.any(String) }),
    )
    expect((await moneyOf(app.db.pool, partnerId, escrow.ref)).holdingKobo).toBe(30_000)
    await expectLedgerVerified(app.db.pool)
  })

  it('records when it was funded by the injected clock, not the wall clock', async () => {
    const { partnerId, api } = await partner()
    const escrow = await created(api, { amount: 20_000 })
    const fundedAt = new Date(Date.now() + 3 * 24 * HOUR_MS) // a clock moved three days on
    expect(
      await creditEscrow(app.db.pool, {
        partnerId,
        ref: escrow.ref,
        amountKobo: 20_000,
        clock: { now: () => fundedAt },
      }),
    ).toBe('applied')
    expect(await read(api, escrow.ref)).toEqual(
      expect.objectContaining({ status: 'funded', fundedAt: fundedAt.toISOString() }),
    )
    const credits = await app.db.pool.query<{ applied_at: Date }>(
      `SELECT f.applied_at FROM escrow_funding_credits f JOIN escrows e ON e.id = f.escrow_id WHERE e.ref = $1`,
      [escrow.ref],
    )
    expect(credits.rows.map((row) => row.applied_at.toISOString())).toEqual([fundedAt.toISOString()])
    const events = await app.db.pool.query<{ created_at: Date }>(
      `SELECT created_at FROM events WHERE object_id = $1 AND type = 'escrow.funded'`,
      [escrow.ref],
    )
    expect(events.rows.map((row) => row.created_at.toISOString())).toEqual([fundedAt.toISOString()])
  })

  it('the same credit applied twice moves money once', async () => {
    const { partnerId, api } = await partner()
    const escrow = await created(api, { amount: 20_000 })
    const creditId = crypto.randomUUID()
    expect(await creditEscrow(app.db.pool, { partnerId, ref: escrow.ref, amountKobo: 10_000, creditId })).toBe(
      'applied',
    )
    expect(await creditEscrow(app.db.pool, { partnerId, ref: escrow.ref, amountKobo: 10_000, creditId })).toBe(
      'applied',
    )
    expect((await read(api, escrow.ref)).fundedAmount).toBe(10_000)
    expect((await moneyOf(app.db.pool, partnerId, escrow.ref)).holdingKobo).toBe(10_000)
  })

  it('credits after funded, released, cancelled or expired are unmatched: nothing moves, the credit stays in collections', async () => {
    const { partnerId, api } = await partner()
    const fundedEscrow = await funded(partnerId, api, 20_000)
    const releasedEscrow = await funded(partnerId, api, 20_000)
    expect((await api.release(releasedEscrow.ref)).status).toBe(200)
    const cancelledEscrow = await created(api)
    expect((await api.cancel(cancelledEscrow.ref, { reason: 'buyer withdrew' })).status).toBe(200)
    const expiredEscrow = await created(api, { ttlHours: 1 })
    await expireDueEscrows(expiryDeps(app, { now: () => new Date(Date.parse(expiredEscrow.expiresAt)) }))
    expect((await read(api, expiredEscrow.ref)).status).toBe('expired')

    for (const escrow of [fundedEscrow, releasedEscrow, cancelledEscrow, expiredEscrow]) {
      const before = await moneyOf(app.db.pool, partnerId, escrow.ref)
      const fundedBefore = (await read(api, escrow.ref)).fundedAmount
      expect(await creditEscrow(app.db.pool, { partnerId, ref: escrow.ref, amountKobo: 5_000 })).toBe('unmatched')
      const after = await moneyOf(app.db.pool, partnerId, escrow.ref)
      expect(after).toEqual({ ...before, collectionsKobo: before.collectionsKobo + 5_000 })
      expect((await read(api, escrow.ref)).fundedAmount).toBe(fundedBefore)
    }
    await expectLedgerVerified(app.db.pool)
  })
})

describe('the state table', () => {
  it('funded → release → released: releasedAt set, without a destination the amount moves from holding to the partner’s float', async () => {
    const { partnerId, api } = await partner()
    const escrow = await funded(partnerId, api, 40_000)
    const response = await api.release(escrow.ref, { reason: 'buyer confirmed receipt' })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ success: true, ref: escrow.ref, status: 'released', message: expect.any(String) })
    const json = await read(api, escrow.ref)
    expect(json).toEqual(
      expect.objectContaining({ status: 'released', releasedAt: expect.any(String), cancelledAt: null }),
    )
    expect(await moneyOf(app.db.pool, partnerId, escrow.ref)).toEqual({
      holdingKobo: 0,
      collectionsKobo: 0,
      floatKobo: 40_000,
      payingOutKobo: 0,
    })
    await expectLedgerVerified(app.db.pool)
  })

  it('release without a body (reason is optional)', async () => {
    const { partnerId, api } = await partner()
    const escrow = await funded(partnerId, api)
    expect((await api.release(escrow.ref)).status).toBe(200)
  })

  it('an overfunded escrow releases its amount (to the float, without a destination) and refunds the excess to the payer', async () => {
    const { partnerId, api } = await partner()
    const escrow = await created(api, { amount: 20_000 })
    expect(await creditEscrow(app.db.pool, { partnerId, ref: escrow.ref, amountKobo: 25_000 })).toBe('applied')
    expect((await read(api, escrow.ref)).fundedAmount).toBe(25_000)
    expect((await api.release(escrow.ref)).status).toBe(200)
    expect(await moneyOf(app.db.pool, partnerId, escrow.ref)).toEqual({
      holdingKobo: 0,
      collectionsKobo: 0,
      floatKobo: 20_000,
      payingOutKobo: 5_000,
    })
    await expectLedgerVerified(app.db.pool)
  })

  it('initiated → cancel → cancelled: cancelledAt set; partial funding is refunded to the payer (a payout held on escrow holding)', async () => {
    const { partnerId, api } = await partner()
    const escrow = await created(api, { amount: 30_000 })
    expect(await creditEscrow(app.db.pool, { partnerId, ref: escrow.ref, amountKobo: 12_000 })).toBe('applied')
    const response = await api.cancel(escrow.ref, { reason: 'seller out of stock' })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ success: true, ref: escrow.ref, status: 'cancelled', message: expect.any(String) })
    expect(await read(api, escrow.ref)).toEqual(
      expect.objectContaining({ status: 'cancelled', cancelledAt: expect.any(String), releasedAt: null }),
    )
    expect(await moneyOf(app.db.pool, partnerId, escrow.ref)).toEqual({
      holdingKobo: 0,
      collectionsKobo: 0,
      floatKobo: 0,
      payingOutKobo: 12_000,
    })
    await expectLedgerVerified(app.db.pool)
  })

  it('initiated → cancel with nothing funded moves no money', async () => {
    const { partnerId, api } = await partner()
    const escrow = await created(api)
    expect((await api.cancel(escrow.ref, { reason: 'changed my mind' })).status).toBe(200)
    expect(await moneyOf(app.db.pool, partnerId, escrow.ref)).toEqual({
      holdingKobo: 0,
      collectionsKobo: 0,
      floatKobo: 0,
      payingOutKobo: 0,
    })
  })

  it('funded → cancel → cancelled: the whole amount is refunded to the payer (a payout held on escrow holding)', async () => {
    const { partnerId, api } = await partner()
    const escrow = await funded(partnerId, api, 45_000)
    expect((await api.cancel(escrow.ref, { reason: 'dispute settled for the buyer' })).status).toBe(200)
    expect((await read(api, escrow.ref)).status).toBe('cancelled')
    expect(await moneyOf(app.db.pool, partnerId, escrow.ref)).toEqual({
      holdingKobo: 0,
      collectionsKobo: 0,
      floatKobo: 0,
      payingOutKobo: 45_000,
    })
    await expectLedgerVerified(app.db.pool)
  })

  it('initiated → TTL elapses → expired, exactly at expiresAt and not a millisecond before; partial funding refunded', async () => {
    const { partnerId, api } = await partner()
    const escrow = await created(api, { amount: 30_000, ttlHours: 1 })
    expect(await creditEscrow(app.db.pool, { partnerId, ref: escrow.ref, amountKobo: 7_000 })).toBe('applied')
    const expiresAtMs = Date.parse(escrow.expiresAt)
    await expireDueEscrows(expiryDeps(app, { now: () => new Date(expiresAtMs - 1) }))
    expect((await read(api, escrow.ref)).status).toBe('initiated')
    await expireDueEscrows(expiryDeps(app, { now: () => new Date(expiresAtMs) }))
    const json = await read(api, escrow.ref)
    expect(json).toEqual(
      expect.objectContaining({
        status: 'expired',
        expiredAt: new Date(expiresAtMs).toISOString(),
        releasedAt: null,
        cancelledAt: null,
      }),
    )
    expect(await moneyOf(app.db.pool, partnerId, escrow.ref)).toEqual({
      holdingKobo: 0,
      collectionsKobo: 0,
      floatKobo: 0,
      payingOutKobo: 7_000,
    })
    await expectLedgerVerified(app.db.pool)
  })

  it('the sweep runs as a graphile-worker task on the crontab and expires due escrows; funded ones never expire', async () => {
    expect(buildCrontab()).toContain(`* * * * * ${EXPIRY_SWEEP_TASK}`)
    const { partnerId, api } = await partner()
    const due = await created(api, { ttlHours: 1 })
    const fundedEscrow = await funded(partnerId, api)
    // Each escrow also has its own expiry job, due its time to live after it was made (by the
    // database's clock, which runs jobs; the partner's here is the real one, so at expiresAt).
    const jobs = await app.db.pool.query(`SELECT run_at FROM graphile_worker.jobs WHERE key = $1`, [
      `escrow_expire:${(await app.db.pool.query(`SELECT id FROM escrows WHERE ref = $1`, [due.ref])).rows[0].id}`,
    ])
    expect(jobs.rows).toHaveLength(1)
    const offByMs = Math.abs((jobs.rows[0].run_at as Date).getTime() - Date.parse(due.expiresAt))
    expect(offByMs).toBeLessThan(5_000)

    workerOffsetMs = 25 * HOUR_MS
    try {
      await addJob(app.db.pool, EXPIRY_SWEEP_TASK, {})
      await waitFor(async () => (await read(api, due.ref)).status === 'expired', 10_000, 'expired by the sweep')
    } finally {
      workerOffsetMs = 0
    }
    expect((await read(api, fundedEscrow.ref)).status).toBe('funded')
  })

  const refusals: [string, string, 'release' | 'cancel'][] = [
    ['initiated', 'release', 'release'],
    ['released', 'release', 'release'],
    ['cancelled', 'release', 'release'],
    ['expired', 'release', 'release'],
    ['released', 'cancel', 'cancel'],
    ['cancelled', 'cancel', 'cancel'],
    ['expired', 'cancel', 'cancel'],
  ]
  it.each(refusals)(
    '%s escrow: %s is refused with 400 invalid_escrow_status and changes nothing',
    async (status, _name, operation) => {
      const { partnerId, api } = await partner()
      let ref: string
      if (status === 'initiated') ref = (await created(api)).ref
      else if (status === 'released') {
        ref = (await funded(partnerId, api)).ref
        expect((await api.release(ref)).status).toBe(200)
      } else if (status === 'cancelled') {
        ref = (await funded(partnerId, api)).ref
        expect((await api.cancel(ref, { reason: 'r' })).status).toBe(200)
      } else {
        const escrow = await created(api, { ttlHours: 1 })
        ref = escrow.ref
        expect(await creditEscrow(app.db.pool, { partnerId, ref, amountKobo: 3_000 })).toBe('applied')
        await expireDueEscrows(expiryDeps(app, { now: () => new Date(Date.parse(escrow.expiresAt)) }))
      }
      const before = await read(api, ref)
      const money = await moneyOf(app.db.pool, partnerId, ref)
      const response =
        operation === 'release'
          ? await api.release(ref, { reason: 'again' })
          : await api.cancel(ref, { reason: 'again' })
      expectRefused(response, status)
      expect(await read(api, ref)).toEqual(before)
      expect(await moneyOf(app.db.pool, partnerId, ref)).toEqual(money)
    },
  )

  it('no escrow of the caller: 404 on get, release and cancel, with one body for unknown and for another partner’s', async () => {
    const owner = await partner()
    const other = await partner()
    const escrow = await funded(owner.partnerId, owner.api)
    const theirs = [
      await other.api.get<ErrorJson>(escrow.ref),
      await other.api.release<ErrorJson>(escrow.ref),
      await other.api.cancel<ErrorJson>(escrow.ref, { reason: 'x' }),
    ]
    const unknown = [
      await other.api.get<ErrorJson>('EPT-1-nope'),
      await other.api.release<ErrorJson>('EPT-1-nope'),
      await other.api.cancel<ErrorJson>('EPT-1-nope', { reason: 'x' }),
    ]
    for (const [index, response] of theirs.entries()) {
      expect(response.status).toBe(404)
      expect(response.body).toEqual({ statusCode: 404, error: 'not_found', message: 'Escrow not found' })
      expect(response.body).toEqual(unknown[index]!.body)
    }
    expect((await read(owner.api, escrow.ref)).status).toBe('funded')
    expect((await other.api.list<{ data: unknown[] }>()).body.data).toEqual([])
  })
})
