// bench:latency's pure parts, without a database or a real clock: the open-loop schedule, the
// percentiles, the correction for coordinated omission (a request's latency runs from when it was
// due), the generator's own faults, and the readings of Prometheus histograms and pgbench's log.
import { describe, expect, it } from 'vitest'
import {
  dueCount,
  histogramDeltas,
  histogramQuantile,
  latencyMs,
  latencyPercentiles,
  parseMetrics,
  percentile,
  pgbenchLatenciesMs,
  scheduledAtMs,
  summarizeStep,
} from '../../bench/latency-stats.ts'
import { type LoopClock, runOpenLoop } from '../../bench/open-loop.ts'
import { serverStep } from '../../bench/latency-server.ts'

/**
 * A discrete-event clock: time moves only from one due event to the next, once the code under
 * test has done all it can at the present time. `lateWake` makes one sleep wake late (a stalled
 * generator).
 */
class VirtualClock implements LoopClock {
  private timeMs = 0
  private readonly events: { atMs: number; fire: () => void }[] = []
  private lateWake: { afterMs: number; byMs: number } | undefined
  constructor(lateWake?: { afterMs: number; byMs: number }) {
    this.lateWake = lateWake
  }

  now = () => this.timeMs
  sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      let wakeMs = this.timeMs + Math.max(ms, 0)
      if (this.lateWake && wakeMs >= this.lateWake.afterMs) {
        wakeMs += this.lateWake.byMs
        this.lateWake = undefined
      }
      this.at(wakeMs, resolve)
    })
  at(atMs: number, fire: () => void): void {
    this.events.push({ atMs, fire })
  }

  /** Runs events in time order (first scheduled first at equal times) until `work` settles. */
  async run<T>(work: Promise<T>): Promise<T> {
    let settled = false
    void work.finally(() => (settled = true)).catch(() => {})
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve))
      if (settled) return work
      this.events.sort((a, b) => a.atMs - b.atMs)
      const next = this.events.shift()
      if (!next) throw new Error('nothing is due and the work has not finished')
      this.timeMs = Math.max(this.timeMs, next.atMs)
      next.fire()
    }
  }
}

/** A server that answers one request at a time, in arrival order, each in `serviceMs`; one request starts after a stall. */
function fifoServer(clock: VirtualClock, serviceMs: number, stall?: { index: number; ms: number }) {
  let freeAtMs = 0
  return (index: number) =>
    new Promise<number>((resolve) => {
      const startMs = Math.max(clock.now(), freeAtMs) + (index === stall?.index ? stall.ms : 0)
      freeAtMs = startMs + serviceMs
      clock.at(freeAtMs, () => resolve(200))
    })
}

describe('the open-loop schedule', () => {
  it('spaces requests evenly at the rate and makes each due once its time has come', () => {
    expect([0, 1, 2, 3].map((index) => scheduledAtMs(index, 40))).toEqual([0, 25, 50, 75])
    expect(dueCount(-1, 40, 10)).toBe(0)
    expect(dueCount(0, 40, 10)).toBe(1)
    expect(dueCount(24.9, 40, 10)).toBe(1)
    expect(dueCount(25, 40, 10)).toBe(2)
    expect(dueCount(10_000, 40, 10)).toBe(10)
    // 1000/3 ms is not exact in binary: the third request is still due at its own time.
    expect(dueCount(scheduledAtMs(2, 3), 3, 10)).toBe(3)
  })

  it('sends every request at its time whatever the answers do, on a clock that wakes on time', async () => {
    const clock = new VirtualClock()
    const records = await clock.run(
      runOpenLoop({ requests: 50, ratePerS: 100, connections: 64, send: fifoServer(clock, 3) }, clock),
    )
    expect(records).toHaveLength(50)
    expect(records.map((record) => record.scheduledMs)).toEqual(records.map((_r, index) => index * 10))
    expect(records.every((record) => record.sentMs === record.scheduledMs)).toBe(true)
    expect(records.every((record) => latencyMs(record) === 3 && record.status === 200)).toBe(true)
    const summary = summarizeStep(records)
    expect(summary).toMatchObject({ requests: 50, answered: 50, lateSends: 0, waitedForSocket: 0, p99Ms: 3, maxMs: 3 })
  })
})

