// A real `rail api` or `rail worker` process on a test app's database, reaching its sandbox bank:
// what the kill tests start, stop at a failpoint (RAIL_FAILPOINTS) and kill with SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process'
import type { TestApp } from './app.ts'
import { PROJECT_ROOT, RAIL_BIN } from './cli.ts'

export interface RailProcess {
  child: ChildProcess
  exited: Promise<unknown>
}

export function startRail(app: TestApp, role: 'api' | 'worker', settings: { bankSecret: string; dataDir: string }, env: Record<string, string> = {}): RailProcess {
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
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  })
  return { child, exited: new Promise((resolve) => child.on('exit', resolve)) }
}

/** SIGKILL, unless it has ended already; answers once it has. */
export async function killRail(rail: RailProcess): Promise<void> {
  if (rail.child.exitCode === null && rail.child.signalCode === null) rail.child.kill('SIGKILL')
  await rail.exited
}
