// The payment pipeline's jobs: a work job per instruction (keyed, so that one waits per
// instruction), scheduled polls, and the minute's sweep that gives instructions a dead process
// left behind a job again and unknown ones their slow requery.
import { systemClock, type Clock } from '../../platform/clock.ts'
import type { Pool, Queryable } from '../../platform/db.ts'
import { addJob, addJobsSql, jobSpecSql } from '../../platform/jobs.ts'
import { unknownPollHorizonMs } from './decisions.ts'
import * as repo from './repo.ts'
import type { PaymentSettings } from './settings.ts'
import { WORKABLE } from './states.ts'

export const WORK_TASK = 'payment_work'
export const SWEEP_TASK = 'payments_sweep'
/** Every minute: instructions a dead process left behind get a job again, and unknown ones due their slow requery. */
export const PAYMENTS_CRONTAB = `* * * * * ${SWEEP_TASK}`
/** An instruction whose next step is this overdue, and held by nobody, was left by a dead process. */
const STRANDED_GRACE_S = 30
const SWEEP_BATCH = 1_000
/**
 * Scheduled requeries are background polls: they run after asked-for work (a requery the
 * simulator or an operator asked for, first sends), which graphile-worker takes first.
 */
const POLL_PRIORITY = 1

/** Work jobs for many instructions in one add_jobs call (add_job scans the queue once per call). */
async function addWorkJobs(db: Queryable, ids: readonly string[], keyed = false): Promise<void> {
  if (ids.length === 0) return
  await db.query(
    `SELECT count(*) FROM ${addJobsSql(`
       SELECT ${jobSpecSql({ identifier: '$1::text', payload: "json_build_object('id', id)", jobKey: "CASE WHEN $3::boolean THEN 'payment:' || id END" })}
         FROM unnest($2::uuid[]) AS id`)}`,
    [WORK_TASK, ids, keyed],
  )
}

function jobKey(id: string): string {
  return `payment:${id}`
}

/**
 * A scheduled poll of one instruction, in the step's transaction (replacing any job it had
 * waiting), `dueInMs` from now: the step is due by the pipeline's clock, the job's run_at by the
 * database's, so the job is given the wait, not the time.
 */
export async function addPollJob(tx: Queryable, id: string, dueInMs: number): Promise<void> {
  await addJob(tx, WORK_TASK, { id }, { runAfterMs: dueInMs, jobKey: jobKey(id), priority: POLL_PRIORITY })
}

/** How often an asked-for requery is tried while another worker holds its instruction (graphile-worker's backoff: about 3 s, 7 s, 20 s…). */
const ASKED_ATTEMPTS_MAX = 8

/**
 * Asks for a requery by a worker as soon as one is free (ahead of scheduled polls). Not keyed: a
 * poll the instruction's holder schedules meanwhile must not replace it (the holder may have asked
 * the bank before the news that made someone ask), and a job that finds the instruction held is
 * tried again shortly (workAsked).
 */
export async function requestRequery(db: Queryable, id: string): Promise<void> {
  await addJob(db, WORK_TASK, { id, asked: true }, { maxAttempts: ASKED_ATTEMPTS_MAX })
}

/** A sandbox partner's clock moved on (docs/sandbox.md): its schedule comes as much earlier (unknown ones' slow requery too), and what is due gets a job now. */
export async function bringForwardPartner(
  tx: Queryable,
  clock: Clock,
  partnerId: string,
  seconds: number,
): Promise<void> {
  await addWorkJobs(tx, await repo.bringForward(tx, partnerId, seconds, clock.now(), [...WORKABLE, 'unknown']), true)
}

// ---- the sweep -------------------------------------------------------------------------------

/**
 * Instructions a dead process left in flight (its job is held for hours by graphile-worker) get a
 * job again, judged overdue by the clock that scheduled them (tests sweep by the system clock).
 */
export async function sweepStranded(pool: Pool, clock: Clock = systemClock): Promise<number> {
  const ids = await repo.selectStranded(pool, clock.now(), STRANDED_GRACE_S, SWEEP_BATCH)
  await addWorkJobs(pool, ids, true)
  return ids.length
}

/** Unknown instructions whose slow requery is due get a job: a requery that only asks (after the deadline nothing is sent). */
export async function sweepUnknown(deps: { pool: Pool; clock: Clock; settings: PaymentSettings }): Promise<number> {
  const ids = await repo.selectUnknownDue(
    deps.pool,
    deps.clock.now(),
    unknownPollHorizonMs(deps.settings.unknownPolls),
    SWEEP_BATCH,
  )
  await addWorkJobs(deps.pool, ids, true)
  return ids.length
}
