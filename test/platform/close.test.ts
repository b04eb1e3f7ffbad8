// Closing the HTTP server: a connection on which nothing has arrived (a load balancer's spare, a
// request aborted before it was written) does not hold the server open; a request in flight still
// gets its answer.
import net from 'node:net'
import { expect, it } from 'vitest'
import { startTestApp } from '../support/app.ts'

function connect(baseUrl: string): Promise<net.Socket> {
  const url = new URL(baseUrl)
  const socket = net.connect(Number(url.port), url.hostname)
  return new Promise((resolve, reject) => socket.once('connect', () => resolve(socket)).once('error', reject))
}

it('closes with a connection open on which no request has begun: the server ends it', async () => {
  const app = await startTestApp()
  const unused = await connect(app.baseUrl)
  const ended = new Promise<void>((resolve) => unused.once('close', () => resolve()))
  // Without ending it, close() would wait for the peer, which here never gives up.
  await app.api.close()
  await ended
  await app.db.drop()
})

it('closes after answering a request that was in flight, on a connection beside an unused one', async () => {
  const app = await startTestApp()
  const unused = await connect(app.baseUrl)
  const inFlight = await connect(app.baseUrl)
  let answer = ''
  inFlight.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')))
  const answered = new Promise<void>((resolve) => inFlight.once('close', () => resolve()))
  // Headers sent, body not yet: the request has begun when close() is called.
  inFlight.write(
    'POST /api/v1/rail/wallet HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n',
  )
  await new Promise((resolve) => setTimeout(resolve, 100))
  const closed = app.api.close()
  inFlight.end('{}')
  await closed
  await answered
  unused.destroy()
  // Answered (whatever the answer of a server closing), not cut off.
  expect(answer).toMatch(/^HTTP\/1\.1 \d{3} /)
  await app.db.drop()
})
