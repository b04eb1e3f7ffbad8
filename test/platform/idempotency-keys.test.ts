// The Idempotency-Key mechanism on its own (src/platform/idempotency-keys.ts), on a bare server
// with Rail's authentication and routes made for it, each counting its effects: what an answer
// keeps, what gives the key back, and what two requests at once with one key do.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signRequest } from '../../src/client/index.ts'
import { installAuthentication } from '../../src/partners/auth.ts'
import type { PartnerCredentials } from '../../src/partners/service.ts'
import { systemClock } from '../../src/platform/clock.ts'
import { withTransaction } from '../../src/platform/db.ts'
import { RailError } from '../../src/platform/errors.ts'
import { createHttpServer, type HttpServer } from '../../src/platform/http.ts'
import { IDEMPOTENT_REPLAYED_HEADER } from '../../src/platform/idempotency.ts'
import { claimKeyInTransaction } from '../../src/platform/idempotency-keys.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { waitFor } from '../support/wait.ts'

let app: TestApp
let server: HttpServer
let credentials: PartnerCredentials
let otherCredentials: PartnerCredentials
let effects = 0

/** A handler held at a point until the test lets it go: a state to wait for, not a time. */
function gate() {
  let open!: () => void
  let entered!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  const reached = new Promise<void>((resolve) => (entered = resolve))
  return { open, opened, entered, reached }
}
let held = gate()

beforeAll(async () => {
  app = await startTestApp()
  credentials = (await app.newPartner()).credentials
  otherCredentials = (await app.newPartner()).credentials
  server = createHttpServer(false)
  installAuthentication(server, { pool: app.db.pool, masterKey: app.masterKey, clock: systemClock })
  const signed = { config: { auth: 'signature' as const } }
  server.post('/api/v1/test/ok', signed, async (_request, reply) => reply.code(201).send({ effect: ++effects }))
  server.post('/api/v1/test/refused', signed, async () => {
    effects++
    throw new RailError('invalid_state', 'refused before any write')
  })
  server.post('/api/v1/test/unknown', signed, async () => {
    effects++
    throw new RailError('provider_unavailable', 'the answer was lost', { outcome: 'unknown' })
  })
  server.post('/api/v1/test/held', signed, async () => {
    const effect = ++effects
    held.entered()
    await held.opened
    return { effect }
  })
  server.post(
    '/api/v1/test/in-transaction',
    { config: { auth: 'signature', idempotencyKey: 'in-transaction' } },
    async (request, reply) =>
      withTransaction(app.db.pool, async (tx) => {
        if ((await claimKeyInTransaction(tx, request.idempotencyKey)) === 'replayed')
          return reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true').send({ effect: null })
        const effect = ++effects
        held.entered()
        await held.opened
        return { effect }
      }),
  )
  await server.ready()
})
afterAll(async () => {
  await server?.close()
  await app?.close()
})

function post(path: string, key: string | undefined, body: unknown = { n: 1 }, as: PartnerCredentials = credentials) {
  const text = JSON.stringify(body)
  const headers = {
    ...signRequest({
      keyId: as.keyId,
      signingSecret: as.signingSecret,
      method: 'POST',
      pathWithQuery: path,
      body: text,
    }),
    'content-type': 'application/json',
  }
  return server.inject({
    method: 'POST',
    url: path,
    payload: text,
    headers: key === undefined ? headers : { ...headers, 'idempotency-key': key },
  })
}

const replayed = (response: { headers: Record<string, unknown> }) => response.headers['idempotent-replayed'] ?? null

