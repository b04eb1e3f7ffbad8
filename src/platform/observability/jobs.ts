// Every background job run is a step that leaves one structured log line (job id, task, object id,
// outcome, duration), a run in the job metrics and, when tracing is on, a span. The tasks
// themselves are untouched: instrumentTasks wraps each one. A task may add to its line (a
// delivery's status code, a payment's new state) with annotateStep.
import { AsyncLocalStorage } from 'node:async_hooks'
import type { JobHelpers, Task, TaskList } from 'graphile-worker'
import type { BackgroundMetrics, JobOutcome } from './background-metrics.ts'
import { withSpan, type SpanAttributes } from './tracing.ts'

export type StepFields = Record<string, string | number | boolean | null>

/** The part of a pino logger a step line needs. */
export interface StepLogger {
  info(fields: object, message: string): void
  warn(fields: object, message: string): void
}

export interface JobInstrumentation {
  metrics?: BackgroundMetrics
  logger?: StepLogger
}

const steps = new AsyncLocalStorage<StepFields>()

/**
 * Adds fields to the log line (and span) of the background step running now; outside a step it
 * does nothing. `outcome` replaces the generic `done` of a step that ended without error.
 */
export function annotateStep(fields: StepFields): void {
  const current = steps.getStore()
  if (current) Object.assign(current, fields)
}

export function instrumentTasks(tasks: TaskList, instrumentation: JobInstrumentation): TaskList {
  const instrumented: TaskList = {}
  for (const [name, task] of Object.entries(tasks))
    if (task) instrumented[name] = instrumentTask(name, task as Task, instrumentation)
  return instrumented
}

function instrumentTask(name: string, task: Task, { metrics, logger }: JobInstrumentation): Task {
  return async (payload, helpers) => {
    const { job } = helpers
    const annotations: StepFields = {}
    const startedAtMs = Date.now()
    const started = performance.now()
    const objectId = objectIdOf(payload)
    metrics?.jobStarted(name, job.run_at, startedAtMs)
    let error: unknown
    try {
      const attributes: SpanAttributes = {
        'rail.job.id': String(job.id),
        'rail.job.task': name,
        'rail.job.attempt': job.attempts,
      }
      if (objectId !== undefined) attributes['rail.object.id'] = objectId
      return await steps.run(annotations, () =>
        withSpan(`job ${name}`, attributes, async (span) => {
          const result = await task(payload, helpers)
          span?.setAttributes(spanAttributes(annotations))
          return result
        }),
      )
    } catch (thrown) {
      error = thrown
      throw thrown
    } finally {
      const durationMs = performance.now() - started
      const outcome: JobOutcome =
        error === undefined ? 'done' : job.attempts >= job.max_attempts ? 'failed' : 'retrying'
      metrics?.jobEnded(name, outcome, durationMs)
      logStep(logger, helpers, { task: name, objectId, outcome, durationMs, annotations, error })
    }
  }
}

function logStep(
  logger: StepLogger | undefined,
  helpers: JobHelpers,
  step: {
    task: string
    objectId: string | undefined
    outcome: JobOutcome
    durationMs: number
    annotations: StepFields
    error: unknown
  },
): void {
  if (!logger) return
  const { job } = helpers
  const fields = {
    jobId: String(job.id),
    task: step.task,
    objectId: step.objectId ?? null,
    attempt: job.attempts,
    ...step.annotations,
    // A task's own outcome (delivered, succeeded…) names a step that ended well; an error names itself.
    outcome: step.error === undefined ? (step.annotations.outcome ?? step.outcome) : step.outcome,
    durationMs: Math.round(step.durationMs * 10) / 10,
  }
  if (step.error === undefined) logger.info(fields, 'background step')
  else
    logger.warn(
      { ...fields, error: step.error instanceof Error ? step.error.message : String(step.error) },
      'background step',
    )
}

/** The object a job works on: its payload's `id`, or the first string field named like `…Id` (deliveryId, creditId…). */
export function objectIdOf(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined
  const fields = payload as Record<string, unknown>
  if (typeof fields.id === 'string') return fields.id
  const key = Object.keys(fields).find((name) => name.endsWith('Id') && typeof fields[name] === 'string')
  return key === undefined ? undefined : (fields[key] as string)
}

function spanAttributes(annotations: StepFields): SpanAttributes {
  const attributes: SpanAttributes = {}
  for (const [name, value] of Object.entries(annotations)) if (value !== null) attributes[`rail.${name}`] = value
  return attributes
}
