// The SDK's tests run it against the real app: its HTTP server with the sandbox bank mounted,
// real background workers (payments, deliveries, the bank's notices), real receivers for
// callbacks, and partners made as `rail partner create` makes them.
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import type { PartnerCredentials } from '../../src/partners/service.ts'
import { Rail, verifyWebhook, type RailOptions, type RailWebhookEvent } from '../../packages/sdk/src/index.ts'
import type { TestApp, TestAppOptions } from '../support/app.ts'
import { startRail } from '../support/rail.ts'

const BANK_SECRET = 'sdk-test-bank-secret'
const SCHEDULE = { sandbox: { firstDelayMs: 200, deadlineMs: 60_000 } }

export interface SdkHarness {
  app: TestApp
  /** A new sandbox partner and an SDK client holding its credentials. */
  newPartner(options?: Partial<RailOptions>): Promise<{ credentials: PartnerCredentials; rail: Rail }>
  close(): Promise<void>
}

export async function startSdkHarness(options: { app?: TestAppOptions } = {}): Promise<SdkHarness> {
  const app = await startRail({
    sandboxBankSecret: BANK_SECRET,
    payments: SCHEDULE,
    ...options.app,
    workers: { concurrency: 8, events: { retryDelaysMs: [200] } },
  })
  return {
    app,
    async newPartner(overrides = {}) {
      const { credentials } = await app.newPartner()
      const rail = new Rail({
        baseUrl: app.baseUrl,
        keyId: credentials.keyId,
        signingSecret: credentials.signingSecret,
        escrowApiKey: credentials.escrowApiKey,
        retryBaseDelayMs: 50,
        ...overrides,
      })
      return { credentials, rail }
    },
    close: app.close,
  }
}

export interface WebhookReceiver {
  url: string
  /** Events whose signature verified, in arrival order. */
  events: RailWebhookEvent[]
  /** Deliveries refused (401) because they did not verify. */
  refused: number
  close(): Promise<void>
}

/** The README's receiver: verifies each delivery with verifyWebhook and answers 200, or 401. */
export async function startWebhookReceiver(
  secret: string | string[],
  scheme: 'auto' | 'standard' | 'rail' = 'auto',
): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = { url: '', events: [], refused: 0, close: async () => {} }
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      try {
        receiver.events.push(verifyWebhook(Buffer.concat(chunks), request.headers, secret, { scheme }))
        response.writeHead(200).end()
      } catch {
        receiver.refused++
        response.writeHead(401).end()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  receiver.close = () => {
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return receiver
}

export interface LossyProxy {
  baseUrl: string
  /** The next this many answers reach the proxy from Rail and are thrown away: the client's connection is cut. */
  loseAnswers: number
  /** Answers thrown away so far. */
  lost: number
  /** The head (request line and headers, names in lower case) of each request that passed, in order. */
  requests: { requestLine: string; headers: Record<string, string> }[]
  close(): Promise<void>
}

/**
 * A TCP proxy in front of the app that can lose answers: Rail receives and handles the request,
 * its answer is dropped and the client's connection closed, as a network failure after the
 * server acted would. The client cannot tell whether its call took effect.
 */
export async function startLossyProxy(targetBaseUrl: string): Promise<LossyProxy> {
  const target = new URL(targetBaseUrl)
  const sockets = new Set<net.Socket>()
  const proxy: LossyProxy = { baseUrl: '', loseAnswers: 0, lost: 0, requests: [], close: async () => {} }
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {})
    }
    client.pipe(upstream)
    client.on('data', (chunk: Buffer) => {
      // A request's head arrives in its first chunk (the SDK's requests are small).
      const [requestLine, ...lines] = chunk.toString('latin1').split('\r\n\r\n')[0]!.split('\r\n')
      if (!/^[A-Z]+ \S+ HTTP\/1\.1$/.test(requestLine ?? '')) return
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      )
      proxy.requests.push({ requestLine: requestLine!, headers })
    })
    upstream.on('data', (chunk: Buffer) => {
      if (proxy.loseAnswers > 0) {
        proxy.loseAnswers--
        proxy.lost++
        client.destroy()
        upstream.destroy()
        return
      }
      client.write(chunk)
    })
    upstream.on('end', () => client.end())
    client.on('close', () => upstream.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  proxy.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return proxy
}
