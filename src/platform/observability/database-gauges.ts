// Gauges read from the database when Prometheus scrapes, not by polling: the job queue, pending
// callback deliveries, instructions to banks, inbound credits and unmatched items. Each is one
// query; a scrape runs them one after another on one connection, each bounded by a statement
// timeout, and scrapes that arrive together share one run. A query that fails or times out
// leaves its gauges empty for that scrape and counts in rail_metrics_query_failures_total.
// The queries read other features' tables, read-only, by the schema's names: no feature code is
// imported, as with every library.
import { Counter, Gauge, type Registry } from 'prom-client'
import { systemClock, type Clock } from '../clock.ts'
import type { Pool } from '../db.ts'

/** The default bound of each query; a scrape takes at most this long per query. */
export const SCRAPE_QUERY_TIMEOUT_MS = 2_000

type Row = Record<string, unknown>

/** Every query; their rows become gauges in `publish`. */
const QUERIES = {
  // graphile-worker's public view of its jobs: due and free, scheduled later, locked by a worker, out
  // of attempts. Every task of this process's task list ($1) has its row, 0 when it has no job, so
  // a quiet system shows zeros, not missing series; a job of a task not in the list still counts.
  jobs: `SELECT coalesce(known.task, counted.task) AS task, coalesce(queued, 0) AS queued, coalesce(scheduled, 0) AS scheduled,
                coalesce(running, 0) AS running, coalesce(failed, 0) AS failed, coalesce(oldest_queued_s, 0) AS oldest_queued_s
           FROM unnest($1::text[]) AS known(task)
           FULL JOIN (
             SELECT task_identifier AS task,
                    count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts AND run_at <= now())::int AS queued,
                    count(*) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts AND run_at > now())::int AS scheduled,
                    count(*) FILTER (WHERE locked_at IS NOT NULL)::int AS running,
                    count(*) FILTER (WHERE locked_at IS NULL AND attempts >= max_attempts)::int AS failed,
                    extract(epoch FROM now() - min(run_at) FILTER (WHERE locked_at IS NULL AND attempts < max_attempts AND run_at <= now()))::float8 AS oldest_queued_s
               FROM graphile_worker.jobs GROUP BY task_identifier) counted ON counted.task = known.task`,
  // Pending deliveries only (a partial index holds them): how many, how many due now, how old. A
  // delivery is due by the application's clock ($1), which schedules it and which the workers
  // judge it by; created_at is the database's.
  deliveries: `SELECT count(*)::int AS pending,
                      count(*) FILTER (WHERE next_attempt_at <= $1)::int AS due,
                      COALESCE(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest_pending_s,
                      COALESCE(extract(epoch FROM $1::timestamptz - min(next_attempt_at) FILTER (WHERE next_attempt_at <= $1)), 0)::float8 AS oldest_due_s
                 FROM event_deliveries WHERE status = 'pending'`,
  instructions: `SELECT operation, state, count(*)::int AS count FROM bank_instructions GROUP BY operation, state`,
  // Unknown instructions (a partial index holds them): how many, and how long the oldest has been
  // unknown, by the application's clock ($1), which stamps state_changed_at.
  unknown: `SELECT count(*)::int AS count, COALESCE(extract(epoch FROM $1::timestamptz - min(state_changed_at)), 0)::float8 AS oldest_s
              FROM bank_instructions WHERE state = 'unknown'`,
  // Every status of the inbound_credit machine (state_transitions), 0 when no credit is in it.
  credits: `SELECT s.status, count(c.id)::int AS count
              FROM (SELECT from_state AS status FROM state_transitions WHERE machine = 'inbound_credit' AND from_state IS NOT NULL
                    UNION SELECT to_state FROM state_transitions WHERE machine = 'inbound_credit') s
              LEFT JOIN inbound_credits c ON c.status = s.status
             GROUP BY s.status`,
  // Each provider's calls over the last five minutes and how many got no readable answer (no answer,
  // a 5xx), and its health as src/banking/providers/health.ts judges it: healthy when, over all its calls and
  // for each operation alike, there are under 10 calls or under half unanswered. Every profile has its row.
  providers: `SELECT p.name AS provider, coalesce(sum(c.calls), 0)::int AS calls, coalesce(sum(c.unanswered), 0)::int AS unanswered,
                     coalesce(bool_and(c.calls < 10 OR c.unanswered * 2 < c.calls), true) AS operations_healthy
                FROM providers p
                LEFT JOIN (SELECT provider, operation, count(*) AS calls, count(*) FILTER (WHERE outcome = 'unknown') AS unanswered
                             FROM provider_calls WHERE created_at > now() - interval '300 seconds' GROUP BY provider, operation) c ON c.provider = p.name
               GROUP BY p.name`,
  unmatched: `SELECT count(*)::int AS count, COALESCE(sum(amount_kobo), 0)::bigint AS amount_kobo,
                     COALESCE(extract(epoch FROM now() - min(received_at)), 0)::float8 AS oldest_s
                FROM inbound_credits WHERE status = 'unmatched'`,
} as const

