// The partner's events as server-sent events (GET /api/v1/rail/events/stream), what `rail listen`
// reads (docs/webhooks.md, "Receiving callbacks on a laptop: rail listen").
//
// One poller per API process serves every open stream: each tick reads the next events of all
// of them in one statement (stream-repo.ts), so a stream holds no database connection and a
// thousand idle streams cost one query a tick. Polling rather than LISTEN/NOTIFY: a notification
// would need a trigger or a NOTIFY in every business transaction that records an event (the hot
// path), and a dedicated listening connection per process; a poll costs nothing when no stream
// is open and finds events recorded by any process, whatever wrote them. A stream whose client
// reads slowly is skipped until its socket drains (its position kept), and cut off once stalled
// for long; the client resumes from its Last-Event-ID.
import type { ServerResponse } from 'node:http'
import { Type } from '@sinclair/typebox'
import { callerOf } from '../partners/auth.ts'
import type { Pool } from '../platform/db.ts'
import { fieldError, OVERLOADED_RETRY_AFTER_S, RailError } from '../platform/errors.ts'
import type { HttpServer } from '../platform/http.ts'
import { closedObject, errorResponses } from '../platform/schemas.ts'
import {
  eventBelongsTo,
  selectEventsAfter,
  selectHorizonId,
  selectVisibleIdsAfter,
  type StreamedEvent,
} from './stream-repo.ts'

export interface StreamSettings {
  /** How often the process reads new events for its open streams. */
  pollMs: number
  /** A comment line is sent after this long without anything else, so that proxies keep the stream open. */
  heartbeatMs: number
  /** How far the API's and the database's clocks may disagree (stream-repo.ts). */
  clockMarginMs: number
  /** Events sent to one stream per tick. */
  batchMax: number
  /** A stream whose client has read nothing for this long is closed (it resumes with Last-Event-ID). */
  stalledMs: number
  /** Open streams per process, and per partner in it. */
  streamsMax: number
  streamsPerPartnerMax: number
}

export const STREAM_SETTINGS_DEFAULT: StreamSettings = {
  pollMs: 250,
  heartbeatMs: 15_000,
  clockMarginMs: 1_000,
  batchMax: 100,
  stalledMs: 60_000,
  streamsMax: 500,
  streamsPerPartnerMax: 5,
}

/** What a client is told to wait before reconnecting (the SSE `retry` field). */
const RECONNECT_MS = 1_000
const TYPE_GLOB = '[A-Za-z0-9_.*-]{1,100}'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** A position between events (stream-repo.ts uuidv7Floor): a millisecond and nothing else. */
const POSITION = /^[0-9a-f]{8}-[0-9a-f]{4}-0000-0000-000000000000$/

interface Stream {
  partnerId: string
  afterId: string
  matches: (type: string) => boolean
  /** Events already recorded when a new stream opened, just past its position: not sent. */
  alreadyRecorded: Set<string>
  response: ServerResponse
  /** The socket's buffer is full: nothing more is sent until it drains. */
  waitingSince: number | undefined
  lastWriteMs: number
}

/** Every open stream of this process, and the one poller that feeds them. */
export class EventStreamHub {
  private readonly streams = new Set<Stream>()
  private readonly pool: Pool
  private readonly settings: StreamSettings
  private readonly log: (message: string) => void
  private timer: NodeJS.Timeout | undefined
  private polling = false

  constructor(pool: Pool, settings: StreamSettings, log: (message: string) => void) {
    this.pool = pool
    this.settings = settings
    this.log = log
  }

  /** Refuses a stream past the process's or the partner's limit, before anything is sent. */
  assertRoomFor(partnerId: string): void {
    if (this.streams.size >= this.settings.streamsMax) {
      throw new RailError('overloaded', 'Too many event streams are open on this server; retry shortly', undefined, {
        retryAfterS: OVERLOADED_RETRY_AFTER_S,
      })
    }
    const ofPartner = [...this.streams].filter((stream) => stream.partnerId === partnerId).length
    if (ofPartner >= this.settings.streamsPerPartnerMax) {
      throw new RailError(
        'rate_limited',
        `At most ${this.settings.streamsPerPartnerMax} event streams may be open at once`,
        { limit: this.settings.streamsPerPartnerMax },
        { retryAfterS: 5 },
      )
    }
  }

  /**
   * Where a new stream starts: after its Last-Event-ID — one of the partner's events, or a
   * position this stream announced before any event (not in the future) — else at the horizon,
   * leaving out the events already recorded past it, so that only what is recorded from now on
   * is sent.
   */
  async startingPoint(
    partnerId: string,
    lastEventId: string | undefined,
  ): Promise<{ afterId: string; alreadyRecorded: Set<string> }> {
    if (lastEventId === undefined) {
      const afterId = await selectHorizonId(this.pool, this.settings.clockMarginMs)
      return { afterId, alreadyRecorded: new Set(await selectVisibleIdsAfter(this.pool, partnerId, afterId)) }
    }
    const isPosition =
      POSITION.test(lastEventId) && parseInt(lastEventId.replace('-', '').slice(0, 12), 16) <= Date.now()
    if (!isPosition && !(await eventBelongsTo(this.pool, partnerId, lastEventId)))
      throw new RailError('not_found', `Event ${lastEventId} not found`)
    return { afterId: lastEventId, alreadyRecorded: new Set() }
  }

  open(stream: Omit<Stream, 'waitingSince' | 'lastWriteMs'>): void {
    const opened: Stream = { ...stream, waitingSince: undefined, lastWriteMs: Date.now() }
    this.streams.add(opened)
    opened.response.on('drain', () => {
      opened.waitingSince = undefined
    })
    opened.response.on('close', () => this.streams.delete(opened))
    this.timer ??= setInterval(() => void this.tick(), this.settings.pollMs)
  }

