// npm run bench:collections — NOTICES signed inbound credit notices, as the sandbox bank sends
// them, POSTed to Rail's provider webhook over HTTP by autocannon (64 connections), across
// ACCOUNTS persistent virtual accounts. Three phases on one database:
//   A. intake: the notices are stored (each with its apply job) while no worker runs — notices/s;
//   B. apply: the workers start and apply them (ledger transfer, credit state, credit.confirmed
//      event, in batches) — credits applied/s, first worker start → last credit applied;
//   C. live: LIVE_NOTICES more at LIVE_RATE/s with the workers running, each timed from its
//      notice to its signed callback at a local receiver — p50/p99.
// Verifies the ledger and writes bench/results/collections.json.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import { buildApi, startBackgroundWorkers } from '../src/app.ts'
import { RailClient, signRequest } from '../src/client/index.ts'
import { verifyLedger } from '../src/ledger/verify.ts'
import { createPartner } from '../src/partners/service.ts'
import { createPool } from '../src/platform/db.ts'
import { migrateDatabase } from '../src/platform/migrate.ts'
import { benchDatabase, listenOnLoopback } from './bench-database.ts'

const NOTICES = Number(process.env.BENCH_NOTICES ?? 20_000)
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 5_000)
const CONNECTIONS = 64
const CREATE_CONCURRENCY = 32
const WORKER_CONCURRENCY = Number(process.env.WORKER_CONCURRENCY ?? 32)
const LIVE_NOTICES = Number(process.env.BENCH_LIVE_NOTICES ?? 3_000)
const LIVE_RATE = Number(process.env.BENCH_LIVE_RATE ?? 300)
const SECRET = randomBytes(16).toString('hex')
const WEBHOOK_PATH = '/providers/sandbox/webhooks'

