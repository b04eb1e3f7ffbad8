// npm run bench:latency — latency at steady rates (docs/performance.md): an open-loop generator
// (bench/latency-load.ts, a process of its own, bench/open-loop.ts) sends signed requests on a
// fixed schedule at a constant rate, each request's latency counted from when it was due, so a
// slow answer cannot hide the requests behind it. For each operation (wallet transfers between
// funded wallets, outbound submits with no workers running, payment intents) against the real app
// on a throw-away durable PostgreSQL (or DATABASE_URL), it first finds the saturating rate with a
// closed-loop burst, then runs a ladder of steady rates; beside it, in the same run, the same
// rates against the machine's two-hop ceiling (bench/wallets-ceiling.ts, no database) and
// PostgreSQL's TPC-B at fixed rates (bench/pgbench-ladder.ts). Per rate and operation it prints
// the achieved rate, p50/p90/p99/p99.9/max, errors, the generator's faults, the CPU per request of
// each process, and from Rail's /metrics the event-loop delay, GC, pool waits and stage times.
// Verifies the ledger; writes bench/results/latency.json. Knobs:
//   BENCH_LATENCY_OPS        operations, default wallets,outbound,intents
//   BENCH_LATENCY_RATES      the ladder, default 5,20,60,25%,50%,75% (n% of the saturating rate)
//   BENCH_LATENCY_SECONDS    seconds per step, default 15 (under the signatures' 300 s tolerance)
//   BENCH_LATENCY_BURST      requests of the saturation burst, default 3000; 0: none (n% rates dropped)
//   BENCH_LATENCY_WARMUP     unmeasured requests before it, default 500
//   BENCH_LATENCY_WALLETS    funded wallets the transfers move between, default 1000
//   BENCH_LATENCY_CONNECTIONS the generator's sockets, default 2.5 s of requests at the step's rate (at least 64)
//   BENCH_LATENCY_YARDSTICKS default ceiling,pgbench; none: neither
//   BENCH_STATEMENTS=1       each Rail step also prints its statements per request (pg_stat_statements)
import { spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type autocannon from 'autocannon'
import { buildApi } from '../src/app.ts'
import { RailClient } from '../src/client/index.ts'
import { verifyLedger } from '../src/ledger/verify.ts'
import { createPartner } from '../src/partners/service.ts'
import { createPool, type Pool } from '../src/platform/db.ts'
import { migrateDatabase } from '../src/platform/migrate.ts'
import { benchDatabase, listenOnLoopback, STATEMENT_STATS } from './bench-database.ts'
import type { StepOutcome } from './latency-load.ts'
import {
  type LatencyRun,
  type OperationLadder,
  printLatencyRun,
  type StepFigures,
  writeLatencyRun,
} from './latency-report.ts'
import { cpuSnapshot, scrapeMetrics, serverStep } from './latency-server.ts'
import type { Sample } from './latency-stats.ts'
import { initPgbench, PGBENCH_CLIENTS, PGBENCH_SCALE, pgbenchStep, pgbenchVersion } from './pgbench-ladder.ts'
import { SIGNED_OPERATIONS, type SignedOperation } from './request-bodies.ts'
import { postmasterPid, printStatementStats, resetStatementStats } from './statements.ts'
import { startCeilingServers } from './wallets-ceiling.ts'
import { setUpWallets } from './wallets-setup.ts'

const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
const OPERATIONS = list(process.env.BENCH_LATENCY_OPS ?? 'wallets,outbound,intents') as SignedOperation[]
const RATES = list(process.env.BENCH_LATENCY_RATES ?? '5,20,60,25%,50%,75%')
const SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 15)
const BURST = Number(process.env.BENCH_LATENCY_BURST ?? 3_000)
const WARMUP = Number(process.env.BENCH_LATENCY_WARMUP ?? 500)
const WALLETS = Number(process.env.BENCH_LATENCY_WALLETS ?? 1_000)
const YARDSTICKS = list(process.env.BENCH_LATENCY_YARDSTICKS ?? 'ceiling,pgbench')
/** The closed-loop burst's connections, as the other benches load. */
const BURST_CONNECTIONS = 64
/** The generator holds sockets for this long of requests at the step's rate: more than admission's longest queue wait (2 s). */
const SOCKETS_FOR_S = 2.5
const SOCKETS_MIN = 64
/** Float for every outbound submit of a run: each is at most 10,090 naira (bench/request-bodies.ts). */
const FLOAT_KOBO = 25_000_000_000
const SECRET = randomBytes(16).toString('hex')

