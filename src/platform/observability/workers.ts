// What a process running background workers observes, put together once per metrics registry:
// every task instrumented (log line, job metrics, span), callback delivery attempts, ledger
// verifications and the credit sweep's runs counted and added to their step's log line.
import type { TaskList } from 'graphile-worker'
import type { Registry } from 'prom-client'
import {
  BackgroundMetrics,
  type AccountSweepObservation,
  type DeliveryAttemptObservation,
  type LedgerVerificationObservation,
} from './background-metrics.ts'
import { annotateStep, instrumentTasks, type StepLogger } from './jobs.ts'

export interface WorkerObservationSettings {
  /** Where the workers count (the process's /metrics). */
  registry: Registry
  /** Where each step's line goes; no lines without it. */
  logger?: StepLogger
}

export interface WorkerObservation {
  instrument(tasks: TaskList): TaskList
  onDeliveryAttempt(attempt: DeliveryAttemptObservation): void
  onLedgerVerified(verification: LedgerVerificationObservation): void
  onAccountSweep(run: AccountSweepObservation): void
}

/** One set of background metrics per registry, however many task lists are built on it. */
const metricsByRegistry = new WeakMap<Registry, BackgroundMetrics>()

export function observeWorkers(settings: WorkerObservationSettings): WorkerObservation {
  let metrics = metricsByRegistry.get(settings.registry)
  if (!metrics) {
    metrics = new BackgroundMetrics(settings.registry)
    metricsByRegistry.set(settings.registry, metrics)
  }
  const counted = metrics
  return {
    instrument: (tasks) => instrumentTasks(tasks, { metrics: counted, logger: settings.logger }),
    onDeliveryAttempt(attempt) {
      counted.deliveryAttempt(attempt)
      annotateStep({
        outcome: attempt.result,
        statusCode: attempt.statusCode,
        attemptMs: Math.round(attempt.durationMs),
      })
    },
    onLedgerVerified(verification) {
      counted.ledgerVerified(verification)
      annotateStep({
        outcome: verification.ok ? 'verified' : 'problems',
        problems: verification.problems,
        accountsChecked: verification.accountsChecked,
        transfersChecked: verification.transfersChecked,
      })
    },
    onAccountSweep(run) {
      counted.accountSweep(run)
      annotateStep({
        accountsAsked: run.accountsAsked,
        accountsFailed: run.accountsFailed,
        creditsFound: run.creditsFound,
        passEnded: run.passEnded,
      })
    },
  }
}
