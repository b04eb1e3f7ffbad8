// A real `rail api` or `rail worker` process on a test app's database, reaching its sandbox bank:
// what the kill tests start, stop at a failpoint (RAIL_FAILPOINTS) and kill with SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { TestApp } from './app.ts'
import { PROJECT_ROOT, RAIL_BIN } from './cli.ts'
import { paymentParty, type PaymentParty } from './payments.ts'
import { startRail, type RailOptions } from './rail.ts'

export interface RailProcess {
  child: ChildProcess
  exited: Promise<unknown>
  /** The last of what it wrote (stdout and stderr), for a test that fails to say why. */
  output(): string
}

/** How much of a process's output is kept. */
const OUTPUT_CHARS_KEPT = 20_000

/**
 * The processes' pools, small: a kill test drives a payment or two through them, and its file must
 * stay within the connections a test file may hold (CONNECTIONS_PER_FILE in vitest.config.ts) with
 * two processes beside its app. By default an API would hold 28 and a worker 36.
 */
export const SMALL_PROCESS_ENV = { DATABASE_POOL_MAX: '4', WORKER_CONCURRENCY: '2' }

export function spawnRail(
  app: TestApp,
  role: 'api' | 'worker',
  settings: { bankSecret: string; dataDir: string },
  env: Record<string, string> = {},
): RailProcess {
  const child = spawn(process.execPath, [RAIL_BIN, role], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: app.db.url,
      RAIL_MASTER_KEY: app.masterKey.toString('hex'),
      SANDBOX_BANK_URL: app.baseUrl,
      SANDBOX_BANK_SECRET: settings.bankSecret,
      RAIL_DATA_DIR: settings.dataDir,
      RAIL_REQUERY_FIRST_DELAY_MS: '200',
      // No worker endpoints: several workers (a frozen one among them) must not race for one port.
      WORKER_HTTP_PORT: '0',
      LOG_LEVEL: 'warn',
      ...SMALL_PROCESS_ENV,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_CHARS_KEPT)
  }
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  return { child, exited: new Promise((resolve) => child.on('exit', resolve)), output: () => output }
}

/** SIGKILL, unless it has ended already; answers once it has. */
export async function killRail(rail: RailProcess): Promise<void> {
  if (rail.child.exitCode === null && rail.child.signalCode === null) rail.child.kill('SIGKILL')
  await rail.exited
}

/** What the kill tests share: the test app, a funded payment party whose callbacks a receiver takes, and a data directory for the processes. */
export interface KillBench {
  app: TestApp
  party: PaymentParty
  /** A real `rail api` or `rail worker` on the app's database and sandbox bank. */
  rail(role: 'api' | 'worker', env?: Record<string, string>): RailProcess
  close(): Promise<void>
}

export async function startKillBench(
  options: Omit<RailOptions, 'workers' | 'receiver'> & { sandboxBankSecret: string },
): Promise<KillBench> {
  // No workers: the test starts them (startPaymentWorkers) after the processes it killed.
  const app = await startRail({ ...options, receiver: true })
  // The processes' data directory: reachable by the embedded database's user (not under a 0700 parent).
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'rail-kill-'))
  chmodSync(dataDir, 0o755)
  const close = async () => {
    await app.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
  const party = await paymentParty(app, app.receiver.url).catch(async (error: unknown) => {
    await close()
    throw error
  })
  return {
    app,
    party,
    rail: (role, env = {}) => spawnRail(app, role, { bankSecret: options.sandboxBankSecret, dataDir }, env),
    close,
  }
}
