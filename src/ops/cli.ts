// `rail cluster --api N --worker M`. The command the terminal runs is a launcher: it starts the
// cluster's primary in a process group of its own, so that a Ctrl-C reaches the primary alone,
// once, and the primary asks each process to drain (a terminal's Ctrl-C would otherwise reach
// every process at once and the primary's own request would count as a second, "exit now").
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { InvalidArgumentError, Option, type Command } from 'commander'
import { loadConfig } from '../platform/config.ts'
import { runCluster, type ClusterSize } from './supervisor.ts'

const RAIL_BIN = fileURLToPath(new URL('../../bin/rail.js', import.meta.url))
const MAX_PROCESSES = 32

export function registerClusterCommand(program: Command): void {
  program
    .command('cluster')
    .description(
      'run N `rail api` and M `rail worker` processes on one PostgreSQL (embedded unless DATABASE_URL is set) behind one port, with one master key and one sandbox bank; Ctrl-C stops all',
    )
    .addOption(new Option('--api <n>', 'API processes').default(3).argParser(processCount(1)))
    .addOption(new Option('--worker <n>', 'worker processes').default(2).argParser(processCount(0)))
    .addOption(
      new Option(
        '--pgbouncer',
        "start PgBouncer (transaction mode) in front of the database and run every process through it (needs Debian's pgbouncer)",
      ),
    )
    .addOption(new Option('--primary', 'run as the cluster primary (the launcher starts it)').hideHelp())
    .action(async (options: ClusterSize & { pgbouncer?: boolean; primary?: boolean }) => {
      const size = { api: options.api, worker: options.worker }
      const pgbouncer = options.pgbouncer === true
      if (options.primary)
        return runCluster(loadConfig(), size, { pgbouncer, onParentGone: (stop) => process.once('disconnect', stop) })
      return launch(size, pgbouncer)
    })
}

function processCount(min: number): (value: string) => number {
  return (value) => {
    const count = /^\d+$/.test(value) ? Number(value) : NaN
    if (!(count >= min && count <= MAX_PROCESSES))
      throw new InvalidArgumentError(`a whole number from ${min} to ${MAX_PROCESSES}`)
    return count
  }
}

/** Starts the primary in its own process group and relays the first stop signal to it; exits as it exits. */
async function launch(size: ClusterSize, pgbouncer: boolean): Promise<void> {
  const args = [
    ...process.execArgv,
    RAIL_BIN,
    'cluster',
    '--api',
    String(size.api),
    '--worker',
    String(size.worker),
    ...(pgbouncer ? ['--pgbouncer'] : []),
    '--primary',
  ]
  // The IPC channel tells the primary when this launcher is gone (killed), so that it stops too.
  const primary = spawn(process.execPath, args, { detached: true, stdio: ['inherit', 'inherit', 'inherit', 'ipc'] })
  // One Ctrl-C may arrive twice (from the terminal and again from npm, which passes signals on):
  // only the first is relayed; the primary kills whatever has not drained after its own bound.
  let relayed = false
  const relay = () => {
    if (relayed || primary.exitCode !== null || primary.signalCode !== null) return
    relayed = true
    primary.kill('SIGTERM')
  }
  process.on('SIGINT', relay)
  process.on('SIGTERM', relay)
  const code = await new Promise<number>((resolve) =>
    primary.once('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0))),
  )
  process.exit(code)
}
