// A worker process announces itself and its graphile-worker ids while it runs; the sweep takes one
// silent for a minute as dead and unlocks the jobs it held, and leaves live processes' jobs alone.
// The minute is moved, not waited: a process's seen_at is set back.
import type { Task } from 'graphile-worker'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { addJob, startWorkers } from '../../src/platform/jobs.ts'
import { PRESUMED_DEAD_AFTER_S, sweepDeadWorkerProcesses } from '../../src/platform/worker-liveness.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { waitFor } from '../support/wait.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => db?.drop())

/** A task that holds its job until `release` is called. */
function holdingTask(): { task: Task; release(): void } {
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  return { task: () => released, release: () => release() }
}

async function processRow(pid: number, workerIds: string[]) {
  const rows = await db.pool.query<{ worker_ids: string[] }>(`SELECT worker_ids FROM worker_processes WHERE pid = $1 AND worker_ids && $2::text[]`, [pid, workerIds])
  return rows.rows[0]
}

it('a process silent past the limit is taken as dead and its locked jobs are freed; a live one keeps its jobs', async () => {
  const first = holdingTask()
  const second = holdingTask()
  const silent = await startWorkers({ pool: db.pool, concurrency: 1, taskList: { hold_first: first.task } })
  const live = await startWorkers({ pool: db.pool, concurrency: 1, taskList: { hold_second: second.task } })
  try {
    const rows = await db.pool.query<{ process_id: string; pid: number; worker_ids: string[] }>(`SELECT process_id, pid, worker_ids FROM worker_processes ORDER BY started_at`)
    expect(rows.rows).toHaveLength(2)
    for (const row of rows.rows) {
      expect(row.pid).toBe(process.pid)
      // The pool's id and its one worker's.
      expect(row.worker_ids).toEqual([expect.stringMatching(/^pool-/), expect.stringMatching(/^worker-/)])
    }
    const [silentRow, liveRow] = [rows.rows[0]!, rows.rows[1]!]

    await addJob(db.pool, 'hold_first', {})
    await addJob(db.pool, 'hold_second', {})
    const lockedBy = async () => {
      const jobs = await db.pool.query<{ task_identifier: string; locked_by: string | null }>(`SELECT task_identifier, locked_by FROM graphile_worker.jobs ORDER BY task_identifier`)
      return Object.fromEntries(jobs.rows.map((job) => [job.task_identifier, job.locked_by]))
    }
    await waitFor(async () => {
      const locks = await lockedBy()
      return silentRow.worker_ids.includes(locks.hold_first!) && liveRow.worker_ids.includes(locks.hold_second!)
    }, 15_000, 'each process locked its job')

    // Nobody is silent yet: the sweep takes no one.
    expect(await sweepDeadWorkerProcesses(db.pool)).toEqual([])

    await db.pool.query(`UPDATE worker_processes SET seen_at = now() - make_interval(secs => $2 + 1) WHERE process_id = $1`, [silentRow.process_id, PRESUMED_DEAD_AFTER_S])
    const dead = await sweepDeadWorkerProcesses(db.pool)
    expect(dead).toEqual([{ host: expect.any(String), pid: process.pid, workerIds: silentRow.worker_ids, jobsUnlocked: 1 }])
    expect(await lockedBy()).toEqual({ hold_first: null, hold_second: expect.toBeOneOf(liveRow.worker_ids) })
    expect(await processRow(process.pid, silentRow.worker_ids)).toBeUndefined()
    expect(await processRow(process.pid, liveRow.worker_ids)).toBeDefined()
    // A second sweep finds nothing more.
    expect(await sweepDeadWorkerProcesses(db.pool)).toEqual([])
  } finally {
    first.release()
    second.release()
    await silent.stop()
    await live.stop()
  }
  // Stopped processes withdraw their rows; the one taken as dead had written its row again on its
  // next renewal, or had none: either way none is left.
  expect((await db.pool.query(`SELECT count(*)::int AS n FROM worker_processes`)).rows[0].n).toBe(0)
})
