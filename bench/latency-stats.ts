// The pure arithmetic of bench:latency (no I/O, tested in test/bench/latency.test.ts): the
// open-loop schedule, each request's latency from its scheduled send time, the percentiles of a
// step, and quantiles from the bucket deltas of a Prometheus histogram scraped before and after it.

/** When request `index` of a constant-rate schedule is due, in ms after the schedule's start. */
export function scheduledAtMs(index: number, ratePerS: number): number {
  return (index * 1000) / ratePerS
}

/** How many of `total` requests are due `elapsedMs` after the start (request 0 is due at once). */
export function dueCount(elapsedMs: number, ratePerS: number, total: number): number {
  if (elapsedMs < 0) return 0
  return Math.min(total, Math.floor((elapsedMs * ratePerS) / 1000 + 1e-9) + 1)
}

/** One request of a step, times in ms on the generator's clock; status 0: no answer (a network error or a timeout). */
export interface RequestRecord {
  scheduledMs: number
  sentMs: number
  answeredMs: number
  status: number
  /** It was sent while every connection was busy, so it waited in the generator for a socket. */
  waitedForSocket: boolean
}

/**
 * A request's latency as a partner who sends on schedule feels it: from when it was due, not from
 * when the generator got round to sending it. A stalled server, or a generator that fell behind,
 * then shows in every request that waited behind the stall (coordinated omission corrected).
 */
export function latencyMs(record: RequestRecord): number {
  return record.answeredMs - record.scheduledMs
}

/** A request sent later than this after it was due counts as the generator's fault, not the server's. */
export const SEND_SLACK_MS = 5

export interface LatencyPercentiles {
  p50Ms: number
  p90Ms: number
  p99Ms: number
  p999Ms: number
  maxMs: number
}

export interface StepSummary extends LatencyPercentiles {
  requests: number
  answered: number
  achievedPerS: number
  /** Answered with a status other than 2xx, 503 included; 503 alone (shed by admission) apart. */
  non2xx: number
  unavailable503: number
  /** No answer at all. */
  failed: number
  /** Generator faults: sent more than SEND_SLACK_MS late, or queued for a socket. */
  lateSends: number
  waitedForSocket: number
  maxSendLagMs: number
}

/** The nearest-rank percentile `p` (0..100) of ascending `sorted`; 0 when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0
  // The epsilon: 99.9% of 1,000 is 999.0000000000001 in binary, which must not round up to 1,000.
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length - 1e-9))
  return sorted[Math.min(rank, sorted.length) - 1]!
}

const round2 = (value: number) => Math.round(value * 100) / 100

/** p50, p90, p99, p99.9 and the maximum of `latenciesMs` (in any order). */
export function latencyPercentiles(latenciesMs: readonly number[]): LatencyPercentiles {
  const sorted = [...latenciesMs].sort((a, b) => a - b)
  return {
    p50Ms: round2(percentile(sorted, 50)),
    p90Ms: round2(percentile(sorted, 90)),
    p99Ms: round2(percentile(sorted, 99)),
    p999Ms: round2(percentile(sorted, 99.9)),
    maxMs: round2(sorted.at(-1) ?? 0),
  }
}

/**
 * A step's figures. The percentiles are of the 2xx answers (the time a partner waits for its
 * request to be done); errors are counted beside them. The achieved rate is the answers over the
 * time from the first request's due time to the last answer.
 */
export function summarizeStep(records: readonly RequestRecord[]): StepSummary {
  const answered = records.filter((record) => record.status !== 0)
  const ok = answered.filter((record) => record.status >= 200 && record.status < 300)
  const firstDueMs = Math.min(...records.map((record) => record.scheduledMs))
  const lastAnswerMs = Math.max(...answered.map((record) => record.answeredMs))
  const sendLags = records.map((record) => record.sentMs - record.scheduledMs)
  return {
    requests: records.length,
    answered: answered.length,
    achievedPerS: answered.length === 0 ? 0 : round2((answered.length * 1000) / (lastAnswerMs - firstDueMs)),
    ...latencyPercentiles(ok.map(latencyMs)),
    non2xx: answered.length - ok.length,
    unavailable503: answered.filter((record) => record.status === 503).length,
    failed: records.length - answered.length,
    lateSends: sendLags.filter((lag) => lag > SEND_SLACK_MS).length,
    waitedForSocket: records.filter((record) => record.waitedForSocket).length,
    maxSendLagMs: round2(Math.max(0, ...sendLags)),
  }
}