describe('a key claimed before the handler', () => {
  it('keeps a success: the same request again is answered from it, status and body, and does nothing', async () => {
    const key = randomUUID()
    const first = await post('/api/v1/test/ok', key)
    const again = await post('/api/v1/test/ok', key)
    expect([first.statusCode, replayed(first)]).toEqual([201, null])
    expect([again.statusCode, replayed(again), again.body]).toEqual([201, 'true', first.body])
    expect(again.json()).toEqual(first.json())
    const unkeyed = await post('/api/v1/test/ok', undefined)
    expect(unkeyed.json().effect).toBe(first.json().effect + 1)
  })

  it('gives the key back after an error that did nothing: the same key runs again', async () => {
    const key = randomUUID()
    const before = effects
    expect((await post('/api/v1/test/refused', key)).statusCode).toBe(409)
    expect((await post('/api/v1/test/refused', key)).statusCode).toBe(409)
    expect(effects).toBe(before + 2)
    const { rows } = await app.db.pool.query(`SELECT 1 FROM idempotency_keys WHERE partner_id = $1 AND key = $2`, [
      credentials.partnerId,
      key,
    ])
    expect(rows).toHaveLength(0)
  })

  it('keeps an error whose outcome is unknown: the same request again gets it and does nothing', async () => {
    const key = randomUUID()
    const before = effects
    const first = await post('/api/v1/test/unknown', key)
    const again = await post('/api/v1/test/unknown', key)
    expect([first.statusCode, first.json().details]).toEqual([502, { outcome: 'unknown' }])
    expect([again.statusCode, replayed(again), again.body]).toEqual([502, 'true', first.body])
    expect(effects).toBe(before + 1)
  })

  it('two at once: the second is 409 request_in_progress while the first works, then gets its answer', async () => {
    held = gate()
    const key = randomUUID()
    const before = effects
    const first = post('/api/v1/test/held', key)
    await held.reached
    const meanwhile = await post('/api/v1/test/held', key)
    expect([meanwhile.statusCode, meanwhile.json().error, meanwhile.headers['retry-after']]).toEqual([
      409,
      'request_in_progress',
      '1',
    ])
    held.open()
    const answered = await first
    const after = await post('/api/v1/test/held', key)
    expect([answered.statusCode, after.statusCode, replayed(after), after.body]).toEqual([
      200,
      200,
      'true',
      answered.body,
    ])
    expect(effects).toBe(before + 1)
  })

  it('another request under a key still being worked is 409 idempotency_conflict, not request_in_progress', async () => {
    held = gate()
    const key = randomUUID()
    const before = effects
    const first = post('/api/v1/test/held', key, { n: 1 })
    await held.reached
    for (const [path, body] of [
      ['/api/v1/test/held', { n: 2 }],
      ['/api/v1/test/ok', { n: 1 }],
    ] as const) {
      const conflict = await post(path, key, body)
      expect([conflict.statusCode, conflict.json().error, conflict.json().details]).toEqual([
        409,
        'idempotency_conflict',
        { idempotencyKey: key },
      ])
    }
    held.open()
    expect((await first).statusCode).toBe(200)
    expect(effects).toBe(before + 1)
  })

  it('another request under the key is 409 idempotency_conflict, whatever differs', async () => {
    const key = randomUUID()
    expect((await post('/api/v1/test/ok', key, { n: 1 })).statusCode).toBe(201)
    const before = effects
    for (const [path, body] of [
      ['/api/v1/test/ok', { n: 2 }],
      ['/api/v1/test/unknown', { n: 1 }],
    ] as const) {
      const conflict = await post(path, key, body)
      expect([conflict.statusCode, conflict.json().error, conflict.json().details]).toEqual([
        409,
        'idempotency_conflict',
        { idempotencyKey: key },
      ])
    }
    expect(effects).toBe(before)
  })
})

describe('one key, two partners', () => {
  it("is two keys: each partner's request gets its own answer, neither a conflict nor the other's", async () => {
    held = gate()
    const key = randomUUID()
    const before = effects
    // The first partner's request holds the key, unanswered, while the other's runs under it.
    const first = post('/api/v1/test/held', key, { n: 1 })
    await held.reached
    const other = await post('/api/v1/test/ok', key, { n: 2 }, otherCredentials)
    expect([other.statusCode, replayed(other), other.json()]).toEqual([201, null, { effect: before + 2 }])
    held.open()
    const answered = await first
    expect([answered.statusCode, replayed(answered), answered.json()]).toEqual([200, null, { effect: before + 1 }])
    // Each partner's key answers its own request again, and the other's request is a conflict under it.
    const again = await post('/api/v1/test/held', key, { n: 1 })
    const otherAgain = await post('/api/v1/test/ok', key, { n: 2 }, otherCredentials)
    expect([again.statusCode, replayed(again), again.body]).toEqual([200, 'true', answered.body])
    expect([otherAgain.statusCode, replayed(otherAgain), otherAgain.body]).toEqual([201, 'true', other.body])
    expect((await post('/api/v1/test/ok', key, { n: 2 })).json().error).toBe('idempotency_conflict')
    expect(effects).toBe(before + 2)
  })

  it("is two keys in the effect's transaction too: each partner's request makes its own effect", async () => {
    held = gate()
    const key = randomUUID()
    const before = effects
    const first = post('/api/v1/test/in-transaction', key, { n: 1 })
    await held.reached
    // The other partner's claim of the same key neither waits on the first's row nor replays it.
    const opened = held.open
    held = gate()
    const second = post('/api/v1/test/in-transaction', key, { n: 2 }, otherCredentials)
    await held.reached
    opened()
    held.open()
    const [one, two] = await Promise.all([first, second])
    expect([one.statusCode, replayed(one), two.statusCode, replayed(two)]).toEqual([200, null, 200, null])
    expect([one.json().effect, two.json().effect]).toEqual([before + 1, before + 2])
    expect(effects).toBe(before + 2)
  })
})

describe("a key claimed in the effect's transaction", () => {
  it('two at once: the second waits for the first transaction, then makes nothing', async () => {
    held = gate()
    const key = randomUUID()
    const before = effects
    const first = post('/api/v1/test/in-transaction', key)
    await held.reached
    const second = post('/api/v1/test/in-transaction', key)
    // The second request's claim waits on the first's row lock.
    await waitFor(
      async () =>
        (
          await app.db.pool.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          )
        ).rows.length > 0,
      10_000,
      'the second claim waiting',
    )
    held.open()
    const [one, two] = await Promise.all([first, second])
    expect([one.statusCode, one.json().effect, replayed(one)]).toEqual([200, before + 1, null])
    expect([two.statusCode, two.json().effect, replayed(two)]).toEqual([200, null, 'true'])
    // Once stored, the first answer is what the key answers.
    const later = await post('/api/v1/test/in-transaction', key)
    expect([later.statusCode, replayed(later), later.body]).toEqual([200, 'true', one.body])
    expect(effects).toBe(before + 1)
  })
})
