// A signed request sent again within its ±300 s window — a replay by whoever saw it, or the
// client's own identical retry — repeats no effect and undoes no newer change (docs/api.md,
// "Replays and idempotency"). Each replay here is the very same signed request: same timestamp,
// same body, hence the same signature.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { runRail } from '../support/cli.ts'
import { record } from '../support/events.ts'
import { fundFloat } from '../support/float.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'

let app: Rail
let hook: Receiver

beforeAll(async () => {
  app = await startRail({ workers: { events: { retryDelaysMs: [200] } }, receiver: true })
  hook = app.receiver
})
// Closing verifies the ledger before the database is dropped.
afterAll(() => app?.close())

// Tests sign a minute in the past, so that "later" seconds still pass authentication (±300 s);
// one base for the whole file, so that the same offset is the same second in every call.
const BASE_S = Math.floor(Date.now() / 1000) - 60

function signedAt(offsetS: number): number {
  return BASE_S + offsetS
}

async function floatBookedKobo(client: RailClient): Promise<number> {
  return (await client.get<{ bookedBalanceKobo: number }>('/api/v1/rail/float')).body.bookedBalanceKobo
}

describe('POST /api/v1/rail/sandbox/fund-float', () => {
  it('moves the money once however often the signed request comes; another amount under the reference is 409', async () => {
    const { client } = await app.newPartner()
    const timestampS = signedAt(0)
    const body = { amountKobo: 70_000, reference: 'top-up-replayed' }
    const first = await client.post<{ transferId: string }>('/api/v1/rail/sandbox/fund-float', body, { timestampS })
    expect(first.status).toBe(200)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const replays = await Promise.all([1, 2, 3].map(() => client.post<{ transferId: string }>('/api/v1/rail/sandbox/fund-float', body, { timestampS })))
    for (const replay of replays) {
      expect(replay.status).toBe(200)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.body.transferId).toBe(first.body.transferId)
    }
    const conflict = await client.post<{ error: string }>('/api/v1/rail/sandbox/fund-float', { ...body, amountKobo: 70_001 }, { timestampS: signedAt(1) })
    expect(conflict.status).toBe(409)
    expect(conflict.body.error).toBe('idempotency_conflict')
    expect(await floatBookedKobo(client)).toBe(70_000)
    // Another reference is another funding.
    expect((await fundFloat(client, 5_000)).status).toBe(200)
    expect(await floatBookedKobo(client)).toBe(75_000)
  })
})

