// Where a request's time goes, stage by stage (docs/operations.md §Metrics): waiting to be admitted,
// authentication, the Idempotency-Key's claim, waiting for a coalesced batch and that batch's
// transaction, a connection awaited outside a batch, a call to a bank, the answer stored for the
// key, and the reply; the rest (the handler's own work) is handler_other, so that the stages add
// up to the request's duration. Each request carries one small record: the hooks reach it on the
// request, and what runs on the request's behalf further down (a coalescer, a provider call, a pool
// checkout) through an AsyncLocalStorage. It is observed once, when the response is finished: in
// rail_request_stage_seconds (metrics.ts) and, when traces are exported, as child spans of the
// request's span (tracing.ts).
import { AsyncLocalStorage } from 'node:async_hooks'
import { Histogram, type Registry } from 'prom-client'
import type { HttpServer } from '../http.ts'

export const STAGES = [
  'admission',
  'authentication',
  'idempotency',
  'coalescer_wait',
  'transaction',
  'pool_wait',
  'bank_call',
  'answer_write',
  'reply',
  'handler_other',
] as const
export type Stage = (typeof STAGES)[number]

const STAGE_INDEX = Object.fromEntries(STAGES.map((stage, index) => [stage, index])) as Record<Stage, number>

/**
 * Fine enough to read a p99 anywhere between a millisecond and a second (the latency goals are
 * p90 50 ms and p99 100 ms: each is an edge).
 */
const STAGE_BUCKETS_S = [
  0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5,
]

/** One stretch of a stage, in performance.now() milliseconds: a span once traces are exported. */
export interface StageInterval {
  stage: Stage
  startMs: number
  endMs: number
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Where this request's time went, stage by stage; undefined on a request refused before any hook ran. */
    stages: RequestStages | undefined
  }
}

export class RequestStages {
  /** Milliseconds per stage, in STAGES' order; undefined for a stage the request never entered. */
  readonly spentMs: (number | undefined)[] = new Array<number | undefined>(STAGES.length).fill(undefined)
  /** Every stretch of every stage, for their spans: kept only while traces are exported. */
  readonly intervals: StageInterval[] | undefined
  #open = 0
  #countedMs = 0
  #replyStartedMs: number | undefined
  #countedBeforeReplyMs = 0
  #finished = false

  constructor(keepIntervals: boolean) {
    this.intervals = keepIntervals ? [] : undefined
  }

  /**
   * Opens a stage; answers whether it counts. Stages do not nest: time inside one (a connection
   * awaited for the key's claim) is that one's, and a stage opened beside another of the same
   * request (work run in parallel) is left in handler_other rather than counted twice.
   */
  open(): boolean {
    return this.#open++ === 0
  }

  /** Closes a stage opened at `startMs`, adding its time when it counted. */
  close(stage: Stage, counted: boolean, startMs: number, endMs: number = performance.now()): void {
    this.#open--
    if (counted) this.add(stage, startMs, endMs)
  }

  /** Adds a stretch to a stage (the caller opened it, or nothing else can be open: a hook). */
  add(stage: Stage, startMs: number, endMs: number): void {
    const index = STAGE_INDEX[stage]
    const ms = Math.max(0, endMs - startMs)
    this.spentMs[index] = (this.spentMs[index] ?? 0) + ms
    this.#countedMs += ms
    this.intervals?.push({ stage, startMs, endMs })
  }

  /** The handler has answered (or a hook has): the reply begins, serialization included. */
  replyStarted(): void {
    if (this.#replyStartedMs !== undefined) return
    this.#replyStartedMs = performance.now()
    this.#countedBeforeReplyMs = this.#countedMs
  }

  /**
   * Once the response is finished: the reply's time (less the stages within it, the answer's
   * write), then the rest as handler_other, so that the stages add up to `durationMs`, Fastify's
   * own duration of the request. Done once, whoever asks first.
   */
  finish(durationMs: number): void {
    if (this.#finished) return
    this.#finished = true
    const endMs = performance.now()
    if (this.#replyStartedMs !== undefined) {
      const withinReplyMs = this.#countedMs - this.#countedBeforeReplyMs
      // Fastify's clock stopped a moment before this one: the reply ends where the request does.
      const replyMs = Math.min(endMs - this.#replyStartedMs - withinReplyMs, durationMs - this.#countedMs)
      this.add('reply', this.#replyStartedMs, this.#replyStartedMs + Math.max(0, replyMs))
    }
    this.spentMs[STAGE_INDEX.handler_other] = Math.max(0, durationMs - this.#countedMs)
  }
}

const current = new AsyncLocalStorage<RequestStages>()

/** The stages of the request this code runs for, if any. */
export function currentStages(): RequestStages | undefined {
  return current.getStore()
}

/** Runs `work` as no request's: shared work (a coalesced batch) is not the request that happened to start it. */
export function outsideRequests<T>(work: () => T): T {
  return current.exit(work)
}

/** Runs `work` as a stage of the request running now; outside a request it just runs it. */
export async function timeStage<T>(stage: Stage, work: () => Promise<T>): Promise<T> {
  const stages = current.getStore()
  if (stages === undefined) return work()
  const counted = stages.open()
  const startMs = performance.now()
  try {
    return await work()
  } finally {
    stages.close(stage, counted, startMs)
  }
}

/**
 * Gives every request its record, before any other hook of this app's that may take time (so first
 * of all: admission), and marks where its reply begins: before serialization for an object, at
 * the first hook of the send otherwise. Intervals are kept for spans only when `keepIntervals`.
 */
export function installRequestStages(app: HttpServer, keepIntervals: boolean): void {
  app.decorateRequest('stages', undefined)
  app.addHook('onRequest', (request, _reply, done) => {
    const stages = new RequestStages(keepIntervals)
    request.stages = stages
    current.run(stages, done)
  })
  app.addHook('preSerialization', (request, _reply, payload, done) => {
    request.stages?.replyStarted()
    done(null, payload)
  })
  app.addHook('onSend', (request, _reply, payload, done) => {
    request.stages?.replyStarted()
    done(null, payload)
  })
}

/** rail_request_stage_seconds on `registry`; answers what observes a finished request's stages under its route. */
export function stageMetrics(registry: Registry): (route: string, stages: RequestStages) => void {
  const histogram = new Histogram({
    name: 'rail_request_stage_seconds',
    help: 'Time per stage of a request (admission, authentication, idempotency, coalescer_wait, transaction, pool_wait, bank_call, answer_write, reply, handler_other) by route template',
    labelNames: ['route', 'stage'],
    buckets: STAGE_BUCKETS_S,
    registers: [registry],
  })
  return (route, stages) => {
    for (let index = 0; index < STAGES.length; index++) {
      const ms = stages.spentMs[index]
      if (ms !== undefined) histogram.observe({ route, stage: STAGES[index]! }, ms / 1000)
    }
  }
}