  /** Ends every stream (the server is closing): clients reconnect, elsewhere or later. */
  close(): void {
    for (const stream of this.streams) stream.response.end()
    this.streams.clear()
    clearInterval(this.timer)
    this.timer = undefined
  }

  private async tick(): Promise<void> {
    if (this.streams.size === 0) {
      clearInterval(this.timer)
      this.timer = undefined
      return
    }
    if (this.polling) return
    this.polling = true
    try {
      await this.poll()
    } catch (error) {
      // The database away: streams stay open and catch up once it is back.
      this.log(`event stream poll failed: ${error instanceof Error ? error.message : String(error)}`)
    } finally {
      this.polling = false
    }
  }

  private async poll(): Promise<void> {
    const nowMs = Date.now()
    const ready: Stream[] = []
    for (const stream of this.streams) {
      if (stream.waitingSince === undefined) ready.push(stream)
      else if (nowMs - stream.waitingSince > this.settings.stalledMs) stream.response.destroy()
    }
    if (ready.length === 0) return
    const horizonId = await selectHorizonId(this.pool, this.settings.clockMarginMs)
    const events = await selectEventsAfter(this.pool, ready, horizonId, this.settings.batchMax)
    ready.forEach((stream, index) => this.send(stream, events.get(index) ?? [], nowMs))
  }

  private send(stream: Stream, events: StreamedEvent[], nowMs: number): void {
    if (stream.response.destroyed || !this.streams.has(stream)) return
    let text = ''
    for (const event of events) {
      // Events the filter leaves out move the position on all the same: they are not asked for again.
      stream.afterId = event.id
      if (stream.alreadyRecorded.delete(event.id)) continue
      if (stream.matches(event.type)) text += `id: ${event.id}\ndata: ${event.body}\n\n`
    }
    if (text === '' && nowMs - stream.lastWriteMs >= this.settings.heartbeatMs) text = ': heartbeat\n\n'
    if (text === '') return
    stream.lastWriteMs = nowMs
    if (!stream.response.write(text)) stream.waitingSince = nowMs
  }
}

/** `transfer.*,refund.succeeded`: `*` stands for any characters. */
export function typeMatcher(types: string | undefined): (type: string) => boolean {
  if (types === undefined) return () => true
  const patterns = types.split(',').map((glob) => new RegExp(`^${glob.split('*').map(escapeRegExp).join('.*')}$`))
  return (type) => patterns.some((pattern) => pattern.test(type))
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function lastEventIdOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (typeof header !== 'string' || !UUID.test(header.trim()))
    throw fieldError('Last-Event-ID', 'is not the id of an event (a UUID)')
  return header.trim().toLowerCase()
}

const STREAM_DESCRIPTION = [
  "The caller's events as they are recorded, oldest first, as server-sent events: each message's `id` is the event id and its `data` the exact body a delivery signs and sends (verify nothing: the stream itself is signed).",
  'Without `Last-Event-ID` the stream starts now, and its first message is an `id` without data: the position to resume from if it drops before any event.',
  'With `Last-Event-ID` (an event of the caller, or such a position) it sends every event after it, in order, none left out and none twice. `types` filters by type (`*` matches any characters).',
  'An event appears about a second after it is recorded. A comment is sent every 15 s. At most 5 streams per partner (429) and 500 per server (503). `rail listen` reads it.',
].join(' ')

export function registerEventStreamRoute(
  app: HttpServer,
  deps: { pool: Pool; settings?: Partial<StreamSettings> },
): void {
  const hub = new EventStreamHub(deps.pool, { ...STREAM_SETTINGS_DEFAULT, ...deps.settings }, (message) =>
    app.log.warn(message),
  )
  // Before the server waits for its connections to end: open streams would keep it waiting.
  app.addHook('preClose', async () => hub.close())

  app.get(
    '/api/v1/rail/events/stream',
    {
      // A stream lasts for hours: it takes no admission place (those bound requests in flight),
      // and holds no connection of the pool; the hub bounds how many are open.
      config: { auth: 'signature', admission: false },
      schema: {
        operationId: 'streamEvents',
        tags: ['events'],
        summary: "The caller's events as server-sent events",
        description: STREAM_DESCRIPTION,
        querystring: closedObject({
          types: Type.Optional(
            Type.String({
              pattern: `^${TYPE_GLOB}(,${TYPE_GLOB}){0,19}$`,
              description: 'Comma-separated event types, at most 20; `*` matches any characters',
              examples: ['transfer.*,refund.succeeded'],
            }),
          ),
        }),
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({
              description:
                'Resume after this event (its id), or after the position the stream announced before any event',
              examples: ['0193b7e2-4c1a-7d3e-9f20-6a5b8c7d1e42'],
            }),
          ),
        }),
        response: {
          200: {
            description:
              'The stream: an `id` line with the starting position, then one message per event (`id`: the event id, `data`: the body a delivery sends), and heartbeat comments',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...errorResponses('not_found', 'rate_limited', 'overloaded'),
        },
      },
    },
    async (request, reply) => {
      const partnerId = callerOf(request).partner.id
      const lastEventId = lastEventIdOf(request.headers['last-event-id'])
      hub.assertRoomFor(partnerId)
      const { afterId, alreadyRecorded } = await hub.startingPoint(partnerId, lastEventId)
      reply.hijack()
      const response = reply.raw
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
        connection: 'close',
      })
      // The position first, as an id without data: a client that loses the stream before any event
      // resumes from it, missing nothing recorded meanwhile.
      response.write(`retry: ${RECONNECT_MS}\nid: ${afterId}\n\n`)
      hub.open({ partnerId, afterId, alreadyRecorded, matches: typeMatcher(request.query.types), response })
    },
  )
}
