// Shared by the observability tests: reading Prometheus' text format, collecting log lines, a
// throw-away database a test may take away from under a process (readyz), and a real OTLP/HTTP
// receiver for exported spans.
import { randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { inject } from 'vitest'
import { adminQuery, withDatabase } from '../support/global-setup.ts'

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Every sample of a /metrics answer (comments skipped). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match) throw new Error(`not a Prometheus sample: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]!] = pair[2]!
    samples.push({ name: match[1]!, labels, value: Number(match[3]) })
  }
  return samples
}

export async function scrape(baseUrl: string): Promise<Sample[]> {
  const response = await fetch(`${baseUrl}/metrics`)
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`)
  return parseMetrics(await response.text())
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)
}

export function hasSeries(samples: Sample[], name: string, labels: Record<string, string> = {}): boolean {
  return samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
}

/** A stream pino writes to: every line kept, parsed. */
export function logLines(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = []
  let partial = ''
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const parts = (partial + chunk.toString('utf8')).split('\n')
      partial = parts.pop() ?? ''
      for (const part of parts) if (part.trim() !== '') lines.push(JSON.parse(part) as Record<string, unknown>)
      done()
    },
  })
  return { stream, lines }
}

/** A migrated database of its own, cloned from the template, that the test may drop at any time. */
export async function bareDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject('databaseAdminUrl')
  const name = `${inject('testDatabasePrefix')}obs_${randomBytes(5).toString('hex')}`
  await adminQuery(adminUrl, `CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`)
  return {
    url: withDatabase(adminUrl, name),
    drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  }
}

export interface ExportedSpan {
  name: string
  traceId: string
  spanId: string
  parentSpanId?: string
  kind: number
  status?: { code?: number; message?: string }
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[]
}

/** A real OTLP/HTTP receiver: keeps every POST to /v1/traces (JSON, as the HTTP exporter sends it). */
export async function startOtlpReceiver() {
  const posts: {
    contentType: string
    body: {
      resourceSpans: { resource: { attributes: ExportedSpan['attributes'] }; scopeSpans: { spans: ExportedSpan[] }[] }[]
    }
  }[] = []
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces')
        posts.push({
          contentType: String(request.headers['content-type']),
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        })
      response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const spans = () =>
    posts.flatMap((post) =>
      post.body.resourceSpans.flatMap((resource) =>
        resource.scopeSpans.flatMap((scope) => scope.spans.map((span) => ({ span, resource: resource.resource }))),
      ),
    )
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

export const attribute = (attributes: ExportedSpan['attributes'], key: string) => {
  const value = attributes.find((entry) => entry.key === key)?.value
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : String(value.intValue))
}
