// npm run bench:events — events recorded in committed transactions and delivered by the real
// workers (graphile-worker jobs, signed POSTs over HTTP) to local receivers. Three phases, one run:
//   A. EVENTS events are committed, then the workers start and drain them to a receiver that
//      answers 200: deliveries/s, and CPU per event for recording and for delivering;
//   B. EVENTS events recorded at a steady LIVE_RATE_PER_S while delivered: commit-to-receipt p50/p99;
//   C. as B, right after FAILING_EVENTS events went to a receiver that never answers (each
//      attempt waits out the 10 s timeout) and FAILING_EVENTS to one that answers 500: the healthy
//      receiver's p50/p99 should stay as in B.
// Writes bench/results/events.json. Embedded PostgreSQL unless DATABASE_URL is set.
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { startBackgroundWorkers } from '../src/app.ts'
import { recordEvent } from '../src/events/service.ts'
import { createPartner } from '../src/partners/service.ts'
import { systemClock } from '../src/platform/clock.ts'
import { WORKER_CONCURRENCY_DEFAULT } from '../src/platform/config.ts'
import { createPool, withTransaction, type Pool } from '../src/platform/db.ts'
import { migrateDatabase } from '../src/platform/migrate.ts'
import { benchDatabase, STATEMENT_STATS } from './bench-database.ts'
import { postgresCpuMs, postmasterPid, printStatementStats, resetStatementStats } from './statements.ts'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000)
const FAILING_EVENTS = Number(process.env.BENCH_FAILING_EVENTS ?? 2_000)
const BATCH = 100
const RECORDERS = 4
/** Phases B and C record the healthy events at this steady rate, so that their latencies compare. */
const LIVE_RATE_PER_S = Number(process.env.BENCH_LIVE_RATE ?? 300)
const LIVE_BATCH = 25
const WORKER_CONCURRENCY = Number(
  process.env.BENCH_WORKER_CONCURRENCY ?? process.env.WORKER_CONCURRENCY ?? WORKER_CONCURRENCY_DEFAULT,
)

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
            const event = await recordEvent(tx, systemClock, {
              partnerId,
              type: 'bench.event',
              objectType: 'bench',
              objectId: `${label}-${first + i}`,
              data: { n: first + i },
            })
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

/** Records `count` events at LIVE_RATE_PER_S, LIVE_BATCH per transaction; returns each event's commit time. */
async function recordEventsSteadily(
  pool: Pool,
  partnerId: string,
  count: number,
  label: string,
): Promise<Map<string, number>> {
  const committedAt = new Map<string, number>()
  const intervalMs = (LIVE_BATCH / LIVE_RATE_PER_S) * 1000
  const startedAt = Date.now()
  const batches: Promise<void>[] = []
  for (let first = 0; first < count; first += LIVE_BATCH) {
    const due = startedAt + (first / LIVE_BATCH) * intervalMs
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())))
    const size = Math.min(LIVE_BATCH, count - first)
    batches.push(
      withTransaction(pool, async (tx) => {
        const ids: string[] = []
        for (let i = 0; i < size; i++) {
          ids.push(
            (
              await recordEvent(tx, systemClock, {
                partnerId,
                type: 'bench.event',
                objectType: 'bench',
                objectId: `${label}-${first + i}`,
                data: { n: first + i },
              })
            ).id,
          )
        }
        return ids
      }).then((ids) => {
        const now = Date.now()
        for (const id of ids) committedAt.set(id, now)
      }),
    )
  }
  await Promise.all(batches)
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
    if (Date.now() > deadline)
      throw new Error(
        `only ${wanted.filter((id) => receiver.receivedAt.has(id)).length} of ${wanted.length} delivered in time`,
      )
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
  console.log(
    `${label}: ${figures.events} events  ${figures.deliveriesPerSecond} deliveries/s  p50 ${figures.latencyP50Ms} ms  p99 ${figures.latencyP99Ms} ms (commit to receipt)`,
  )
}

interface CpuMark {
  postgresMs: number
  node: NodeJS.CpuUsage
}

function cpuMark(postmaster: number | undefined): CpuMark {
  const postgres = postgresCpuMs(postmaster)
  return { postgresMs: postgres.backends + postgres.others, node: process.cpuUsage() }
}

