// The database's own yardstick for bench:latency: PostgreSQL's TPC-B (pgbench) at fixed rates
// (`-R`), against the bench's own database, each transaction's latency taken from pgbench's
// per-transaction log from its scheduled start (as the open-loop generator takes Rail's; pgbench's
// arrivals at a rate are random, a Poisson process, where the generator's are evenly spaced).
// BENCH_PGBENCH names the program (default: pgbench on the PATH), BENCH_PGBENCH_SCALE its scale
// (default 10: 1,000,000 accounts, 10 branches) and BENCH_PGBENCH_CLIENTS its connections (default 8).
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type LatencyPercentiles, latencyPercentiles, pgbenchLatenciesMs } from './latency-stats.ts'
import { postgresCpuMs } from './statements.ts'

const PROGRAM = process.env.BENCH_PGBENCH ?? 'pgbench'
export const PGBENCH_SCALE = Number(process.env.BENCH_PGBENCH_SCALE ?? 10)
export const PGBENCH_CLIENTS = Number(process.env.BENCH_PGBENCH_CLIENTS ?? 8)
const CLOCK_TICKS_PER_S = 100 // USER_HZ on Linux

export interface PgbenchStep extends LatencyPercentiles {
  ratePerS: number
  transactions: number
  achievedPerS: number
  cpuMsPerRequest: { postgres: number; generator: number; total: number }
}

/** pgbench's version line, or undefined when the program is not there. */
export async function pgbenchVersion(): Promise<string | undefined> {
  try {
    return (await run(['--version'])).trim()
  } catch {
    return undefined
  }
}

/** Creates and fills pgbench's tables in the database `url` names. */
export async function initPgbench(url: string): Promise<void> {
  await run(['-i', '-q', '-s', String(PGBENCH_SCALE), url])
}

/** One step: TPC-B at `ratePerS` for `seconds`, its latencies from pgbench's log and the CPU per transaction. */
export async function pgbenchStep(
  url: string,
  ratePerS: number,
  seconds: number,
  postmaster: number | undefined,
): Promise<PgbenchStep> {
  const logs = mkdtempSync(path.join(os.tmpdir(), 'rail-bench-pgbench-'))
  try {
    const threads = Math.min(2, PGBENCH_CLIENTS)
    const postgresBefore = postgresCpuMs(postmaster)
    const childrenBefore = reapedChildrenCpuMs()
    await run([
      ...['-n', '-R', String(ratePerS), '-T', String(seconds)],
      ...['-c', String(PGBENCH_CLIENTS), '-j', String(threads), '-l', `--log-prefix=${path.join(logs, 'tx')}`, url],
    ])
    const postgresAfter = postgresCpuMs(postmaster)
    // pgbench is a child this process waited for: its CPU time is added to ours as our children's.
    const generatorMs = reapedChildrenCpuMs() - childrenBefore
    const latencies = readdirSync(logs).flatMap((file) =>
      pgbenchLatenciesMs(readFileSync(path.join(logs, file), 'utf8')),
    )
    const transactions = Math.max(latencies.length, 1)
    const postgresMs = postgresAfter.backends + postgresAfter.others - postgresBefore.backends - postgresBefore.others
    const per = (ms: number) => Math.round((ms / transactions) * 1000) / 1000
    return {
      ratePerS,
      transactions: latencies.length,
      achievedPerS: Math.round((latencies.length / seconds) * 100) / 100,
      ...latencyPercentiles(latencies),
      cpuMsPerRequest: { postgres: per(postgresMs), generator: per(generatorMs), total: per(postgresMs + generatorMs) },
    }
  } finally {
    rmSync(logs, { recursive: true, force: true })
  }
}

/** The CPU time (ms) of this process's children that ended and were waited for (Linux /proc; 0 elsewhere). */
function reapedChildrenCpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS_PER_S
  } catch {
    return 0
  }
}

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(PROGRAM, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.on('error', reject)
    child.on('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${PROGRAM} ${args[0]} exited with ${code}: ${output.trim()}`)),
    )
  })
}
