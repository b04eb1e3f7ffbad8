// LOG_FORMAT: JSON lines for collectors, text lines for a person at a terminal.
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/platform/config.ts'
import { createLogger, logDestination, textLine } from '../../src/platform/observability/logger.ts'

describe('log format', () => {
  it('reads LOG_FORMAT, json unless told (tests do not run in a terminal), and refuses anything else', () => {
    expect(loadConfig({ LOG_FORMAT: 'text' }).logFormat).toBe('text')
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json')
    expect(loadConfig({}).logFormat).toBe(process.stdout.isTTY ? 'text' : 'json')
    expect(loadConfig({ LOG_FORMAT: 'json', NODE_ENV: 'production' }).logFormat).toBe('json')
    expect(() => loadConfig({ LOG_FORMAT: 'pretty' })).toThrow(/LOG_FORMAT must be json or text/)
  })

  it('writes a request line as time, level, message, the request and its answer, then the other fields', () => {
    const line = textLine(
      JSON.stringify({
        level: 30,
        time: Date.UTC(2026, 10, 25, 8, 45, 12, 345),
        pid: 1,
        hostname: 'h',
        reqId: 'req-1',
        req: { method: 'GET', url: '/healthz' },
        res: { statusCode: 200 },
        responseTime: 1.234,
        msg: 'request completed',
      }),
    )
    expect(line).toBe('08:45:12.345  INFO   request completed  GET /healthz  → 200 in 1.2 ms  reqId=req-1')
    expect(textLine('not json')).toBe('not json')
    expect(
      textLine(JSON.stringify({ level: 50, time: 0, msg: 'step failed', job: { id: 7 }, err: { message: 'boom' } })),
    ).toBe('00:00:00.000  ERROR  step failed  job={"id":7}  error: boom')
  })

  it('sends a logger through the text formatter', async () => {
    const out = new PassThrough()
    let written = ''
    out.on('data', (chunk: Buffer) => (written += chunk.toString()))
    const logger = createLogger('info', logDestination('text', out))
    logger.info({ task: 'payments_step', outcome: 'sent' }, 'step')
    await new Promise((resolve) => setImmediate(resolve))
    expect(written).toMatch(/^\d\d:\d\d:\d\d\.\d{3} {2}INFO {3}step {2}task=payments_step {2}outcome=sent\n$/)
    expect(logDestination('json')).toBeUndefined()
  })
})
