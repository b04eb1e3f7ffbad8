// npm run bench:events — events recorded in committed transactions (batches of BATCH) and
// delivered by the real workers (graphile-worker jobs, signed POSTs over HTTP) to a local receiver
// that answers 200. Two phases in one run:
//   A. EVENTS events to the healthy receiver alone;
//   B. EVENTS events to the healthy receiver while FAILING_EVENTS go to a receiver that never
//      answers (each attempt waits out the 10 s timeout) and another that answers 500.
// Prints deliveries/s and end-to-end p50/p99 (commit to receipt) of the healthy receiver in each
// phase, and writes bench/results/events.json. Embedded PostgreSQL unless DATABASE_URL is set.
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { startBackgroundWorkers } from '../src/app.ts'
import { recordEvent } from '../src/events/service.ts'
import { createPartner } from '../src/partners/service.ts'
import { createPool, withTransaction, type Pool } from '../src/platform/db.ts'
import { migrateDatabase } from '../src/platform/migrate.ts'
import { benchDatabase } from './bench-database.ts'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000)
const FAILING_EVENTS = Number(process.env.BENCH_FAILING_EVENTS ?? 2_000)
const BATCH = 100
const RECORDERS = 4
const WORKER_CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? process.env.WORKER_CONCURRENCY ?? 8)

interface Receiver {
  url: string
  receivedAt: Map<string, number>
  close(): Promise<void>
}

async function startReceiver(answer: 'ok' | 'hang' | 'error'): Promise<Receiver> {
  const receivedAt = new Map<string, number>()
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const id = req.headers['x-rail-event-id'] as string
      if (!receivedAt.has(id)) receivedAt.set(id, Date.now())
      if (answer === 'hang') return
      res.writeHead(answer === 'ok' ? 200 : 500).end(answer)
    })
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    receivedAt,
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** Records `count` events for a partner in transactions of BATCH; returns each event's commit time. */
async function recordEvents(pool: Pool, partnerId: string, count: number, label: string): Promise<Map<string, number>> {
  const committedAt = new Map<string, number>()
  let next = 0
  await Promise.all(
    Array.from({ length: RECORDERS }, async () => {
      while (next < count) {
        const size = Math.min(BATCH, count - next)
        const first = next
        next += size
        const ids = await withTransaction(pool, async (tx) => {
          const recorded: string[] = []
          for (let i = 0; i < size; i++) {
            const event = await recordEvent(tx, { partnerId, type: 'bench.event', objectType: 'bench', objectId: `${label}-${first + i}`, data: { n: first + i } })
            recorded.push(event.id)
          }
          return recorded
        })
        const now = Date.now()
        for (const id of ids) committedAt.set(id, now)
      }
    }),
  )
  return committedAt
}

interface PhaseFigures {
  deliveriesPerSecond: number
  latencyP50Ms: number
  latencyP99Ms: number
  events: number
}

async function waitForAll(receiver: Receiver, ids: Iterable<string>, timeoutMs: number): Promise<void> {
  const wanted = [...ids]
  const deadline = Date.now() + timeoutMs
  while (wanted.some((id) => !receiver.receivedAt.has(id))) {
    if (Date.now() > deadline) throw new Error(`only ${wanted.filter((id) => receiver.receivedAt.has(id)).length} of ${wanted.length} delivered in time`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

function figuresOf(committedAt: Map<string, number>, receiver: Receiver): PhaseFigures {
  const latencies = [...committedAt].map(([id, at]) => receiver.receivedAt.get(id)! - at).sort((a, b) => a - b)
  const firstCommit = Math.min(...committedAt.values())
  const lastReceipt = Math.max(...[...committedAt.keys()].map((id) => receiver.receivedAt.get(id)!))
  return {
    deliveriesPerSecond: Math.round(committedAt.size / ((lastReceipt - firstCommit) / 1000)),
    latencyP50Ms: latencies[Math.floor(latencies.length * 0.5)]!,
    latencyP99Ms: latencies[Math.floor(latencies.length * 0.99)]!,
    events: committedAt.size,
  }
}

function print(label: string, figures: PhaseFigures): void {
  console.log(`${label}: ${figures.events} events  ${figures.deliveriesPerSecond} deliveries/s  p50 ${figures.latencyP50Ms} ms  p99 ${figures.latencyP99Ms} ms (commit to receipt)`)
}

async function main(): Promise<void> {
  const { url, stop } = await benchDatabase(`rail_bench_events_${process.pid}`)
  const pool = createPool(url, 40, 'rail-bench')
  const masterKey = randomBytes(32)
  const healthy = await startReceiver('ok')
  const hanging = await startReceiver('hang')
  const erroring = await startReceiver('error')
  try {
    await migrateDatabase(pool)
    const partner = (callbackUrl: string, name: string) => createPartner(pool, masterKey, { name, customerClass: 'fintech', environment: 'sandbox', callbackUrl })
    const healthyPartner = await partner(healthy.url, 'Healthy receiver')
    const hangingPartner = await partner(hanging.url, 'Receiver that never answers')
    const erroringPartner = await partner(erroring.url, 'Receiver that answers 500')
    const runner = await startBackgroundWorkers({ pool, masterKey, concurrency: WORKER_CONCURRENCY, events: { allowLoopbackCallbacks: true } })
    try {
      console.log(`phase A: ${EVENTS} events to a healthy receiver (worker concurrency ${WORKER_CONCURRENCY})…`)
      const phaseA = await recordEvents(pool, healthyPartner.partnerId, EVENTS, 'a')
      await waitForAll(healthy, phaseA.keys(), 600_000)
      const alone = figuresOf(phaseA, healthy)
      print('healthy alone', alone)

      console.log(`phase B: ${EVENTS} healthy events while ${FAILING_EVENTS} go to a receiver that never answers and ${FAILING_EVENTS} to one that answers 500…`)
      const [phaseB] = await Promise.all([
        recordEvents(pool, healthyPartner.partnerId, EVENTS, 'b'),
        recordEvents(pool, hangingPartner.partnerId, FAILING_EVENTS, 'hang'),
        recordEvents(pool, erroringPartner.partnerId, FAILING_EVENTS, 'error'),
      ])
      await waitForAll(healthy, phaseB.keys(), 600_000)
      const withFailing = figuresOf(phaseB, healthy)
      print('healthy beside failing receivers', withFailing)
      console.log(`failing receivers saw ${hanging.receivedAt.size} (never answered) and ${erroring.receivedAt.size} (500) first attempts meanwhile`)

      const figures = {
        healthyAlone: alone,
        healthyBesideFailing: withFailing,
        failingEvents: FAILING_EVENTS * 2,
        workerConcurrency: WORKER_CONCURRENCY,
        measuredAt: new Date().toISOString(),
        machine: `${os.cpus().length} cores, node ${process.version}`,
      }
      const file = path.join(path.dirname(new URL(import.meta.url).pathname), 'results', 'events.json')
      mkdirSync(path.dirname(file), { recursive: true })
      writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`)
      console.log(`wrote ${path.relative(process.cwd(), file)}`)
    } finally {
      await runner.stop()
    }
  } finally {
    await Promise.all([healthy.close(), hanging.close(), erroring.close()])
    await pool.end()
    await stop()
  }
}

await main()
