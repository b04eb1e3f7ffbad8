// What a worker process counts as its jobs run: runs and their duration by task and outcome, the
// wait between a job being due and starting, callback delivery attempts by the receiver's status
// class, and the ledger verification's result. Counted in memory per process: Prometheus sums
// them over the processes (the gauges read from the database are in database-gauges.ts).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'

const JOB_DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]
const JOB_DELAY_BUCKETS_S = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800]
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

/** What one run of the credit sweep did (src/inbound-credits/account-sweep.ts). */
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
  private readonly jobRuns: Counter<'task' | 'outcome'>
  private readonly jobDuration: Histogram<'task' | 'outcome'>
  private readonly jobDelay: Histogram<'task'>
  private readonly jobsRunningHere: Gauge<'task'>
  private readonly deliveryAttempts: Counter<'status_class' | 'result'>
  private readonly deliveryDuration: Histogram<'status_class'>
  private readonly ledgerRuns: Counter<'result'>
  private readonly ledgerDuration: Histogram
  private readonly ledgerLastRun: Gauge
  private readonly ledgerLastOk: Gauge
  private readonly ledgerProblems: Gauge
  private readonly sweptCredits: Counter
  private readonly sweptAccounts: Counter<'result'>

  constructor(registry: Registry) {
    const registers = [registry]
    this.jobRuns = new Counter({ name: 'rail_job_runs_total', help: 'Background job runs by task and outcome (done, retrying, failed)', labelNames: ['task', 'outcome'], registers })
    this.jobDuration = new Histogram({ name: 'rail_job_duration_seconds', help: 'How long a background job ran, by task and outcome', labelNames: ['task', 'outcome'], buckets: JOB_DURATION_BUCKETS_S, registers })
    this.jobDelay = new Histogram({ name: 'rail_job_start_delay_seconds', help: 'From when a job was due (run_at) to when a worker started it, by task', labelNames: ['task'], buckets: JOB_DELAY_BUCKETS_S, registers })
    this.jobsRunningHere = new Gauge({ name: 'rail_jobs_running_in_process', help: 'Jobs running now in this process, by task', labelNames: ['task'], registers })
    this.deliveryAttempts = new Counter({
      name: 'rail_delivery_attempts_total',
      help: 'Callback delivery attempts by the receiver status class (2xx, 3xx, 4xx, 5xx, no_answer) and result (delivered, retrying, failed)',
      labelNames: ['status_class', 'result'],
      registers,
    })
    this.deliveryDuration = new Histogram({ name: 'rail_delivery_attempt_duration_seconds', help: 'Callback delivery attempt duration by status class', labelNames: ['status_class'], buckets: DELIVERY_DURATION_BUCKETS_S, registers })
    this.ledgerRuns = new Counter({ name: 'rail_ledger_verify_runs_total', help: 'Ledger verifications by result (ok, problems)', labelNames: ['result'], registers })
    this.ledgerDuration = new Histogram({ name: 'rail_ledger_verify_duration_seconds', help: 'How long a ledger verification took', buckets: LEDGER_VERIFY_BUCKETS_S, registers })
    this.ledgerLastRun = new Gauge({ name: 'rail_ledger_verify_last_run_timestamp_seconds', help: 'When this process last finished a ledger verification (Unix seconds)', registers })
    this.ledgerLastOk = new Gauge({ name: 'rail_ledger_verify_last_ok_timestamp_seconds', help: 'When this process last finished a ledger verification that found no problem (Unix seconds)', registers })
    this.ledgerProblems = new Gauge({ name: 'rail_ledger_verify_problems', help: 'Problems the last ledger verification of this process found (0 when the ledger verifies)', registers })
    this.sweptCredits = new Counter({
      name: 'rail_inbound_credits_found_by_sweep_total',
      help: 'Inbound credits Rail learned of from the sweep of every account, not from their notice (a lost webhook)',
      registers,
    })
    this.sweptAccounts = new Counter({ name: 'rail_credit_sweep_accounts_total', help: 'Accounts the credit sweep asked the provider about, by result (answered, failed)', labelNames: ['result'], registers })
  }

  jobStarted(task: string, dueAt: Date, startedAtMs: number): void {
    this.jobsRunningHere.inc({ task })
    this.jobDelay.observe({ task }, Math.max(0, startedAtMs - dueAt.getTime()) / 1000)
  }

  jobEnded(task: string, outcome: JobOutcome, durationMs: number): void {
    this.jobsRunningHere.dec({ task })
    this.jobRuns.inc({ task, outcome })
    this.jobDuration.observe({ task, outcome }, durationMs / 1000)
  }

  deliveryAttempt(attempt: DeliveryAttemptObservation): void {
    const statusClass = statusClassOf(attempt.statusCode)
    this.deliveryAttempts.inc({ status_class: statusClass, result: attempt.result })
    this.deliveryDuration.observe({ status_class: statusClass }, attempt.durationMs / 1000)
  }

  accountSweep(run: AccountSweepObservation): void {
    this.sweptCredits.inc(run.creditsFound)
    this.sweptAccounts.inc({ result: 'answered' }, run.accountsAsked - run.accountsFailed)
    this.sweptAccounts.inc({ result: 'failed' }, run.accountsFailed)
  }

  ledgerVerified(verification: LedgerVerificationObservation, finishedAtMs = Date.now()): void {
    this.ledgerRuns.inc({ result: verification.ok ? 'ok' : 'problems' })
    this.ledgerDuration.observe(verification.durationMs / 1000)
    this.ledgerLastRun.set(finishedAtMs / 1000)
    if (verification.ok) this.ledgerLastOk.set(finishedAtMs / 1000)
    this.ledgerProblems.set(verification.problems)
  }
}

/** 2xx … 5xx, or no_answer: five label values at most, whatever receivers answer. */
export function statusClassOf(statusCode: number | null): string {
  if (statusCode === null || statusCode < 100 || statusCode > 599) return 'no_answer'
  return `${Math.floor(statusCode / 100)}xx`
}
