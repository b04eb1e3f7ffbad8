// npm run bench:outbound — TRANSFERS signed `POST /api/v1/rail/outbound` submits over HTTP from
// autocannon (64 connections, in a process of its own: bench/outbound-load.ts), against the real app on a throw-away embedded PostgreSQL (or
// DATABASE_URL); then the workers start and send them to the sandbox bank, every transfer is registered `confirmed` through the sandbox
// simulator, and the bench waits for every signed `transfer.confirmed` callback at a local
// receiver. Prints submit requests/s, p50/p99, and the time from the last registration to the last
// callback; verifies the ledger; writes bench/results/outbound.json.
import { spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type autocannon from 'autocannon'
import { buildApi, startBackgroundWorkers } from '../src/app.ts'
import { RailClient } from '../src/client/index.ts'
import { verifyLedger } from '../src/ledger/verify.ts'
import { createPartner } from '../src/partners/service.ts'
import { createPool } from '../src/platform/db.ts'
import { migrateDatabase } from '../src/platform/migrate.ts'
import { LIVE_SCHEDULE_DEFAULT } from '../src/money-out/pipeline/service.ts'
import { benchDatabase, listenOnLoopback, STATEMENT_STATS } from './bench-database.ts'
import { postgresCpuMs, postmasterPid, printStatementStats, resetStatementStats } from './statements.ts'

const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 10_000)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2_000)
const CONNECTIONS = 64
const REGISTER_CONCURRENCY = 64
const SECRET = randomBytes(16).toString('hex')

async function main(): Promise<void> {
  const { url, stop } = await benchDatabase(`rail_bench_outbound_${process.pid}`)
  const pool = createPool(url, 40, 'rail-bench')
  const masterKey = randomBytes(32)
  let baseUrl = ''
  const providers = { sandboxBankUrl: () => baseUrl, sandboxBankSecret: SECRET }
  // The bench partner is a sandbox partner, whose requery schedule ends after 3 minutes; 10,000
  // payouts can wait longer than that for their outcome here, so it gets the live schedule.
  const payments = { sandbox: LIVE_SCHEDULE_DEFAULT }
  const api = await buildApi({
    pool,
    masterKey,
    sandboxBank: { secret: SECRET },
    providers,
    allowLoopbackCallbacks: true,
    payments,
  })
  const confirmedAt = new Map<string, number>()
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event: string; data: { id: string } }
      if (body.event === 'transfer.confirmed' && !confirmedAt.has(body.data.id))
        confirmedAt.set(body.data.id, Date.now())
      res.writeHead(200).end('ok')
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
  let runner: Awaited<ReturnType<typeof startBackgroundWorkers>> | undefined
  try {
    await migrateDatabase(pool)
    baseUrl = await listenOnLoopback(api)
    const credentials = await createPartner(pool, masterKey, {
      name: 'Bench',
      customerClass: 'fintech',
      environment: 'sandbox',
      callbackUrl,
    })
    const client = new RailClient(baseUrl, credentials)
    await client.post('/api/v1/rail/sandbox/fund-float', {
      amountKobo: 25_000_000_000,
      reference: `bench-${randomUUID()}`,
    })
    // The submits are measured on the API alone; the workers start after them (the payouts then
    // drain from the queue), so the figure is the submit path's, not the submit path's share of
    // two cores with the whole pipeline.
    // Warm-up, not measured: a partner with no float submits WARMUP transfers first (each is
    // recorded and fails for want of float, so nothing of it reaches the pipeline measured after).
    const warmupPartner = await createPartner(pool, masterKey, {
      name: 'Bench warm-up',
      customerClass: 'fintech',
      environment: 'sandbox',
      callbackUrl,
    })
    console.log(`warming up with ${WARMUP} unfunded submits…`)
    await submitAll(baseUrl, warmupPartner, WARMUP)
    console.log(`submitting ${TRANSFERS} outbound transfers over ${CONNECTIONS} connections…`)
    if (STATEMENT_STATS) await resetStatementStats(pool)
    const postmaster = await postmasterPid(pool)
    const cpuBeforeMs = postgresCpuMs(postmaster)
    const nodeCpuBefore = process.cpuUsage()
    const load = await submitAll(baseUrl, credentials, TRANSFERS)
    const cpuAfterMs = postgresCpuMs(postmaster)
    const nodeCpu = process.cpuUsage(nodeCpuBefore)
    const submits = load.requests.total
    // Requests from the first sent to the last answered (bench/outbound-load.ts): autocannon's own
    // `requests.average` and `duration` count whole seconds, so 10,000 requests read 10,000/5, /6, /7…
    const submitsPerSecond = Math.round(submits / load.measuredSeconds)
    const postgresCpuMsPerSubmit =
      (cpuAfterMs.backends + cpuAfterMs.others - cpuBeforeMs.backends - cpuBeforeMs.others) / submits
    const apiCpuMsPerSubmit = (nodeCpu.user + nodeCpu.system) / 1000 / submits
    console.log(
      `submit: ${submitsPerSecond} requests/s (${submits} in ${load.measuredSeconds.toFixed(2)} s)  p50 ${load.latency.p50} ms  p99 ${load.latency.p99} ms  errors ${load.errors + load.non2xx}`,
    )
    const loadCpuMsPerSubmit = load.loadGeneratorCpuMs / submits
    console.log(
      `CPU per submit: PostgreSQL ${postgresCpuMsPerSubmit.toFixed(2)} ms, API process ${apiCpuMsPerSubmit.toFixed(2)} ms, load generator ${loadCpuMsPerSubmit.toFixed(2)} ms`,
    )
    if (STATEMENT_STATS) await printStatementStats(pool, submits)
    if (process.env.BENCH_SUBMIT_ONLY === '1') return // quick experiments on the submit path
    runner = await startBackgroundWorkers({
      pool,
      masterKey,
      concurrency: 32,
      providers,
      events: { allowLoopbackCallbacks: true },
      payments,
    })

    console.log('waiting for every transfer to be submitted to the bank…')
    await waitUntil(
      async () =>
        (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM outbound_transfers WHERE state = 'submitted'`))
          .rows[0]!.n >= TRANSFERS,
      600_000,
    )
    const ids = (
      await pool.query<{ id: string }>(`SELECT id FROM outbound_transfers WHERE state = 'submitted'`)
    ).rows.map((row) => row.id)

    console.log(`registering ${ids.length} confirmed outcomes through the simulator…`)
    const registeringStartedAt = Date.now()
    let next = 0
    await Promise.all(
      Array.from({ length: REGISTER_CONCURRENCY }, async () => {
        while (next < ids.length) {
          const id = ids[next++]!
          const answer = await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
            transferId: id,
            outcome: 'confirmed',
          })
          if (answer.status !== 200)
            throw new Error(`simulator answered ${answer.status}: ${JSON.stringify(answer.body)}`)
        }
      }),
    )
    const lastRegisteredAt = Date.now()
    console.log(
      `registered in ${((lastRegisteredAt - registeringStartedAt) / 1000).toFixed(1)} s (${confirmedAt.size} callbacks already received); waiting for the rest…`,
    )
    const reportProgress = async () => {
      const queue = process.env.BENCH_VERBOSE === '1' ? await jobQueue(pool) : ''
      console.log(
        `  ${confirmedAt.size} callbacks after ${((Date.now() - lastRegisteredAt) / 1000).toFixed(0)} s ${queue}`,
      )
    }
    const progress = setInterval(() => void reportProgress(), 10_000)
    await waitUntil(() => confirmedAt.size >= ids.length, 600_000).finally(() => clearInterval(progress))
    const lastCallbackAt = Math.max(...confirmedAt.values())
    const callbacksAfterS = Math.round((lastCallbackAt - lastRegisteredAt) / 100) / 10
    const verification = await verifyLedger(pool)
    const figures = {
      submitRequestsPerSecond: submitsPerSecond,
      submitLatencyP50Ms: load.latency.p50,
      submitLatencyP99Ms: load.latency.p99,
      submitErrors: load.errors + load.non2xx,
      postgresCpuMsPerSubmit: Math.round(postgresCpuMsPerSubmit * 100) / 100,
      apiCpuMsPerSubmit: Math.round(apiCpuMsPerSubmit * 100) / 100,
      loadGeneratorCpuMsPerSubmit: Math.round(loadCpuMsPerSubmit * 100) / 100,
      transfers: ids.length,
      lastCallbackSecondsAfterLastRegistration: callbacksAfterS,
      ledgerVerified: verification.ok,
      measuredAt: new Date().toISOString(),
      machine: `${os.cpus().length} cores, node ${process.version}`,
    }
    console.log(
      `all ${confirmedAt.size} transfer.confirmed callbacks received ${callbacksAfterS} s after the last registration; ledger verified: ${verification.ok}`,
    )
    const file = path.join(path.dirname(new URL(import.meta.url).pathname), 'results', 'outbound.json')
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`)
    console.log(`wrote ${path.relative(process.cwd(), file)}`)
    if (!verification.ok) throw new Error(`ledger verification failed: ${verification.problems.join('; ')}`)
  } finally {
    await runner?.stop()
    await api.close()
    receiver.closeAllConnections()
    await new Promise((resolve) => receiver.close(resolve))
    await pool.end()
    await stop()
  }
}

