// A worker process announces itself and its graphile-worker ids while it runs; the sweep takes one
// silent for a minute as dead and unlocks the jobs it held, and leaves live processes' jobs alone.
// The minute is moved, not waited: a process's seen_at is set back. A job replaced while it was
// held (graphile-worker detaches it) never counts as failed; a job that ran out of attempts does.
import type { Task } from 'graphile-worker'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { addJob, startWorkers } from '../../src/platform/jobs.ts'
import { registerDatabaseGauges } from '../../src/platform/observability/database-gauges.ts'
import { PRESUMED_DEAD_AFTER_S, sweepDeadWorkerProcesses } from '../../src/platform/worker-liveness.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { waitFor } from '../support/wait.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => db?.drop())

/** A task that holds its job until `release` is called. */
function holdingTask(): { task: Task; release(): void; released: Promise<void> } {
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  return { task: () => released, release: () => release(), released }
}

async function processRow(pid: number, workerIds: string[]) {
  const rows = await db.pool.query<{ worker_ids: string[] }>(
    `SELECT worker_ids FROM worker_processes WHERE pid = $1 AND worker_ids && $2::text[]`,
    [pid, workerIds],
  )
  return rows.rows[0]
}

it('a process silent past the limit is taken as dead and its locked jobs are freed; a live one keeps its jobs', async () => {
  const first = holdingTask()
  const second = holdingTask()
  const silent = await startWorkers({ pool: db.pool, concurrency: 1, taskList: { hold_first: first.task } })
  const live = await startWorkers({ pool: db.pool, concurrency: 1, taskList: { hold_second: second.task } })
  try {
    const rows = await db.pool.query<{ process_id: string; pid: number; worker_ids: string[] }>(
      `SELECT process_id, pid, worker_ids FROM worker_processes ORDER BY started_at`,
    )
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
      const jobs = await db.pool.query<{ task_identifier: string; locked_by: string | null }>(
        `SELECT task_identifier, locked_by FROM graphile_worker.jobs ORDER BY task_identifier`,
      )
      return Object.fromEntries(jobs.rows.map((job) => [job.task_identifier, job.locked_by]))
    }
    await waitFor(
      async () => {
        const locks = await lockedBy()
        return silentRow.worker_ids.includes(locks.hold_first!) && liveRow.worker_ids.includes(locks.hold_second!)
      },
      15_000,
      'each process locked its job',
    )

    // Nobody is silent yet: the sweep takes no one.
    expect(await sweepDeadWorkerProcesses(db.pool)).toEqual([])

    await db.pool.query(
      `UPDATE worker_processes SET seen_at = now() - make_interval(secs => $2 + 1) WHERE process_id = $1`,
      [silentRow.process_id, PRESUMED_DEAD_AFTER_S],
    )
    const dead = await sweepDeadWorkerProcesses(db.pool)
    expect(dead).toEqual([
      { host: expect.any(String), pid: process.pid, workerIds: silentRow.worker_ids, jobsUnlocked: 1, jobsReplaced: 0 },
    ])
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

/** What `rail_jobs_failed` reports at a scrape, by task. */
async function failedJobsGauge(): Promise<Record<string, number>> {
  const registry = new Registry()
  registerDatabaseGauges(registry, db.pool)
  const metric = await registry.getSingleMetric('rail_jobs_failed')!.get()
  return Object.fromEntries(metric.values.map((value) => [String(value.labels.task), value.value]))
}

/** Takes the process holding `workerId` as dead and sweeps. */
async function sweepAsDead(workerId: string) {
  await db.pool.query(
    `UPDATE worker_processes SET seen_at = now() - make_interval(secs => $2 + 1) WHERE $1 = ANY (worker_ids)`,
    [workerId, PRESUMED_DEAD_AFTER_S],
  )
  return sweepDeadWorkerProcesses(db.pool)
}

async function jobsOf(task: string) {
  const rows = await db.pool.query<{
    key: string | null
    locked_by: string | null
    out_of_attempts: boolean
    last_error: string | null
  }>(
    `SELECT key, locked_by, attempts >= max_attempts AS out_of_attempts, last_error FROM graphile_worker.jobs WHERE task_identifier = $1 ORDER BY id`,
    [task],
  )
  return rows.rows
}

it("a dead process's job replaced while it held it is completed by the sweep; its job on its last attempt, not replaced, stays failed", async () => {
  const replaced = holdingTask()
  const lastAttempt = holdingTask()
  const silent = await startWorkers({
    pool: db.pool,
    concurrency: 2,
    taskList: { hold_replaced: replaced.task, hold_last_attempt: lastAttempt.task },
  })
  try {
    await addJob(db.pool, 'hold_replaced', { version: 1 }, { jobKey: 'replaced:1' })
    await addJob(db.pool, 'hold_last_attempt', {}, { maxAttempts: 1 })
    await waitFor(
      async () =>
        (await jobsOf('hold_replaced'))[0]?.locked_by != null &&
        (await jobsOf('hold_last_attempt'))[0]?.locked_by != null,
      15_000,
      'both jobs held',
    )
    const workerId = (await jobsOf('hold_replaced'))[0]!.locked_by!
    // Added again under its key while held: graphile-worker detaches the held one and adds the new.
    await addJob(db.pool, 'hold_replaced', { version: 2 }, { jobKey: 'replaced:1' })
    expect(await jobsOf('hold_replaced')).toEqual([
      { key: null, locked_by: workerId, out_of_attempts: true, last_error: null },
      { key: 'replaced:1', locked_by: null, out_of_attempts: false, last_error: null },
    ])

    const [dead] = await sweepAsDead(workerId)
    expect(dead).toMatchObject({ jobsUnlocked: 1, jobsReplaced: 1 })
    // The replacement waits to run; the detached job is gone. The job killed on its last attempt
    // never ran to its end and will not run again: graphile-worker's failed job, and the alert's.
    expect(await jobsOf('hold_replaced')).toEqual([
      { key: 'replaced:1', locked_by: null, out_of_attempts: false, last_error: null },
    ])
    expect(await jobsOf('hold_last_attempt')).toEqual([
      { key: null, locked_by: null, out_of_attempts: true, last_error: null },
    ])
    expect(await failedJobsGauge()).toEqual({ hold_replaced: 0, hold_last_attempt: 1 })
  } finally {
    replaced.release()
    lastAttempt.release()
    await silent.stop()
  }
})

it('a job whose task throws every time counts as failed, after its process is taken as dead too', async () => {
  const runner = await startWorkers({
    pool: db.pool,
    concurrency: 1,
    taskList: { always_throws: () => Promise.reject(new Error('always')) },
  })
  try {
    await addJob(db.pool, 'always_throws', {}, { jobKey: 'throws:1', maxAttempts: 2 })
    await waitFor(
      async () => {
        // Its retry waits out graphile-worker's backoff: brought forward, as reschedule_jobs does.
        await db.pool.query(
          `SELECT graphile_worker.reschedule_jobs(ARRAY(SELECT id FROM graphile_worker.jobs WHERE task_identifier = 'always_throws' AND locked_at IS NULL), run_at => now())`,
        )
        return (
          (await jobsOf('always_throws'))[0]?.out_of_attempts === true &&
          (await jobsOf('always_throws'))[0]?.locked_by === null
        )
      },
      15_000,
      'the job out of attempts',
    )
    expect(await jobsOf('always_throws')).toEqual([
      { key: 'throws:1', locked_by: null, out_of_attempts: true, last_error: 'always' },
    ])
    expect((await failedJobsGauge()).always_throws).toBe(1)
    const workerId = (await db.pool.query<{ worker_ids: string[] }>(`SELECT worker_ids FROM worker_processes`)).rows[0]!
      .worker_ids[0]!
    expect(await sweepAsDead(workerId)).toMatchObject([{ jobsUnlocked: 0, jobsReplaced: 0 }])
    expect((await failedJobsGauge()).always_throws).toBe(1)
  } finally {
    await runner.stop()
  }
})

it('a job replaced while it runs, whose run then throws, hands its work to its replacement and does not count as failed', async () => {
  const first = holdingTask()
  const ran: number[] = []
  const task: Task = async (payload) => {
    const { version } = payload as { version: number }
    ran.push(version)
    if (version === 1) {
      await first.released
      throw new Error('the first run fails after it was replaced')
    }
  }
  const runner = await startWorkers({ pool: db.pool, concurrency: 2, taskList: { replaced_then_throws: task } })
  try {
    await addJob(db.pool, 'replaced_then_throws', { version: 1 }, { jobKey: 'replaced-then-throws:1' })
    await waitFor(
      async () => (await jobsOf('replaced_then_throws'))[0]?.locked_by != null,
      15_000,
      'the first run started',
    )
    await addJob(db.pool, 'replaced_then_throws', { version: 2 }, { jobKey: 'replaced-then-throws:1' })
    first.release()
    await waitFor(
      async () => (await jobsOf('replaced_then_throws')).every((job) => job.locked_by === null && job.out_of_attempts),
      15_000,
      'both runs ended',
    )
    expect(ran.sort()).toEqual([1, 2])
    expect(await jobsOf('replaced_then_throws')).toEqual([])
    expect((await failedJobsGauge()).replaced_then_throws ?? 0).toBe(0)
  } finally {
    first.release()
    await runner.stop()
  }
})
