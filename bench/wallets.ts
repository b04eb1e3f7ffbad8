// npm run bench:wallets — signed POST /transfer/wallet requests over HTTP from autocannon,
// between 10,000 funded wallets, 64 connections, 30 s (BENCH_SECONDS to change), against the real
// app (API, ledger, sandbox bank over HTTP) on a throw-away embedded PostgreSQL (or
// DATABASE_URL). Prints requests/s, p50/p99 latency and errors, the pure-SQL yardstick of the
// ledger benchmark at the same concurrency, verifies the ledger, and writes
// bench/results/wallets.json.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import { buildApi } from '../src/app.ts'
import { RailClient, signRequest } from '../src/client/index.ts'
import { verifyLedger } from '../src/ledger/verify.ts'
import { createPartner } from '../src/partners/service.ts'
import { createPool, type Pool } from '../src/platform/db.ts'
import { migrateDatabase } from '../src/platform/migrate.ts'
import { baselineTransfer, createBaseline } from './baseline.ts'
import { benchDatabase, STATEMENT_STATS } from './bench-database.ts'
import { postgresCpuMs, postmasterPid, printStatementStats, resetStatementStats } from './statements.ts'

const WALLETS = Number(process.env.BENCH_WALLETS ?? 10_000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30)
const SETUP_CONCURRENCY = 32
const OPENING_KOBO = 1_000_000_000
const SECRET = randomBytes(16).toString('hex')

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
  try {
    await migrateDatabase(pool)
    await api.listen({ host: '127.0.0.1', port: 0 })
    const address = api.server.address()
    baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    const credentials = await createPartner(pool, masterKey, { name: 'Bench', customerClass: 'fintech', environment: 'sandbox' })
    console.log(`setting up ${WALLETS} funded wallets…`)
    const wallets = await setUpWallets(new RailClient(baseUrl, credentials))
    console.log(`wallet transfers: ${CONNECTIONS} connections, ${SECONDS} s`)
    if (STATEMENT_STATS) await resetStatementStats(pool)
    const postmaster = await postmasterPid(pool)
    const cpuBeforeMs = postgresCpuMs(postmaster)
    const nodeCpuBefore = process.cpuUsage()
    const result = await runLoad(baseUrl, credentials, wallets)
    const cpuAfterMs = postgresCpuMs(postmaster)
    const backendCpuMsPerRequest = (cpuAfterMs.backends - cpuBeforeMs.backends) / result.requests.total
    const postgresCpuMsPerRequest = backendCpuMsPerRequest + (cpuAfterMs.others - cpuBeforeMs.others) / result.requests.total
    const nodeCpu = process.cpuUsage(nodeCpuBefore)
    const nodeCpuMsPerRequest = (nodeCpu.user + nodeCpu.system) / 1000 / result.requests.total
    console.log(`CPU per request: PostgreSQL ${postgresCpuMsPerRequest.toFixed(2)} ms (backends ${backendCpuMsPerRequest.toFixed(2)}), Node (app, bank and load generator) ${nodeCpuMsPerRequest.toFixed(2)} ms`)
    if (STATEMENT_STATS) await printStatementStats(pool, result.requests.total)
    const baseline = await baselineYardstick(pool)
    const verification = await verifyLedger(pool)
    const figures = {
      requestsPerSecond: Math.round(result.requests.average),
      latencyP50Ms: result.latency.p50,
      latencyP99Ms: result.latency.p99,
      errors: result.errors + result.non2xx + result.timeouts,
      requestsTotal: result.requests.total,
      postgresCpuMsPerRequest: Math.round(postgresCpuMsPerRequest * 100) / 100,
      nodeCpuMsPerRequest: Math.round(nodeCpuMsPerRequest * 100) / 100,
      baselineTransfersPerSecond: baseline,
      ledgerVerified: verification.ok,
      connections: CONNECTIONS,
      seconds: SECONDS,
      wallets: WALLETS,
      measuredAt: new Date().toISOString(),
      machine: `${os.cpus().length} cores, node ${process.version}`,
    }
    console.log(
      `wallet transfers/s ${figures.requestsPerSecond}  p50 ${figures.latencyP50Ms} ms  p99 ${figures.latencyP99Ms} ms  errors ${figures.errors}  ` +
        `(yardstick: pure-SQL ledger ${baseline}/s at ${CONNECTIONS} clients)  ledger verified: ${verification.ok}`,
    )
    const file = path.join(path.dirname(new URL(import.meta.url).pathname), 'results', 'wallets.json')
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`)
    console.log(`wrote ${path.relative(process.cwd(), file)}`)
    if (!verification.ok) throw new Error(`ledger verification failed: ${verification.problems.join('; ')}`)
  } finally {
    await api.close()
    await pool.end()
    await stop()
  }
}

/** Creates and funds the wallets through the real API, SETUP_CONCURRENCY at a time. */
async function setUpWallets(client: RailClient): Promise<string[]> {
  const wallets: string[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: SETUP_CONCURRENCY }, async () => {
      while (next < WALLETS) {
        const index = next++
        const created = await client.post<{ walletId: string }>('/wallet', { customerReference: `bench-${index}`, name: `Bench Customer ${index}` })
        if (created.status !== 201) throw new Error(`wallet creation answered ${created.status}`)
        const funded = await client.post<{ status: string }>('/wallet/credit', { walletId: created.body.walletId, reference: `fund-${index}`, amountKobo: OPENING_KOBO, currency: 'NGN' })
        if (funded.body.status !== 'successful') throw new Error(`funding answered ${funded.body.status}`)
        wallets.push(created.body.walletId)
      }
    }),
  )
  return wallets
}

function runLoad(baseUrl: string, credentials: { keyId: string; signingSecret: string }, wallets: string[]): Promise<autocannon.Result> {
  const pathName = '/transfer/wallet'
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: baseUrl,
        connections: CONNECTIONS,
        duration: SECONDS,
        requests: [
          {
            method: 'POST',
            path: pathName,
            // Each request is a new move, signed for itself.
            setupRequest: (request: autocannon.Request) => {
              const from = wallets[Math.floor(Math.random() * wallets.length)]!
              let to = from
              while (to === from) to = wallets[Math.floor(Math.random() * wallets.length)]!
              const body = JSON.stringify({ walletId: from, destinationWalletId: to, reference: randomUUID(), amountKobo: 1 + Math.floor(Math.random() * 1_000), currency: 'NGN' })
              const headers = signRequest({ ...credentials, method: 'POST', pathWithQuery: pathName, body })
              return { ...request, body, headers: { ...headers, 'content-type': 'application/json' } }
            },
          },
        ],
      },
      (error: Error | null, result: autocannon.Result) => (error ? reject(error) : resolve(result)),
    )
    autocannon.track(instance, { renderProgressBar: false, renderResultsTable: false })
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
