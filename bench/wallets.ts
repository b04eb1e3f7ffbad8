// npm run bench:wallets — signed POST /transfer/wallet requests between 10,000 funded wallets
// (BENCH_WALLETS), from autocannon in a process of its own (bench/wallets-load.ts, 64 connections,
// BENCH_TRANSFERS requests after BENCH_WARMUP unmeasured ones), against the real app (API, ledger,
// sandbox bank over HTTP) on a throw-away embedded PostgreSQL (or DATABASE_URL). In the same run it
// measures the machine's ceiling (bench/wallets-ceiling.ts: the two signed HTTP hops, no
// database) and prints both, their ratio, p50/p99, errors, the CPU per move of each process
// (PostgreSQL, the Rail process with its sandbox bank, the load generator) and the pure-SQL
// yardstick of the ledger benchmark; verifies the ledger; writes bench/results/wallets.json.
// BENCH_CPU_PROFILE=file.cpuprofile profiles the Rail process over the measured window.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type autocannon from 'autocannon'
import { buildApi } from '../src/app.ts'
import { RailClient } from '../src/client/index.ts'
import { verifyLedger } from '../src/ledger/verify.ts'
import { createPartner, type PartnerCredentials } from '../src/partners/service.ts'
import { createPool, type Pool } from '../src/platform/db.ts'
import { migrateDatabase } from '../src/platform/migrate.ts'
import { baselineTransfer, createBaseline } from './baseline.ts'
import { benchDatabase, listenOnLoopback, STATEMENT_STATS } from './bench-database.ts'
import { startCpuProfile } from './cpu-profile.ts'
import { postgresCpuMs, postmasterPid, printStatementStats, resetStatementStats } from './statements.ts'
import { measureCeiling } from './wallets-ceiling.ts'
import { setUpWallets } from './wallets-setup.ts'

const WALLETS = Number(process.env.BENCH_WALLETS ?? 10_000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 10_000)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1_000)
/** The target: wallet transfers at least this share of the ceiling measured in the same run. */
const RATIO_TARGET = 0.4
const SECRET = randomBytes(16).toString('hex')

const round2 = (value: number) => Math.round(value * 100) / 100