describe('coordinated omission is corrected', () => {
  it('a stalled server shows in every request due behind the stall, not in one', async () => {
    const clock = new VirtualClock()
    const stallMs = 500
    const records = await clock.run(
      runOpenLoop(
        { requests: 200, ratePerS: 100, connections: 10, send: fifoServer(clock, 2, { index: 50, ms: stallMs }) },
        clock,
      ),
    )
    // Request 50 (due at 500 ms) starts after the stall, at 1,000 ms: every request due meanwhile
    // waits for it, and its latency runs from when it was due.
    const stallEndsMs = 500 + stallMs
    const dueDuringStall = records.filter((record) => record.scheduledMs >= 500 && record.scheduledMs < stallEndsMs)
    expect(dueDuringStall).toHaveLength(50)
    for (const record of dueDuringStall)
      expect(latencyMs(record)).toBeGreaterThanOrEqual(stallEndsMs - record.scheduledMs)
    const summary = summarizeStep(records)
    expect(summary.p50Ms).toBe(2)
    expect(summary.p90Ms).toBeGreaterThanOrEqual(100) // a closed loop would have shown one slow request: p99 of 2 ms
    expect(summary.maxMs).toBe(stallMs + 2)
    // With 10 sockets, the requests sent while 10 were waiting on the stall counted as generator faults.
    const socketWaits = records.filter((record) => record.waitedForSocket)
    expect(socketWaits.length).toBe(summary.waitedForSocket)
    expect(socketWaits.length).toBeGreaterThan(30)
    expect(socketWaits.every((record) => record.scheduledMs >= 500)).toBe(true)
  })

  it('a generator that fell behind counts its own lateness in the latency, and as its fault', async () => {
    const clock = new VirtualClock({ afterMs: 200, byMs: 300 })
    const records = await clock.run(
      runOpenLoop({ requests: 100, ratePerS: 100, connections: 64, send: fifoServer(clock, 2) }, clock),
    )
    // Woken 300 ms late at 200 ms: the requests due from 200 to 500 ms go out at once at 500 ms.
    const late = records.filter((record) => record.sentMs - record.scheduledMs > 5)
    expect(late.map((record) => record.scheduledMs)).toEqual(Array.from({ length: 30 }, (_u, i) => 200 + i * 10))
    for (const record of late) expect(latencyMs(record)).toBeGreaterThanOrEqual(500 - record.scheduledMs)
    const summary = summarizeStep(records)
    expect(summary.lateSends).toBe(30)
    expect(summary.maxSendLagMs).toBe(300)
    expect(summary.p90Ms).toBeGreaterThanOrEqual(100)
  })

  it('counts errors apart: percentiles are of the 2xx answers, 503 and no answer beside them', () => {
    const record = (status: number, answeredMs: number) => ({
      scheduledMs: 0,
      sentMs: 0,
      answeredMs,
      status,
      waitedForSocket: false,
    })
    const summary = summarizeStep([record(200, 10), record(201, 20), record(503, 1), record(500, 2), record(0, 0)])
    expect(summary).toMatchObject({ requests: 5, answered: 4, non2xx: 2, unavailable503: 1, failed: 1, maxMs: 20 })
  })
})

describe('percentiles', () => {
  it('are nearest-rank', () => {
    const sorted = Array.from({ length: 1000 }, (_unused, i) => i + 1)
    expect(latencyPercentiles(sorted.toReversed())).toEqual({
      p50Ms: 500,
      p90Ms: 900,
      p99Ms: 990,
      p999Ms: 999,
      maxMs: 1000,
    })
    expect(percentile([7], 99.9)).toBe(7)
    expect(percentile([], 50)).toBe(0)
    expect(percentile([1, 2, 3, 4], 50)).toBe(2)
  })
})

