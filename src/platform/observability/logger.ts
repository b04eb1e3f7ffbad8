// The process's structured log: pino at LOG_LEVEL, the same stream as the API's request logs
// (Fastify's pino). LOG_FORMAT=json writes one JSON object a line (for log collectors); text
// writes a line a person reads at a terminal, so the start banner is not strewn with JSON.
import { Writable } from 'node:stream'
import { pino, type DestinationStream, type Logger } from 'pino'
import type { LogFormat } from '../config.ts'

export type { Logger }

/** A logger at `level`; a test may give the stream the lines go to. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return destination ? pino({ level }, destination) : pino({ level })
}

/** Where log lines go in a format: undefined for json (pino's own stdout), else through the text formatter. */
export function logDestination(
  format: LogFormat,
  out: NodeJS.WritableStream = process.stdout,
): DestinationStream | undefined {
  if (format === 'json') return undefined
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) out.write(`${textLine(line)}\n`)
      done()
    },
  })
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' }
/** Fields every line has, or that the text line shows in its own way. */
const SHOWN_APART = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'req', 'res', 'responseTime', 'err', 'v'])

/** One pino JSON line as text: time, level, message, the request and its answer, then other fields as key=value. */
export function textLine(json: string): string {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(json) as Record<string, unknown>
  } catch {
    return json
  }
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : ''
  const parts = [time, (LEVELS[entry.level as number] ?? String(entry.level)).padEnd(5), String(entry.msg ?? '')]
  const req = entry.req as { method?: string; url?: string } | undefined
  if (req?.method) parts.push(`${req.method} ${req.url ?? ''}`)
  const res = entry.res as { statusCode?: number } | undefined
  if (res?.statusCode !== undefined)
    parts.push(
      `→ ${res.statusCode}${typeof entry.responseTime === 'number' ? ` in ${entry.responseTime.toFixed(1)} ms` : ''}`,
    )
  for (const [key, value] of Object.entries(entry)) {
    if (!SHOWN_APART.has(key) && value !== undefined && value !== null)
      parts.push(`${key}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
  }
  const err = entry.err as { message?: string; stack?: string } | undefined
  if (err?.message) parts.push(`error: ${err.message}`)
  return parts.filter((part) => part !== '').join('  ')
}
