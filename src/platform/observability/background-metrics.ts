// What a worker process counts as its jobs run: runs and their duration by task and outcome, the
// wait between a job being due and starting, callback delivery attempts by the receiver's status
// class, and the ledger verification's result. Counted in memory per process: Prometheus sums
// them over the processes (the gauges read from the database are in database-gauges.ts).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'

const JOB_DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]
/** From a millisecond: a job added on a request's path should start within a few, woken by its notification. */
const JOB_DELAY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800]
const DELIVERY_DURATION_BUCKETS_S = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const LEDGER_VERIFY_BUCKETS_S = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300]

/** How a job run ended: done, or an error after which graphile-worker retries it, or its last attempt failed. */
export type JobOutcome = 'done' | 'retrying' | 'failed'

/** What one callback delivery attempt came to, as the delivery code reports it. */
export interface DeliveryAttemptObservation {
  /** The receiver's HTTP status; null when it did not answer (refused, timed out, connection error). */
  statusCode: number | null
  /** delivered: a 2xx; retrying: another attempt is scheduled; failed: the delivery gave up (schedule spent, 410, URL disabled). */
  result: 'delivered' | 'retrying' | 'failed'
  durationMs: number
}

/** What one run of the credit sweep did (src/collections/credits/account-sweep.ts). */
export interface AccountSweepObservation {
  accountsAsked: number
  accountsFailed: number
  /** Credits Rail did not have (their notice never came), recorded by the sweep. */
  creditsFound: number
  /** The run asked the last account of a pass over every account. */
  passEnded: boolean
}

/** The ledger verification's figures (see `rail ledger verify`). */
export interface LedgerVerificationObservation {
  ok: boolean
  problems: number
  accountsChecked: number
  transfersChecked: number
  durationMs: number
}

export class BackgroundMetrics {
  private readonly jobs: ReturnType<typeof jobMetrics>
  private readonly checks: ReturnType<typeof checkMetrics>

  constructor(registry: Registry) {
    this.jobs = jobMetrics([registry])
    this.checks = checkMetrics([registry])
  }

  jobStarted(task: string, dueAt: Date, startedAtMs: number): void {
    this.jobs.jobsRunningHere.inc({ task })
    this.jobs.jobDelay.observe({ task }, Math.max(0, startedAtMs - dueAt.getTime()) / 1000)
  }

  jobEnded(task: string, outcome: JobOutcome, durationMs: number): void {
    this.jobs.jobsRunningHere.dec({ task })
    this.jobs.jobRuns.inc({ task, outcome })
    this.jobs.jobDuration.observe({ task, outcome }, durationMs / 1000)
  }

  deliveryAttempt(attempt: DeliveryAttemptObservation): void {
    const statusClass = statusClassOf(attempt.statusCode)
    this.jobs.deliveryAttempts.inc({ status_class: statusClass, result: attempt.result })
    this.jobs.deliveryDuration.observe({ status_class: statusClass }, attempt.durationMs / 1000)
  }

  accountSweep(run: AccountSweepObservation): void {
    this.checks.sweptCredits.inc(run.creditsFound)
    this.checks.sweptAccounts.inc({ result: 'answered' }, run.accountsAsked - run.accountsFailed)
    this.checks.sweptAccounts.inc({ result: 'failed' }, run.accountsFailed)
  }

  ledgerVerified(verification: LedgerVerificationObservation, finishedAtMs = Date.now()): void {
    this.checks.ledgerRuns.inc({ result: verification.ok ? 'ok' : 'problems' })
    this.checks.ledgerDuration.observe(verification.durationMs / 1000)
    this.checks.ledgerLastRun.set(finishedAtMs / 1000)
    if (verification.ok) this.checks.ledgerLastOk.set(finishedAtMs / 1000)
    this.checks.ledgerProblems.set(verification.problems)
  }
}

/** The background jobs' and callback deliveries' metrics. */
function jobMetrics(registers: Registry[]) {
  return {
    jobRuns: new Counter({
      name: 'rail_job_runs_total',
      help: 'Background job runs by task and outcome (done, retrying, failed)',
      labelNames: ['task', 'outcome'],
      registers,
    }),
    jobDuration: new Histogram({
      name: 'rail_job_duration_seconds',
      help: 'How long a background job ran, by task and outcome',
      labelNames: ['task', 'outcome'],
      buckets: JOB_DURATION_BUCKETS_S,
      registers,
    }),
    jobDelay: new Histogram({
      name: 'rail_job_start_delay_seconds',
      help: 'From when a job was due (run_at) to when a worker started it, by task',
      labelNames: ['task'],
      buckets: JOB_DELAY_BUCKETS_S,
      registers,
    }),
    jobsRunningHere: new Gauge({
      name: 'rail_jobs_running_in_process',
      help: 'Jobs running now in this process, by task',
      labelNames: ['task'],
      registers,
    }),
    deliveryAttempts: new Counter({
      name: 'rail_delivery_attempts_total',
      help: 'Callback delivery attempts by the receiver status class (2xx, 3xx, 4xx, 5xx, no_answer) and result (delivered, retrying, failed)',
      labelNames: ['status_class', 'result'],
      registers,
    }),
    deliveryDuration: new Histogram({
      name: 'rail_delivery_attempt_duration_seconds',
      help: 'Callback delivery attempt duration by status class',
      labelNames: ['status_class'],
      buckets: DELIVERY_DURATION_BUCKETS_S,
      registers,
    }),
  }
}
/** The ledger verification's and the credit sweep's metrics. */
function checkMetrics(registers: Registry[]) {
  return {
    ledgerRuns: new Counter({
      name: 'rail_ledger_verify_runs_total',
      help: 'Ledger verifications by result (ok, problems)',
      labelNames: ['result'],
      registers,
    }),
    ledgerDuration: new Histogram({
      name: 'rail_ledger_verify_duration_seconds',
      help: 'How long a ledger verification took',
      buckets: LEDGER_VERIFY_BUCKETS_S,
      registers,
    }),
    ledgerLastRun: new Gauge({
      name: 'rail_ledger_verify_last_run_timestamp_seconds',
      help: 'When this process last finished a ledger verification (Unix seconds)',
      registers,
    }),
    ledgerLastOk: new Gauge({
      name: 'rail_ledger_verify_last_ok_timestamp_seconds',
      help: 'When this process last finished a ledger verification that found no problem (Unix seconds)',
      registers,
    }),
    ledgerProblems: new Gauge({
      name: 'rail_ledger_verify_problems',
      help: 'Problems the last ledger verification of this process found (0 when the ledger verifies)',
      registers,
    }),
    sweptCredits: new Counter({
      name: 'rail_inbound_credits_found_by_sweep_total',
      help: 'Inbound credits Rail learned of from the sweep of every account, not from their notice (a lost webhook)',
      registers,
    }),
    sweptAccounts: new Counter({
      name: 'rail_credit_sweep_accounts_total',
      help: 'Accounts the credit sweep asked the provider about, by result (answered, failed)',
      labelNames: ['result'],
      registers,
    }),
  }
}
/** 2xx … 5xx, or no_answer: five label values at most, whatever receivers answer. */
export function statusClassOf(statusCode: number | null): string {
  if (statusCode === null || statusCode < 100 || statusCode > 599) return 'no_answer'
  return `${Math.floor(statusCode / 100)}xx`
}
