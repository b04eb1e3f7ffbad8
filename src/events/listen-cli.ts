// `rail listen --forward-to URL [--events transfer.*]`: the partner's events, read from the signed
// event stream (stream.ts), posted to a local URL exactly as a real delivery would post them —
// the same body and the same headers, signed by the same function (signing.ts) with the
// partner's callback-signing secret (escrow events with the escrow webhook secret, when given) —
// one line printed per event. A dropped stream is opened again after a pause and resumes after
// the last event read, so nothing is missed or repeated.
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { type Command, InvalidArgumentError, Option } from 'commander'
import { request } from 'undici'
import { signRequest } from '../client/signing.ts'
import { loadConfig } from '../platform/config.ts'
import { runningApiUrl } from '../platform/embedded-db.ts'
import { deliveryHeaders } from './signing.ts'

/** As a real delivery: a 2xx must arrive within this (delivery.ts DELIVERY_TIMEOUT_MS). */
const FORWARD_TIMEOUT_MS = 10_000
/** The stream sends a heartbeat every 15 s; silence for this long means it is gone. */
const STREAM_SILENCE_MS = 45_000
const RECONNECT_FIRST_MS = 1_000
const RECONNECT_MAX_MS = 15_000
const STREAM_PATH = '/api/v1/rail/events/stream'

interface ListenOptions {
  forwardTo: string
  events?: string
  apiUrl?: string
  credentials?: string
  keyId?: string
  signingSecret?: string
  callbackSecret?: string
  escrowWebhookSecret?: string
}

interface ListenSettings {
  apiUrl: string
  forwardTo: string
  types: string | undefined
  keyId: string
  signingSecret: string
  callbackSecret: string
  /** What escrow.* events are signed with, as their real deliveries are; undefined: the callback secret. */
  escrowWebhookSecret: string | undefined
}

export function registerListenCommand(program: Command): void {
  program
    .command('listen')
    .description(
      "forward the partner's events to a local URL, signed as real deliveries (sandbox callbacks on a laptop)",
    )
    .requiredOption('--forward-to <url>', 'where to POST each event, e.g. http://localhost:3000/hooks', parseHttpUrl)
    .option(
      '--events <types>',
      'comma-separated event types to forward; * matches any characters (transfer.*,refund.*)',
    )
    .addOption(
      new Option('--api-url <url>', "Rail's address (default: the running `rail serve`, else http://127.0.0.1:$PORT)")
        .env('RAIL_URL')
        .argParser(parseHttpUrl),
    )
    .addOption(
      new Option(
        '--credentials <file>',
        'a partner credentials file (default: <RAIL_DATA_DIR>/sandbox-partner.json)',
      ).env('RAIL_CREDENTIALS_FILE'),
    )
    .addOption(
      new Option('--key-id <id>', 'request-signing key id (else from the credentials file)').env('RAIL_KEY_ID'),
    )
    .addOption(
      new Option('--signing-secret <secret>', 'request-signing secret (else from the credentials file)').env(
        'RAIL_SIGNING_SECRET',
      ),
    )
    .addOption(
      new Option(
        '--callback-secret <secret>',
        'callback-signing secret the forwarded events are signed with (else from the credentials file)',
      ).env('RAIL_CALLBACK_SIGNING_SECRET'),
    )
    .addOption(
      new Option(
        '--escrow-webhook-secret <secret>',
        'the escrow webhook secret escrow.* events are signed with, as their real deliveries are (else the callback-signing secret)',
      ).env('RAIL_ESCROW_WEBHOOK_SECRET'),
    )
    .action(async (options: ListenOptions) => listen(settingsOf(options)))
}

function parseHttpUrl(value: string): string {
  try {
    const url = new URL(value)
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.toString()
  } catch {
    // refused below
  }
  throw new InvalidArgumentError('not an http(s) URL')
}

function settingsOf(options: ListenOptions): ListenSettings {
  const config = loadConfig()
  const file = options.credentials ?? path.join(config.dataDir, 'sandbox-partner.json')
  const saved = readCredentialsFile(file)
  const keyId = options.keyId ?? saved.keyId
  const signingSecret = options.signingSecret ?? saved.signingSecret
  const callbackSecret = options.callbackSecret ?? saved.callbackSigningSecret
  if (!keyId || !signingSecret || !callbackSecret) {
    throw new Error(
      `no partner credentials: ${file} is missing or incomplete; set RAIL_KEY_ID, RAIL_SIGNING_SECRET and RAIL_CALLBACK_SIGNING_SECRET, or pass --credentials`,
    )
  }
  const apiUrl = (options.apiUrl ?? runningApiUrl(config.dataDir) ?? `http://127.0.0.1:${config.port}`).replace(
    /\/$/,
    '',
  )
  return {
    apiUrl,
    forwardTo: options.forwardTo,
    types: options.events,
    keyId,
    signingSecret,
    callbackSecret,
    escrowWebhookSecret: options.escrowWebhookSecret,
  }
}

type SavedCredentials = Partial<Record<'keyId' | 'signingSecret' | 'callbackSigningSecret', string>>