describe('Prometheus histograms scraped before and after a step', () => {
  const scrape = (fast: number, slow: number, all: number) =>
    parseMetrics(`# HELP rail_request_stage_seconds time per stage
# TYPE rail_request_stage_seconds histogram
rail_request_stage_seconds_bucket{le="0.01",route="/transfer/wallet",stage="claim"} ${fast}
rail_request_stage_seconds_bucket{le="0.1",route="/transfer/wallet",stage="claim"} ${slow}
rail_request_stage_seconds_bucket{le="+Inf",route="/transfer/wallet",stage="claim"} ${all}
rail_request_stage_seconds_bucket{le="0.01",route="/wallet",stage="claim"} 7
rail_request_stage_seconds_bucket{le="+Inf",route="/wallet",stage="claim"} 7
rail_request_stage_seconds_sum{route="/transfer/wallet",stage="claim"} 1.5
nodejs_eventloop_lag_p99_seconds 0.012
`)

  it('give the step its own buckets, one series per label set, and quantiles interpolated inside a bucket', () => {
    const series = histogramDeltas(scrape(10, 20, 20), scrape(60, 110, 120), 'rail_request_stage_seconds', (labels) =>
      labels.route!.endsWith('/transfer/wallet'),
    )
    expect(series).toEqual([
      {
        labels: { route: '/transfer/wallet', stage: 'claim' },
        buckets: [
          { le: 0.01, count: 50 },
          { le: 0.1, count: 90 },
          { le: Infinity, count: 100 },
        ],
      },
    ])
    const buckets = series[0]!.buckets
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(0.01)
    expect(histogramQuantile(0.75, buckets)).toBeCloseTo(0.01 + 0.09 * (25 / 40))
    expect(histogramQuantile(0.99, buckets)).toBe(0.1) // in +Inf: the highest finite bound
    expect(histogramQuantile(0.5, [{ le: Infinity, count: 0 }])).toBeUndefined()
  })

  it('parse labels, escapes and values', () => {
    const [sample] = parseMetrics('m{a="x\\"y",b="1"} 2.5e-3\n')
    expect(sample).toEqual({ name: 'm', labels: { a: 'x"y', b: '1' }, value: 0.0025 })
  })

  it("give a step's server figures: its route's stages and latency, pool waits, event-loop delay and GC", () => {
    const scrapeOf = (claims: number, waits: number, gcS: number, lagS: number) =>
      parseMetrics(
        [
          `rail_request_stage_seconds_bucket{le="0.01",route="/transfer/wallet",stage="claim"} ${claims}`,
          `rail_request_stage_seconds_bucket{le="+Inf",route="/transfer/wallet",stage="claim"} ${claims}`,
          `rail_request_stage_seconds_bucket{le="0.01",route="/wallet",stage="claim"} ${claims * 2}`,
          `rail_request_stage_seconds_bucket{le="+Inf",route="/wallet",stage="claim"} ${claims * 2}`,
          `rail_http_request_duration_seconds_bucket{le="0.05",method="POST",route="/transfer/wallet",status_code="200"} ${claims}`,
          `rail_http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/transfer/wallet",status_code="200"} ${claims}`,
          `rail_http_request_duration_seconds_bucket{le="0.05",method="POST",route="/transfer/wallet",status_code="503"} 0`,
          `rail_http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/transfer/wallet",status_code="503"} ${waits}`,
          `rail_db_pool_wait_seconds_bucket{le="0.001",pool="rail"} ${waits}`,
          `rail_db_pool_wait_seconds_bucket{le="+Inf",pool="rail"} ${waits}`,
          `nodejs_gc_duration_seconds_sum{kind="minor"} ${gcS}`,
          `nodejs_gc_duration_seconds_sum{kind="major"} ${gcS}`,
          `nodejs_eventloop_lag_p99_seconds ${lagS}`,
          `nodejs_eventloop_lag_max_seconds ${lagS * 2}`,
        ].join('\n'),
      )
    const step = serverStep(scrapeOf(10, 5, 0.5, 0.9), scrapeOf(30, 9, 0.75, 0.02), '/transfer/wallet')
    expect(step.stages).toEqual({ claim: { p50Ms: 5, p99Ms: 9.9, count: 20 } })
    expect(step.poolWait).toEqual({ rail: { p50Ms: 0.5, p99Ms: 0.99, count: 4 } })
    // Every status of the route together: 20 under 50 ms, 4 (the 503s) above it.
    expect(step.http).toEqual({ p50Ms: 30, p99Ms: 50, count: 24 })
    expect(step).toMatchObject({ eventLoopP99Ms: 20, eventLoopMaxMs: 40, gcMs: 500 })
  })
})

it("reads pgbench's per-transaction log, latency counted from the scheduled start", () => {
  const log = [
    '0 0 1500 0 1700000000 123456 250',
    '1 0 800 0 1700000000 223456 0',
    '0 1 skipped 0 1700000000 323456 900',
  ].join('\n')
  expect(pgbenchLatenciesMs(log)).toEqual([1.75, 0.8])
})
