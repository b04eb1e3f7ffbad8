// The partner API of events (list, read, redeliver), the callback URL settings with the SSRF
// guard, and `rail partner set-callback-url`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runRail } from '../support/cli.ts'
import { eventStatus, record } from '../support/events.ts'
import type { Receiver } from '../support/receiver.ts'
import { startRail, type Rail } from '../support/rail.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

let app: Rail
let hook: Receiver

beforeAll(async () => {
  app = await startRail({ workers: { concurrency: 2, events: { retryDelaysMs: [200] } }, receiver: true })
  hook = app.receiver
})
afterAll(() => app?.close())

type EventJson = Schemas['Event'] & Partial<Pick<Schemas['EventWithDeliveries'], 'deliveries'>>

describe('GET /api/v1/rail/events', () => {
  it('lists newest first, pages with a cursor, and filters', async () => {
    const { credentials, client } = await app.newPartner()
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      ids.push(
        await record(app.db.pool, {
          partnerId: credentials.partnerId,
          type: i % 2 === 0 ? 'transfer.confirmed' : 'transfer.failed',
          objectType: 'outbound_transfer',
          objectId: `tr_${i}`,
        }),
      )
    }
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md):
    // beside this file's workers, wait until all five are listed (CI listed none at once, once).
    await waitFor(
      async () =>
        (await client.get<{ data: EventJson[] }>('/api/v1/rail/events?limit=100')).body.data.length === ids.length,
      20_000,
      'the recorded events listed',
    )
    const page1 = await client.get<{ data: EventJson[]; nextCursor: string | null }>('/api/v1/rail/events?limit=2')
    expect(page1.status).toBe(200)
    expect(page1.body.data.map((e) => e.id)).toEqual([ids[4], ids[3]])
    const page2 = await client.get<{ data: EventJson[]; nextCursor: string | null }>(
      `/api/v1/rail/events?limit=2&cursor=${page1.body.nextCursor}`,
    )
    expect(page2.body.data.map((e) => e.id)).toEqual([ids[2], ids[1]])
    const page3 = await client.get<{ data: EventJson[]; nextCursor: string | null }>(
      `/api/v1/rail/events?limit=2&cursor=${page2.body.nextCursor}`,
    )
    expect(page3.body.data.map((e) => e.id)).toEqual([ids[0]])
    expect(page3.body.nextCursor).toBeNull()

    const failed = await client.get<{ data: EventJson[] }>('/api/v1/rail/events?type=transfer.failed')
    expect(failed.body.data.map((e) => e.id)).toEqual([ids[3], ids[1]])
    const one = await client.get<{ data: EventJson[] }>(
      '/api/v1/rail/events?objectType=outbound_transfer&objectId=tr_2',
    )
    expect(one.body.data.map((e) => e.id)).toEqual([ids[2]])
    expect(one.body.data[0]).toEqual(
      expect.objectContaining({
        type: 'transfer.confirmed',
        objectType: 'outbound_transfer',
        objectId: 'tr_2',
        deliveryStatus: 'skipped',
        payload: expect.objectContaining({ id: ids[2] }),
      }),
    )
    const skipped = await client.get<{ data: EventJson[] }>('/api/v1/rail/events?deliveryStatus=skipped')
    expect(skipped.body.data).toHaveLength(5)
    const delivered = await client.get<{ data: EventJson[] }>('/api/v1/rail/events?deliveryStatus=delivered')
    expect(delivered.body.data).toHaveLength(0)
  })

  it("shows only the caller's events", async () => {
    const mine = await app.newPartner()
    const theirs = await app.newPartner()
    await record(app.db.pool, { partnerId: theirs.credentials.partnerId })
    expect((await mine.client.get<{ data: EventJson[] }>('/api/v1/rail/events')).body.data).toEqual([])
  })

  it("takes its time from the recording caller's clock; its id stays on wall time, so it is listed at once", async () => {
    const { credentials, client } = await app.newPartner()
    const at = new Date(Date.now() + 2 * 86_400_000) // a clock moved two days on
    const id = await record(app.db.pool, { partnerId: credentials.partnerId, recordOnly: true }, { now: () => at })
    const read = await client.get<EventJson & { createdAt: string; payload: { timestamp: string } }>(
      `/api/v1/rail/events/${id}`,
    )
    expect(read.body).toEqual(
      expect.objectContaining({
        id,
        createdAt: at.toISOString(),
        payload: expect.objectContaining({ id, timestamp: at.toISOString() }),
      }),
    )
    await waitFor(
      async () =>
        (await client.get<{ data: EventJson[] }>('/api/v1/rail/events')).body.data.some((event) => event.id === id),
      20_000,
      'the event listed',
    )
  })

  it.each([
    ['an unknown filter', '?colour=red'],
    ['limit 0', '?limit=0'],
    ['limit over 100', '?limit=101'],
    ['a non-integer limit', '?limit=abc'],
    ['a cursor that is not an id', '?cursor=nope'],
    ['an unknown delivery status', '?deliveryStatus=lost'],
    ['an oversize type', `?type=${'t'.repeat(101)}`],
  ])('refuses %s with 422', async (_what, query) => {
    const { client } = await app.newPartner()
    const response = await client.get<{ statusCode: number; error: string }>(`/api/v1/rail/events${query}`)
    expect(response.status).toBe(422)
    expect(response.body).toEqual(expect.objectContaining({ statusCode: 422, error: 'validation_error' }))
  })

  it('needs a signed request', async () => {
    const response = await fetch(`${app.baseUrl}/api/v1/rail/events`)
    expect(response.status).toBe(401)
  })
})

