// npm run bench:burst — bursts, not a steady load: WALLETS concurrent wallet creations, then
// MOVES concurrent wallet transfers and MOVES concurrent outbound submits at once, each on a
// connection of its own, against the real app laid out as `rail serve` lays it out (API pool of
// DATABASE_POOL_MAX, workers on a pool of their own, the sandbox bank on its own) over a throw-away
// embedded PostgreSQL (or DATABASE_URL). Prints status counts per route (any 5xx other than 503
// with Retry-After is a failure), p50/p99 per route, the time until every accepted move is final,
// the CPU each accepted request cost; then verifies the ledger and that every wallet's available
// equals its booked balance. Writes bench/results/burst.json.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildApi, startBackgroundWorkers } from '../src/app.ts'
import { RailClient, type RailResponse } from '../src/client/index.ts'
import { verifyLedger } from '../src/ledger/verify.ts'
import { nuban } from '../src/banking/nip/nuban.ts'
import { createPartner } from '../src/partners/service.ts'
import { LIVE_SCHEDULE_DEFAULT } from '../src/money-out/pipeline/service.ts'
import { workerPoolMax } from '../src/platform/connections.ts'
import { createPool, type Pool } from '../src/platform/db.ts'
import { migrateDatabase } from '../src/platform/migrate.ts'
import { syntheticAccountName } from '../src/sandbox/names.ts'
import { benchDatabase, listenOnLoopback } from './bench-database.ts'
import { postgresCpuMs, postmasterPid } from './statements.ts'

const WALLETS = Number(process.env.BENCH_WALLETS ?? 200)
const MOVES = Number(process.env.BENCH_MOVES ?? 1_000)
const API_POOL_MAX = 20 // DATABASE_POOL_MAX's default
const WORKER_CONCURRENCY = 32 // WORKER_CONCURRENCY's default
const WALLET_OPENING_KOBO = 10_000_000
const MOVE_KOBO = 1_000
const SECRET = randomBytes(16).toString('hex')
const PAYEE_ACCOUNT = nuban('058', '135792468')
const PAYEE = {
  beneficiaryAccountNumber: PAYEE_ACCOUNT,
  beneficiaryBankCode: '058',
  beneficiaryAccountName: syntheticAccountName('058', PAYEE_ACCOUNT),
}

interface Answer {
  route: string
  reference: string
  status: number
  retryAfter: string | null
  error: string | undefined
  id: string | undefined
  latencyMs: number
}

interface Bench {
  pool: Pool
  client: RailClient
  partnerId: string
  postmaster: number | undefined
}

async function main(): Promise<void> {
  const { url, stop } = await benchDatabase(`rail_bench_burst_${process.pid}`)
  const pool = createPool(url, API_POOL_MAX, 'rail')
  const workerPool = createPool(url, workerPoolMax(WORKER_CONCURRENCY), 'rail-worker')
  const masterKey = randomBytes(32)
  let baseUrl = ''
  const providers = { sandboxBankUrl: () => baseUrl, sandboxBankSecret: SECRET }
  // A sandbox partner's requery schedule ends after 3 minutes; the burst's payouts get the live one.
  const payments = { sandbox: LIVE_SCHEDULE_DEFAULT }
  const api = await buildApi({
    pool,
    masterKey,
    sandboxBank: { secret: SECRET },
    providers,
    allowLoopbackCallbacks: true,
    payments,
  })
  let runner: Awaited<ReturnType<typeof startBackgroundWorkers>> | undefined
  try {
    await migrateDatabase(pool)
    baseUrl = await listenOnLoopback(api)
    runner = await startBackgroundWorkers({
      pool: workerPool,
      masterKey,
      concurrency: WORKER_CONCURRENCY,
      providers,
      events: { allowLoopbackCallbacks: true },
      payments,
    })
    const credentials = await createPartner(pool, masterKey, {
      name: 'Burst',
      customerClass: 'fintech',
      environment: 'sandbox',
    })
    const client = new RailClient(baseUrl, credentials)
    const funded = await client.post('/api/v1/rail/sandbox/fund-float', {
      amountKobo: MOVES * MOVE_KOBO * 2,
      reference: `burst-${randomUUID()}`,
    })
    if (funded.status !== 200) throw new Error(`fund-float answered ${funded.status}: ${JSON.stringify(funded.body)}`)
    await runBursts({ pool, client, partnerId: credentials.partnerId, postmaster: await postmasterPid(pool) })
  } finally {
    await runner?.stop()
    await api.close()
    await workerPool.end()
    await pool.end()
    await stop()
  }
}

