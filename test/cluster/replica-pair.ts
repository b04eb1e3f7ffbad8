// A PostgreSQL primary and a streaming replica of it, made as an operator makes one: initdb, a
// primary with wal_level=replica, `pg_basebackup -R` of it, the copy started as a hot standby.
// Debian's PostgreSQL 15 binaries do it (the embedded server ships no pg_basebackup, and
// pg_basebackup refuses a newer server than its own). Each server runs in a temporary directory
// on a free port of its own, as the `postgres` user when this process is root (PostgreSQL refuses
// to run as root), and is stopped and removed by `stop()`. Imports no test runner.
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, chownSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { findFreePort } from '../../src/platform/embedded-db.ts'

const run = promisify(execFile)
const DEBIAN_BIN = '/usr/lib/postgresql/15/bin'
const BINARIES = ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres'] as const
/** The server owner when this process is root. */
const SERVER_USER = 'postgres'
const START_TIMEOUT_S = 60

export interface PostgresServer {
  port: number
  dataDir: string
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database: string): string
  /** One statement as the superuser on `database`, on a connection of its own. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    database: string,
    text: string,
    values?: unknown[],
  ): Promise<R[]>
  /** pg_ctl stop -m fast; a stopped server may be started again. */
  stop(): Promise<void>
  start(): Promise<void>
}

export interface ReplicaPair {
  primary: PostgresServer
  replica: PostgresServer
  /** Stops both servers and removes their directories. */
  stop(): Promise<void>
}

/** Why a replica pair cannot be made here, or undefined when it can. */
export function replicaPairUnavailable(): string | undefined {
  const missing = BINARIES.filter((binary) => !existsSync(path.join(DEBIAN_BIN, binary)))
  if (missing.length > 0)
    return `Debian's PostgreSQL 15 binaries are not installed (${missing.join(', ')} missing from ${DEBIAN_BIN}); apt-get install postgresql-15`
  if (process.getuid?.() === 0 && !existsSync('/usr/sbin/runuser'))
    return `running as root without runuser to start PostgreSQL as ${SERVER_USER}`
  return undefined
}

/** A primary on a free port, its base backup as a streaming hot standby on another; resolves once the standby streams. */
export async function startReplicaPair(): Promise<ReplicaPair> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'rail-replica-pair-'))
  if (asRoot()) chownSync(root, ...(await serverOwner()))
  const primary = server(path.join(root, 'primary'), await findFreePort())
  const replica = server(path.join(root, 'replica'), await findFreePort())
  const started: PostgresServer[] = []
  const stop = async () => {
    for (const each of started.reverse()) await each.stop().catch(() => {})
    rmSync(root, { recursive: true, force: true })
  }
  try {
    await asServerUser('initdb', [
      '-D',
      primary.dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '-E',
      'UTF8',
      '--locale=C',
    ])
    // initdb's pg_hba.conf already lets local TCP connections replicate (trust, as above).
    writeFileSync(
      path.join(primary.dataDir, 'postgresql.auto.conf'),
      serverSettings(primary.port, { wal_level: 'replica', max_wal_senders: '4' }),
    )
    await primary.start()
    started.push(primary)
    await asServerUser('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      replica.dataDir,
      '-R',
      '-X',
      'stream',
      '--no-sync',
    ])
    // -R wrote standby.signal and primary_conninfo into postgresql.auto.conf; the port is the replica's own.
    writeFileSync(
      path.join(replica.dataDir, 'postgresql.auto.conf'),
      `${serverSettings(replica.port, { hot_standby: 'on' })}primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=rail_replica'\n`,
    )
    await replica.start()
    started.push(replica)
    await waitUntilStreaming(primary)
    return { primary, replica, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

function serverSettings(port: number, settings: Record<string, string>): string {
  const all = {
    port: String(port),
    listen_addresses: "'127.0.0.1'",
    unix_socket_directories: "''",
    fsync: 'off',
    max_connections: '100',
    ...settings,
  }
  return Object.entries(all)
    .map(([name, value]) => `${name} = ${value}\n`)
    .join('')
}

function server(dataDir: string, port: number): PostgresServer {
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`
  return {
    port,
    dataDir,
    url,
    async query<R extends pg.QueryResultRow>(database: string, text: string, values: unknown[] = []) {
      const client = new pg.Client({ connectionString: url(database) })
      await client.connect()
      try {
        return (await client.query<R>(text, values)).rows
      } finally {
        await client.end()
      }
    },
    async start() {
      await asServerUser('pg_ctl', [
        'start',
        '-w',
        '-t',
        String(START_TIMEOUT_S),
        '-D',
        dataDir,
        '-l',
        path.join(path.dirname(dataDir), `${path.basename(dataDir)}.log`),
      ])
    },
    async stop() {
      await asServerUser('pg_ctl', ['stop', '-m', 'fast', '-w', '-D', dataDir])
    },
  }
}

/** The primary sees the replica's WAL receiver streaming. */
async function waitUntilStreaming(primary: PostgresServer): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_S * 1000
  for (;;) {
    const rows = await primary.query<{ state: string }>(
      'postgres',
      `SELECT state FROM pg_stat_replication WHERE application_name = 'rail_replica'`,
    )
    if (rows[0]?.state === 'streaming') return
    if (Date.now() > deadline)
      throw new Error(`the replica did not stream within ${START_TIMEOUT_S} s (replication: ${JSON.stringify(rows)})`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

async function asServerUser(binary: (typeof BINARIES)[number], args: string[]): Promise<void> {
  const command = path.join(DEBIAN_BIN, binary)
  try {
    if (asRoot()) await run('/usr/sbin/runuser', ['-u', SERVER_USER, '--', command, ...args], { cwd: os.tmpdir() })
    else await run(command, args, { cwd: os.tmpdir() })
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`${binary} ${args.join(' ')} failed: ${String(stderr ?? '')}${String(stdout ?? '')}`.trim(), {
      cause: error,
    })
  }
}

function asRoot(): boolean {
  return process.getuid?.() === 0
}

/** The server user's uid and gid, for the directory it must write in. */
async function serverOwner(): Promise<[number, number]> {
  const id = async (flag: string) => Number((await run('id', [flag, SERVER_USER])).stdout.trim())
  return [await id('-u'), await id('-g')]
}
