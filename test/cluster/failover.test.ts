// `rail cluster --api 3 --worker 2` on one database under a bounded mixed load (wallet moves,
// outbound submits settled through the sandbox bank's simulator, inbound credits, callbacks to a
// real receiver). One API and one worker are killed with SIGKILL mid-load; the cluster starts
// them again. Then: every acknowledged request is stored once, every bank instruction reached the
// bank once per reference, every event was delivered at least once with its attempts recorded,
// and `rail ledger verify` passes.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DELIVERY_SWEEP_TASK } from '../../src/events/jobs.ts'
import { SWEEP_TASK } from '../../src/money-out/pipeline/service.ts'
import { addJob } from '../../src/platform/jobs.ts'
import { DEAD_WORKERS_SWEEP_TASK, PRESUMED_DEAD_AFTER_S } from '../../src/platform/worker-liveness.ts'
import { runRail } from '../support/cli.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { startReceiver, type Receiver } from '../support/receiver.ts'
import { checkEventsDelivered, checkStoredOnce, settleEverything } from './checks.ts'
import {
  loadParty,
  runMixedLoad,
  startCluster,
  testClusterEnv,
  type LoadParty,
  type LoadResult,
  type RunningCluster,
} from './load.ts'

const BANK_SECRET = 'cluster-failover-secret'
const PER_KIND = 8
let db: TestDatabase
let hook: Receiver
let cluster: RunningCluster | undefined
const masterKey = randomBytes(32)

beforeAll(async () => {
  db = await createTestDatabase(4)
  hook = await startReceiver()
})
afterAll(async () => {
  await cluster?.stop()
  await hook?.close()
  await db?.drop()
})

it(
  '3 API + 2 workers, one of each killed mid-load: each request stored once, each payment at the bank once, each event delivered, the ledger verifies',
  { timeout: 240_000 },
  async () => {
    const beganAt = Date.now()
    cluster = await startCluster(
      { api: 3, worker: 2 },
      { ...(await testClusterEnv({ masterKey, bankSecret: BANK_SECRET })), DATABASE_URL: db.url },
    )
    const running = cluster
    const startedMs = Date.now() - beganAt
    console.log(`cluster failover: the cluster started in ${startedMs} ms`)
    const party = await loadParty(db.pool, masterKey, running.url, hook.url)
    const killed: string[] = []
    const killedWorkerPid = running.pids.get('worker 1')!
    const load = await runMixedLoad(party, {
      perKind: PER_KIND,
      lanes: 6,
      onAcknowledged: (count) => {
        if (count !== PER_KIND || killed.length > 0) return
        for (const slot of ['api 2', 'worker 1']) {
          killed.push(`${slot} (pid ${running.pids.get(slot)})`)
          process.kill(running.pids.get(slot)!, 'SIGKILL')
        }
      },
    })
    await running.waitForLine(/^rail cluster: api 2 \(pid \d+\) exited \(SIGKILL\); starting it again/)
    await running.waitForLine(/^rail cluster: worker 1 \(pid \d+\) exited \(SIGKILL\); starting it again/)
    expect(running.starts.get('api 2')).toBe(2)
    expect(running.starts.get('worker 1')).toBe(2)

    const loadMs = Date.now() - beganAt - startedMs
    console.log(`cluster failover: the load took ${loadMs} ms`)
    const freed = await settleAfterKills(party, load, killedWorkerPid)
    console.log(`cluster failover: settled after ${Date.now() - beganAt} ms`)
    const figures = await checkStoredOnce(db.pool, party, load)
    const events = await checkEventsDelivered(db.pool, party, hook)
    const verify = await runRail(['ledger', 'verify'], { DATABASE_URL: db.url })
    expect(verify.stdout).toMatch(/^ok: /)
    expect(verify.code).toBe(0)
    console.log(
      [
        `cluster failover: 3 API + 2 workers (started in ${startedMs} ms, load ${loadMs} ms, settled and checked in ${Date.now() - beganAt - startedMs - loadMs} ms)`,
        `  killed with SIGKILL mid-load, then started again by the cluster: ${killed.join(', ')}`,
        `  acknowledged ${load.acknowledged.length} requests (${figures.byKind}); ${load.retries} sent again after a lost or refused answer; ${load.unacknowledgedCredits} inbound credit(s) unanswered or refused (not sent again: a payer does not resend a payment)`,
        `  the killed worker's jobs: ${freed.jobsUnlocked} unlocked by the sweep of dead worker processes (announced: ${freed.announced ? 'yes' : 'no'})`,
        `  bank instructions: ${figures.instructions}, each at the sandbox bank once (${figures.bankRows} rows); provider calls: ${figures.providerCalls}`,
        `  events: ${events.events}, all delivered; ${events.attempts} delivery attempts recorded; ${events.received} callbacks received (${events.redelivered} more than once)`,
        `  rail ledger verify: ${verify.stdout.trim()}`,
      ].join('\n'),
    )
  },
)