type QueryName = keyof typeof QUERIES
type Snapshot = Partial<Record<QueryName, Row[]>>

export interface DatabaseGaugeOptions {
  /** The background tasks this deployment runs: each has a job series, at 0 when it has no job. */
  tasks?: readonly string[]
  /** The bound of each query (tests shorten it). */
  timeoutMs?: number
  /** The application's clock, which schedules deliveries and stamps states; the system clock unless given. */
  clock?: Clock
}

export function registerDatabaseGauges(registry: Registry, pool: Pool, options: DatabaseGaugeOptions = {}): void {
  let running: Promise<Snapshot> | undefined
  const clock = options.clock ?? systemClock
  const params = (): Partial<Record<QueryName, unknown[]>> => ({
    jobs: [options.tasks ?? []],
    deliveries: [clock.now()],
    unknown: [clock.now()],
  })
  // Scrapes that arrive while one runs share it; the next scrape after it reads afresh. The
  // failures and durations wait for it too, so that a scrape reports its own.
  const snapshot = () =>
    (running ??= readSnapshot(pool, options.timeoutMs ?? SCRAPE_QUERY_TIMEOUT_MS, params(), {
      failures,
      durations,
    }).finally(() => (running = undefined)))
  const failures: Counter<'query'> = new Counter({
    name: 'rail_metrics_query_failures_total',
    help: 'Scrape-time database queries that failed or timed out, by query',
    labelNames: ['query'],
    registers: [registry],
    async collect() {
      await snapshot()
    },
  })
  const durations: Gauge<'query'> = new Gauge({
    name: 'rail_metrics_query_duration_seconds',
    help: 'How long each scrape-time database query took',
    labelNames: ['query'],
    registers: [registry],
    async collect() {
      await snapshot()
    },
  })
  for (const spec of GAUGES) registerGauge(registry, snapshot, spec)
}

