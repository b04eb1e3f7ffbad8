// npm run bench:ledger — transfers per second through the ledger module (no HTTP).
//
// Scenarios: `uniform` (10,000 accounts chosen uniformly) and `hot` (one account on one side of
// every transfer), each at 1, 8 and 64 concurrent callers, for four write paths measured side
// by side on the same database:
//   coalesced the ledger batcher: concurrent callers' transfers go into one ledger call and one
//             commit (keys `uniform` and `hot`);
//   business  each transfer is a whole business operation — a business row, its ledger transfer,
//             its event with a delivery and the delivery's graphile-worker job — and concurrent
//             operations are coalesced (src/platform/coalescer.ts): one set-based write and one
//             commit per batch; a batch that fails is written again one operation per savepoint;
//   group     each transfer is a whole business operation run through the group committer
//             (shared transaction and commit, one savepoint per operation, statement by statement);
//   direct    each transfer in its own transaction (BEGIN, ledger call, COMMIT);
//   baseline  a minimal PL/pgSQL function posting one balanced transfer with a balance check,
//             called once per transfer in autocommit — the pure-SQL yardstick.
// Prints a table and writes bench/results/ledger.json. Beside each figure it measures the CPU that
// one transfer cost, in PostgreSQL (all its processes: backends, those that ended since, the WAL
// writer and checkpointer) and in this process. On a shared VM whose speed swings from run to run
// (CPU steal) the throughput of two runs can differ by 2×, while the CPU per transfer moves far
// less: it is the figure to compare across runs, the throughput the one to compare within a run.
// Transfer ids are UUIDv7, as the product makes them. Before measuring, the bench writes a warm-up
// of business operations and analyzes (see warmUp). Uses DATABASE_URL when set, else a throw-away
// embedded PostgreSQL with default (durable) settings (bench/bench-database.ts).
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type pg from 'pg'
import { LedgerBatcher } from './ledger-batcher.ts'
import { recordEvents } from '../src/events/service.ts'
import {
  createAccount,
  createTransfer,
  createTransfers,
  LedgerError,
  type TransferInput,
} from '../src/ledger/service.ts'
import type { TransferResult } from '../src/ledger/types.ts'
import { verifyLedger } from '../src/ledger/verify.ts'
import { uuidv7 } from '../src/platform/ids.ts'
import { createPartner } from '../src/partners/service.ts'
import { systemClock } from '../src/platform/clock.ts'
import { Coalescer } from '../src/platform/coalescer.ts'
import { createPool, withTransaction, type Pool, type Tx } from '../src/platform/db.ts'
import { GroupCommitter } from './group-commit.ts'
import { migrateDatabase } from '../src/platform/migrate.ts'
import { baselineTransfer, createBaseline } from './baseline.ts'
import { benchDatabase, STATEMENT_STATS } from './bench-database.ts'
import { postgresCpuMs, postmasterPid, printStatementStats, resetStatementStats } from './statements.ts'

const UNIFORM_ACCOUNTS = 10_000
const CONCURRENCIES = [1, 8, 64]
const SECONDS_PER_RUN = Number(process.env.BENCH_SECONDS ?? 3)
const OPENING_BALANCE_KOBO = 1_000_000_000_000
const FUNDING_BATCH = 2_000
const WARM_UP_OPERATIONS = 3_200
/** BENCH_MODES=coalesced,baseline measures only those paths (for quick experiments). */
const MODES = (process.env.BENCH_MODES?.split(',') ?? [
  'coalesced',
  'business',
  'group',
  'direct',
  'baseline',
]) as Mode[]
/** Connections the batching paths use: one transaction in flight per lane. */
const LANES = Number(process.env.BENCH_LANES ?? 2)

type Mode = 'coalesced' | 'business' | 'group' | 'direct' | 'baseline'
type Scenario = 'uniform' | 'hot'

interface Accounts {
  ledger: string[]
  hotLedger: string
  baseline: string[]
  hotBaseline: string
  /** The partner whose business operations (mode `business`) record events, with a callback URL. */
  partnerId: string
}

