// Where a benchmark's database time goes, per request: pg_stat_statements (when the server was
// started with it, BENCH_STATEMENTS=1) and the CPU time of every PostgreSQL process on this
// machine (Linux /proc), read before and after the load.
import { readdirSync, readFileSync } from 'node:fs'
import type { Pool } from '../src/platform/db.ts'

const CLOCK_TICKS_PER_S = 100 // USER_HZ on Linux

/** The benchmark's own PostgreSQL server (its postmaster's pid), not others on the machine; undefined where /proc is missing. */
export async function postmasterPid(pool: Pool): Promise<number | undefined> {
  const backend = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
  return procStat(backend)?.ppid
}

/**
 * CPU time (user + system), in ms, of a postmaster and the processes it started, by kind: client
 * backends, and the rest (WAL writer, checkpointer, autovacuum…; children that ended count here).
 */
export function postgresCpuMs(postmaster: number | undefined): { backends: number; others: number } {
  const cpu = { backends: 0, others: 0 }
  if (postmaster === undefined) return cpu
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    const stat = procStat(pid)
    if (!stat || (pid !== postmaster && stat.ppid !== postmaster)) continue
    const ms = (stat.cpuTicks * 1000) / CLOCK_TICKS_PER_S
    if (pid === postmaster) cpu.others += ms + (stat.childTicks * 1000) / CLOCK_TICKS_PER_S
    else if (isClientBackend(pid)) cpu.backends += ms
    else cpu.others += ms
  }
  return cpu
}

function isClientBackend(pid: number): boolean {
  try {
    // A client backend's title is "postgres: <user> <database> <host>(<port>) <state>".
    return /\d+\.\d+\.\d+\.\d+\(\d+\)/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))
  } catch {
    return false
  }
}

function procStat(pid: number): { ppid: number; cpuTicks: number; childTicks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // ppid; utime + stime; cutime + cstime (children it waited for)
    return {
      ppid: Number(fields[1]),
      cpuTicks: Number(fields[11]) + Number(fields[12]),
      childTicks: Number(fields[13]) + Number(fields[14]),
    }
  } catch {
    return undefined // no /proc, or the process ended meanwhile
  }
}

export async function resetStatementStats(pool: Pool): Promise<void> {
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
  await pool.query('SELECT pg_stat_statements_reset()')
}

/** Prints the statements by total time, with calls and ms per request; top-level statements summed apart. */
export async function printStatementStats(pool: Pool, requests: number, limit = 30): Promise<void> {
  const result = await pool.query<{ toplevel: boolean; calls: number; total_ms: number; rows: number; query: string }>(
    `SELECT toplevel, calls, total_exec_time AS total_ms, rows, query FROM pg_stat_statements
      WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC`,
  )
  const top = result.rows.filter((row) => row.toplevel)
  const sum = (rows: typeof top, pick: (row: (typeof top)[number]) => number) =>
    rows.reduce((total, row) => total + pick(row), 0)
  console.log(
    `top-level statements per request: ${(sum(top, (row) => row.calls) / requests).toFixed(1)}, ` +
      `their execution time per request: ${(sum(top, (row) => row.total_ms) / requests).toFixed(2)} ms`,
  )
  console.log('calls/req   ms/req  level  statement')
  for (const row of result.rows.slice(0, limit)) {
    const text = row.query.replace(/\s+/g, ' ').slice(0, 150)
    console.log(
      `${(row.calls / requests).toFixed(2).padStart(9)} ${(row.total_ms / requests).toFixed(3).padStart(8)}  ${row.toplevel ? 'top  ' : 'inner'}  ${text}`,
    )
  }
}
