// A request sent again — the client's retry, or a replay of a signed request within its ±300 s
// window by whoever saw it — is recognised by what names the call (docs/api.md, "Replays and
// idempotency"): a create by its reference, every other state-changing request by its
// Idempotency-Key, whose first answer is stored and answered again. Without a key a request is
// simply run again.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient, RailResponse } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
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

// A minute in the past: a replay of the very same signed request (same timestamp, same signature).
const SIGNED_AT_S = Math.floor(Date.now() / 1000) - 60

const keyed = (key: string, timestampS?: number) => ({
  headers: { 'Idempotency-Key': key },
  ...(timestampS === undefined ? {} : { timestampS }),
})
const replayedOf = (response: RailResponse<unknown>) => response.headers.get('idempotent-replayed')

async function floatBookedKobo(client: RailClient): Promise<number> {
  return (await client.get<{ bookedBalanceKobo: number }>('/api/v1/rail/float')).body.bookedBalanceKobo
}

async function storedKeys(partnerId: string): Promise<{ key: string; response_status: number | null }[]> {
  return (
    await app.db.pool.query<{ key: string; response_status: number | null }>(
      `SELECT key, response_status FROM idempotency_keys WHERE partner_id = $1 ORDER BY key`,
      [partnerId],
    )
  ).rows
}

describe('POST /api/v1/rail/sandbox/fund-float (a create on its reference)', () => {
  it('moves the money once however often the signed request comes; another amount under the reference is 409', async () => {
    const { client } = await app.newPartner()
    const timestampS = SIGNED_AT_S
    const body = { amountKobo: 70_000, reference: 'top-up-replayed' }
    const first = await client.post<{ transferId: string }>('/api/v1/rail/sandbox/fund-float', body, { timestampS })
    expect(first.status).toBe(200)
    expect(replayedOf(first)).toBeNull()
    const replays = await Promise.all(
      [1, 2, 3].map(() => client.post<{ transferId: string }>('/api/v1/rail/sandbox/fund-float', body, { timestampS })),
    )
    for (const replay of replays) {
      expect(replay.status).toBe(200)
      expect(replayedOf(replay)).toBe('true')
      expect(replay.body.transferId).toBe(first.body.transferId)
    }
    const conflict = await client.post<{ error: string }>(
      '/api/v1/rail/sandbox/fund-float',
      { ...body, amountKobo: 70_001 },
      { timestampS: SIGNED_AT_S + 1 },
    )
    expect(conflict.status).toBe(409)
    expect(conflict.body.error).toBe('idempotency_conflict')
    expect(await floatBookedKobo(client)).toBe(70_000)
    // Another reference is another funding.
    expect((await fundFloat(client, 5_000)).status).toBe(200)
    expect(await floatBookedKobo(client)).toBe(75_000)
  })

  it('takes an Idempotency-Key unused: the reference decides, and the key never conflicts with it', async () => {
    const { client, credentials } = await app.newPartner()
    const key = randomUUID()
    const first = await client.post<{ transferId: string }>(
      '/api/v1/rail/sandbox/fund-float',
      { amountKobo: 1_000, reference: 'ref-a' },
      keyed(key),
    )
    const sameReferenceOtherKey = await client.post<{ transferId: string }>(
      '/api/v1/rail/sandbox/fund-float',
      { amountKobo: 1_000, reference: 'ref-a' },
      keyed(randomUUID()),
    )
    const sameKeyOtherReference = await client.post<{ transferId: string }>(
      '/api/v1/rail/sandbox/fund-float',
      { amountKobo: 2_000, reference: 'ref-b' },
      keyed(key),
    )
    expect([first.status, replayedOf(first)]).toEqual([200, null])
    expect([
      sameReferenceOtherKey.status,
      replayedOf(sameReferenceOtherKey),
      sameReferenceOtherKey.body.transferId,
    ]).toEqual([200, 'true', first.body.transferId])
    expect([sameKeyOtherReference.status, replayedOf(sameKeyOtherReference)]).toEqual([200, null])
    expect(await floatBookedKobo(client)).toBe(3_000)
    expect(await storedKeys(credentials.partnerId)).toEqual([])
  })
})