/**
 * The submits come from another process (bench/outbound-load.ts), so that the load generator's
 * CPU is not taken from the API's event loop: on two cores the two would otherwise share one.
 */
function submitAll(
  baseUrl: string,
  credentials: { keyId: string; signingSecret: string },
  transfers: number,
): Promise<autocannon.Result & { loadGeneratorCpuMs: number; measuredSeconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(path.dirname(new URL(import.meta.url).pathname), 'outbound-load.ts')],
      {
        env: {
          ...process.env,
          BENCH_BASE_URL: baseUrl,
          BENCH_KEY_ID: credentials.keyId,
          BENCH_SIGNING_SECRET: credentials.signingSecret,
          BENCH_TRANSFERS: String(transfers),
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
        ? resolve(JSON.parse(output) as autocannon.Result & { loadGeneratorCpuMs: number; measuredSeconds: number })
        : reject(new Error(`the load generator exited with ${code}`)),
    )
  })
}

/** BENCH_VERBOSE=1: the jobs due now, by task and priority (where a callback waits, when one is slow). */
async function jobQueue(pool: ReturnType<typeof createPool>): Promise<string> {
  const { rows } = await pool.query<{ task: string; priority: number; due: number; locked: number }>(
    `SELECT task_identifier AS task, priority, count(*)::int AS due, count(locked_at)::int AS locked
       FROM graphile_worker.jobs WHERE run_at <= now() GROUP BY 1, 2 ORDER BY 1, 2`,
  )
  return rows.map((row) => `${row.task}/${row.priority}: ${row.due} due (${row.locked} running)`).join(', ')
}

async function waitUntil(condition: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

await main()