async function main(): Promise<void> {
  const { url, stop } = await benchDatabase(`rail_bench_${process.pid}`)
  const admin = createPool(url, 2)
  try {
    await migrateDatabase(admin)
    const accounts = await createAccounts(admin)
    await warmUp(admin, accounts)
    // Settle the set-up's writes first, so that no autovacuum runs in a measured cell and every cell starts from fresh statistics.
    await admin.query('VACUUM ANALYZE')
    if (STATEMENT_STATS) await resetStatementStats(admin)
    const results: Record<string, Record<string, number>> = {}
    const cpuMicrosPerTransfer: Record<string, Record<string, { postgres: number; bench: number }>> = {}
    const postmaster = await postmasterPid(admin)
    let totalOperations = 0 // for BENCH_STATEMENTS=1: statements per operation over the whole run
    console.log(
      `ledger benchmark: ${SECONDS_PER_RUN}s per run, ${LANES} lanes for the batching paths; transfers/s (CPU µs per transfer: PostgreSQL + this process)`,
    )
    console.log(
      ['scenario', 'mode', ...CONCURRENCIES.map((c) => `${c} callers`)]
        .map((cell, index) => cell.padEnd(index < 2 ? 12 : 24))
        .join(''),
    )
    for (const scenario of ['uniform', 'hot'] as const) {
      for (const mode of MODES) {
        const row: Record<string, number> = {}
        const cpuRow: Record<string, { postgres: number; bench: number }> = {}
        for (const concurrency of CONCURRENCIES) {
          const measured = await measure(url, accounts, scenario, mode, concurrency, postmaster)
          row[concurrency] = measured.transfersPerSecond
          cpuRow[concurrency] = measured.cpuMicrosPerTransfer
          totalOperations += measured.transfers
        }
        results[resultKey(scenario, mode)] = row
        cpuMicrosPerTransfer[resultKey(scenario, mode)] = cpuRow
        const cell = (c: number) => `${row[c]} (${cpuRow[c]!.postgres}+${cpuRow[c]!.bench})`
        console.log(
          [scenario, mode, ...CONCURRENCIES.map(cell)].map((text, index) => text.padEnd(index < 2 ? 12 : 24)).join(''),
        )
      }
    }
    if (STATEMENT_STATS) await printStatementStats(admin, totalOperations, 25)
    const verification = await verifyLedger(admin)
    if (!verification.ok)
      throw new Error(`ledger verification failed after the benchmark: ${verification.problems.join('; ')}`)
    console.log(
      `verifyLedger: ok (${verification.transfersChecked} transfers, ${verification.accountsChecked} accounts)`,
    )
    const file = path.join(path.dirname(new URL(import.meta.url).pathname), 'results', 'ledger.json')
    mkdirSync(path.dirname(file), { recursive: true })
    const summary = {
      ...results,
      cpuMicrosPerTransfer,
      secondsPerRun: SECONDS_PER_RUN,
      lanes: LANES,
      measuredAt: new Date().toISOString(),
      machine: machine(),
    }
    writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`)
    console.log(`wrote ${path.relative(process.cwd(), file)}`)
  } finally {
    await admin.end()
    await stop()
  }
}

/** The coalesced path gets the plain keys; the others are prefixed with their mode. */
function resultKey(scenario: Scenario, mode: Mode): string {
  return mode === 'coalesced' ? scenario : `${mode}_${scenario}`
}

async function createAccounts(pool: Pool): Promise<Accounts> {
  const source = await createAccount(pool, { partnerId: null, currency: 'NGN', kind: 'wallet' })
  const ledger: string[] = []
  await withTransaction(pool, async (tx) => {
    for (let i = 0; i <= UNIFORM_ACCOUNTS; i++) {
      ledger.push(
        await createAccount(tx, { partnerId: null, currency: 'NGN', kind: 'wallet', debitsMustNotExceedCredits: true }),
      )
    }
  })
  for (let start = 0; start < ledger.length; start += FUNDING_BATCH) {
    const funding = ledger.slice(start, start + FUNDING_BATCH).map((id) => ({
      id: randomUUID(),
      debitAccountId: source,
      creditAccountId: id,
      amountKobo: OPENING_BALANCE_KOBO,
      currency: 'NGN',
      code: 'bench_funding',
    }))
    const results = await createTransfers(pool, funding)
    if (results.some((outcome) => outcome.result !== 'ok')) throw new Error('funding failed')
  }
  await createBaseline(pool, UNIFORM_ACCOUNTS + 1, OPENING_BALANCE_KOBO)
  // The business row of mode `business`: a bench-only table, as a payment or a payout row would be.
  await pool.query(
    `CREATE TABLE bench_payments (id uuid PRIMARY KEY, transfer_id uuid NOT NULL, amount_kobo bigint NOT NULL CHECK (amount_kobo > 0), created_at timestamptz NOT NULL DEFAULT now())`,
  )
  // No worker runs during the bench: the deliveries' jobs wait in the queue, as in a burst.
  const partner = await createPartner(pool, randomBytes(32), {
    name: 'Bench',
    customerClass: 'fintech',
    environment: 'sandbox',
    callbackUrl: 'https://example.com/hooks',
  })
  const baseline = Array.from({ length: UNIFORM_ACCOUNTS + 1 }, (_unused, i) => String(i))
  return {
    ledger: ledger.slice(0, UNIFORM_ACCOUNTS),
    hotLedger: ledger[UNIFORM_ACCOUNTS]!,
    baseline: baseline.slice(0, UNIFORM_ACCOUNTS),
    hotBaseline: baseline[UNIFORM_ACCOUNTS]!,
    partnerId: partner.partnerId,
  }
}

/**
 * A running service's tables hold rows and have statistics. A new database's do not, and a plan
 * made while a table is empty — above all the foreign-key checks' plans, which each connection
 * makes once and keeps — scans it whole: every delivery's check of its event read the whole events
 * table until autovacuum next analyzed it (up to a minute), which tripled the PostgreSQL CPU of an
 * event's writes (docs/performance.md). So the bench first writes WARM_UP_OPERATIONS business
 * operations, then analyzes, and measures the steady state.
 */
async function warmUp(pool: Pool, accounts: Accounts): Promise<void> {
  for (let done = 0; done < WARM_UP_OPERATIONS; done += 64) {
    const payments = Array.from({ length: 64 }, () => {
      const id = randomUUID()
      return { id, transfer: { ...randomTransfer(accounts, 'uniform'), sourceType: 'bench_payment', sourceId: id } }
    })
    await withTransaction(pool, (tx) => writePayments(tx, accounts.partnerId, payments))
  }
}

function pickPair(accounts: string[], hot: string, scenario: Scenario): [string, string] {
  const a = accounts[Math.floor(Math.random() * accounts.length)]!
  if (scenario === 'hot') return Math.random() < 0.5 ? [hot, a] : [a, hot]
  let b = a
  while (b === a) b = accounts[Math.floor(Math.random() * accounts.length)]!
  return [a, b]
}

interface Measured {
  transfers: number
  transfersPerSecond: number
  cpuMicrosPerTransfer: { postgres: number; bench: number }
}

async function measure(
  url: string,
  accounts: Accounts,
  scenario: Scenario,
  mode: Mode,
  concurrency: number,
  postmaster: number | undefined,
): Promise<Measured> {
  const pool = createPool(url, mode === 'direct' || mode === 'baseline' ? concurrency : LANES + 1, 'rail-bench')
  const committer = new GroupCommitter(pool, { lanes: LANES, batchMax: 256 })
  const batcher = new LedgerBatcher(pool, { lanes: LANES })
  const payments = new Coalescer(
    pool,
    (tx, batch: readonly Payment[]) => writePayments(tx, accounts.partnerId, batch),
    { lanes: LANES, batchMax: 1_024 },
  )
  const transferOnce = transferFunction({ pool, committer, batcher, payments }, accounts, scenario, mode)
  let completed = 0
  const deadline = performance.now() + SECONDS_PER_RUN * 1000
  const postgresBefore = postgresCpuMs(postmaster)
  const benchBefore = process.cpuUsage()
  const started = performance.now()
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < deadline) {
          await transferOnce()
          completed++
        }
      }),
    )
    const seconds = (performance.now() - started) / 1000
    const postgresAfter = postgresCpuMs(postmaster)
    const bench = process.cpuUsage(benchBefore)
    // Backends that end count in `others` once the postmaster has reaped them, so only the sum is monotonic.
    const postgresMs = postgresAfter.backends + postgresAfter.others - postgresBefore.backends - postgresBefore.others
    return {
      transfers: completed,
      transfersPerSecond: Math.round(completed / seconds),
      cpuMicrosPerTransfer: {
        postgres: Math.round((postgresMs * 1000) / completed),
        bench: Math.round((bench.user + bench.system) / completed),
      },
    }
  } finally {
    await committer.close()
    await pool.end()
  }
}

interface Paths {
  pool: Pool
  committer: GroupCommitter
  batcher: LedgerBatcher
  payments: Coalescer<Payment, TransferResult>
}

/** A whole business operation of mode `business`: a payment row and the transfer that moves its money. */
interface Payment {
  id: string
  transfer: TransferInput
}

/**
 * Many payments in one transaction, set-based, with the ledger last: one INSERT of the payment
 * rows, one statement for their events, deliveries and delivery jobs, then one ledger call — so
 * the accounts' locks are held only from that call to the commit, and a batch waiting for the
 * same accounts (every batch, on a hot account) waits that long and no longer. A refused transfer
 * fails the batch (it rolls back whole); the coalescer then writes the payments one per savepoint,
 * where the refused one fails alone with its own ledger error.
 */
async function writePayments(tx: Tx, partnerId: string, payments: readonly Payment[]): Promise<TransferResult[]> {
  await tx.query(
    `INSERT INTO bench_payments (id, transfer_id, amount_kobo) SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::bigint[])`,
    [
      payments.map((payment) => payment.id),
      payments.map((payment) => payment.transfer.id),
      payments.map((payment) => payment.transfer.amountKobo),
    ],
  )
  await recordEvents(
    tx,
    systemClock,
    payments.map((payment) => ({
      partnerId,
      type: 'bench_payment.completed',
      objectType: 'bench_payment',
      objectId: payment.id,
      data: { id: payment.id, amountKobo: payment.transfer.amountKobo },
    })),
  )
  const results = await createTransfers(
    tx,
    payments.map((payment) => payment.transfer),
  )
  const refused = results.find((result) => result.result !== 'ok')
  if (refused) throw new LedgerError(refused.result, `payment refused by the ledger: ${refused.result}`)
  return results
}

function randomTransfer(accounts: Accounts, scenario: Scenario): TransferInput {
  const [debit, credit] = pickPair(accounts.ledger, accounts.hotLedger, scenario)
  return {
    id: uuidv7(),
    debitAccountId: debit,
    creditAccountId: credit,
    amountKobo: 1 + Math.floor(Math.random() * 100),
    currency: 'NGN',
    code: 'bench_transfer',
  }
}

function transferFunction(
  { pool, committer, batcher, payments }: Paths,
  accounts: Accounts,
  scenario: Scenario,
  mode: Mode,
): () => Promise<void> {
  if (mode === 'business') {
    return async () => {
      const id = randomUUID()
      const outcome = await payments.run({
        id,
        transfer: { ...randomTransfer(accounts, scenario), sourceType: 'bench_payment', sourceId: id },
      })
      if (outcome.result !== 'ok') throw new Error(`payment failed: ${outcome.result}`)
    }
  }
  if (mode === 'baseline') {
    return async () => {
      const [debit, credit] = pickPair(accounts.baseline, accounts.hotBaseline, scenario)
      await baselineTransfer(pool, debit, credit, 1 + Math.floor(Math.random() * 100))
    }
  }
  if (mode === 'coalesced') {
    return async () => {
      const [outcome] = await batcher.createTransfers([randomTransfer(accounts, scenario)])
      if (outcome!.result !== 'ok') throw new Error(`transfer failed: ${outcome!.result}`)
    }
  }
  const move = async (tx: pg.PoolClient) => {
    await createTransfer(tx, randomTransfer(accounts, scenario))
  }
  if (mode === 'direct') return () => withTransaction(pool, move)
  return () =>
    committer.run(move).catch((error: unknown) => {
      if (!(error instanceof LedgerError)) throw error
    })
}

function machine(): string {
  return `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`
}

await main()
