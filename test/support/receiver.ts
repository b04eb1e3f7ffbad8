// A real HTTP receiver for callbacks: records every request (raw body and headers) and answers
// as the test says, per request.
import http from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface ReceivedRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  rawBody: string
  receivedAt: number
}

export interface Answer {
  status?: number
  headers?: Record<string, string>
  body?: string
  /** Wait this long before answering. */
  delayMs?: number
  /** Never answer (the request hangs until the receiver closes). */
  hang?: boolean
  /** Answer once this settles (then after delayMs). */
  until?: Promise<unknown>
}

export interface Receiver {
  url: string
  port: number
  requests: ReceivedRequest[]
  /** Decides the answer to each request; the default answers 200 "ok". */
  answer: (request: ReceivedRequest, index: number) => Answer
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>
  close(): Promise<void>
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const sockets = new Set<Socket>()
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    answer: () => ({ status: 200, body: 'ok' }),
    async waitForRequests(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      while (receiver.requests.length < count) {
        if (Date.now() > deadline)
          throw new Error(`receiver got ${receiver.requests.length} requests, expected ${count}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return receiver.requests
    },
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      }
      const index = receiver.requests.push(received) - 1
      const answer = receiver.answer(received, index)
      if (answer.hang) return
      const reply = () =>
        setTimeout(() => {
          if (res.destroyed) return
          res.writeHead(answer.status ?? 200, answer.headers ?? {})
          res.end(answer.body ?? '')
        }, answer.delayMs ?? 0)
      if (answer.until) void answer.until.finally(reply)
      else reply()
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  receiver.port = (server.address() as AddressInfo).port
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`
  return receiver
}
