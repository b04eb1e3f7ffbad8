// Background work on graphile-worker. Jobs are rows: a job added inside a transaction exists only
// if that transaction commits (the transactional outbox), and any number of workers share them.
import { Logger, run, type Runner, type TaskList } from 'graphile-worker'
import type { Pool, Queryable } from './db.ts'

/** graphile-worker polls as a fallback only; LISTEN/NOTIFY wakes it at once. */
const POLL_INTERVAL_MS = 1_000

export interface JobOptions {
  runAt?: Date
  /** At most one pending job per key: a second add with the same key replaces the first. */
  jobKey?: string
  maxAttempts?: number
  queueName?: string
  /** Lower runs first (graphile-worker's order: priority, then run_at); default 0. */
  priority?: number
}

/** Enqueues a job on the caller's connection, so it commits or rolls back with the caller's work. */
export async function addJob(db: Queryable, task: string, payload: unknown, options: JobOptions = {}): Promise<void> {
  await db.query(
    `SELECT graphile_worker.add_job(
       identifier => $1::text, payload => $2::json, queue_name => $3::text,
       run_at => $4::timestamptz, max_attempts => $5::int, job_key => $6::text, priority => $7::int)`,
    [task, JSON.stringify(payload), options.queueName ?? null, options.runAt?.toISOString() ?? null, options.maxAttempts ?? null, options.jobKey ?? null, options.priority ?? null],
  )
}

export interface WorkerOptions {
  pool: Pool
  concurrency: number
  taskList: TaskList
  crontab?: string
  log?: (level: string, message: string) => void
}

export async function startWorkers(options: WorkerOptions): Promise<Runner> {
  const log = options.log ?? (() => {})
  return run({
    pgPool: options.pool,
    concurrency: options.concurrency,
    taskList: options.taskList,
    crontab: options.crontab ?? '',
    pollInterval: POLL_INTERVAL_MS,
    noHandleSignals: true, // the process owns shutdown: drain HTTP, then stop workers, then the database
    logger: new Logger(() => (level, message) => log(level, message)),
  })
}