async function readSnapshot(
  pool: Pool,
  timeoutMs: number,
  params: Partial<Record<QueryName, unknown[]>>,
  meters: { failures: Counter<'query'>; durations: Gauge<'query'> },
): Promise<Snapshot> {
  const result: Snapshot = {}
  const failAll = () => {
    for (const name of Object.keys(QUERIES)) meters.failures.inc({ query: name })
    return result
  }
  // The timeout holds for this transaction only (SET LOCAL): a session setting would stay on the
  // connection, and through a transaction-mode pooler on whichever client gets it next.
  let client
  try {
    client = await pool.connect()
    await client.query('BEGIN')
    await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`)
  } catch {
    client?.release(true)
    return failAll()
  }
  for (const [name, sql] of Object.entries(QUERIES) as [QueryName, string][]) {
    const started = performance.now()
    try {
      // A query that fails (its timeout, say) is undone to here, and the next one runs.
      await client.query('SAVEPOINT gauge')
      result[name] = (await client.query(sql, params[name] ?? [])).rows as Row[]
    } catch {
      meters.failures.inc({ query: name })
      await client.query('ROLLBACK TO SAVEPOINT gauge').catch(() => {})
    }
    meters.durations.set({ query: name }, (performance.now() - started) / 1000)
  }
  // A connection whose transaction cannot be ended is closed rather than handed to anyone else.
  const ended = await client.query('COMMIT').then(
    () => true,
    () => false,
  )
  client.release(!ended)
  return result
}

/** A gauge set from the snapshot's rows of one query at each scrape: a series a row. */
interface GaugeSpec {
  name: string
  help: string
  query: QueryName
  /** The columns whose values label each row's series; none for a query of one row. */
  labels?: readonly string[]
  /** The column holding the value, or the value computed from the row. */
  value: string | ((row: Row) => number)
}

function registerGauge(registry: Registry, snapshot: () => Promise<Snapshot>, spec: GaugeSpec): void {
  const { labels = [], value } = spec
  const valueOf = typeof value === 'string' ? (row: Row) => num(row[value]) : value
  new Gauge({
    name: spec.name,
    help: spec.help,
    labelNames: labels,
    registers: [registry],
    async collect() {
      const rows = (await snapshot())[spec.query]
      this.reset()
      for (const row of rows ?? [])
        this.set(Object.fromEntries(labels.map((label) => [label, String(row[label])])), valueOf(row))
    },
  })
}

const num = (value: unknown) => Number(value ?? 0)

const JOB_HELP = {
  queued: 'Background jobs due and waiting for a worker, by task',
  scheduled: 'Background jobs waiting for a later time (retries, timers), by task',
  running: 'Background jobs locked by a worker now, by task',
  failed: 'Background jobs that used all their attempts and will not run again, by task',
}

/** Healthy as src/banking/providers/health.ts judges it: every operation, and all calls, under 10 or under half unanswered. */
function providerHealthy(row: Row): number {
  const calls = num(row.calls)
  return row.operations_healthy === true && (calls < 10 || num(row.unanswered) / calls < 0.5) ? 1 : 0
}

const GAUGES: readonly GaugeSpec[] = [
  ...(['queued', 'scheduled', 'running', 'failed'] as const).map((column) => ({
    name: `rail_jobs_${column}`,
    help: JOB_HELP[column],
    query: 'jobs' as const,
    labels: ['task'],
    value: column,
  })),
  {
    name: 'rail_jobs_oldest_queued_seconds',
    help: 'How long the oldest job due and not started has waited, by task',
    query: 'jobs',
    labels: ['task'],
    value: 'oldest_queued_s',
  },
  {
    name: 'rail_deliveries_pending',
    help: 'Callback deliveries not yet delivered nor given up',
    query: 'deliveries',
    value: 'pending',
  },
  {
    name: 'rail_deliveries_due',
    help: 'Pending callback deliveries whose next attempt is due now',
    query: 'deliveries',
    value: 'due',
  },
  {
    name: 'rail_deliveries_oldest_pending_seconds',
    help: 'Age of the oldest pending callback delivery (0 when none)',
    query: 'deliveries',
    value: 'oldest_pending_s',
  },
  {
    name: 'rail_deliveries_oldest_due_seconds',
    help: 'How long the most overdue pending delivery has been due (0 when none): workers falling behind',
    query: 'deliveries',
    value: 'oldest_due_s',
  },
  {
    name: 'rail_bank_instructions',
    help: 'Instructions to banks (payouts, wallet moves) by operation and state',
    query: 'instructions',
    labels: ['operation', 'state'],
    value: 'count',
  },
  {
    name: 'rail_bank_instructions_unknown',
    help: 'Instructions whose outcome the bank has not given by their deadline (asked again hourly, then daily)',
    query: 'unknown',
    value: 'count',
  },
  {
    name: 'rail_bank_instructions_unknown_oldest_seconds',
    help: 'How long the oldest unknown instruction has been unknown (0 when none)',
    query: 'unknown',
    value: 'oldest_s',
  },
  {
    name: 'rail_provider_calls_5m',
    help: 'Calls to each provider over the last five minutes',
    query: 'providers',
    labels: ['provider'],
    value: 'calls',
  },
  {
    name: 'rail_provider_calls_unanswered_5m',
    help: 'Of those, the calls that got no readable answer (no answer, a reset, a 5xx)',
    query: 'providers',
    labels: ['provider'],
    value: 'unanswered',
  },
  {
    name: 'rail_provider_healthy',
    help: 'Whether new payouts may be routed to the provider: 1 when, over all its calls in five minutes and for each operation alike, there are under 10 calls or under half unanswered, else 0',
    query: 'providers',
    labels: ['provider'],
    value: providerHealthy,
  },
  {
    name: 'rail_inbound_credits',
    help: 'Inbound credits by status',
    query: 'credits',
    labels: ['status'],
    value: 'count',
  },
  {
    name: 'rail_unmatched_credits',
    help: 'Inbound credits waiting in unmatched triage (refund or assign)',
    query: 'unmatched',
    value: 'count',
  },
  {
    name: 'rail_unmatched_credits_amount_kobo',
    help: 'Their total amount, in kobo',
    query: 'unmatched',
    value: 'amount_kobo',
  },
  {
    name: 'rail_unmatched_credits_oldest_seconds',
    help: 'Age of the oldest unmatched credit (0 when none)',
    query: 'unmatched',
    value: 'oldest_s',
  },
]