describe('PATCH /api/v1/rail/settings with an Idempotency-Key', () => {
  const older = { callbackUrl: 'http://127.0.0.1:9001/older' }
  const newer = { callbackUrl: 'http://127.0.0.1:9002/newer' }

  it('answers the stored response again and changes nothing, even after a newer change', async () => {
    const { client } = await app.newPartner()
    const key = randomUUID()
    const first = await client.patch<{ callbackUrl: string }>('/api/v1/rail/settings', older, keyed(key, SIGNED_AT_S))
    expect([first.status, replayedOf(first), first.body.callbackUrl]).toEqual([200, null, older.callbackUrl])
    expect((await client.patch('/api/v1/rail/settings', newer, keyed(randomUUID()))).status).toBe(200)
    // The very same signed request again (a replay), and a retry signed anew: both the stored answer.
    for (const timestampS of [SIGNED_AT_S, undefined]) {
      const again = await client.patch<{ callbackUrl: string }>('/api/v1/rail/settings', older, keyed(key, timestampS))
      expect([again.status, replayedOf(again), again.body.callbackUrl]).toEqual([200, 'true', older.callbackUrl])
    }
    expect((await client.get<{ callbackUrl: string }>('/api/v1/rail/settings')).body.callbackUrl).toBe(
      newer.callbackUrl,
    )
  })

  it('without a key, the same signed request sent again is simply run again', async () => {
    const { client } = await app.newPartner()
    expect((await client.patch('/api/v1/rail/settings', older, { timestampS: SIGNED_AT_S })).status).toBe(200)
    expect((await client.patch('/api/v1/rail/settings', newer)).status).toBe(200)
    const replayed = await client.patch<{ callbackUrl: string }>('/api/v1/rail/settings', older, {
      timestampS: SIGNED_AT_S,
    })
    expect([replayed.status, replayedOf(replayed), replayed.body.callbackUrl]).toEqual([200, null, older.callbackUrl])
    expect((await client.get<{ callbackUrl: string }>('/api/v1/rail/settings')).body.callbackUrl).toBe(
      older.callbackUrl,
    )
  })
})

describe('the key names one request', () => {
  it('with another body, path or method it is 409 idempotency_conflict and changes nothing', async () => {
    const { client } = await app.newPartner()
    const key = randomUUID()
    expect(
      (await client.patch('/api/v1/rail/settings', { callbackUrl: 'http://127.0.0.1:9005/a' }, keyed(key))).status,
    ).toBe(200)
    const otherBody = await client.patch<{ error: string; details: { idempotencyKey: string } }>(
      '/api/v1/rail/settings',
      { callbackUrl: 'http://127.0.0.1:9005/b' },
      keyed(key),
    )
    expect([otherBody.status, otherBody.body.error, otherBody.body.details.idempotencyKey]).toEqual([
      409,
      'idempotency_conflict',
      key,
    ])
    const otherRoute = await client.post<{ error: string }>(
      '/api/v1/rail/sandbox/clock/advance',
      { seconds: 60 },
      keyed(key),
    )
    expect([otherRoute.status, otherRoute.body.error]).toEqual([409, 'idempotency_conflict'])
    expect((await client.get<{ callbackUrl: string }>('/api/v1/rail/settings')).body.callbackUrl).toBe(
      'http://127.0.0.1:9005/a',
    )
    expect((await client.get<{ offsetSeconds: number }>('/api/v1/rail/sandbox/clock')).body.offsetSeconds).toBe(0)
  })

  it('a key that is not 1–255 printable ASCII characters is 422 naming the header; nothing is done or kept', async () => {
    const { client, credentials } = await app.newPartner()
    for (const key of ['x'.repeat(256), 'caf\u00e9', 'tab\there']) {
      const refused = await client.post<{ error: string; details: { fields: { field: string }[] } }>(
        '/api/v1/rail/sandbox/clock/advance',
        { seconds: 60 },
        keyed(key),
      )
      expect([refused.status, refused.body.error, refused.body.details.fields[0]!.field]).toEqual([
        422,
        'validation_error',
        'Idempotency-Key',
      ])
    }
    expect(
      (await client.post('/api/v1/rail/sandbox/clock/advance', { seconds: 60 }, keyed('x'.repeat(255)))).status,
    ).toBe(200)
    expect((await client.get<{ offsetSeconds: number }>('/api/v1/rail/sandbox/clock')).body.offsetSeconds).toBe(60)
    expect((await storedKeys(credentials.partnerId)).map((row) => row.key.length)).toEqual([255])
  })

  it("a request refused before any effect keeps nothing: the key may be sent again with the request fixed (Stripe's rule)", async () => {
    const { client, credentials } = await app.newPartner()
    const key = randomUUID()
    const account = { accountNumber: nuban('058', '000000002'), bankCode: '058', accountName: 'Ada Obi' }
    // Refused by the schema (before the key is read), then by the handler (a claimed key given back).
    const invalid = await client.post<{ error: string }>(
      '/api/v1/rail/counterparties',
      { ...account, bankCode: 'x' },
      keyed(key),
    )
    expect([invalid.status, invalid.body.error]).toEqual([422, 'validation_error'])
    const unknownBank = await client.post<{ error: string }>(
      '/api/v1/rail/counterparties',
      { ...account, bankCode: '999999' },
      keyed(key),
    )
    expect(unknownBank.status).toBe(422)
    expect(await storedKeys(credentials.partnerId)).toEqual([])
    const saved = await client.post<{ id: string }>('/api/v1/rail/counterparties', account, keyed(key))
    expect([saved.status, replayedOf(saved)]).toEqual([201, null])
    const again = await client.post<{ id: string }>('/api/v1/rail/counterparties', account, keyed(key))
    expect([again.status, replayedOf(again), again.body.id]).toEqual([201, 'true', saved.body.id])
    expect(await storedKeys(credentials.partnerId)).toEqual([{ key, response_status: 201 }])
  })

  it('is kept 24 hours: past them, the same request with the key is run again', async () => {
    const { client, credentials } = await app.newPartner()
    const key = randomUUID()
    const advance = () =>
      client.post<{ offsetSeconds: number }>('/api/v1/rail/sandbox/clock/advance', { seconds: 60 }, keyed(key))
    expect((await advance()).body.offsetSeconds).toBe(60)
    const replayed = await advance()
    expect([replayedOf(replayed), replayed.body.offsetSeconds]).toEqual(['true', 60])
    await app.db.pool.query(
      `UPDATE idempotency_keys SET created_at = created_at - interval '24 hours 1 second' WHERE partner_id = $1`,
      [credentials.partnerId],
    )
    const expired = await advance()
    expect([replayedOf(expired), expired.body.offsetSeconds]).toEqual([null, 120])
    expect(await storedKeys(credentials.partnerId)).toEqual([{ key, response_status: 200 }])
  })
})