/** Where a step's requests go: the base URL and credentials, and how to read the server's side. */
interface Target {
  baseUrl: string
  credentials: { keyId: string; signingSecret: string }
  walletsFile?: string
  /** PostgreSQL's postmaster when the server uses the database (its CPU counts), else undefined. */
  postmaster: number | undefined
  /** Rail's /metrics; the ceiling has none. */
  scrape?: () => Promise<Sample[]>
  /** With BENCH_STATEMENTS=1, Rail's database: each step prints its statements per request (where PostgreSQL's time goes). */
  statements?: Pool
}

async function main(): Promise<void> {
  for (const operation of OPERATIONS)
    if (!(operation in SIGNED_OPERATIONS) || operation === 'ceiling') throw new Error(`unknown operation ${operation}`)
  if (!(SECONDS > 0 && SECONDS < 300)) throw new Error('BENCH_LATENCY_SECONDS must be between 0 and 300')
  const { url, stop } = await benchDatabase(`rail_bench_latency_${process.pid}`)
  const pool = createPool(url, 40, 'rail-bench')
  let baseUrl = ''
  const masterKey = randomBytes(32)
  const providers = { sandboxBankUrl: () => baseUrl, sandboxBankSecret: SECRET }
  const api = await buildApi({ pool, masterKey, sandboxBank: { secret: SECRET }, providers })
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'rail-bench-latency-'))
  try {
    await migrateDatabase(pool)
    baseUrl = await listenOnLoopback(api)
    const credentials = await createPartner(pool, masterKey, {
      name: 'Bench',
      customerClass: 'fintech',
      environment: 'sandbox',
    })
    const rail: Target = {
      baseUrl,
      credentials,
      postmaster: await postmasterPid(pool),
      scrape: () => scrapeMetrics(baseUrl),
      statements: STATEMENT_STATS ? pool : undefined,
      walletsFile: await prepareOperations(new RailClient(baseUrl, credentials), scratch),
    }
    const operations: OperationLadder[] = []
    for (const operation of OPERATIONS) operations.push(await ladderOf(rail, operation))
    const yardstickRates = [...new Set(operations.flatMap((ladder) => ladder.steps.map((step) => step.ratePerS)))]
    yardstickRates.sort((a, b) => a - b)
    const run: LatencyRun = {
      secondsPerStep: SECONDS,
      wallets: WALLETS,
      operations,
      ceiling: YARDSTICKS.includes('ceiling') ? await ceilingLadder(yardstickRates) : undefined,
      pgbench: YARDSTICKS.includes('pgbench') ? await pgbenchLadder(url, rail.postmaster, yardstickRates) : undefined,
      ledgerVerified: (await verifyLedger(pool)).ok,
      measuredAt: new Date().toISOString(),
      machine: `${os.cpus().length} cores, node ${process.version}`,
    }
    printLatencyRun(run)
    writeLatencyRun(run)
    if (!run.ledgerVerified) throw new Error('ledger verification failed')
  } finally {
    rmSync(scratch, { recursive: true, force: true })
    await api.close()
    await pool.end()
    await stop()
  }
}

/** What the chosen operations need before they run: funded wallets (their file's path) and float. */
async function prepareOperations(client: RailClient, scratch: string): Promise<string | undefined> {
  if (OPERATIONS.includes('outbound')) {
    const funded = await client.post('/api/v1/rail/sandbox/fund-float', {
      amountKobo: FLOAT_KOBO,
      reference: `bench-${randomUUID()}`,
    })
    if (funded.status !== 200) throw new Error(`fund-float answered ${funded.status}`)
  }
  if (!OPERATIONS.includes('wallets')) return undefined
  console.log(`setting up ${WALLETS} funded wallets…`)
  const file = path.join(scratch, 'wallets.json')
  writeFileSync(file, JSON.stringify(await setUpWallets(client, WALLETS)))
  return file
}

