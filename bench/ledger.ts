// npm run bench:ledger — transfers per second through the ledger module (no HTTP).
//
// Scenarios: `uniform` (10,000 accounts chosen uniformly) and `hot` (one account on one side of
// every transfer), each at 1, 8 and 64 concurrent callers, for four write paths measured side
// by side on the same database:
//   coalesced the ledger batcher: concurrent callers' transfers go into one ledger call and one
//             commit (keys `uniform` and `hot`);
//   group     each transfer is a whole business operation run through the group committer
//             (shared transaction and commit, one savepoint per operation);
//   direct    each transfer in its own transaction (BEGIN, ledger call, COMMIT);
//   baseline  a minimal PL/pgSQL function posting one balanced transfer with a balance check,
//             called once per transfer in autocommit — the pure-SQL yardstick.
// Prints a table and writes bench/results/ledger.json. Uses DATABASE_URL when set, else a
// throw-away embedded PostgreSQL with default (durable) settings.
import { randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type pg from 'pg'
import { LedgerBatcher } from '../src/ledger/batcher.ts'
import { createAccount, createTransfer, createTransfers, LedgerError, type TransferInput } from '../src/ledger/service.ts'
import { verifyLedger } from '../src/ledger/verify.ts'
import { createPool, withTransaction, type Pool } from '../src/platform/db.ts'
import { GroupCommitter } from '../src/platform/group-commit.ts'
import { migrateDatabase } from '../src/platform/migrate.ts'
import { baselineTransfer, createBaseline } from './baseline.ts'
import { benchDatabase } from './bench-database.ts'

const UNIFORM_ACCOUNTS = 10_000
const CONCURRENCIES = [1, 8, 64]
const SECONDS_PER_RUN = Number(process.env.BENCH_SECONDS ?? 3)
const OPENING_BALANCE_KOBO = 1_000_000_000_000
const FUNDING_BATCH = 2_000
/** BENCH_MODES=coalesced,baseline measures only those paths (for quick experiments). */
const MODES = (process.env.BENCH_MODES?.split(',') ?? ['coalesced', 'group', 'direct', 'baseline']) as Mode[]
/** Connections the batching paths use: one transaction in flight per lane. */
const LANES = Number(process.env.BENCH_LANES ?? 2)

type Mode = 'coalesced' | 'group' | 'direct' | 'baseline'
type Scenario = 'uniform' | 'hot'

interface Accounts {
  ledger: string[]
  hotLedger: string
  baseline: string[]
  hotBaseline: string
}

async function main(): Promise<void> {
  const { url, stop } = await benchDatabase(`rail_bench_${process.pid}`)
  const admin = createPool(url, 2)
  try {
    await migrateDatabase(admin)
    const accounts = await createAccounts(admin)
    const results: Record<string, Record<string, number>> = {}
    console.log(`ledger benchmark: ${SECONDS_PER_RUN}s per run, ${LANES} lanes for the batching paths; transfers/s`)
    console.log(['scenario', 'mode', ...CONCURRENCIES.map((c) => `${c} callers`)].map((cell) => cell.padEnd(12)).join(''))
    for (const scenario of ['uniform', 'hot'] as const) {
      for (const mode of MODES) {
        const row: Record<string, number> = {}
        for (const concurrency of CONCURRENCIES) row[concurrency] = await measure(url, accounts, scenario, mode, concurrency)
        results[resultKey(scenario, mode)] = row
        console.log([scenario, mode, ...CONCURRENCIES.map((c) => String(row[c]))].map((cell) => cell.padEnd(12)).join(''))
      }
    }
    const verification = await verifyLedger(admin)
    if (!verification.ok) throw new Error(`ledger verification failed after the benchmark: ${verification.problems.join('; ')}`)
    console.log(`verifyLedger: ok (${verification.transfersChecked} transfers, ${verification.accountsChecked} accounts)`)
    const file = path.join(path.dirname(new URL(import.meta.url).pathname), 'results', 'ledger.json')
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, `${JSON.stringify({ ...results, secondsPerRun: SECONDS_PER_RUN, lanes: LANES, measuredAt: new Date().toISOString(), machine: machine() }, null, 2)}\n`)
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
  const source = await createAccount(pool, { partnerId: null, currency: 'NGN', kind: 'bench' })
  const ledger: string[] = []
  await withTransaction(pool, async (tx) => {
    for (let i = 0; i <= UNIFORM_ACCOUNTS; i++) {
      ledger.push(await createAccount(tx, { partnerId: null, currency: 'NGN', kind: 'bench', debitsMustNotExceedCredits: true }))
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
  const baseline = Array.from({ length: UNIFORM_ACCOUNTS + 1 }, (_unused, i) => String(i))
  return { ledger: ledger.slice(0, UNIFORM_ACCOUNTS), hotLedger: ledger[UNIFORM_ACCOUNTS]!, baseline: baseline.slice(0, UNIFORM_ACCOUNTS), hotBaseline: baseline[UNIFORM_ACCOUNTS]! }
}

function pickPair(accounts: string[], hot: string, scenario: Scenario): [string, string] {
  const a = accounts[Math.floor(Math.random() * accounts.length)]!
  if (scenario === 'hot') return Math.random() < 0.5 ? [hot, a] : [a, hot]
  let b = a
  while (b === a) b = accounts[Math.floor(Math.random() * accounts.length)]!
  return [a, b]
}

async function measure(url: string, accounts: Accounts, scenario: Scenario, mode: Mode, concurrency: number): Promise<number> {
  const pool = createPool(url, mode === 'coalesced' || mode === 'group' ? LANES + 1 : concurrency, 'rail-bench')
  const committer = new GroupCommitter(pool, { lanes: LANES, batchMax: 256 })
  const batcher = new LedgerBatcher(pool, { lanes: LANES })
  const transferOnce = transferFunction({ pool, committer, batcher }, accounts, scenario, mode)
  let completed = 0
  const deadline = performance.now() + SECONDS_PER_RUN * 1000
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
    return Math.round(completed / ((performance.now() - started) / 1000))
  } finally {
    await committer.close()
    await pool.end()
  }
}

interface Paths {
  pool: Pool
  committer: GroupCommitter
  batcher: LedgerBatcher
}

function randomTransfer(accounts: Accounts, scenario: Scenario): TransferInput {
  const [debit, credit] = pickPair(accounts.ledger, accounts.hotLedger, scenario)
  return { id: randomUUID(), debitAccountId: debit, creditAccountId: credit, amountKobo: 1 + Math.floor(Math.random() * 100), currency: 'NGN', code: 'bench_transfer' }
}

function transferFunction({ pool, committer, batcher }: Paths, accounts: Accounts, scenario: Scenario, mode: Mode): () => Promise<void> {
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
  return () => committer.run(move).catch((error: unknown) => {
    if (!(error instanceof LedgerError)) throw error
  })
}

function machine(): string {
  return `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`
}

await main()
