// The signed event stream behind `rail listen` (GET /api/v1/rail/events/stream): the caller's
// events only, oldest first, exactly as delivered; resumable with Last-Event-ID (an event's id, or
// the position a stream announced before any event); filtered by type; an event whose transaction
// commits late is still sent, in order; bad credentials and bad input refused before it opens.
import { randomUUID } from 'node:crypto'
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { signRequest } from '../../src/client/signing.ts'
import { recordEvent } from '../../src/events/service.ts'
import { selectEventsAfter, selectHorizonId } from '../../src/events/stream-repo.ts'
import { systemClock } from '../../src/platform/clock.ts'
import { STREAM_SETTINGS_DEFAULT } from '../../src/events/stream.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { record } from '../support/events.ts'
import { waitFor } from '../support/wait.ts'

const STREAM = '/api/v1/rail/events/stream'

let app: TestApp
/** A quiet partner's stream, open from the start: by the last test it has had time for a heartbeat. */
let quiet: { text: string; abort: AbortController }
/** A heartbeat comes after this long without anything else here, rather than the default 15 s; readers skip comments. */
const HEARTBEAT_MS = 200
/**
 * The stream reads only events older than the horizon less this margin for hosts' clocks
 * disagreeing (1 s by default). Here the app and the database share one host: each event is
 * streamed about 1 s sooner.
 */
const CLOCK_MARGIN_MS = 100

beforeAll(async () => {
  app = await startTestApp({ eventStream: { heartbeatMs: HEARTBEAT_MS, clockMarginMs: CLOCK_MARGIN_MS } })
  quiet = { text: '', abort: new AbortController() }
  const { client } = await app.newPartner()
  const response = await fetch(`${app.baseUrl}${STREAM}`, {
    headers: signRequest({ ...client.credentials, method: 'GET', pathWithQuery: STREAM }),
    signal: quiet.abort.signal,
  })
  void (async () => {
    try {
      for await (const chunk of response.body!) quiet.text += new TextDecoder().decode(chunk)
    } catch {
      // closed at the end
    }
  })()
})
afterAll(async () => {
  quiet?.abort.abort()
  await app?.close()
})

interface SseMessage {
  id: string | undefined
  data: string | undefined
}

/** An open stream, read into `messages` as they come. */
interface OpenStream {
  status: number
  messages: SseMessage[]
  /** The events (messages with data), as parsed JSON bodies. */
  events(): { id: string; event: string }[]
  close(): void
}

async function openStream(
  client: RailClient,
  options: { query?: string; lastEventId?: string } = {},
): Promise<OpenStream> {
  const pathWithQuery = `${STREAM}${options.query ?? ''}`
  const abort = new AbortController()
  const headers: Record<string, string> = {
    ...signRequest({ ...client.credentials, method: 'GET', pathWithQuery }),
    accept: 'text/event-stream',
  }
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId
  const response = await fetch(`${app.baseUrl}${pathWithQuery}`, { headers, signal: abort.signal })
  const messages: SseMessage[] = []
  const stream: OpenStream = {
    status: response.status,
    messages,
    events: () =>
      messages
        .filter((message) => message.data !== undefined)
        .map((message) => JSON.parse(message.data!) as { id: string; event: string }),
    close: () => abort.abort(),
  }
  if (response.status !== 200) {
    ;(stream as OpenStream & { body?: unknown }).body = await response.json()
    return stream
  }
  void (async () => {
    const decoder = new TextDecoder()
    let buffer = ''
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk, { stream: true })
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const lines = block.split('\n').filter((line) => !line.startsWith(':'))
          const id = lines.find((line) => line.startsWith('id: '))?.slice(4)
          const data = lines.find((line) => line.startsWith('data: '))?.slice(6)
          if (id !== undefined || data !== undefined) messages.push({ id, data })
        }
      }
    } catch {
      // closed by the test
    }
  })()
  return stream
}