describe('GET /api/v1/rail/events/{id} and redeliver', () => {
  it('shows every delivery and attempt, and redelivers the same event', async () => {
    const { credentials, client } = await app.newPartner({ callbackUrl: hook.url })
    hook.answer = (_request, index) => (index === 0 ? { status: 503 } : { status: 200 })
    const eventId = await record(app.db.pool, { partnerId: credentials.partnerId })
    await waitFor(async () => (await eventStatus(app.db.pool, eventId)) === 'delivered')

    const read = await client.get<EventJson>(`/api/v1/rail/events/${eventId}`)
    expect(read.status).toBe(200)
    expect(read.body.deliveryStatus).toBe('delivered')
    expect(read.body.deliveries).toHaveLength(1)
    expect(read.body.deliveries![0]).toEqual(
      expect.objectContaining({ url: hook.url, status: 'delivered', attemptsMade: 2 }),
    )
    expect(read.body.deliveries![0]!.attempts.map((a) => [a.attemptNumber, a.statusCode])).toEqual([
      [1, 503],
      [2, 200],
    ])

    const before = hook.requests.length
    const redelivered = await client.post<EventJson>(`/api/v1/rail/events/${eventId}/redeliver`)
    expect(redelivered.status).toBe(202)
    expect(redelivered.body.deliveryStatus).toBe('pending')
    expect(redelivered.body.deliveries).toHaveLength(2)
    await waitFor(async () => (await eventStatus(app.db.pool, eventId)) === 'delivered')
    const again = hook.requests.slice(before)
    expect(again.map((r) => JSON.parse(r.rawBody).id)).toEqual([eventId])
    expect(again[0]!.rawBody).toBe(hook.requests[0]!.rawBody) // the same body, byte for byte
  })

  it("another partner's event is 404, and ids are checked", async () => {
    const owner = await app.newPartner({ callbackUrl: hook.url })
    const other = await app.newPartner()
    const eventId = await record(app.db.pool, { partnerId: owner.credentials.partnerId })
    expect((await other.client.get(`/api/v1/rail/events/${eventId}`)).status).toBe(404)
    const redeliver = await other.client.post<{ error: string }>(`/api/v1/rail/events/${eventId}/redeliver`)
    expect(redeliver.status).toBe(404)
    expect(redeliver.body.error).toBe('not_found')
    expect((await other.client.get(`/api/v1/rail/events/not-a-uuid`)).status).toBe(422)
    expect((await owner.client.get(`/api/v1/rail/events/0190a1b2-0000-7000-8000-000000000000`)).status).toBe(404)
    expect((await owner.client.post(`/api/v1/rail/events/${eventId}/redeliver`, { force: true })).status).toBe(422)
  })

  it('redelivering with no callback URL anywhere is 409 and changes nothing', async () => {
    const { credentials, client } = await app.newPartner()
    const eventId = await record(app.db.pool, { partnerId: credentials.partnerId })
    const response = await client.post<{ error: string }>(`/api/v1/rail/events/${eventId}/redeliver`)
    expect(response.status).toBe(409)
    expect(response.body.error).toBe('invalid_state')
    expect(await eventStatus(app.db.pool, eventId)).toBe('skipped')
  })
})

