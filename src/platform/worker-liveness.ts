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
import { randomUUID } from 'node:crypto'
import os from 'node:os'
import type { Task } from 'graphile-worker'
import { withTransaction, type Pool } from './db.ts'

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
export async function announceWorkerProcess(pool: Pool, workerIds: readonly string[], log: (message: string) => void = () => {}): Promise<LiveWorkerProcess> {
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
  /** Its jobs that were locked and are free again. */
  jobsUnlocked: number
}

/** Takes every process silent for PRESUMED_DEAD_AFTER_S as dead and unlocks its jobs. */
export async function sweepDeadWorkerProcesses(pool: Pool): Promise<DeadWorkerProcess[]> {
  return withTransaction(pool, async (tx) => {
    const dead = await tx.query<{ host: string; pid: number; worker_ids: string[] }>(
      `DELETE FROM worker_processes WHERE seen_at < now() - make_interval(secs => $1) RETURNING host, pid, worker_ids`,
      [PRESUMED_DEAD_AFTER_S],
    )
    const found: DeadWorkerProcess[] = []
    for (const row of dead.rows) {
      const locked = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE locked_by = ANY($1::text[])`, [row.worker_ids])
      await tx.query(`SELECT graphile_worker.force_unlock_workers($1::text[])`, [row.worker_ids])
      found.push({ host: row.host, pid: row.pid, workerIds: row.worker_ids, jobsUnlocked: locked.rows[0]!.n })
    }
    return found
  })
}

export function workerLivenessTasks(deps: { pool: Pool }): Record<string, Task> {
  return {
    [DEAD_WORKERS_SWEEP_TASK]: async (_payload, helpers) => {
      for (const dead of await sweepDeadWorkerProcesses(deps.pool)) {
        helpers.logger.warn(`worker process ${dead.pid} on ${dead.host} silent for over ${PRESUMED_DEAD_AFTER_S} s: taken as dead, ${dead.jobsUnlocked} of its jobs unlocked`)
      }
    },
  }
}