/** One sample of Prometheus' text format: the metric's name, its labels and its value. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Parses Prometheus' text exposition format (comments skipped; label values unescaped). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line)
    if (!match) continue
    const labels: Record<string, string> = {}
    for (const label of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[label[1]!] = label[2]!.replace(/\\n/g, '\n').replace(/\\(.)/g, '$1')
    samples.push({ name: match[1]!, labels, value: Number(match[3]) })
  }
  return samples
}

/** A histogram's cumulative buckets (upper bound in seconds, count), ascending, +Inf last. */
export type Buckets = { le: number; count: number }[]

/** One histogram series' labels (but `le`) and its buckets. */
export interface HistogramSeries {
  labels: Record<string, string>
  buckets: Buckets
}

/** The bucket counts that `name` gained between two scrapes, one series per set of labels (but `le`) that `where` accepts. */
export function histogramDeltas(
  before: readonly Sample[],
  after: readonly Sample[],
  name: string,
  where: (labels: Record<string, string>) => boolean = () => true,
): HistogramSeries[] {
  const keyOf = (sample: Sample) => `${seriesKey(sample.labels)}\u0000${sample.labels.le}`
  const earlier = new Map(before.filter((s) => s.name === `${name}_bucket`).map((s) => [keyOf(s), s.value]))
  const series = new Map<string, HistogramSeries>()
  for (const sample of after) {
    if (sample.name !== `${name}_bucket` || !where(sample.labels)) continue
    const key = seriesKey(sample.labels)
    const { le, ...labels } = sample.labels
    const entry = series.get(key) ?? { labels, buckets: [] }
    entry.buckets.push({
      le: le === '+Inf' ? Infinity : Number(le),
      count: sample.value - (earlier.get(keyOf(sample)) ?? 0),
    })
    series.set(key, entry)
  }
  for (const entry of series.values()) entry.buckets.sort((a, b) => a.le - b.le)
  return [...series.values()]
}

function seriesKey(labels: Record<string, string>): string {
  return Object.entries(labels)
    .filter(([label]) => label !== 'le')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([label, value]) => `${label}=${value}`)
    .join(',')
}

/**
 * The `q` quantile (0..1) of cumulative buckets, in seconds, interpolated linearly inside its
 * bucket as Prometheus' histogram_quantile does (the highest finite bound when it falls in +Inf);
 * undefined when the buckets counted nothing.
 */
export function histogramQuantile(q: number, buckets: Buckets): number | undefined {
  const total = buckets.at(-1)?.count ?? 0
  if (total <= 0) return undefined
  const rank = q * total
  let lowerBound = 0
  let lowerCount = 0
  for (const { le, count } of buckets) {
    if (count >= rank) {
      if (le === Infinity) return lowerBound
      return lowerBound + ((le - lowerBound) * (rank - lowerCount)) / Math.max(count - lowerCount, 1e-12)
    }
    lowerBound = le
    lowerCount = count
  }
  return lowerBound
}

/** The sum of every sample named `name` (all label sets) in `after` less that in `before`. */
export function counterDelta(before: readonly Sample[], after: readonly Sample[], name: string): number {
  const sum = (samples: readonly Sample[]) =>
    samples.filter((sample) => sample.name === name).reduce((total, sample) => total + sample.value, 0)
  return sum(after) - sum(before)
}

/** One gauge's value in a scrape (the first series of that name), or undefined. */
export function gaugeValue(samples: readonly Sample[], name: string): number | undefined {
  return samples.find((sample) => sample.name === name)?.value
}

/**
 * The per-transaction latencies (ms) of pgbench's `-l` log: `client transaction time script
 * epoch µs [lag]`, where with `-R` the lag is how late the transaction started after its
 * scheduled time; its latency from that scheduled time is time + lag (as the generator's).
 */
export function pgbenchLatenciesMs(log: string): number[] {
  const latencies: number[] = []
  for (const line of log.split('\n')) {
    const fields = line.trim().split(/\s+/)
    if (fields.length < 6) continue
    if (fields[2] === 'skipped' || fields[2] === 'failed') continue
    const timeUs = Number(fields[2])
    const lagUs = fields.length >= 7 ? Number(fields[6]) : 0
    if (Number.isFinite(timeUs) && Number.isFinite(lagUs)) latencies.push((timeUs + lagUs) / 1000)
  }
  return latencies
}
