// A `rail worker` killed with SIGKILL in the middle of a payment's keyed job (`payment:<id>`, its
// requery), the job then replaced by the payments sweep while the dead process still holds it, as
// happens whenever the payment's lease runs out before the process is taken as dead. After the
// liveness sweep and a restart the payment ends, and no job is left counted as failed: the row the
// replacement detached (no key, out of attempts) is completed, not left behind for the "a job gave
// up for good" alert (docs/operations.md §Metrics).
import { Registry } from 'prom-client'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { sweepStranded } from '../../src/money-out/pipeline/service.ts'
import { registerDatabaseGauges } from '../../src/platform/observability/database-gauges.ts'
import { PRESUMED_DEAD_AFTER_S, sweepDeadWorkerProcesses } from '../../src/platform/worker-liveness.ts'
import { BANK_SECRET } from '../collections/support.ts'
import type { TestApp } from '../support/app.ts'
import { startKillBench, type KillBench, type RailProcess } from '../support/rail-process.ts'
import {
  expectExactlyOnce,
  instructionState,
  settle,
  startPayment,
  startPaymentWorkers,
  type PaymentParty,
} from '../support/payments.ts'
import { waitFor } from '../support/wait.ts'

const SETTINGS = { sandbox: { firstDelayMs: 200, deadlineMs: 60_000 }, leaseMs: 5_000 }
let bench: KillBench
let app: TestApp
let party: PaymentParty

beforeAll(async () => {
  bench = await startKillBench({ sandboxBankSecret: BANK_SECRET, payments: SETTINGS })
  ;({ app, party } = bench)
})
afterAll(async () => {
  await bench?.close()
})

/** A real `rail worker` on the test database, reaching the test app's sandbox bank. */
function railWorker(env: Record<string, string>): RailProcess {
  return bench.rail('worker', env)
}

/** What `rail_jobs_failed` reports at a scrape, by task. */
async function failedJobsGauge(): Promise<Record<string, number>> {
  const registry = new Registry()
  registerDatabaseGauges(registry, app.db.pool)
  const metric = await registry.getSingleMetric('rail_jobs_failed')!.get()
  return Object.fromEntries(metric.values.map((value) => [String(value.labels.task), value.value]))
}

/** The payment work jobs (this file makes one payment). */
const workJobs = async () =>
  (
    await app.db.pool.query<{ key: string | null; locked: boolean; out_of_attempts: boolean }>(
      `SELECT key, locked_at IS NOT NULL AS locked, attempts >= max_attempts AS out_of_attempts FROM graphile_worker.jobs
        WHERE task_identifier = 'payment_work' ORDER BY id`,
    )
  ).rows

it(
  'a worker killed in a keyed payment job that is then replaced: after a restart the payment ends and no job counts as failed',
  { timeout: 120_000 },
  async () => {
    // The worker sends the payout, and stops in the requery its keyed poll job makes.
    const worker = railWorker({ RAIL_FAILPOINTS: 'payments.after_requery=hang' })
    const id = await startPayment(app, party, 'outbound transfer', 150_000)
    let workerIds: string[] = []
    await waitFor(
      async () => {
        const rows = await app.db.pool.query<{ worker_ids: string[] }>(
          `SELECT worker_ids FROM worker_processes WHERE pid = $1`,
          [worker.child.pid],
        )
        workerIds = rows.rows[0]?.worker_ids ?? []
        const held = await app.db.pool.query(
          `SELECT 1 FROM graphile_worker.jobs WHERE key = $1 AND locked_by = ANY ($2::text[])`,
          [`payment:${id}`, workerIds],
        )
        return held.rowCount === 1
      },
      30_000,
      "the worker holding the payment's keyed requery job",
    )
    worker.child.kill('SIGKILL')
    await worker.exited
    expect(await instructionState(app, id)).toBe('sent')

    // The payment's lease runs out first (brought forward here): the payments sweep gives it a job
    // again under its key, which detaches the job the dead process still holds.
    await app.db.pool.query(
      `UPDATE bank_instructions SET lease_expires_at = now() - interval '1 second', next_attempt_at = now() - interval '31 seconds' WHERE id = $1`,
      [id],
    )
    expect(await sweepStranded(app.db.pool)).toBe(1)
    expect(await workJobs()).toEqual([
      { key: null, locked: true, out_of_attempts: true },
      { key: `payment:${id}`, locked: false, out_of_attempts: false },
    ])

    // Then the dead process is found silent (its minute brought forward).
    await app.db.pool.query(
      `UPDATE worker_processes SET seen_at = now() - make_interval(secs => $2 + 1) WHERE pid = $1`,
      [worker.child.pid, PRESUMED_DEAD_AFTER_S],
    )
    const dead = await sweepDeadWorkerProcesses(app.db.pool)
    expect(dead).toEqual([
      { host: expect.any(String), pid: worker.child.pid, workerIds, jobsUnlocked: 0, jobsReplaced: 1 },
    ])
    expect(await workJobs()).toEqual([{ key: `payment:${id}`, locked: false, out_of_attempts: false }])

    // Restarted: the replacement finishes the payment, once.
    const runner = await startPaymentWorkers(app, BANK_SECRET, SETTINGS)
    try {
      expect(await settle(app, party, 'outbound transfer', id)).toBe('succeeded')
      await expectExactlyOnce(app, 'outbound transfer', id, 'succeeded')
      // Every job of the payment done, or out of attempts (none should be).
      await waitFor(
        async () => (await workJobs()).every((job) => job.out_of_attempts && !job.locked),
        15_000,
        "the payment's jobs ended",
      )
    } finally {
      await runner.stop()
    }
    const failed = await failedJobsGauge()
    expect(
      Object.values(failed).reduce((sum, count) => sum + count, 0),
      JSON.stringify(failed),
    ).toBe(0)
    expect(await workJobs()).toEqual([])
  },
)