/** A partner file as `npm start` writes it (`rail partner create --json` prints the same fields); none: nothing saved. */
function readCredentialsFile(file: string): SavedCredentials {
  if (!existsSync(file)) return {}
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as SavedCredentials
  } catch (error) {
    throw new Error(`cannot read the credentials in ${file}: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** Runs until interrupted; a refusal the stream gives for good (credentials, a bad filter) ends it with an error. */
async function listen(settings: ListenSettings): Promise<void> {
  process.once('SIGINT', () => process.exit(0))
  process.once('SIGTERM', () => process.exit(0))
  let lastEventId: string | undefined
  let failures = 0
  let opened = false
  for (;;) {
    const ended = await streamOnce(settings, lastEventId, (id) => (lastEventId = id), !opened)
    opened ||= ended.opened
    if (ended.fatal) throw new Error(ended.reason)
    failures = ended.readAnything ? 0 : failures + 1
    const waitMs = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** Math.max(0, failures - 1))
    const what = ended.opened ? 'stream dropped' : 'cannot open the stream'
    console.log(
      `${what} (${ended.reason}); trying again in ${waitMs / 1000} s${lastEventId ? `, resuming after ${lastEventId}` : ''}`,
    )
    await new Promise((resolve) => setTimeout(resolve, waitMs))
  }
}

type StreamEnd = { fatal: boolean; reason: string; opened: boolean; readAnything: boolean }

/** One connection to the stream: every event forwarded in order, until the stream ends or fails. */
async function streamOnce(
  settings: ListenSettings,
  lastEventId: string | undefined,
  remember: (id: string) => void,
  first: boolean,
): Promise<StreamEnd> {
  let opened = false
  const pathWithQuery =
    settings.types === undefined ? STREAM_PATH : `${STREAM_PATH}?types=${encodeURIComponent(settings.types)}`
  const headers: Record<string, string> = {
    ...signRequest({ keyId: settings.keyId, signingSecret: settings.signingSecret, method: 'GET', pathWithQuery }),
    accept: 'text/event-stream',
    ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
  }
  let readAnything = false
  try {
    const answer = await request(`${settings.apiUrl}${pathWithQuery}`, {
      method: 'GET',
      headers,
      headersTimeout: FORWARD_TIMEOUT_MS,
      bodyTimeout: STREAM_SILENCE_MS,
    })
    if (answer.statusCode !== 200) return await refusal(answer.statusCode, await answer.body.text())
    opened = true
    console.log(
      first
        ? `Ready: forwarding events from ${settings.apiUrl} to ${settings.forwardTo} (Ctrl-C to stop)`
        : 'Stream open again',
    )
    const reader = new SseReader()
    for await (const chunk of answer.body) {
      for (const message of reader.push(chunk as Buffer)) {
        readAnything = true
        if (message.data !== undefined) console.log(await forward(settings, message.data))
        if (message.id !== undefined) remember(message.id)
      }
    }
    return { fatal: false, reason: 'the server closed it', opened, readAnything }
  } catch (error) {
    return { fatal: false, reason: error instanceof Error ? error.message : String(error), opened, readAnything }
  }
}

/** 401, 404, 422: asking again changes nothing. 429 and 5xx: later. */
async function refusal(statusCode: number, text: string): Promise<StreamEnd> {
  let reason = `${statusCode}`
  try {
    const body = JSON.parse(text) as { error?: string; message?: string }
    reason = `${statusCode} ${body.error ?? ''}: ${body.message ?? ''}`
  } catch {
    // not Rail's error body
  }
  const fatal = statusCode >= 400 && statusCode < 500 && statusCode !== 429 && statusCode !== 408
  return { fatal, reason: `the stream was refused (${reason})`, opened: false, readAnything: false }
}

/** Posts one event as a delivery attempt does, and says what the local URL answered. */
async function forward(settings: ListenSettings, body: string): Promise<string> {
  const event = JSON.parse(body) as { id: string; event: string }
  const secret = event.event.startsWith('escrow.')
    ? (settings.escrowWebhookSecret ?? settings.callbackSecret)
    : settings.callbackSecret
  const headers = deliveryHeaders({
    eventId: event.id,
    eventType: event.event,
    body,
    timestampS: Math.floor(Date.now() / 1000),
    secret,
  })
  const line = `${new Date().toISOString()}  ${event.event}  ${event.id}  -> `
  try {
    const answer = await request(settings.forwardTo, {
      method: 'POST',
      headers,
      body,
      headersTimeout: FORWARD_TIMEOUT_MS,
      bodyTimeout: FORWARD_TIMEOUT_MS,
    })
    await answer.body.dump()
    return `${line}${answer.statusCode}`
  } catch (error) {
    return `${line}error: ${error instanceof Error ? error.message : String(error)}`
  }
}

/** The parts of the server-sent events format the stream uses: id, data, comments, blank-line dispatch. */
class SseReader {
  private readonly decoder = new TextDecoder()
  private buffer = ''
  private id: string | undefined
  private data: string[] = []

  push(chunk: Buffer): { id: string | undefined; data: string | undefined }[] {
    this.buffer += this.decoder.decode(chunk, { stream: true }) // a character may span two chunks
    const messages: { id: string | undefined; data: string | undefined }[] = []
    let newline: number
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, '')
      this.buffer = this.buffer.slice(newline + 1)
      if (line === '') {
        if (this.id !== undefined || this.data.length > 0)
          messages.push({ id: this.id, data: this.data.length > 0 ? this.data.join('\n') : undefined })
        this.id = undefined
        this.data = []
      } else if (line.startsWith('id:')) {
        this.id = line.slice(3).trim()
      } else if (line.startsWith('data:')) {
        this.data.push(line.slice(5).replace(/^ /, ''))
      }
    }
    return messages
  }
}
