// What bench:latency reads of the server around each open-loop step: the CPU of its processes,
// and from Rail's /metrics (scraped before and after the step) its event-loop delay, GC time, pool
// waits, its own view of the route's latency and, where Rail has them, the per-stage histograms.
import {
  counterDelta,
  gaugeValue,
  histogramDeltas,
  histogramQuantile,
  parseMetrics,
  type Buckets,
  type Sample,
} from './latency-stats.ts'
import { postgresCpuMs } from './statements.ts'

/** A histogram's step: its p50 and p99 (ms, from the bucket deltas) and how many it counted. */
export interface HistogramStep {
  p50Ms: number | undefined
  p99Ms: number | undefined
  count: number
}

export interface ServerStep {
  eventLoopP99Ms: number | undefined
  eventLoopMaxMs: number | undefined
  gcMs: number
  /** By pool name (rail, rail-sandbox-bank…). */
  poolWait: Record<string, HistogramStep>
  /** The route's latency as Rail measures it (rail_http_request_duration_seconds, every status). */
  http: HistogramStep | undefined
  /** By stage (rail_request_stage_seconds); empty where Rail does not expose it. */
  stages: Record<string, HistogramStep>
}

export interface CpuSnapshot {
  processMs: number
  postgresBackendsMs: number
  postgresOthersMs: number
}

/** The CPU this process (the server: Rail, or the ceiling's two servers) and PostgreSQL's processes have used. */
export function cpuSnapshot(postmaster: number | undefined): CpuSnapshot {
  const usage = process.cpuUsage()
  const postgres = postgresCpuMs(postmaster)
  return {
    processMs: (usage.user + usage.system) / 1000,
    postgresBackendsMs: postgres.backends,
    postgresOthersMs: postgres.others,
  }
}

/** Rail's /metrics, parsed; scraping it also starts prom-client's event-loop histogram afresh. */
export async function scrapeMetrics(baseUrl: string): Promise<Sample[]> {
  const answer = await fetch(`${baseUrl}/metrics`)
  if (!answer.ok) throw new Error(`/metrics answered ${answer.status}`)
  return parseMetrics(await answer.text())
}

const toMs = (seconds: number | undefined) => (seconds === undefined ? undefined : Math.round(seconds * 1e5) / 100)

function histogramStep(buckets: Buckets): HistogramStep {
  return {
    p50Ms: toMs(histogramQuantile(0.5, buckets)),
    p99Ms: toMs(histogramQuantile(0.99, buckets)),
    count: buckets.at(-1)?.count ?? 0,
  }
}

/** The server's figures for a step on `route` (its path), from the scrapes before and after it. */
export function serverStep(before: readonly Sample[], after: readonly Sample[], route: string): ServerStep {
  const onRoute = (labels: Record<string, string>) => labels.route?.endsWith(route) === true
  const poolWait: Record<string, HistogramStep> = {}
  for (const series of histogramDeltas(before, after, 'rail_db_pool_wait_seconds'))
    poolWait[series.labels.pool ?? ''] = histogramStep(series.buckets)
  const stages: Record<string, HistogramStep> = {}
  for (const series of histogramDeltas(before, after, 'rail_request_stage_seconds', onRoute))
    stages[series.labels.stage ?? ''] = histogramStep(series.buckets)
  const http = mergeBuckets(
    histogramDeltas(before, after, 'rail_http_request_duration_seconds', onRoute).map((series) => series.buckets),
  )
  return {
    // prom-client resets its event-loop histogram at each scrape: the values after are the step's.
    eventLoopP99Ms: toMs(gaugeValue(after, 'nodejs_eventloop_lag_p99_seconds')),
    eventLoopMaxMs: toMs(gaugeValue(after, 'nodejs_eventloop_lag_max_seconds')),
    gcMs: Math.round(counterDelta(before, after, 'nodejs_gc_duration_seconds_sum') * 1e5) / 100,
    poolWait,
    http: http ? histogramStep(http) : undefined,
    stages,
  }
}

/** The sum of histograms with the same bounds (a route's status codes); undefined when there are none. */
function mergeBuckets(all: Buckets[]): Buckets | undefined {
  if (all.length === 0) return undefined
  return all[0]!.map(({ le }, index) => ({
    le,
    count: all.reduce((total, buckets) => total + (buckets[index]?.count ?? 0), 0),
  }))
}
