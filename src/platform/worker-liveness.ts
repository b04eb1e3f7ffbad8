// Jobs of a worker process that died without stopping. graphile-worker locks a job under the id of
// the worker running it and frees the locks of a worker that stops; one killed with SIGKILL, or on
// a host that vanished, keeps them, and graphile-worker takes such a job again only four hours
// later. Each worker process therefore says it is alive (worker_processes.seen_at) while it runs,
// and a sweep takes a process silent for PRESUMED_DEAD_AFTER_S as dead: its row goes, and its jobs
// are unlocked at once (graphile_worker.force_unlock_workers), to be run by the processes alive.
//
// A process only paused (a long stall, a frozen VM) may be taken as dead while it still runs a
// job, so that job can run twice. Every task is written for that already: two workers on one job
// is a case each of them handles (leases, guarded transitions, deterministic ledger ids).
//
// A job the dead process held may have been replaced meanwhile. graphile-worker's add_jobs, given
// the key of a job that is locked (running), cannot update it: it detaches it instead (its key set
// to null and its attempts to max_attempts, so that it never runs again) and inserts the new job
// under the key; remove_job detaches a locked job the same way. The worker running it deletes it
// when it ends; a dead one never does, and once unlocked the row would look like a job out of
// attempts — `rail_jobs_failed`, the "gave up for good" alert (docs/operations.md §Metrics) —
// forever, for work its replacement did. The sweep completes such jobs instead of unlocking them.
import { randomUUID } from 'node:crypto'
import os from 'node:os'
import type { Task } from 'graphile-worker'
import { withTransaction, type Pool, type Queryable } from './db.ts'

/** How often a live worker process renews its row. */
export const HEARTBEAT_INTERVAL_MS = 10_000
/** Six missed renewals: long enough that a busy machine does not take a live process as dead. */
export const PRESUMED_DEAD_AFTER_S = 60
export const DEAD_WORKERS_SWEEP_TASK = 'worker_processes_sweep'
export const WORKER_LIVENESS_CRONTAB = `* * * * * ${DEAD_WORKERS_SWEEP_TASK}`

export interface LiveWorkerProcess {
  processId: string
  /** Removes the process's row: its workers have stopped and hold no job. */
  stop(): Promise<void>
}

/**
 * Records this process and its graphile-worker ids, and renews the record every
 * HEARTBEAT_INTERVAL_MS until stopped. A renewal that finds the row gone (the process was taken as
 * dead during a stall) writes it again: the process runs on and its workers may lock jobs anew.
 */
export async function announceWorkerProcess(
  pool: Pool,
  workerIds: readonly string[],
  log: (message: string) => void = () => {},
): Promise<LiveWorkerProcess> {
  const processId = randomUUID()
  const renew = () =>
    pool.query(
      `INSERT INTO worker_processes (process_id, host, pid, worker_ids) VALUES ($1, $2, $3, $4)
       ON CONFLICT (process_id) DO UPDATE SET seen_at = now()`,
      [processId, os.hostname(), process.pid, workerIds],
    )
  await renew()
  const timer = setInterval(() => {
    renew().catch((error: unknown) => log(`could not renew this worker process's heartbeat: ${String(error)}`))
  }, HEARTBEAT_INTERVAL_MS)
  timer.unref()
  return {
    processId,
    async stop() {
      clearInterval(timer)
      await pool.query(`DELETE FROM worker_processes WHERE process_id = $1`, [processId])
    },
  }
}

export interface DeadWorkerProcess {
  host: string
  pid: number
  workerIds: string[]
  /** Its jobs that were locked and are free again (to run, or out of attempts). */
  jobsUnlocked: number
  /** Its jobs that were locked and had been replaced (see above): completed, their replacement runs. */
  jobsReplaced: number
}

/** Takes every process silent for PRESUMED_DEAD_AFTER_S as dead and unlocks its jobs. */
export async function sweepDeadWorkerProcesses(pool: Pool): Promise<DeadWorkerProcess[]> {
  return withTransaction(pool, async (tx) => {
    const dead = await tx.query<{ host: string; pid: number; worker_ids: string[] }>(
      `DELETE FROM worker_processes WHERE seen_at < now() - make_interval(secs => $1) RETURNING host, pid, worker_ids`,
      [PRESUMED_DEAD_AFTER_S],
    )
    const found: DeadWorkerProcess[] = []
    for (const row of dead.rows)
      found.push({ host: row.host, pid: row.pid, workerIds: row.worker_ids, ...(await freeJobsOf(tx, row.worker_ids)) })
    return found
  })
}

/**
 * Unlocks the jobs the dead workers held, and completes those a replacement detached (see the top of
 * this file): graphile-worker's own functions, force_unlock_workers then complete_jobs (which
 * deletes only unlocked jobs), in the sweep's transaction.
 *
 * A detached job is told apart by its row: no key, out of attempts, and changed after it was locked
 * (add_jobs and remove_job stamp updated_at; taking a job, failing it and unlocking it do not). A
 * job of no key that was on its last attempt when its process died was changed before it was locked:
 * it stays, out of attempts and never run to its end, and counts as failed as graphile-worker has it.
 * (add_jobs stamps its transaction's start: a job detached by a transaction begun before the job was
 * taken looks like that one, and is left counted too — an alert too many, never one too few.)
 */
async function freeJobsOf(
  tx: Queryable,
  workerIds: readonly string[],
): Promise<{ jobsUnlocked: number; jobsReplaced: number }> {
  const held = await tx.query<{ id: string; replaced: boolean }>(
    `SELECT id, (key IS NULL AND attempts >= max_attempts AND updated_at > locked_at) AS replaced
       FROM graphile_worker.jobs WHERE locked_by = ANY($1::text[])`,
    [workerIds],
  )
  await tx.query(`SELECT graphile_worker.force_unlock_workers($1::text[])`, [workerIds])
  const replaced = held.rows.filter((job) => job.replaced).map((job) => job.id)
  if (replaced.length > 0)
    await tx.query(`SELECT count(*) FROM graphile_worker.complete_jobs($1::bigint[])`, [replaced])
  return { jobsUnlocked: held.rows.length - replaced.length, jobsReplaced: replaced.length }
}

export function workerLivenessTasks(deps: { pool: Pool }): Record<string, Task> {
  return {
    [DEAD_WORKERS_SWEEP_TASK]: async (_payload, helpers) => {
      for (const dead of await sweepDeadWorkerProcesses(deps.pool)) {
        helpers.logger.warn(
          `worker process ${dead.pid} on ${dead.host} silent for over ${PRESUMED_DEAD_AFTER_S} s: taken as dead, ${dead.jobsUnlocked} of its jobs unlocked, ${dead.jobsReplaced} replaced meanwhile completed`,
        )
      }
    },
  }
}