/** An operation's saturating rate (a closed-loop burst after a warm-up), then its ladder of steady rates. */
async function ladderOf(rail: Target, operation: SignedOperation): Promise<OperationLadder> {
  let saturationPerS: number | undefined
  if (BURST > 0) {
    console.log(`${operation}: ${WARMUP} warm-up requests, then a closed-loop burst of ${BURST} to find saturation…`)
    const burst = await runBurst(rail, operation, BURST, WARMUP)
    saturationPerS = Math.round(burst.requests.total / burst.measuredSeconds)
    console.log(`${operation}: saturates at ${saturationPerS}/s (p99 ${burst.latency.p99} ms closed-loop)`)
  }
  const steps: StepFigures[] = []
  for (const ratePerS of ladderRates(saturationPerS)) steps.push(await measureStep(rail, operation, ratePerS))
  return { operation, path: SIGNED_OPERATIONS[operation].path, saturationPerS, steps }
}

/** The ladder's rates: the absolute ones, and n% of the saturating rate when it was measured; ascending, once each. */
function ladderRates(saturationPerS: number | undefined): number[] {
  const rates = RATES.flatMap((rate) => {
    if (!rate.endsWith('%')) return [Number(rate)]
    if (saturationPerS === undefined) return []
    return [Math.max(1, Math.round((saturationPerS * Number(rate.slice(0, -1))) / 100))]
  })
  if (rates.some((rate) => !(rate > 0))) throw new Error(`BENCH_LATENCY_RATES: ${RATES.join(',')}`)
  return [...new Set(rates)].sort((a, b) => a - b)
}

/** The ceiling's two servers (in this process) at the same rates, after a warm-up. */
async function ceilingLadder(rates: number[]): Promise<StepFigures[]> {
  const servers = await startCeilingServers()
  try {
    const ceiling: Target = {
      baseUrl: servers.url,
      credentials: { keyId: 'bench', signingSecret: servers.secret },
      postmaster: undefined,
    }
    if (WARMUP > 0) await runBurst(ceiling, 'ceiling', WARMUP, 0)
    const steps: StepFigures[] = []
    for (const ratePerS of rates) steps.push(await measureStep(ceiling, 'ceiling', ratePerS))
    return steps
  } finally {
    await servers.close()
  }
}

async function pgbenchLadder(
  url: string,
  postmaster: number | undefined,
  rates: number[],
): Promise<LatencyRun['pgbench']> {
  const version = await pgbenchVersion()
  if (!version) {
    console.log('pgbench is not installed: its yardstick is skipped')
    return { skipped: 'pgbench is not installed' }
  }
  console.log(`${version}: initialising scale ${PGBENCH_SCALE}…`)
  await initPgbench(url)
  const steps = []
  for (const ratePerS of rates) {
    const step = await pgbenchStep(url, ratePerS, SECONDS, postmaster)
    console.log(
      `pgbench ${ratePerS}/s: ${step.achievedPerS}/s  p50 ${step.p50Ms}  p99 ${step.p99Ms}  max ${step.maxMs} ms`,
    )
    steps.push(step)
  }
  return { version, scale: PGBENCH_SCALE, clients: PGBENCH_CLIENTS, steps }
}

/**
 * One open-loop step: the generator signs its requests, then — with the server's CPU counters and
 * /metrics read just before and after — sends them on schedule.
 */
