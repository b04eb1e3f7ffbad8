// The load generator of bench:latency, in a process of its own (on two cores its CPU would
// otherwise be taken from the server's event loop). BENCH_LATENCY_OP names the operation
// (bench/request-bodies.ts: wallets, outbound, intents, ceiling), sent to BENCH_BASE_URL as
// BENCH_KEY_ID; the wallets one between the wallets listed in BENCH_WALLETS_FILE.
//   BENCH_LATENCY_MODE=burst: the closed-loop burst that finds the saturating rate, as the other
//     benches load (bench/signed-load.ts: BENCH_WARMUP, then BENCH_TRANSFERS over BENCH_CONNECTIONS).
//   BENCH_LATENCY_MODE=step: one open-loop step (bench/open-loop.ts) of BENCH_LATENCY_RATE requests
//     a second for BENCH_LATENCY_SECONDS over BENCH_LATENCY_CONNECTIONS sockets. Every request is
//     built and signed first; then it prints `ready`, waits for a line on stdin (the bench reads
//     its CPU counters meanwhile), runs, and prints the step's figures as one line of JSON.
import { readFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { Pool } from 'undici'
import { type StepSummary, summarizeStep } from './latency-stats.ts'
import { runOpenLoop } from './open-loop.ts'
import { SIGNED_OPERATIONS, type SignedOperation } from './request-bodies.ts'
import { prepareSigned, runSignedLoad } from './signed-load.ts'

/** A request that has not answered in this long is counted as failed (status 0). */
const REQUEST_TIMEOUT_MS = 30_000

/** What a step prints: its figures, and the generator's own CPU and event-loop delay while it ran. */
export interface StepOutcome extends StepSummary {
  generatorCpuMs: number
  generatorLoopDelayP99Ms: number
  generatorLoopDelayMaxMs: number
}

const operation = SIGNED_OPERATIONS[process.env.BENCH_LATENCY_OP as SignedOperation]
if (!operation) throw new Error(`BENCH_LATENCY_OP must be one of ${Object.keys(SIGNED_OPERATIONS).join(', ')}`)
const wallets = process.env.BENCH_WALLETS_FILE
  ? (JSON.parse(readFileSync(process.env.BENCH_WALLETS_FILE, 'utf8')) as string[])
  : []
const bodyOf = () => operation.bodyOf(wallets)

if (process.env.BENCH_LATENCY_MODE === 'burst') await runSignedLoad(operation.path, bodyOf)
else await runStep()

async function runStep(): Promise<void> {
  const ratePerS = Number(process.env.BENCH_LATENCY_RATE)
  const requests = Math.max(1, Math.round(ratePerS * Number(process.env.BENCH_LATENCY_SECONDS)))
  const connections = Number(process.env.BENCH_LATENCY_CONNECTIONS)
  // Every request built and signed before the step starts: signing is not the generator's load.
  const prepared = prepareSigned(operation.path, bodyOf, requests)
  const pool = new Pool(process.env.BENCH_BASE_URL!, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  })
  process.stdout.write('ready\n')
  await firstLine()
  const loopDelay = monitorEventLoopDelay({ resolution: 10 })
  loopDelay.enable()
  const cpuBefore = process.cpuUsage()
  const records = await runOpenLoop({
    requests,
    ratePerS,
    connections,
    async send(index) {
      const { body, headers } = prepared[index]!
      const answer = await pool.request({ method: 'POST', path: operation.path, body, headers })
      await answer.body.dump()
      return answer.statusCode
    },
  })
  const cpu = process.cpuUsage(cpuBefore)
  loopDelay.disable()
  await pool.close()
  const outcome: StepOutcome = {
    ...summarizeStep(records),
    generatorCpuMs: (cpu.user + cpu.system) / 1000,
    generatorLoopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    generatorLoopDelayMaxMs: loopDelay.max / 1e6,
  }
  process.stdout.write(`${JSON.stringify(outcome)}\n`)
}

function firstLine(): Promise<void> {
  const lines = createInterface({ input: process.stdin })
  return new Promise((resolve) =>
    lines.once('line', () => {
      lines.close()
      resolve()
    }),
  )
}