describe('PATCH /api/v1/rail/settings', () => {
  const older = { callbackUrl: 'http://127.0.0.1:9001/older' }
  const newer = { callbackUrl: 'http://127.0.0.1:9002/newer' }

  it('refuses a change signed before the last one applied (409 stale_request) and changes nothing', async () => {
    const { client } = await app.newPartner()
    expect((await client.patch('/api/v1/rail/settings', older, { timestampS: signedAt(0) })).status).toBe(200)
    expect((await client.patch('/api/v1/rail/settings', newer, { timestampS: signedAt(5) })).status).toBe(200)
    const replayed = await client.patch<{ error: string; details: { lastChangeSignedAt: string } }>('/api/v1/rail/settings', older, { timestampS: signedAt(0) })
    expect(replayed.status).toBe(409)
    expect(replayed.body.error).toBe('stale_request')
    expect(replayed.body.details.lastChangeSignedAt).toBe(new Date(signedAt(5) * 1000).toISOString())
    // Another change, also signed earlier: refused too, whatever it sets.
    expect((await client.patch('/api/v1/rail/settings', { callbackUrl: null }, { timestampS: signedAt(4) })).status).toBe(409)
    expect((await client.get<{ callbackUrl: string }>('/api/v1/rail/settings')).body.callbackUrl).toBe(newer.callbackUrl)
  })

  it('answers an identical retry within the same second with the current settings (200), changing nothing', async () => {
    const { client } = await app.newPartner()
    const timestampS = signedAt(0)
    const first = await client.patch<{ callbackUrl: string }>('/api/v1/rail/settings', newer, { timestampS })
    const retries = await Promise.all([1, 2].map(() => client.patch<{ callbackUrl: string }>('/api/v1/rail/settings', newer, { timestampS })))
    expect([first, ...retries].map((response) => [response.status, response.body.callbackUrl])).toEqual([
      [200, newer.callbackUrl],
      [200, newer.callbackUrl],
      [200, newer.callbackUrl],
    ])
  })

  it('within one second: a new change applies, but an earlier change sent again after it is stale (409, Retry-After: 1)', async () => {
    const { client } = await app.newPartner()
    const timestampS = signedAt(0)
    expect((await client.patch('/api/v1/rail/settings', older, { timestampS })).status).toBe(200)
    expect((await client.patch('/api/v1/rail/settings', newer, { timestampS })).status).toBe(200)
    const replayed = await client.patch<{ error: string }>('/api/v1/rail/settings', older, { timestampS })
    expect(replayed.status).toBe(409)
    expect(replayed.body.error).toBe('stale_request')
    expect(replayed.headers.get('retry-after')).toBe('1')
    expect((await client.get<{ callbackUrl: string }>('/api/v1/rail/settings')).body.callbackUrl).toBe(newer.callbackUrl)
    // Signed again a second later, the same change is new.
    expect((await client.patch<{ callbackUrl: string }>('/api/v1/rail/settings', older, { timestampS: timestampS + 1 })).body.callbackUrl).toBe(older.callbackUrl)
  })
})

describe('rail partner set-callback-url', () => {
  it("counts as a change signed when it ran: a request signed before it cannot undo it", async () => {
    const { credentials, client } = await app.newPartner()
    expect((await client.patch('/api/v1/rail/settings', { callbackUrl: 'http://127.0.0.1:9003/partner' }, { timestampS: signedAt(0) })).status).toBe(200)
    const set = await runRail(['partner', 'set-callback-url', '--partner', credentials.partnerId, '--url', 'http://127.0.0.1:9004/operator'], { DATABASE_URL: app.db.url })
    expect(set.code).toBe(0)
    const late = await client.patch<{ error: string }>('/api/v1/rail/settings', { callbackUrl: null }, { timestampS: signedAt(1) })
    expect([late.status, late.body.error]).toEqual([409, 'stale_request'])
    expect((await client.get<{ callbackUrl: string }>('/api/v1/rail/settings')).body.callbackUrl).toBe('http://127.0.0.1:9004/operator')
    // A request signed now is newer than the operator's change.
    expect((await client.patch('/api/v1/rail/settings', { callbackUrl: null }, { timestampS: Math.floor(Date.now() / 1000) + 1 })).status).toBe(200)
  })
})

describe('PATCH /api/v1/rail/counterparties/{id}', () => {
  it('a replayed archive cannot undo a newer unarchive; an identical retry answers 200', async () => {
    const { client } = await app.newPartner()
    const saved = await client.post<{ id: string }>('/api/v1/rail/counterparties', { accountNumber: '0000000001', bankCode: '058', accountName: 'Ada Obi' })
    expect(saved.status).toBe(201)
    const path = `/api/v1/rail/counterparties/${saved.body.id}`
    expect((await client.patch(path, { archived: true }, { timestampS: signedAt(0) })).status).toBe(200)
    expect((await client.patch(path, { archived: false }, { timestampS: signedAt(2) })).status).toBe(200)
    const retry = await client.patch<{ archived: boolean }>(path, { archived: false }, { timestampS: signedAt(2) })
    expect([retry.status, retry.body.archived]).toEqual([200, false])
    const replayed = await client.patch<{ error: string }>(path, { archived: true }, { timestampS: signedAt(0) })
    expect(replayed.status).toBe(409)
    expect(replayed.body.error).toBe('stale_request')
    expect((await client.get<{ archived: boolean }>(path)).body.archived).toBe(false)
  })
})

