// Sandbox test clocks: GET and POST /api/v1/rail/sandbox/clock[/advance] — a sandbox partner's
// time moves forward by what it asks and nobody else's does; live partners are refused as by
// every sandbox route; bad input is 422 with nothing changed; what the advance makes due
// (an intent's expiry, an escrow's) runs at once, judged by that partner's time.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADVANCE_SECONDS_MAX, OFFSET_SECONDS_MAX } from '../../src/partners/sandbox-clock/service.ts'
import { createRequest, escrowClient } from '../support/escrow.ts'
import { startRail, type Rail } from '../support/rail.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

type ClockJson = Schemas['SandboxClock']

let app: Rail

beforeAll(async () => {
  app = await startRail({ workers: { concurrency: 2 } })
})
afterAll(() => app?.close())

/** The clock's time less real time, in seconds (a request's own duration aside). */
function aheadSeconds(clock: ClockJson): number {
  return Math.round((new Date(clock.now).getTime() - Date.now()) / 1000)
}

describe('the sandbox clock', () => {
  it('starts at real time and moves forward by what is asked, for the caller only', async () => {
    const { client } = await app.newPartner()
    const other = (await app.newPartner()).client
    const start = await client.get<ClockJson>('/api/v1/rail/sandbox/clock')
    expect(start.status).toBe(200)
    expect(start.body.offsetSeconds).toBe(0)
    expect(Math.abs(aheadSeconds(start.body))).toBeLessThanOrEqual(2)

    const moved = await client.post<ClockJson>('/api/v1/rail/sandbox/clock/advance', { seconds: 3_600 })
    expect(moved.status).toBe(200)
    expect(moved.body.offsetSeconds).toBe(3_600)
    expect(aheadSeconds(moved.body)).toBeGreaterThanOrEqual(3_598)
    expect(aheadSeconds(moved.body)).toBeLessThanOrEqual(3_602)
    const again = await client.post<ClockJson>('/api/v1/rail/sandbox/clock/advance', { seconds: ADVANCE_SECONDS_MAX })
    expect(again.body.offsetSeconds).toBe(3_600 + ADVANCE_SECONDS_MAX)
    expect((await client.get<ClockJson>('/api/v1/rail/sandbox/clock')).body.offsetSeconds).toBe(
      3_600 + ADVANCE_SECONDS_MAX,
    )

    // Someone else's time is unaffected.
    const theirs = await other.get<ClockJson>('/api/v1/rail/sandbox/clock')
    expect(theirs.body.offsetSeconds).toBe(0)
    expect(Math.abs(aheadSeconds(theirs.body))).toBeLessThanOrEqual(2)
  })

  it('moves once for one request with its Idempotency-Key: the same request again (a retry, a replay) moves nothing', async () => {
    const { client } = await app.newPartner()
    const timestampS = Math.floor(Date.now() / 1000)
    const keyed = { timestampS, headers: { 'Idempotency-Key': randomUUID() } }
    const first = await client.post<ClockJson>('/api/v1/rail/sandbox/clock/advance', { seconds: 600 }, keyed)
    expect(first.body.offsetSeconds).toBe(600)
    const replays = await Promise.all(
      [1, 2].map(() => client.post<ClockJson>('/api/v1/rail/sandbox/clock/advance', { seconds: 600 }, keyed)),
    )
    for (const replay of replays) {
      expect(replay.status).toBe(200)
      expect(replay.headers.get('idempotent-replayed')).toBe('true')
      expect(replay.body.offsetSeconds).toBe(600)
    }
    // A new request (another key) moves it again.
    expect(
      (
        await client.post<ClockJson>(
          '/api/v1/rail/sandbox/clock/advance',
          { seconds: 600 },
          { headers: { 'Idempotency-Key': randomUUID() } },
        )
      ).body.offsetSeconds,
    ).toBe(1_200)
  })

  it('is 404 for live partners, as every sandbox route, and changes nothing', async () => {
    const { credentials, client } = await app.newPartner({ environment: 'live' })
    const read = await client.get<{ error: string }>('/api/v1/rail/sandbox/clock')
    expect(read.status).toBe(404)
    expect(read.body.error).toBe('not_found')
    const advance = await client.post<{ error: string }>('/api/v1/rail/sandbox/clock/advance', { seconds: 60 })
    expect(advance.status).toBe(404)
    expect(advance.body.error).toBe('not_found')
    const { rows } = await app.db.pool.query(`SELECT 1 FROM sandbox_clocks WHERE partner_id = $1`, [
      credentials.partnerId,
    ])
    expect(rows).toHaveLength(0)
  })

  it.each([
    ['no seconds', {}],
    ['zero (time never stands still or moves back)', { seconds: 0 }],
    ['negative', { seconds: -60 }],
    ['fractional', { seconds: 1.5 }],
    ['a string', { seconds: '60' }],
    ['null', { seconds: null }],
    ['more than 366 days at once', { seconds: ADVANCE_SECONDS_MAX + 1 }],
    ['an unknown field', { seconds: 60, partnerId: randomUUID() }],
  ])('refuses %s with 422 and leaves the clock where it was', async (_case, body) => {
    const { client } = await app.newPartner()
    await client.post('/api/v1/rail/sandbox/clock/advance', { seconds: 120 })
    const refused = await client.post<{ statusCode: number; error: string; message: string }>(
      '/api/v1/rail/sandbox/clock/advance',
      body,
    )
    expect(refused.status).toBe(422)
    expect(refused.body).toMatchObject({ statusCode: 422, error: 'validation_error' })
    expect((await client.get<ClockJson>('/api/v1/rail/sandbox/clock')).body.offsetSeconds).toBe(120)
  })

  it('refuses to take a clock more than 100 years ahead (422, nothing changed)', async () => {
    const { credentials, client } = await app.newPartner()
    await client.post('/api/v1/rail/sandbox/clock/advance', { seconds: 60 })
    // Arranged directly: reaching the bound by the route would take a hundred calls.
    await app.db.pool.query(`UPDATE sandbox_clocks SET offset_seconds = $2 WHERE partner_id = $1`, [
      credentials.partnerId,
      OFFSET_SECONDS_MAX - 10,
    ])
    const refused = await client.post<{ error: string; details: { fields: { field: string }[] } }>(
      '/api/v1/rail/sandbox/clock/advance',
      { seconds: 11 },
    )
    expect(refused.status).toBe(422)
    expect(refused.body.error).toBe('validation_error')
    expect(refused.body.details.fields[0]!.field).toBe('seconds')
    expect((await client.get<ClockJson>('/api/v1/rail/sandbox/clock')).body.offsetSeconds).toBe(OFFSET_SECONDS_MAX - 10)
    expect(
      (await client.post<ClockJson>('/api/v1/rail/sandbox/clock/advance', { seconds: 10 })).body.offsetSeconds,
    ).toBe(OFFSET_SECONDS_MAX)
  })
})

