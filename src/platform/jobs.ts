// Background work on graphile-worker. Jobs are rows: a job added inside a transaction exists only
// if that transaction commits (the transactional outbox), and any number of workers share them.
import { EventEmitter } from 'node:events'
import { Logger, run, type Runner, type Task, type TaskList, type WorkerEvents } from 'graphile-worker'
import type { Pool, Queryable } from './db.ts'
import { announceWorkerProcess } from './worker-liveness.ts'

/** graphile-worker polls as a fallback only; LISTEN/NOTIFY wakes it at once. */
const POLL_INTERVAL_MS = 1_000

export interface JobOptions {
  /** When it may run, by the database's clock (graphile-worker judges run_at by its now()). */
  runAt?: Date
  /**
   * Or how long from the database's now(): a time on the application's clock (a test clock, moved)
   * is given as a delay, so that the job runs when that time comes by the application's clock.
   */
  runAfterMs?: number
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
       run_at => coalesce($4::timestamptz, now() + make_interval(secs => $8::double precision / 1000)),
       max_attempts => $5::int, job_key => $6::text, priority => $7::int)`,
    [
      task,
      JSON.stringify(payload),
      options.queueName ?? null,
      options.runAt?.toISOString() ?? null,
      options.maxAttempts ?? null,
      options.jobKey ?? null,
      options.priority ?? null,
      options.runAfterMs ?? null,
    ],
  )
}

/**
 * One graphile_worker.job_spec for add_jobs, built by field name rather than by position (the type
 * is a row whose fields graphile-worker may add to or reorder between versions). The arguments are
 * SQL expressions; every field not given is null (graphile-worker's defaults).
 */
export function jobSpecSql(fields: {
  identifier: string
  payload: string
  jobKey?: string
  priority?: string
}): string {
  const named = [`'identifier', ${fields.identifier}`, `'payload', ${fields.payload}`]
  if (fields.jobKey !== undefined) named.push(`'job_key', ${fields.jobKey}`)
  if (fields.priority !== undefined) named.push(`'priority', ${fields.priority}`)
  return `json_populate_record(NULL::graphile_worker.job_spec, json_build_object(${named.join(', ')}))`
}

/**
 * Many jobs in one graphile_worker.add_jobs call, inside the caller's statement (add_job scans the
 * queue once per call): `specs` is a query answering jobSpecSql rows. The job queue's schema is the
 * platform's, so features name it only through here.
 */
export function addJobsSql(specs: string): string {
  return `graphile_worker.add_jobs(ARRAY(${specs}))`
}

/**
 * A job replaced while it ran hands its work to its replacement. Given the key of a running job,
 * graphile-worker's add_jobs detaches that job (its key set to null, its attempts to max_attempts,
 * so it never runs again) and inserts the replacement under the key; remove_job detaches it the
 * same way. Should the detached run then throw, graphile-worker would keep it as a job out of
 * attempts — counted in `rail_jobs_failed`, the "gave up for good" alert (docs/operations.md
 * §Metrics) — though its task threw once and the replacement does the work. Such a run ends as
 * done instead (its error is still logged and counted by the step's instrumentation). A job that
 * had a key when taken and has none now was detached: nothing else clears a key.
 */
function handingOverWhenReplaced(tasks: TaskList, pool: Pool, log: (level: string, message: string) => void): TaskList {
  const wrapped: TaskList = {}
  for (const [name, task] of Object.entries(tasks)) {
    if (!task) continue
    wrapped[name] = (async (payload, helpers) => {
      try {
        return await (task as Task)(payload, helpers)
      } catch (error) {
        if (helpers.job.key === null || !(await wasDetached(pool, helpers.job.id))) throw error
        log(
          'warn',
          `job ${helpers.job.id} (${name}) failed after it was replaced: its replacement carries the work (${String(error)})`,
        )
      }
    }) satisfies Task
  }
  return wrapped
}

async function wasDetached(pool: Pool, jobId: string): Promise<boolean> {
  const found = await pool
    .query(`SELECT 1 FROM graphile_worker.jobs WHERE id = $1 AND key IS NULL`, [jobId])
    .catch(() => undefined)
  return found?.rowCount === 1
}

export interface WorkerOptions {
  pool: Pool
  /** graphile-worker's own connections (its LISTEN, fetching and completing jobs); `pool` when absent. */
  queuePool?: Pool
  concurrency: number
  taskList: TaskList
  crontab?: string
  log?: (level: string, message: string) => void
}

/**
 * graphile-worker warns when its pool is smaller than its concurrency, taking it for the pool its
 * jobs run on. With a queue pool of its own (beside a pooler) the jobs run on `pool`: not a fault.
 */
function isQueuePoolWarning(options: WorkerOptions, message: string): boolean {
  return options.queuePool !== undefined && message.startsWith('WARNING: having maxPoolSize')
}

/**
 * Runs the task list on `concurrency` workers, and announces the process and its worker ids while
 * it runs (worker-liveness.ts), so that the jobs it holds are freed soon after it dies. Stopping
 * the runner stops the workers (running jobs finish), then withdraws the announcement.
 */
export async function startWorkers(options: WorkerOptions): Promise<Runner> {
  const log = options.log ?? (() => {})
  const events: WorkerEvents = new EventEmitter()
  // graphile-worker locks jobs under its pool's id (and, in other set-ups, a worker's own): both
  // are announced, so whichever holds a job is known.
  const workerIds: string[] = []
  events.on('pool:create', ({ workerPool }) => workerIds.push(workerPool.id))
  events.on('worker:create', ({ worker }) => workerIds.push(worker.workerId))
  const runner = await run({
    pgPool: options.queuePool ?? options.pool,
    concurrency: options.concurrency,
    taskList: handingOverWhenReplaced(options.taskList, options.pool, log),
    crontab: options.crontab ?? '',
    pollInterval: POLL_INTERVAL_MS,
    noHandleSignals: true, // the process owns shutdown: drain HTTP, then stop workers, then the database
    logger: new Logger(() => (level, message) => {
      if (!isQueuePoolWarning(options, message)) log(level, message)
    }),
    events,
  })
  let live
  try {
    live = await announceWorkerProcess(options.pool, workerIds, (message) => log('warn', message))
  } catch (error) {
    await runner.stop()
    throw error
  }
  const stopWorkers = runner.stop.bind(runner)
  return Object.assign(runner, {
    async stop(reason?: string) {
      await stopWorkers(reason)
      await live.stop()
    },
  })
}