async function main(): Promise<void> {
  const { url, stop } = await benchDatabase(`rail_bench_wallets_${process.pid}`)
  const pool = createPool(url, 40, 'rail-bench')
  let baseUrl = ''
  const masterKey = randomBytes(32)
  const api = await buildApi({
    pool,
    masterKey,
    sandboxBank: { secret: SECRET },
    providers: { sandboxBankUrl: () => baseUrl, sandboxBankSecret: SECRET },
  })
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'rail-bench-wallets-'))
  try {
    await migrateDatabase(pool)
    baseUrl = await listenOnLoopback(api)
    const credentials = await createPartner(pool, masterKey, {
      name: 'Bench',
      customerClass: 'fintech',
      environment: 'sandbox',
    })
    console.log(`setting up ${WALLETS} funded wallets…`)
    const walletsFile = path.join(scratch, 'wallets.json')
    writeFileSync(walletsFile, JSON.stringify(await setUpWallets(new RailClient(baseUrl, credentials), WALLETS)))
    console.log('the ceiling of this machine (two signed HTTP hops, no database)…')
    const ceiling = await measureCeiling()
    console.log(`wallet transfers: ${CONNECTIONS} connections, ${WARMUP} warm-up then ${TRANSFERS} measured`)
    if (WARMUP > 0) await runLoad(baseUrl, credentials, walletsFile, WARMUP)
    if (STATEMENT_STATS) await resetStatementStats(pool)
    const postmaster = await postmasterPid(pool)
    const cpuBeforeMs = postgresCpuMs(postmaster)
    const nodeCpuBefore = process.cpuUsage()
    const profiler = await startCpuProfile()
    const result = await runLoad(baseUrl, credentials, walletsFile, TRANSFERS)
    const cpuAfterMs = postgresCpuMs(postmaster)
    const nodeCpu = process.cpuUsage(nodeCpuBefore)
    await profiler.stop()
    const moves = result.requests.total
    const postgresCpuMsPerMove =
      (cpuAfterMs.backends + cpuAfterMs.others - cpuBeforeMs.backends - cpuBeforeMs.others) / moves
    const backendCpuMsPerMove = (cpuAfterMs.backends - cpuBeforeMs.backends) / moves
    const railCpuMsPerMove = (nodeCpu.user + nodeCpu.system) / 1000 / moves
    const loadCpuMsPerMove = result.loadGeneratorCpuMs / moves
    if (STATEMENT_STATS) await printStatementStats(pool, moves)
    const baseline = await baselineYardstick(pool)
    const verification = await verifyLedger(pool)
    const requestsPerSecond = Math.round(moves / result.measuredSeconds)
    const figures = {
      requestsPerSecond,
      latencyP50Ms: result.latency.p50,
      latencyP99Ms: result.latency.p99,
      errors: result.errors + result.non2xx + result.timeouts,
      requestsTotal: moves,
      ceilingRequestsPerSecond: ceiling.requestsPerSecond,
      ratioToCeiling: Math.round((requestsPerSecond / ceiling.requestsPerSecond) * 1000) / 1000,
      ratioTarget: RATIO_TARGET,
      postgresCpuMsPerRequest: round2(postgresCpuMsPerMove),
      postgresBackendsCpuMsPerRequest: round2(backendCpuMsPerMove),
      railProcessCpuMsPerRequest: round2(railCpuMsPerMove),
      loadGeneratorCpuMsPerRequest: round2(loadCpuMsPerMove),
      baselineTransfersPerSecond: baseline,
      ledgerVerified: verification.ok,
      connections: CONNECTIONS,
      warmup: WARMUP,
      wallets: WALLETS,
      measuredAt: new Date().toISOString(),
      machine: `${os.cpus().length} cores, node ${process.version}`,
    }
    console.log(
      `wallet transfers/s ${requestsPerSecond} (${moves} in ${result.measuredSeconds.toFixed(2)} s)  p50 ${figures.latencyP50Ms} ms  p99 ${figures.latencyP99Ms} ms  errors ${figures.errors}`,
    )
    console.log(
      `ceiling ${ceiling.requestsPerSecond}/s (p50 ${ceiling.latencyP50Ms} ms, p99 ${ceiling.latencyP99Ms} ms)  ratio ${figures.ratioToCeiling} (target ≥ ${RATIO_TARGET})`,
    )
    console.log(
      `CPU per move: PostgreSQL ${postgresCpuMsPerMove.toFixed(2)} ms (backends ${backendCpuMsPerMove.toFixed(2)}), ` +
        `Rail process (API + sandbox bank) ${railCpuMsPerMove.toFixed(2)} ms, load generator ${loadCpuMsPerMove.toFixed(2)} ms`,
    )
    console.log(
      `yardstick: pure-SQL ledger ${baseline}/s at ${CONNECTIONS} clients  ledger verified: ${verification.ok}`,
    )
    const file = path.join(path.dirname(new URL(import.meta.url).pathname), 'results', 'wallets.json')
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`)
    console.log(`wrote ${path.relative(process.cwd(), file)}`)
    if (!verification.ok) throw new Error(`ledger verification failed: ${verification.problems.join('; ')}`)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
    await api.close()
    await pool.end()
    await stop()
  }
}

type LoadResult = autocannon.Result & { measuredSeconds: number; loadGeneratorCpuMs: number }

/** `requests` wallet transfers from the load generator's own process (bench/wallets-load.ts). */
function runLoad(
  baseUrl: string,
  credentials: PartnerCredentials,
  walletsFile: string,
  requests: number,
): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(path.dirname(new URL(import.meta.url).pathname), 'wallets-load.ts')],
      {
        env: {
          ...process.env,
          BENCH_BASE_URL: baseUrl,
          BENCH_KEY_ID: credentials.keyId,
          BENCH_SIGNING_SECRET: credentials.signingSecret,
          BENCH_WALLETS_FILE: walletsFile,
          BENCH_TRANSFERS: String(requests),
          BENCH_WARMUP: '0',
          BENCH_CONNECTIONS: String(CONNECTIONS),
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.on('error', reject)
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(output) as LoadResult)
        : reject(new Error(`the load generator exited with ${code}`)),
    )
  })
}

/** The ledger benchmark's yardstick: one PL/pgSQL call per balanced transfer, at the same concurrency, for 5 s. */
async function baselineYardstick(pool: Pool): Promise<number> {
  await createBaseline(pool, WALLETS, 1_000_000_000)
  let completed = 0
  const deadline = performance.now() + 5_000
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const a = Math.floor(Math.random() * WALLETS)
        let b = a
        while (b === a) b = Math.floor(Math.random() * WALLETS)
        await baselineTransfer(pool, a, b, 1)
        completed++
      }
    }),
  )
  return Math.round(completed / ((performance.now() - started) / 1000))
}

await main()