async function runBursts(bench: Bench): Promise<void> {
  const { client } = bench
  console.log(`burst 1: ${WALLETS} wallet creations at once`)
  const creations = await burst(
    Array.from(
      { length: WALLETS },
      (_, i) => () =>
        send(client, '/wallet', `wallet-${i}`, { customerReference: `wallet-${i}`, name: `Burst Holder ${i}` }),
    ),
  )
  report('POST /wallet', creations)
  const walletIds = [
    ...new Set(creations.filter((one) => one.status === 201 || one.status === 200).map((one) => one.id!)),
  ]
  if (walletIds.length < 2) throw new Error('fewer than two wallets were created; nothing to move between')
  // Funded in turn (not part of the burst).
  for (const [i, walletId] of walletIds.entries()) {
    const credit = await client.post('/wallet/credit', {
      walletId,
      reference: `open-${i}`,
      amountKobo: WALLET_OPENING_KOBO,
      currency: 'NGN',
    })
    if (credit.status !== 200) throw new Error(`opening credit answered ${credit.status}`)
  }

  console.log(`burst 2: ${MOVES} wallet transfers and ${MOVES} outbound submits at once`)
  const cpuBeforeMs = postgresCpuMs(bench.postmaster)
  const nodeCpuBefore = process.cpuUsage()
  const startedAt = Date.now()
  const answers = await burst(movesAndPayouts(client, walletIds))
  const answeredAt = Date.now()
  const moves = answers.filter((one) => one.route === '/transfer/wallet')
  const payouts = answers.filter((one) => one.route === '/api/v1/rail/outbound')
  report('POST /transfer/wallet', moves)
  report('POST /api/v1/rail/outbound', payouts)
  const moveReferences = moves.filter((one) => one.status === 200).map((one) => one.reference)
  const payoutIds = payouts.filter((one) => one.status === 202).map((one) => one.id!)
  await waitUntilFinal(bench, moveReferences, payoutIds)
  const finalAt = Date.now()
  const cpuAfterMs = postgresCpuMs(bench.postmaster)
  const nodeCpu = process.cpuUsage(nodeCpuBefore)
  const accepted = moveReferences.length + payoutIds.length

  const unexpected = answers
    .concat(creations)
    .filter((one) => one.status >= 500 && !(one.status === 503 && one.error === 'overloaded' && one.retryAfter))
  const verification = await verifyLedger(bench.pool)
  const unequal: string[] = []
  for (const walletId of walletIds) {
    const balance = await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
      `/wallet/customer?customerId=${walletId}`,
    )
    if (balance.body.availableBalanceKobo !== balance.body.bookedBalanceKobo) unequal.push(walletId)
  }
  const figures = {
    walletCreations: counts(creations),
    walletTransfers: { ...counts(moves), ...latencies(moves) },
    outboundSubmits: { ...counts(payouts), ...latencies(payouts) },
    unexpected5xx: unexpected.length,
    acceptedMoves: accepted,
    burstAnsweredSeconds: (answeredAt - startedAt) / 1000,
    everyAcceptedMoveFinalSeconds: (finalAt - startedAt) / 1000,
    postgresCpuMsPerAcceptedMove: round(
      (cpuAfterMs.backends + cpuAfterMs.others - cpuBeforeMs.backends - cpuBeforeMs.others) / accepted,
    ),
    // This process is the API, the workers, the sandbox bank and the load: its CPU is all of Node's.
    nodeCpuMsPerAcceptedMove: round((nodeCpu.user + nodeCpu.system) / 1000 / accepted),
    walletsWithAvailableUnequalBooked: unequal.length,
    ledgerVerified: verification.ok,
    measuredAt: new Date().toISOString(),
    machine: `${os.cpus().length} cores, node ${process.version}`,
  }
  console.log(
    `${accepted} accepted moves final ${figures.everyAcceptedMoveFinalSeconds.toFixed(1)} s after the burst began (answered in ${figures.burstAnsweredSeconds.toFixed(1)} s); ` +
      `CPU per accepted move: PostgreSQL ${figures.postgresCpuMsPerAcceptedMove} ms, Node (API + workers + bank + load) ${figures.nodeCpuMsPerAcceptedMove} ms`,
  )
  console.log(
    `5xx other than 503 overloaded with Retry-After: ${unexpected.length}; wallets with available ≠ booked: ${unequal.length}; ledger verified: ${verification.ok}`,
  )
  const file = path.join(path.dirname(new URL(import.meta.url).pathname), 'results', 'burst.json')
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`)
  console.log(`wrote ${path.relative(process.cwd(), file)}`)
  if (unexpected.length > 0) throw new Error(`unexpected answers: ${JSON.stringify(unexpected.slice(0, 5))}`)
  if (!verification.ok || unequal.length > 0)
    throw new Error(`money is not where it should be: ${verification.problems.join('; ')} ${unequal.join(', ')}`)
}

/** MOVES wallet transfers between neighbouring wallets and MOVES payouts, interleaved. */
function movesAndPayouts(client: RailClient, walletIds: string[]): (() => Promise<Answer>)[] {
  const requests: (() => Promise<Answer>)[] = []
  for (let i = 0; i < MOVES; i++) {
    const from = walletIds[i % walletIds.length]!
    const to = walletIds[(i + 1) % walletIds.length]!
    const moveReference = `move-${i}-${randomUUID()}`
    requests.push(() =>
      send(client, '/transfer/wallet', moveReference, {
        walletId: from,
        destinationWalletId: to,
        reference: moveReference,
        amountKobo: MOVE_KOBO,
        currency: 'NGN',
      }),
    )
    const payoutReference = `payout-${i}-${randomUUID()}`
    requests.push(() =>
      send(client, '/api/v1/rail/outbound', payoutReference, {
        clientReference: payoutReference,
        amountKobo: MOVE_KOBO,
        currency: 'NGN',
        ...PAYEE,
      }),
    )
  }
  return requests
}

/**
 * Every accepted move final: wallet transfers end by themselves; payouts in progress at the
 * sandbox bank are registered confirmed through the simulator as they get there.
 */
async function waitUntilFinal(bench: Bench, moveReferences: string[], payoutIds: string[]): Promise<void> {
  const registered = new Set<string>()
  await waitUntil(async () => {
    const openMoves = (
      await bench.pool.query(
        `SELECT 1 FROM wallet_moves WHERE partner_id = $1 AND reference = ANY($2) AND status NOT IN ('successful', 'failed')`,
        [bench.partnerId, moveReferences],
      )
    ).rowCount
    const { rows } = await bench.pool.query<{ id: string; state: string }>(
      `SELECT id, state FROM outbound_transfers WHERE id = ANY($1) AND state NOT IN ('confirmed', 'failed')`,
      [payoutIds],
    )
    const toRegister = rows.filter((row) => row.state === 'submitted' && !registered.has(row.id))
    await Promise.all(
      toRegister.map(async (row) => {
        const answer = await bench.client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: row.id,
          outcome: 'confirmed',
        })
        if (answer.status === 200) registered.add(row.id)
      }),
    )
    return openMoves === 0 && rows.length === 0
  }, 600_000)
}

async function send(client: RailClient, route: string, reference: string, body: unknown): Promise<Answer> {
  const sentAt = performance.now()
  let response: RailResponse<{ error?: string; walletId?: string; id?: string }>
  try {
    response = await client.post(route, body)
  } catch (error) {
    // A connection the server refused or reset: counted, never hidden.
    return {
      route,
      reference,
      status: 0,
      retryAfter: null,
      error: String(error),
      id: undefined,
      latencyMs: performance.now() - sentAt,
    }
  }
  const id = response.body?.walletId ?? response.body?.id
  return {
    route,
    reference,
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    error: response.body?.error,
    id,
    latencyMs: performance.now() - sentAt,
  }
}

/** Every request at once: all are started before any is awaited. */
function burst(requests: (() => Promise<Answer>)[]): Promise<Answer[]> {
  return Promise.all(requests.map((request) => request()))
}

function counts(answers: Answer[]): Record<string, number> {
  const byStatus: Record<string, number> = {}
  for (const answer of answers) byStatus[String(answer.status)] = (byStatus[String(answer.status)] ?? 0) + 1
  return byStatus
}

function latencies(answers: Answer[]): { p50Ms: number; p99Ms: number } {
  const sorted = answers.map((one) => one.latencyMs).sort((a, b) => a - b)
  const at = (q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0)
  return { p50Ms: at(0.5), p99Ms: at(0.99) }
}

function report(route: string, answers: Answer[]): void {
  const { p50Ms, p99Ms } = latencies(answers)
  console.log(`  ${route}: ${JSON.stringify(counts(answers))}  p50 ${p50Ms} ms  p99 ${p99Ms} ms`)
}

function round(value: number): number {
  return Math.round(value * 100) / 100
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for every accepted move to end')
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

await main()
