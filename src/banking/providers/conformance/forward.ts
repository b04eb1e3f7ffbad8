// A forwarding HTTP proxy (node:http in front, undici behind) that shows each exchange to an
// observer: what came in, and what the target answered. It keeps the target's behaviour as seen
// by the client: the same status, headers and body, and no answer at all (the connection dropped)
// when the target gave none, so that a client's handling of a lost answer is exercised as it would be.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { request as upstreamRequest } from 'undici'
import type { ExchangeRequest, ExchangeResponse, Headers } from './exchange.ts'

/** A request or an answer bigger than this is not one the check reads (providers' answers are small). */
const BODY_BYTES_MAX = 4 * 1024 * 1024
/** How long the proxy waits for the target's headers and body, beyond any client's own timeout. */
const UPSTREAM_TIMEOUT_MS_DEFAULT = 60_000
/** Headers of one connection, never forwarded (RFC 9110 §7.6.1), and those the proxy sets itself. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
])

export interface ForwardedExchange {
  /** The request as it came in; its path is the proxy's (the target's base path is added on forwarding). */
  request: ExchangeRequest
  /** The target's answer; null when it gave none (the error says why). */
  response: ExchangeResponse | null
  error?: string
}

export interface ForwardingProxyOptions {
  /** Where requests go: a base URL whose path prefixes each forwarded path, e.g. http://127.0.0.1:8080/sandbox-paystack. */
  targetBaseUrl: string | (() => string)
  /** Sees each exchange once the target has answered (or failed to), before the client gets the answer. */
  observe: (exchange: ForwardedExchange) => void
  timeoutMs?: number
}

export interface ForwardingProxy {
  /** The proxy's base URL, http://127.0.0.1:<port>. */
  url: string
  close(): Promise<void>
}

function forwardedHeaders(headers: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !NOT_FORWARDED.has(name.toLowerCase())) out[name] = value
  }
  return out
}

async function readBody(stream: AsyncIterable<Buffer | string>): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    size += buffer.length
    if (size > BODY_BYTES_MAX) return undefined
    chunks.push(buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

async function forward(
  options: ForwardingProxyOptions,
  request: ExchangeRequest,
  search: string,
): Promise<ForwardedExchange> {
  const base = typeof options.targetBaseUrl === 'function' ? options.targetBaseUrl() : options.targetBaseUrl
  const timeoutMs = options.timeoutMs ?? UPSTREAM_TIMEOUT_MS_DEFAULT
  try {
    const answer = await upstreamRequest(`${base.replace(/\/+$/, '')}${request.path}${search}`, {
      method: request.method as 'GET',
      headers: forwardedHeaders(request.headers),
      body: request.body.length > 0 ? request.body : undefined,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    })
    const body = await readBody(answer.body)
    if (body === undefined) return { request, response: null, error: `the answer is over ${BODY_BYTES_MAX} bytes` }
    return { request, response: { status: answer.statusCode, headers: answer.headers as Headers, body } }
  } catch (error) {
    return { request, response: null, error: error instanceof Error ? error.message : String(error) }
  }
}

async function handle(
  options: ForwardingProxyOptions,
  incoming: http.IncomingMessage,
  outgoing: http.ServerResponse,
): Promise<void> {
  const body = await readBody(incoming)
  if (body === undefined) {
    outgoing.writeHead(413).end()
    return
  }
  const url = new URL(incoming.url ?? '/', 'http://proxy.invalid')
  const request: ExchangeRequest = {
    method: incoming.method ?? 'GET',
    path: url.pathname,
    query: url.searchParams,
    headers: incoming.headers,
    body,
  }
  const exchange = await forward(options, request, url.search)
  options.observe(exchange)
  if (!exchange.response) {
    incoming.socket.destroy() // no answer from the target: none from the proxy either
    return
  }
  outgoing.writeHead(exchange.response.status, forwardedHeaders(exchange.response.headers))
  outgoing.end(exchange.response.body)
}

export async function startForwardingProxy(options: ForwardingProxyOptions): Promise<ForwardingProxy> {
  const server = http.createServer((incoming, outgoing) => {
    handle(options, incoming, outgoing).catch((error: unknown) => {
      console.error('conformance proxy:', error)
      incoming.socket.destroy()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