describe("POST /api/v1/rail/events/{id}/redeliver (the key claimed in the effect's transaction)", () => {
  async function deliveriesOf(eventId: string): Promise<number> {
    const { rows } = await app.db.pool.query<{ count: string }>(
      `SELECT count(*) FROM event_deliveries WHERE event_id = $1`,
      [eventId],
    )
    return Number(rows[0]!.count)
  }

  it('two requests at once with one key start one delivery and both answer 202; without a key each starts one', async () => {
    const { credentials, client } = await app.newPartner({ callbackUrl: hook.url })
    const eventId = await record(app.db.pool, { partnerId: credentials.partnerId, objectId: `replay_${randomUUID()}` })
    const delivered = async () =>
      (await client.get<{ deliveryStatus: string }>(`/api/v1/rail/events/${eventId}`)).body.deliveryStatus ===
      'delivered'
    await waitFor(delivered, 10_000, 'first delivery')

    const path = `/api/v1/rail/events/${eventId}/redeliver`
    const key = randomUUID()
    const both = await Promise.all([1, 2].map(() => client.post<{ id: string }>(path, undefined, keyed(key))))
    expect(both.map((response) => [response.status, response.body.id]).sort()).toEqual([
      [202, eventId],
      [202, eventId],
    ])
    expect(both.map(replayedOf).sort()).toEqual([null, 'true'])
    expect(await deliveriesOf(eventId)).toBe(2)
    const later = await client.post(path, undefined, keyed(key))
    expect([later.status, replayedOf(later)]).toEqual([202, 'true'])
    expect(await deliveriesOf(eventId)).toBe(2)
    await waitFor(delivered, 10_000, 'redelivered')

    // Without a key, the very same signed request twice is two redeliveries.
    for (const expected of [3, 4]) {
      expect((await client.post(path, undefined, { timestampS: SIGNED_AT_S })).status).toBe(202)
      expect(await deliveriesOf(eventId)).toBe(expected)
      await waitFor(delivered, 10_000, 'redelivered')
    }
  })
})

describe('POST /api/v1/rail/sandbox/simulate-inbound-credit (the key claimed before the bank is called)', () => {
  it('pays in once per key: two at once pay once, each answered with the first payment; without a key each pays', async () => {
    const { client } = await app.newPartner()
    const account = await client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', {
      reference: randomUUID(),
    })
    expect(account.status).toBe(200)
    const body = { virtualAccount: account.body.virtualAccount, amountKobo: 12_345 }
    const paidIn = async () =>
      Number(
        (
          await app.db.pool.query<{ count: string }>(
            `SELECT count(*) FROM sandbox_bank.transfers WHERE kind = 'inbound' AND credit_account_number = $1`,
            [body.virtualAccount],
          )
        ).rows[0]!.count,
      )
    const key = randomUUID()
    const simulate = () =>
      client.post<{ sessionId?: string; error?: string }>(
        '/api/v1/rail/sandbox/simulate-inbound-credit',
        body,
        keyed(key),
      )
    const both = await Promise.all([simulate(), simulate()])
    const first = both.find((response) => response.status === 200 && replayedOf(response) === null)!
    expect(first.body.sessionId).toBeDefined()
    // The other waited for nothing: the stored answer, or the key still held (409 request_in_progress, Retry-After: 1).
    const other = both.find((response) => response !== first)!
    expect(
      other.status === 200
        ? [replayedOf(other), other.body.sessionId]
        : [other.body.error, other.headers.get('retry-after')],
    ).toEqual(other.status === 200 ? ['true', first.body.sessionId] : ['request_in_progress', '1'])
    const retried = await simulate()
    expect([retried.status, replayedOf(retried), retried.body.sessionId]).toEqual([200, 'true', first.body.sessionId])
    expect(await paidIn()).toBe(1)

    // Without a key, the very same signed request twice is two payments.
    const unkeyed = await Promise.all(
      [1, 2].map(() =>
        client.post<{ sessionId: string }>('/api/v1/rail/sandbox/simulate-inbound-credit', body, {
          timestampS: SIGNED_AT_S,
        }),
      ),
    )
    expect(unkeyed.map((response) => response.status)).toEqual([200, 200])
    expect(unkeyed[0]!.body.sessionId).not.toBe(unkeyed[1]!.body.sessionId)
    expect(await paidIn()).toBe(3)
  })
})