describe('PATCH /api/v1/rail/settings callbackUrl', () => {
  it.each([
    ['http://10.0.0.5/hook', 'private or reserved'],
    ['http://169.254.169.254/latest/meta-data', 'private or reserved'],
    ['http://0xa9fea9fe/x', 'private or reserved'],
    ['http://[fd00::1]/hook', 'private or reserved'],
    ['http://192.168.1.1/hook', 'private or reserved'],
  ])('refuses %s (sandbox) with 422 naming callbackUrl', async (url, reason) => {
    const { client } = await app.newPartner()
    const response = await client.patch<{ error: string; message: string; details: { fields: { field: string }[] } }>(
      '/api/v1/rail/settings',
      { callbackUrl: url },
    )
    expect(response.status).toBe(422)
    expect(response.body.error).toBe('validation_error')
    expect(response.body.message).toContain(reason)
    expect(response.body.details.fields[0]!.field).toBe('callbackUrl')
    expect((await client.get<{ callbackUrl: string | null }>('/api/v1/rail/settings')).body.callbackUrl).toBeNull()
  })

  it('allows loopback for sandbox partners (RAIL_ALLOW_LOOPBACK_CALLBACKS) and removes with null', async () => {
    const { client } = await app.newPartner()
    const set = await client.patch<{ callbackUrl: string }>('/api/v1/rail/settings', {
      callbackUrl: 'http://127.0.0.1:9999/hooks',
    })
    expect(set.status).toBe(200)
    expect(set.body.callbackUrl).toBe('http://127.0.0.1:9999/hooks')
    const removed = await client.patch<{ callbackUrl: string | null }>('/api/v1/rail/settings', { callbackUrl: null })
    expect(removed.body.callbackUrl).toBeNull()
  })

  it('live partners need https and a public address', async () => {
    const { client } = await app.newPartner({ environment: 'live' })
    expect((await client.patch('/api/v1/rail/settings', { callbackUrl: 'http://8.8.8.8/hooks' })).status).toBe(422)
    expect((await client.patch('/api/v1/rail/settings', { callbackUrl: 'https://127.0.0.1/hooks' })).status).toBe(422)
    expect(
      (await client.patch('/api/v1/rail/settings', { callbackUrl: 'https://[::ffff:127.0.0.1]/hooks' })).status,
    ).toBe(422)
    expect((await client.patch('/api/v1/rail/settings', { callbackUrl: 'https://8.8.8.8/hooks' })).status).toBe(200)
  })

  it.each([
    ['a wrong type', { callbackUrl: 42 }],
    ['an unknown field', { callbackUrl: null, colour: 'red' }],
    ['an oversize URL', { callbackUrl: `https://example.com/${'a'.repeat(2100)}` }],
    ['a non-URL', { callbackUrl: 'hooks' }],
    ['nothing to change', {}],
  ])('refuses %s with 422', async (_what, body) => {
    const { client } = await app.newPartner()
    expect((await client.patch('/api/v1/rail/settings', body)).status).toBe(422)
  })
})

describe('rail partner set-callback-url', () => {
  it('sets, checks and removes the default callback URL', async () => {
    const { credentials, client } = await app.newPartner()
    const env = { DATABASE_URL: app.db.url, RAIL_ALLOW_LOOPBACK_CALLBACKS: '1' }
    const set = await runRail(
      ['partner', 'set-callback-url', '--partner', credentials.partnerId, '--url', 'http://127.0.0.1:7000/hooks'],
      env,
    )
    expect(set.code).toBe(0)
    expect((await client.get<{ callbackUrl: string }>('/api/v1/rail/settings')).body.callbackUrl).toBe(
      'http://127.0.0.1:7000/hooks',
    )

    const refused = await runRail(
      ['partner', 'set-callback-url', '--partner', credentials.partnerId, '--url', 'http://10.1.1.1/hooks'],
      env,
    )
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('private or reserved')
    const strict = await runRail(
      ['partner', 'set-callback-url', '--partner', credentials.partnerId, '--url', 'http://127.0.0.1:7000/x'],
      { ...env, RAIL_ALLOW_LOOPBACK_CALLBACKS: '0' },
    )
    expect(strict.code).toBe(1)

    const removed = await runRail(['partner', 'set-callback-url', '--partner', credentials.partnerId, '--none'], env)
    expect(removed.code).toBe(0)
    expect((await client.get<{ callbackUrl: string | null }>('/api/v1/rail/settings')).body.callbackUrl).toBeNull()
  })
})