/** CPU ms per event since `from`: PostgreSQL (all its processes) and this Node process. */
function cpuPerEvent(
  postmaster: number | undefined,
  from: CpuMark,
  events: number,
): { postgresMs: number; nodeMs: number } {
  const now = cpuMark(postmaster)
  const node = process.cpuUsage(from.node)
  const round = (ms: number) => Math.round((ms / events) * 100) / 100
  return { postgresMs: round(now.postgresMs - from.postgresMs), nodeMs: round((node.user + node.system) / 1000) }
}

async function main(): Promise<void> {
  const { url, stop } = await benchDatabase(`rail_bench_events_${process.pid}`)
  const pool = createPool(url, 40, 'rail-bench')
  const masterKey = randomBytes(32)
  const healthy = await startReceiver('ok')
  const hanging = await startReceiver('hang')
  const erroring = await startReceiver('error')
  const startWorkers = () =>
    startBackgroundWorkers({
      pool,
      masterKey,
      concurrency: WORKER_CONCURRENCY,
      events: { allowLoopbackCallbacks: true },
    })
  try {
    await migrateDatabase(pool)
    const postmaster = await postmasterPid(pool)
    const partner = (callbackUrl: string, name: string) =>
      createPartner(pool, masterKey, { name, customerClass: 'fintech', environment: 'sandbox', callbackUrl })
    const healthyPartner = await partner(healthy.url, 'Healthy receiver')
    const hangingPartner = await partner(hanging.url, 'Receiver that never answers')
    const erroringPartner = await partner(erroring.url, 'Receiver that answers 500')

    // A. Delivery alone: the events are committed first, then the workers start and drain them.
    console.log(
      `A. ${EVENTS} committed events, then workers (concurrency ${WORKER_CONCURRENCY}) deliver them to a healthy receiver…`,
    )
    let mark = cpuMark(postmaster)
    const drained = await recordEvents(pool, healthyPartner.partnerId, EVENTS, 'drain')
    const recordCpu = cpuPerEvent(postmaster, mark, EVENTS)
    if (STATEMENT_STATS) await resetStatementStats(pool)
    mark = cpuMark(postmaster)
    const workersStartedAt = Date.now()
    const runner = await startWorkers()
    await waitForAll(healthy, drained.keys(), 600_000)
    const deliverCpu = cpuPerEvent(postmaster, mark, EVENTS)
    const drainSeconds =
      (Math.max(...[...drained.keys()].map((id) => healthy.receivedAt.get(id)!)) - workersStartedAt) / 1000
    const drainPerSecond = Math.round(EVENTS / drainSeconds)
    console.log(`   ${drainPerSecond} deliveries/s`)
    console.log(
      `   CPU per event: recording ${recordCpu.postgresMs} ms PostgreSQL + ${recordCpu.nodeMs} ms Node; delivering ${deliverCpu.postgresMs} ms PostgreSQL + ${deliverCpu.nodeMs} ms Node`,
    )
    if (STATEMENT_STATS) await printStatementStats(pool, EVENTS)

    try {
      // B. Recording and delivery at once, at a steady rate: commit-to-receipt latency.
      console.log(`B. ${EVENTS} events recorded at ${LIVE_RATE_PER_S}/s while the workers deliver them…`)
      const live = await recordEventsSteadily(pool, healthyPartner.partnerId, EVENTS, 'live')
      await waitForAll(healthy, live.keys(), 600_000)
      const alone = figuresOf(live, healthy)
      print('   healthy alone', alone)

      // C. The same beside receivers that fail: they must not slow the healthy one.
      console.log(
        `C. the same, after ${FAILING_EVENTS} events went to a receiver that never answers and ${FAILING_EVENTS} to one that answers 500…`,
      )
      await Promise.all([
        recordEvents(pool, hangingPartner.partnerId, FAILING_EVENTS, 'hang'),
        recordEvents(pool, erroringPartner.partnerId, FAILING_EVENTS, 'error'),
      ])
      const beside = await recordEventsSteadily(pool, healthyPartner.partnerId, EVENTS, 'beside')
      await waitForAll(healthy, beside.keys(), 600_000)
      const withFailing = figuresOf(beside, healthy)
      print('   healthy beside failing receivers', withFailing)
      console.log(
        `   failing receivers saw ${hanging.receivedAt.size} (never answered) and ${erroring.receivedAt.size} (500) first attempts meanwhile`,
      )

      const figures = {
        deliveriesPerSecond: drainPerSecond,
        cpuMsPerEvent: { recording: recordCpu, delivering: deliverCpu },
        live: alone,
        liveBesideFailing: withFailing,
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
