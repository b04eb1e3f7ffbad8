// A real `rail worker` process is killed (SIGKILL) while its delivery attempt is in flight. The
// event is still delivered, with the same event id, once the claim lapses and the sweep revives it.
import { spawn } from 'node:child_process'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { DELIVERY_SWEEP_TASK } from '../../src/events/jobs.ts'
import { addJob } from '../../src/platform/jobs.ts'
import { PROJECT_ROOT, RAIL_BIN } from '../support/cli.ts'
import { SMALL_PROCESS_ENV } from '../support/rail-process.ts'
import { attemptsOf, eventStatus, record } from '../support/events.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'

let app: Rail
let hook: Receiver

// The workers start in the test, after the `rail worker` it kills.
beforeAll(async () => {
  app = await startRail({ receiver: true })
  hook = app.receiver
})
afterAll(() => app?.close())

it(
  'a worker killed mid-delivery: the event is still delivered, at least once, with the same id',
  { timeout: 90_000 },
  async () => {
    const { credentials } = await app.newPartner({ callbackUrl: hook.url })
    hook.answer = (_request, index) => (index === 0 ? { hang: true } : { status: 200 })
    const eventId = await record(app.db.pool, { partnerId: credentials.partnerId })

    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: app.db.url,
      RAIL_MASTER_KEY: app.masterKey.toString('hex'),
      RAIL_ALLOW_LOOPBACK_CALLBACKS: '1',
      LOG_LEVEL: 'warn',
      ...SMALL_PROCESS_ENV,
    }
    const child = spawn(process.execPath, [RAIL_BIN, 'worker'], {
      cwd: PROJECT_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise((resolve) => child.on('exit', resolve))
    try {
      await hook.waitForRequests(1, 30_000) // the child's attempt is in flight; the receiver holds it
      child.kill('SIGKILL')
      await exited
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
    expect(await eventStatus(app.db.pool, eventId)).toBe('pending')
    expect(await attemptsOf(app.db.pool, eventId)).toEqual([]) // the dead worker recorded nothing

    // The dead worker's claim (10 s timeout + 5 s) and the sweep's grace (10 s) are over: the row's
    // times move back instead of the test waiting them out, as the other crash tests do.
    await app.db.pool.query(
      `UPDATE event_deliveries SET lease_until = now() - interval '1 second', next_attempt_at = next_attempt_at - interval '11 seconds' WHERE event_id = $1`,
      [eventId],
    )
    // Another worker; the sweep (every minute by cron) is run at once here, and again until it has revived the delivery.
    await app.startWorkers({ concurrency: 2 })
    try {
      await waitFor(async () => {
        await addJob(app.db.pool, DELIVERY_SWEEP_TASK, {}, { jobKey: 'test_sweep' })
        return (await eventStatus(app.db.pool, eventId)) === 'delivered'
      }, 45_000)
    } finally {
      await app.stopWorkers()
    }
    const ids = hook.requests.map((r) => JSON.parse(r.rawBody).id)
    expect(ids).toEqual([eventId, eventId])
    expect(hook.requests[1]!.headers['x-rail-event-id']).toBe(eventId)
  },
)
