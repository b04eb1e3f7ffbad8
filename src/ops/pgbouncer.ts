// PgBouncer in transaction mode in front of one PostgreSQL database, started as a child process
// with a configuration written for it: `rail cluster --pgbouncer` and the PgBouncer test use it.
// It is a development and test convenience; in production PgBouncer is run and configured on its
// own (docs/scaling.md, "PgBouncer"), and Rail is given DATABASE_URL (PgBouncer) and
// DATABASE_DIRECT_URL (PostgreSQL).
import { spawn, type ChildProcess } from 'node:child_process'
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { findFreePort } from '../platform/embedded-db.ts'

/** Where Debian's package installs it; otherwise the first on PATH. */
const PGBOUNCER_PATHS = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer']
const START_TIMEOUT_MS = 10_000
/** PgBouncer refuses to run as root; as root it is told to switch to this user. */
const RUN_AS_WHEN_ROOT = 'postgres'

/** The pgbouncer executable, or undefined when it is not installed. */
export function findPgbouncer(): string | undefined {
  const onPath = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir) => path.join(dir, 'pgbouncer'))
  return [...PGBOUNCER_PATHS, ...onPath].find((file) => {
    try {
      accessSync(file, constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

export interface PgbouncerSettings {
  /** PostgreSQL itself: the database PgBouncer serves, and the user and password it logs in with. */
  directUrl: string
  /** Server connections PgBouncer opens to that database at most: what counts against max_connections. */
  poolSize: number
}

export interface RunningPgbouncer {
  /** The database through PgBouncer, as Rail's DATABASE_URL: same user, password and database name. */
  url: string
  /** PgBouncer's admin console (SHOW STATS, SHOW POOLS), for the same user. */
  adminUrl: string
  poolSize: number
  /** Everything PgBouncer printed (its log goes to stderr). */
  output: string[]
  stop(): Promise<void>
}

/**
 * The essentials for Rail: transaction pooling, one database mapped to PostgreSQL, its server
 * connections capped at `poolSize`. Clients authenticate as they would to PostgreSQL (md5 with
 * the password in the userlist, which PgBouncer also uses to log in; trust without one).
 * Nothing in ignore_startup_parameters: Rail sends no statement_timeout through a pooler (it is set
 * on the role), and a parameter ignored would be silently lost.
 */
export function pgbouncerIni(settings: PgbouncerSettings & { port: number; authFile: string }): string {
  const direct = new URL(settings.directUrl)
  const database = decodeURIComponent(direct.pathname.slice(1))
  const user = decodeURIComponent(direct.username)
  return [
    '[databases]',
    `${database} = host=${direct.hostname} port=${direct.port || '5432'} dbname=${database}`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${settings.port}`,
    'unix_socket_dir =',
    `auth_type = ${direct.password ? 'md5' : 'trust'}`,
    `auth_file = ${settings.authFile}`,
    'pool_mode = transaction',
    `default_pool_size = ${settings.poolSize}`,
    `max_db_connections = ${settings.poolSize}`,
    'reserve_pool_size = 0',
    'max_client_conn = 2000',
    `admin_users = ${user}`,
    `stats_users = ${user}`,
    'logfile =',
    'pidfile =',
    '',
  ].join('\n')
}

/** Starts PgBouncer on a free port of 127.0.0.1; resolves once it listens. */
export async function startPgbouncer(settings: PgbouncerSettings): Promise<RunningPgbouncer> {
  const executable = findPgbouncer()
  if (!executable) throw new Error('pgbouncer is not installed (Debian: apt-get install pgbouncer)')
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rail-pgbouncer-'))
  const port = await findFreePort()
  const direct = new URL(settings.directUrl)
  const authFile = path.join(dir, 'userlist.txt')
  const quoted = (value: string) => `"${decodeURIComponent(value).replaceAll('"', '""')}"`
  writeFileSync(authFile, `${quoted(direct.username)} ${quoted(direct.password)}\n`, { mode: 0o600 })
  const iniFile = path.join(dir, 'pgbouncer.ini')
  writeFileSync(iniFile, pgbouncerIni({ ...settings, port, authFile }), { mode: 0o600 })
  const root = process.getuid?.() === 0
  if (root) {
    // The user it switches to must still read its files.
    chmodSync(dir, 0o755)
    for (const file of [authFile, iniFile]) chmodSync(file, 0o644)
  }
  const child = spawn(executable, [...(root ? ['-u', RUN_AS_WHEN_ROOT] : []), iniFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const output: string[] = []
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitUntilListening(child, output)
  } catch (error) {
    await stop()
    throw error
  }
  const through = new URL(settings.directUrl)
  through.hostname = '127.0.0.1'
  through.port = String(port)
  const admin = new URL(through)
  admin.pathname = '/pgbouncer'
  return { url: through.toString(), adminUrl: admin.toString(), poolSize: settings.poolSize, output, stop }
}

function waitUntilListening(child: ChildProcess, output: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`pgbouncer did not start within ${START_TIMEOUT_MS} ms:\n${output.join('\n')}`)),
      START_TIMEOUT_MS,
    )
    const onData = (chunk: Buffer) => {
      output.push(...chunk.toString().split('\n').filter(Boolean))
      if (output.some((line) => line.includes('process up'))) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`pgbouncer exited (${signal ?? `status ${code}`}):\n${output.join('\n')}`))
    })
  })
}