async function main(): Promise<void> {
  const { url, stop } = await benchDatabase(`rail_bench_collections_${process.pid}`)
  const pool = createPool(url, 40, 'rail-bench')
  const masterKey = randomBytes(32)
  let baseUrl = ''
  const providers = { sandboxBankUrl: () => baseUrl, sandboxBankSecret: SECRET }
  const api = await buildApi({
    pool,
    masterKey,
    sandboxBank: { secret: SECRET },
    providers,
    allowLoopbackCallbacks: true,
  })
  const sentAt = new Map<string, number>()
  const calledBackAt = new Map<string, number>()
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event: string; data: { sessionId: string } }
      if (body.event === 'credit.confirmed' && !calledBackAt.has(body.data.sessionId))
        calledBackAt.set(body.data.sessionId, Date.now())
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
      customerClass: 'government',
      environment: 'sandbox',
      callbackUrl,
    })
    const client = new RailClient(baseUrl, credentials)

    console.log(`allocating ${ACCOUNTS} persistent virtual accounts…`)
    const accounts: string[] = []
    let made = 0
    await Promise.all(
      Array.from({ length: CREATE_CONCURRENCY }, async () => {
        while (made < ACCOUNTS) {
          made++
          const answer = await client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', {
            reference: randomUUID(),
          })
          if (answer.status !== 200)
            throw new Error(`virtual-account answered ${answer.status}: ${JSON.stringify(answer.body)}`)
          accounts.push(answer.body.virtualAccount)
        }
      }),
    )
    console.log(`A. intake: ${NOTICES} signed credit notices over ${CONNECTIONS} connections, no worker running…`)
    const load = await sendNotices(baseUrl, accounts, sentAt, { amount: NOTICES })
    console.log(
      `   ${Math.round(load.requests.average)} notices/s  p50 ${load.latency.p50} ms  p99 ${load.latency.p99} ms  errors ${load.errors + load.non2xx}`,
    )

    console.log(`B. apply: the workers start (concurrency ${WORKER_CONCURRENCY})…`)
    const workersStartedAt = Date.now()
    runner = await startBackgroundWorkers({
      pool,
      masterKey,
      concurrency: WORKER_CONCURRENCY,
      providers,
      events: { allowLoopbackCallbacks: true },
    })
    await waitUntil(
      async () =>
        (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbound_credits WHERE status = 'applied'`))
          .rows[0]!.n >= NOTICES,
      600_000,
    )
    const applied = await pool.query<{ n: number; last: Date }>(
      `SELECT count(*)::int AS n, max(applied_at) AS last FROM inbound_credits WHERE status = 'applied'`,
    )
    const appliedPerSecond = Math.round(
      applied.rows[0]!.n / ((applied.rows[0]!.last.getTime() - workersStartedAt) / 1000),
    )
    console.log(`   applied ${applied.rows[0]!.n} credits: ${appliedPerSecond} credits/s; waiting for their callbacks…`)
    await waitUntil(() => calledBackAt.size >= NOTICES, 600_000)
    console.log(
      `   all ${NOTICES} callbacks received ${((Date.now() - workersStartedAt) / 1000).toFixed(1)} s after the workers started`,
    )

    console.log(`C. live: ${LIVE_NOTICES} notices at ${LIVE_RATE}/s with the workers running…`)
    const liveSessions = new Set<string>()
    await sendNotices(baseUrl, accounts, sentAt, { amount: LIVE_NOTICES, rate: LIVE_RATE, sessions: liveSessions })
    await waitUntil(() => [...liveSessions].every((sessionId) => calledBackAt.has(sessionId)), 600_000)
    const latencies = [...liveSessions]
      .map((sessionId) => calledBackAt.get(sessionId)! - sentAt.get(sessionId)!)
      .sort((a, b) => a - b)
    const percentile = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!
    console.log(`   notice → callback p50 ${percentile(50)} ms, p99 ${percentile(99)} ms`)
    const verification = await verifyLedger(pool)
    const figures = {
      notices: NOTICES,
      accounts: ACCOUNTS,
      noticesAcceptedPerSecond: Math.round(load.requests.average),
      noticeLatencyP99Ms: load.latency.p99,
      noticeErrors: load.errors + load.non2xx,
      creditsAppliedPerSecond: appliedPerSecond,
      liveNotices: LIVE_NOTICES,
      liveRatePerSecond: LIVE_RATE,
      noticeToCallbackP50Ms: percentile(50),
      noticeToCallbackP99Ms: percentile(99),
      workerConcurrency: WORKER_CONCURRENCY,
      ledgerVerified: verification.ok,
      measuredAt: new Date().toISOString(),
      machine: `${os.cpus().length} cores, node ${process.version}`,
    }
    console.log(
      `credits applied: ${appliedPerSecond}/s; notice → callback p99 ${figures.noticeToCallbackP99Ms} ms; ledger verified: ${verification.ok}`,
    )
    const file = path.join(path.dirname(new URL(import.meta.url).pathname), 'results', 'collections.json')
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

let serial = 0

/** Each request is one notice with a fresh session id, to an account taken in turn; `rate` caps requests/s. */
function sendNotices(
  baseUrl: string,
  accounts: string[],
  sentAt: Map<string, number>,
  options: { amount: number; rate?: number; sessions?: Set<string> },
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: baseUrl,
        connections: options.rate ? 8 : CONNECTIONS,
        amount: options.amount,
        ...(options.rate ? { overallRate: options.rate } : {}),
        requests: [
          {
            method: 'POST',
            path: WEBHOOK_PATH,
            setupRequest: (request: autocannon.Request) => {
              serial++
              const sessionId = `000058${String(Date.now()).slice(-12)}${String(serial).padStart(12, '0')}`
              const body = JSON.stringify({
                type: 'credit.received',
                sessionId,
                accountNumber: accounts[serial % accounts.length],
                bankCode: '101',
                amountKobo: 100 * (10 + (serial % 1_000)),
                currency: 'NGN',
                payerName: 'Bench Payer',
                payerAccountNumber: null,
                payerBankCode: null,
                narration: null,
                creditedAt: new Date().toISOString(),
              })
              sentAt.set(sessionId, Date.now())
              options.sessions?.add(sessionId)
              const signed = signRequest({
                keyId: 'bank',
                signingSecret: SECRET,
                method: 'POST',
                pathWithQuery: WEBHOOK_PATH,
                body,
              })
              return {
                ...request,
                body,
                headers: {
                  'content-type': 'application/json',
                  'x-sandbox-timestamp': signed['X-Rail-Timestamp']!,
                  'x-sandbox-signature': signed['X-Rail-Signature']!,
                },
              }
            },
          },
        ],
      },
      (error: Error | null, result: autocannon.Result) => (error ? reject(error) : resolve(result)),
    )
    autocannon.track(instance, { renderProgressBar: false, renderResultsTable: false })
  })
}

async function waitUntil(condition: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

await main()