async function measureStep(target: Target, operation: SignedOperation, ratePerS: number): Promise<StepFigures> {
  const connections = Number(
    process.env.BENCH_LATENCY_CONNECTIONS ?? Math.max(SOCKETS_MIN, Math.ceil(ratePerS * SOCKETS_FOR_S)),
  )
  const generator = startGenerator(target, operation, {
    BENCH_LATENCY_MODE: 'step',
    BENCH_LATENCY_RATE: String(ratePerS),
    BENCH_LATENCY_SECONDS: String(SECONDS),
    BENCH_LATENCY_CONNECTIONS: String(connections),
  })
  await generator.ready
  const before = await target.scrape?.()
  if (target.statements) await resetStatementStats(target.statements)
  const cpuBefore = cpuSnapshot(target.postmaster)
  generator.go()
  const outcome = JSON.parse(await generator.output) as StepOutcome
  const cpuAfter = cpuSnapshot(target.postmaster)
  const after = await target.scrape?.()
  if (target.statements) {
    console.log(`${operation} ${ratePerS}/s: PostgreSQL's statements (pg_stat_statements)`)
    await printStatementStats(target.statements, Math.max(outcome.answered, 1), 20)
  }
  const per = (ms: number) => Math.round((ms / Math.max(outcome.answered, 1)) * 1000) / 1000
  const serverMs = cpuAfter.processMs - cpuBefore.processMs
  const backendsMs = cpuAfter.postgresBackendsMs - cpuBefore.postgresBackendsMs
  const postgresMs = backendsMs + cpuAfter.postgresOthersMs - cpuBefore.postgresOthersMs
  const step: StepFigures = {
    ratePerS,
    connections,
    ...outcome,
    cpuMsPerRequest: {
      server: per(serverMs),
      postgres: per(postgresMs),
      postgresBackends: per(backendsMs),
      generator: per(outcome.generatorCpuMs),
      total: per(serverMs + postgresMs + outcome.generatorCpuMs),
    },
    server: before && after ? serverStep(before, after, SIGNED_OPERATIONS[operation].path) : undefined,
  }
  console.log(
    `${operation} ${ratePerS}/s: ${step.achievedPerS}/s  p50 ${step.p50Ms}  p90 ${step.p90Ms}  p99 ${step.p99Ms}  ` +
      `p99.9 ${step.p999Ms}  max ${step.maxMs} ms  non-2xx ${step.non2xx} (503: ${step.unavailable503})  ` +
      `no answer ${step.failed}  late sends ${step.lateSends}`,
  )
  return step
}

type BurstResult = autocannon.Result & { measuredSeconds: number; loadGeneratorCpuMs: number }

/** A closed-loop burst of `requests` after `warmup` unmeasured ones (bench/signed-load.ts). */
async function runBurst(target: Target, operation: SignedOperation, requests: number, warmup: number) {
  const generator = startGenerator(target, operation, {
    BENCH_LATENCY_MODE: 'burst',
    BENCH_TRANSFERS: String(requests),
    BENCH_WARMUP: String(warmup),
    BENCH_CONNECTIONS: String(BURST_CONNECTIONS),
  })
  generator.go()
  return JSON.parse(await generator.output) as BurstResult
}

interface Generator {
  /** Its requests are signed and it waits for go() (a step only). */
  ready: Promise<void>
  go(): void
  /** What it printed after `ready`, once it has exited. */
  output: Promise<string>
}

function startGenerator(target: Target, operation: SignedOperation, env: Record<string, string>): Generator {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'latency-load.ts')], {
    env: {
      ...process.env,
      ...env,
      BENCH_LATENCY_OP: operation,
      BENCH_BASE_URL: target.baseUrl,
      BENCH_KEY_ID: target.credentials.keyId,
      BENCH_SIGNING_SECRET: target.credentials.signingSecret,
      ...(target.walletsFile ? { BENCH_WALLETS_FILE: target.walletsFile } : {}),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  let printed = ''
  let signalReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => (signalReady = resolve))
  child.stdout.on('data', (chunk: Buffer) => {
    printed += chunk.toString('utf8')
    if (printed.startsWith('ready\n')) signalReady()
  })
  const output = new Promise<string>((resolve, reject) => {
    child.on('error', reject)
    child.on('exit', (code) => {
      signalReady() // one that failed before it was ready: its output rejects
      if (code === 0) resolve(printed.replace(/^ready\n/, ''))
      else reject(new Error(`the load generator (${operation}) exited with ${code}`))
    })
  })
  return { ready, go: () => child.stdin.end('go\n'), output }
}

await main()