async function eventBody(id: string): Promise<string> {
  const { rows } = await app.db.pool.query<{ body: string }>(`SELECT body FROM events WHERE id = $1`, [id])
  return rows[0]!.body
}

describe('GET /api/v1/rail/events/stream', () => {
  it("streams the caller's events recorded from now on, oldest first, each body exactly as a delivery signs it; never another partner's", async () => {
    const { credentials, client } = await app.newPartner()
    const other = await app.newPartner()
    const before = await record(app.db.pool, { partnerId: credentials.partnerId, type: 'transfer.confirmed' })
    const stream = await openStream(client)
    expect(stream.status).toBe(200)
    await waitFor(() => stream.messages.length > 0, 20_000, 'the position')
    expect(stream.messages[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-0000-0000-000000000000$/),
      data: undefined,
    })
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      await record(app.db.pool, { partnerId: other.credentials.partnerId, type: 'transfer.confirmed' })
      ids.push(
        await record(app.db.pool, {
          partnerId: credentials.partnerId,
          type: i === 1 ? 'refund.succeeded' : 'transfer.failed',
          objectId: `obj_${i}`,
        }),
      )
    }
    await waitFor(() => stream.events().length >= 3, 20_000, 'three events')
    stream.close()
    expect(stream.events().map((event) => event.id)).toEqual(ids)
    expect(stream.events().map((event) => event.id)).not.toContain(before)
    const withData = stream.messages.filter((message) => message.data !== undefined)
    for (const message of withData) {
      expect(message.data).toBe(await eventBody(message.id!))
    }
  })

  it('resumes after Last-Event-ID with exactly the events after it, in order', async () => {
    const { credentials, client } = await app.newPartner()
    const ids: string[] = []
    for (let i = 0; i < 4; i++)
      ids.push(await record(app.db.pool, { partnerId: credentials.partnerId, objectId: `obj_${i}` }))
    const stream = await openStream(client, { lastEventId: ids[1] })
    expect(stream.status).toBe(200)
    await waitFor(() => stream.events().length >= 2, 20_000, 'two events')
    const later = await record(app.db.pool, { partnerId: credentials.partnerId, objectId: 'obj_later' })
    await waitFor(() => stream.events().length >= 3, 20_000, 'the later event')
    stream.close()
    expect(stream.events().map((event) => event.id)).toEqual([ids[2], ids[3], later])
  })

  it('resumes from the position it announced when the stream dropped before any event, missing nothing recorded meanwhile', async () => {
    const { credentials, client } = await app.newPartner()
    const first = await openStream(client)
    await waitFor(() => first.messages.length > 0, 20_000, 'the position')
    first.close()
    const position = first.messages[0]!.id!
    const meanwhile = await record(app.db.pool, { partnerId: credentials.partnerId })
    const again = await openStream(client, { lastEventId: position })
    expect(again.status).toBe(200)
    await waitFor(() => again.events().length >= 1, 20_000, 'the event recorded meanwhile')
    again.close()
    expect(again.events().map((event) => event.id)).toEqual([meanwhile])
  })

  it('filters by type: `*` matches any characters, several patterns separated by commas', async () => {
    const { credentials, client } = await app.newPartner()
    const stream = await openStream(client, { query: `?types=${encodeURIComponent('transfer.*,refund.succeeded')}` })
    expect(stream.status).toBe(200)
    await waitFor(() => stream.messages.length > 0, 20_000, 'the position')
    const wanted: string[] = []
    for (const type of [
      'credit.confirmed',
      'transfer.failed',
      'refund.failed',
      'refund.succeeded',
      'transfers.x',
      'transfer.confirmed',
    ]) {
      const id = await record(app.db.pool, { partnerId: credentials.partnerId, type })
      if (['transfer.failed', 'refund.succeeded', 'transfer.confirmed'].includes(type)) wanted.push(id)
    }
    await waitFor(() => stream.events().length >= 3, 20_000, 'the matching events')
    stream.close()
    expect(stream.events().map((event) => event.id)).toEqual(wanted)
  })

  it('an event whose transaction commits after a later one is still sent, and first: nothing is read past an open transaction', async () => {
    const { credentials, client } = await app.newPartner()
    const stream = await openStream(client)
    await waitFor(() => stream.messages.length > 0, 20_000, 'the position')
    const position = stream.messages[0]!.id!
    const connection = await app.db.pool.connect()
    try {
      await connection.query('BEGIN')
      const early = await recordEvent(connection, systemClock, {
        partnerId: credentials.partnerId,
        type: 'transfer.confirmed',
        objectType: 'test_object',
        objectId: 'early',
        data: {},
      })
      const late = await record(app.db.pool, {
        partnerId: credentials.partnerId,
        type: 'transfer.failed',
        objectId: 'late',
      })
      expect(early.id < late).toBe(true)
      // What a poll reads while the early event's transaction is open: nothing past it.
      const horizon = await selectHorizonId(app.db.pool, CLOCK_MARGIN_MS)
      const readable = await selectEventsAfter(
        app.db.pool,
        [{ partnerId: credentials.partnerId, afterId: position }],
        horizon,
        100,
      )
      expect(readable.get(0) ?? []).toEqual([])
      await connection.query('COMMIT')
      await waitFor(() => stream.events().length >= 2, 20_000, 'both events')
      stream.close()
      expect(stream.events().map((event) => event.id)).toEqual([early.id, late])
    } finally {
      connection.release()
    }
  })

  it(
    'a client that stops reading holds up no one and loses nothing: other streams go on, and it gets every event in order once it reads again',
    { timeout: 60_000 },
    async () => {
      const slow = await app.newPartner()
      const other = await app.newPartner()
      // A raw connection, so that the test decides when the client reads.
      const url = new URL(app.baseUrl)
      const socket = net.connect(Number(url.port), url.hostname)
      await new Promise((resolve) => socket.once('connect', resolve))
      const headers = {
        ...signRequest({ ...slow.client.credentials, method: 'GET', pathWithQuery: STREAM }),
        accept: 'text/event-stream',
      }
      socket.write(
        `GET ${STREAM} HTTP/1.1\r\nHost: ${url.host}\r\n${Object.entries(headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('')}\r\n`,
      )
      let received = ''
      const onData = (chunk: Buffer) => (received += chunk.toString('utf8'))
      socket.on('data', onData)
      await waitFor(() => received.includes('id: '), 20_000, 'the position')
      socket.pause()
      // About 9 MiB, far more than the sockets' buffers hold: the server's writes back up.
      const pad = 'x'.repeat(96 * 1024)
      const ids: string[] = []
      for (let i = 0; i < 96; i++)
        ids.push(
          await record(app.db.pool, { partnerId: slow.credentials.partnerId, objectId: `slow_${i}`, data: { i, pad } }),
        )
      const otherStream = await openStream(other.client)
      await waitFor(() => otherStream.messages.length > 0, 20_000, "the other partner's position")
      const otherEvent = await record(app.db.pool, { partnerId: other.credentials.partnerId })
      await waitFor(
        () => otherStream.events().length >= 1,
        20_000,
        "the other partner's event while the slow client reads nothing",
      )
      otherStream.close()
      expect(otherStream.events().map((event) => event.id)).toEqual([otherEvent])
      socket.resume()
      const streamedIds = () =>
        [...received.matchAll(/^id: (.+)$/gm)]
          .map((match) => match[1]!)
          .filter((id) => !id.endsWith('-0000-0000-000000000000'))
      await waitFor(() => streamedIds().length >= ids.length, 30_000, 'every event once the client reads')
      socket.destroy()
      expect(streamedIds()).toEqual(ids)
    },
  )

  it('refuses unsigned, stale and forged requests with 401', async () => {
    const { client } = await app.newPartner()
    expect((await fetch(`${app.baseUrl}${STREAM}`)).status).toBe(401)
    const stale = signRequest({
      ...client.credentials,
      method: 'GET',
      pathWithQuery: STREAM,
      timestampS: Math.floor(Date.now() / 1000) - 3_600,
    })
    expect((await fetch(`${app.baseUrl}${STREAM}`, { headers: stale })).status).toBe(401)
    const forged = {
      ...signRequest({ ...client.credentials, method: 'GET', pathWithQuery: STREAM }),
      'X-Rail-Signature': `v1=${'0'.repeat(64)}`,
    }
    expect((await fetch(`${app.baseUrl}${STREAM}`, { headers: forged })).status).toBe(401)
    // Signed for another query than the one sent.
    const otherQuery = signRequest({
      ...client.credentials,
      method: 'GET',
      pathWithQuery: `${STREAM}?types=transfer.*`,
    })
    expect((await fetch(`${app.baseUrl}${STREAM}?types=refund.*`, { headers: otherQuery })).status).toBe(401)
  })

  it("refuses a malformed Last-Event-ID (422), another partner's event or an unknown one (404), a position in the future (404), a bad filter or an unknown parameter (422)", async () => {
    const { client } = await app.newPartner()
    const other = await app.newPartner()
    const othersEvent = await record(app.db.pool, { partnerId: other.credentials.partnerId })
    for (const lastEventId of ['not-an-id', '123', `${randomUUID()}x`, ' ', 'a'.repeat(300)]) {
      const refused = await openStream(client, { lastEventId })
      expect(refused.status, lastEventId).toBe(422)
      expect(
        (refused as OpenStream & { body: { error: string; details: { fields: { field: string }[] } } }).body,
      ).toMatchObject({ error: 'validation_error', details: { fields: [{ field: 'Last-Event-ID' }] } })
    }
    const future = `${(Date.now() + 3_600_000)
      .toString(16)
      .padStart(12, '0')
      .replace(/^(.{8})/, '$1-')}-0000-0000-000000000000`
    for (const lastEventId of [othersEvent, randomUUID(), future]) {
      const refused = await openStream(client, { lastEventId })
      expect(refused.status, lastEventId).toBe(404)
    }
    for (const query of [
      '?types=',
      '?types=transfer.*,',
      '?types=a%20b',
      `?types=${'x'.repeat(200)}`,
      '?types=%00',
      '?limit=5',
      `?types=${Array.from({ length: 21 }, () => 'a').join(',')}`,
    ]) {
      const refused = await openStream(client, { query })
      expect(refused.status, query).toBe(422)
    }
  })

  it('bounds the streams one partner may hold open: past it 429 with Retry-After', async () => {
    const { client } = await app.newPartner()
    const open: OpenStream[] = []
    try {
      for (let i = 0; i < STREAM_SETTINGS_DEFAULT.streamsPerPartnerMax; i++) {
        const stream = await openStream(client)
        expect(stream.status).toBe(200)
        open.push(stream)
        await waitFor(() => stream.messages.length > 0, 20_000, 'the position')
      }
      const refused = await openStream(client)
      expect(refused.status).toBe(429)
    } finally {
      for (const stream of open) stream.close()
    }
  })

  it('sends a heartbeat comment on a stream with nothing to say (every 15 s), so that proxies keep it open', async () => {
    expect(STREAM_SETTINGS_DEFAULT.heartbeatMs).toBe(15_000) // docs/webhooks.md: a comment line after 15 s without anything else
    await waitFor(() => quiet.text.includes(': heartbeat\n\n'), 5_000, 'a heartbeat')
    expect(quiet.text).toMatch(/^retry: 1000\nid: [0-9a-f-]{36}\n\n/)
    expect(quiet.text).not.toContain('data:')
  })
})