describe('POST /api/v1/rail/events/{id}/redeliver', () => {
  async function deliveriesOf(eventId: string): Promise<number> {
    const { rows } = await app.db.pool.query<{ count: string }>(`SELECT count(*) FROM event_deliveries WHERE event_id = $1`, [eventId])
    return Number(rows[0]!.count)
  }

  it('starts one delivery per signed request: a replay starts none and answers the event (202, Idempotent-Replayed)', async () => {
    const { credentials, client } = await app.newPartner({ callbackUrl: hook.url })
    const eventId = await record(app.db.pool, { partnerId: credentials.partnerId, objectId: `replay_${randomUUID()}` })
    const deliveredTo = () => hook.requests.filter((request) => request.headers['x-rail-event-id'] === eventId).length
    await waitFor(() => deliveredTo() === 1, 10_000, 'first delivery')
    await waitFor(async () => (await client.get<{ deliveryStatus: string }>(`/api/v1/rail/events/${eventId}`)).body.deliveryStatus === 'delivered', 10_000, 'delivered')

    const path = `/api/v1/rail/events/${eventId}/redeliver`
    const timestampS = signedAt(0)
    const first = await client.post(path, undefined, { timestampS })
    expect(first.status).toBe(202)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const replays = await Promise.all([1, 2, 3].map(() => client.post(path, undefined, { timestampS })))
    expect(replays.map((replay) => [replay.status, replay.headers.get('idempotent-replayed')])).toEqual([
      [202, 'true'],
      [202, 'true'],
      [202, 'true'],
    ])
    expect(await deliveriesOf(eventId)).toBe(2)
    await waitFor(() => deliveredTo() === 2, 10_000, 'redelivery')
    // The receiver has the redelivery before the worker records it delivered; until then a new
    // request advances that pending delivery instead of starting another.
    await waitFor(async () => (await client.get<{ deliveryStatus: string }>(`/api/v1/rail/events/${eventId}`)).body.deliveryStatus === 'delivered', 10_000, 'redelivered')

    // A new request (signed another second) is a new redelivery.
    expect((await client.post(path, undefined, { timestampS: timestampS + 1 })).status).toBe(202)
    expect(await deliveriesOf(eventId)).toBe(3)
  })
})

describe('POST /api/v1/rail/sandbox/simulate-inbound-credit', () => {
  it('pays in once per signed request: a replay answers the same session and pays nothing', async () => {
    const { client } = await app.newPartner()
    const account = await client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', { reference: randomUUID() })
    expect(account.status).toBe(200)
    const body = { virtualAccount: account.body.virtualAccount, amountKobo: 12_345 }
    const timestampS = signedAt(0)
    const first = await client.post<{ sessionId: string }>('/api/v1/rail/sandbox/simulate-inbound-credit', body, { timestampS })
    expect(first.status).toBe(200)
    const replay = await client.post<{ sessionId: string }>('/api/v1/rail/sandbox/simulate-inbound-credit', body, { timestampS })
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.body.sessionId]).toEqual([200, 'true', first.body.sessionId])
    const paidIn = async () =>
      Number((await app.db.pool.query<{ count: string }>(`SELECT count(*) FROM sandbox_bank.transfers WHERE kind = 'inbound' AND credit_account_number = $1`, [body.virtualAccount])).rows[0]!.count)
    expect(await paidIn()).toBe(1)
    // The same payment signed another second is another payment.
    const second = await client.post<{ sessionId: string }>('/api/v1/rail/sandbox/simulate-inbound-credit', body, { timestampS: timestampS + 1 })
    expect(second.status).toBe(200)
    expect(second.body.sessionId).not.toBe(first.body.sessionId)
    expect(await paidIn()).toBe(2)
  })
})