/**
 * Outbound transfers are settled through the simulator once at the bank. The processes killed
 * mid-load leave work leased to them (a payment's lease is 60 s, a delivery's claim 15 s) and the
 * killed worker leaves jobs locked under its ids until the sweep of dead worker processes finds it
 * a minute silent. As the other crash tests do, the time is moved instead of waited out: work idle
 * for a while has its lease backdated, the killed worker's last sign of life is set back past the
 * limit, and the sweeps are queued now. Answers how many of the killed worker's jobs were freed.
 */
async function settleAfterKills(
  party: LoadParty,
  load: LoadResult,
  killedWorkerPid: number,
): Promise<{ announced: boolean; jobsUnlocked: number }> {
  const announced =
    (await db.pool.query(`SELECT 1 FROM worker_processes WHERE pid = $1`, [killedWorkerPid])).rowCount === 1
  const lockedByKilled = await db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE locked_by = ANY(SELECT unnest(worker_ids) FROM worker_processes WHERE pid = $1)`,
    [killedWorkerPid],
  )
  await settleEverything(db.pool, party, load, {
    timeoutMs: 90_000,
    eachSecond: () => bringForwardIdleWork(killedWorkerPid),
  })
  // The killed process was taken as dead and its row removed.
  expect((await db.pool.query(`SELECT 1 FROM worker_processes WHERE pid = $1`, [killedWorkerPid])).rowCount).toBe(0)
  return { announced, jobsUnlocked: lockedByKilled.rows[0]!.n }
}

async function bringForwardIdleWork(killedWorkerPid: number): Promise<void> {
  await db.pool.query(
    `UPDATE bank_instructions SET lease_expires_at = now() - interval '1 second', next_attempt_at = next_attempt_at - interval '31 seconds'
      WHERE state IN ('ready', 'sending', 'sent') AND lease_expires_at < now() + interval '55 seconds'`,
  )
  await db.pool.query(
    `UPDATE event_deliveries SET lease_until = now() - interval '1 second', next_attempt_at = next_attempt_at - interval '11 seconds'
      WHERE status = 'pending' AND lease_until < now() + interval '10 seconds'`,
  )
  await db.pool.query(`UPDATE worker_processes SET seen_at = now() - make_interval(secs => $2 + 1) WHERE pid = $1`, [
    killedWorkerPid,
    PRESUMED_DEAD_AFTER_S,
  ])
  await addJob(db.pool, DEAD_WORKERS_SWEEP_TASK, {}, { jobKey: 'failover-test:dead-workers-sweep' })
  await addJob(db.pool, SWEEP_TASK, {}, { jobKey: 'failover-test:payments-sweep' })
  await addJob(db.pool, DELIVERY_SWEEP_TASK, {}, { jobKey: 'failover-test:delivery-sweep' })
}
