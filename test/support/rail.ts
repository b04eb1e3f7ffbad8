// One running Rail for a test file: the app over a fresh database, and when asked the real
// workers (the task list and crontab `rail worker` runs, from startBackgroundWorkers) and a
// receiver for callbacks. One close() stops all of it, and drops the database once its ledger
// verifies. A file that must assemble something else (a `rail` process to kill, a task list of
// its own) says so and builds it from the parts below.
import { randomBytes } from 'node:crypto'
import type { Runner } from 'graphile-worker'
import { startBackgroundWorkers, type WorkerDeps } from '../../src/app.ts'
import type { DeliverySettings } from '../../src/events/delivery.ts'
import type { ProviderSettings } from '../../src/banking/providers/registry.ts'
import { startTestApp, type TestApp, type TestAppOptions } from './app.ts'
import { startReceiver, type Receiver } from './receiver.ts'

/**
 * What the workers run with. Unless told otherwise they run as `rail worker` beside the app: on
 * its database, master key, sandbox bank (its secret, timeout and clock), payment settings and
 * maximum amount, with loopback callbacks allowed (the receivers are on 127.0.0.1).
 */
export type WorkerSettings = Partial<Omit<WorkerDeps, 'pool' | 'masterKey' | 'providers' | 'events'>> & {
  providers?: Partial<ProviderSettings>
  events?: Partial<DeliverySettings>
}

export interface RailOptions extends TestAppOptions {
  /** The real workers: `true` for the defaults, or their settings. None unless asked for. */
  workers?: boolean | WorkerSettings
  /** A receiver for callbacks (`rail.receiver`). None unless asked for. */
  receiver?: boolean
}

export interface Rail extends TestApp {
  /** The sandbox bank's secret the app and its workers share. */
  bankSecret: string
  /** The running workers, if any. */
  readonly workers: Runner | undefined
  /** The receiver asked for with `receiver: true` (throws when none was). */
  readonly receiver: Receiver
  /** Stops the running workers (if any), then starts them with these settings (the file's own unless given). */
  startWorkers(settings?: WorkerSettings): Promise<Runner>
  /** Stops the workers (running jobs finish); `startWorkers` starts them again. */
  stopWorkers(): Promise<void>
  /** Stops the workers, closes the receiver, and closes the app (its database dropped once the ledger verifies). */
  close(): Promise<void>
}

/** The default number of concurrent jobs (a test of throughput or of racing jobs says its own). */
const WORKER_CONCURRENCY = 4

export async function startRail(options: RailOptions = {}): Promise<Rail> {
  const { workers, receiver: wantsReceiver, ...appOptions } = options
  const bankSecret = appOptions.sandboxBankSecret ?? randomBytes(16).toString('hex')
  const app = await startTestApp({ ...appOptions, sandboxBankSecret: bankSecret })
  let runner: Runner | undefined
  let receiver: Receiver | undefined
  const fileSettings: WorkerSettings = typeof workers === 'object' ? workers : {}

  const startWorkers = async (settings: WorkerSettings = fileSettings): Promise<Runner> => {
    await stopWorkers()
    runner = await startBackgroundWorkers(workerDeps(app, bankSecret, appOptions, settings))
    return runner
  }
  const stopWorkers = async (): Promise<void> => {
    const stopping = runner
    runner = undefined
    await stopping?.stop()
  }
  const close = async (): Promise<void> => {
    try {
      await stopWorkers()
      await receiver?.close()
    } finally {
      await app.close()
    }
  }

  try {
    if (wantsReceiver) receiver = await startReceiver()
    if (workers) await startWorkers()
  } catch (error) {
    await close().catch(() => {})
    throw error
  }
  return {
    ...app,
    bankSecret,
    get workers() {
      return runner
    },
    get receiver(): Receiver {
      if (!receiver) throw new Error('startRail was not asked for a receiver (receiver: true)')
      return receiver
    },
    startWorkers,
    stopWorkers,
    close,
  }
}

/** The workers' dependencies: the app's, as `rail worker` beside it would have them, then the settings given. */
function workerDeps(
  app: TestApp,
  bankSecret: string,
  appOptions: TestAppOptions,
  settings: WorkerSettings,
): WorkerDeps {
  // The bank's clock is the workers' own unless told (buildTaskList gives it): keys left undefined would hide it.
  const providers: ProviderSettings = definedOnly({
    sandboxBankUrl: () => app.baseUrl,
    sandboxBankSecret: bankSecret,
    timeoutMs: appOptions.providerTimeoutMs,
    requestValidityS: appOptions.sandboxBankRequestValidityS,
    ...settings.providers,
  })
  return {
    concurrency: WORKER_CONCURRENCY,
    clock: appOptions.clock,
    payments: appOptions.payments,
    maxAmountKobo: appOptions.maxAmountKobo,
    ...settings,
    pool: app.db.pool,
    masterKey: app.masterKey,
    providers,
    events: { allowLoopbackCallbacks: true, ...settings.events },
  }
}

function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T
}