describe('what an advance makes due', () => {
  it("expires the caller's intents past their expiry at once, and nobody else's", async () => {
    const { client } = await app.newPartner()
    const other = (await app.newPartner()).client
    const inOneHour = new Date(Date.now() + 3_600_000).toISOString()
    const mine = (
      await client.post<{ id: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 10_000,
        expiresAt: inOneHour,
      })
    ).body
    const later = (
      await client.post<{ id: string }>('/api/v1/rail/payment/intent', { reference: randomUUID(), amountKobo: 10_000 })
    ).body
    const theirs = (
      await other.post<{ id: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 10_000,
        expiresAt: inOneHour,
      })
    ).body

    expect((await client.post('/api/v1/rail/sandbox/clock/advance', { seconds: 2 * 3_600 })).status).toBe(200)
    const statusOf = async (api: typeof client, id: string) =>
      (await api.get<{ status: string }>(`/api/v1/rail/payment/intent/${id}`)).body.status
    await waitFor(async () => (await statusOf(client, mine.id)) === 'expired', 10_000, 'the intent expired')
    expect(await statusOf(client, later.id)).toBe('pending') // its default expiry is 24 hours away
    expect(await statusOf(other, theirs.id)).toBe('pending')
  })

  it('judges what the partner asks for by its own time: an expiry in its past is refused', async () => {
    const { client } = await app.newPartner()
    await client.post('/api/v1/rail/sandbox/clock/advance', { seconds: 2 * 3_600 })
    const inOneHour = new Date(Date.now() + 3_600_000).toISOString() // real time, but in the partner's past
    const refused = await client.post<{ error: string }>('/api/v1/rail/payment/intent', {
      reference: randomUUID(),
      amountKobo: 10_000,
      expiresAt: inOneHour,
    })
    expect(refused.status).toBe(422)
    const intent = (
      await client.post<{ expiresAt: string }>('/api/v1/rail/payment/intent', {
        reference: randomUUID(),
        amountKobo: 10_000,
      })
    ).body
    // The default expiry (24 hours) counts from the partner's time.
    expect(new Date(intent.expiresAt).getTime() - Date.now()).toBeGreaterThan(25 * 3_600_000)
  })

  it("expires the caller's escrows past their TTL at once", async () => {
    const { credentials, client } = await app.newPartner()
    const api = escrowClient(app.baseUrl, credentials.escrowApiKey)
    const created = await api.create<{ ref: string }>(createRequest({ ttlHours: 1 }))
    expect(created.status).toBe(201)
    await client.post('/api/v1/rail/sandbox/clock/advance', { seconds: 3_600 + 60 })
    await waitFor(
      async () => (await api.get<{ escrow: { status: string } }>(created.body.ref)).body.escrow.status === 'expired',
      10_000,
      'the escrow expired',
    )
  })

  it("runs an escrow's own expiry job its TTL after it is made, however far the partner's clock was moved", async () => {
    const { credentials, client } = await app.newPartner()
    await client.post('/api/v1/rail/sandbox/clock/advance', { seconds: 30 * 24 * 3_600 })
    const api = escrowClient(app.baseUrl, credentials.escrowApiKey)
    const created = await api.create<{ ref: string; expiresAt: string }>(createRequest({ ttlHours: 1 }))
    expect(created.status).toBe(201)
    // expiresAt is on the partner's time (30 days ahead); the job runs by the database's, an hour from now.
    expect(Date.parse(created.body.expiresAt) - Date.now()).toBeGreaterThan(30 * 24 * 3_600_000)
    const { rows } = await app.db.pool.query<{ due_in_s: number }>(
      `SELECT extract(epoch FROM run_at - now())::float8 AS due_in_s
         FROM graphile_worker.jobs WHERE key = (SELECT 'escrow_expire:' || id FROM escrows WHERE ref = $1)`,
      [created.body.ref],
    )
    expect(rows).toHaveLength(1)
    expect(rows[0]!.due_in_s).toBeGreaterThan(3_500)
    expect(rows[0]!.due_in_s).toBeLessThan(3_601)
  })
})
