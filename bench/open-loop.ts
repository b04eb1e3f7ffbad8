// The open-loop schedule of bench:latency: requests go out at a constant rate whatever the answers
// do (as a partner's traffic arrives), never one after another's answer, so a slow answer cannot
// hold back, and hide, the requests due behind it. Time and sending are given to it, so that the
// test (test/bench/latency.test.ts) runs it on a virtual clock against a simulated server.
import { dueCount, type RequestRecord, scheduledAtMs } from './latency-stats.ts'

export interface LoopClock {
  /** Milliseconds on a monotonic clock. */
  now(): number
  /** Resolves after about `ms` (at once when ms ≤ 0); it may wake late, which the records then show. */
  sleep(ms: number): Promise<void>
}

/** The real clock: performance.now() and a timer. */
export const REAL_CLOCK: LoopClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => (ms <= 0 ? setImmediate(resolve) : setTimeout(resolve, ms))),
}

export interface OpenLoopPlan {
  requests: number
  ratePerS: number
  /** The sockets the generator holds: a request due while all are busy waits for one (a generator fault). */
  connections: number
  /** Sends request `index` and answers its HTTP status (0 when no answer came). */
  send(index: number): Promise<number>
}

/** Sends every request of `plan` when it is due and answers each one's record once all have answered. */
export async function runOpenLoop(plan: OpenLoopPlan, clock: LoopClock = REAL_CLOCK): Promise<RequestRecord[]> {
  const records: RequestRecord[] = []
  const answers: Promise<void>[] = []
  let inFlight = 0
  const startMs = clock.now()
  const dispatch = (index: number) => {
    const record: RequestRecord = {
      scheduledMs: startMs + scheduledAtMs(index, plan.ratePerS),
      sentMs: clock.now(),
      answeredMs: 0,
      status: 0,
      waitedForSocket: inFlight >= plan.connections,
    }
    records.push(record)
    inFlight++
    answers.push(
      plan.send(index).then(
        (status) => settle(record, status),
        () => settle(record, 0),
      ),
    )
  }
  const settle = (record: RequestRecord, status: number) => {
    record.answeredMs = clock.now()
    record.status = status
    inFlight--
  }
  let next = 0
  while (next < plan.requests) {
    const due = dueCount(clock.now() - startMs, plan.ratePerS, plan.requests)
    while (next < due) dispatch(next++)
    if (next < plan.requests) await clock.sleep(startMs + scheduledAtMs(next, plan.ratePerS) - clock.now())
  }
  await Promise.all(answers)
  return records
}
