// Admission control in front of the connection pool. A burst larger than the pool does not queue
// inside the pool, where a connection timeout could fire after a request had claimed something
// (a move recorded, a hold taken): it queues here, before anything is read or written, with a
// bounded length and a bounded wait, and whatever cannot be admitted is refused at once with
// 503 `overloaded` and Retry-After. An admitted request then finds a connection promptly, because
// no more requests run at once than the pool can serve.
import type { FastifyRequest } from 'fastify'
import { RailError } from './errors.ts'
import type { HttpServer } from './http.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route touches no pooled connection of Rail's (health, metrics, the sandbox bank's own API). */
    admission?: boolean
  }
}

export interface AdmissionLimits {
  /** Requests running at once (past authentication and into handlers). */
  inFlightMax: number
  /** Requests waiting for a place; one more is refused at once. */
  queueMax: number
  /** Longest wait for a place before the request is refused. */
  queueWaitMs: number
}

/** What a refused caller is told to wait: long enough for a queue to drain, short enough to retry soon. */
export const OVERLOADED_RETRY_AFTER_S = 1

/**
 * Requests in flight per pooled connection. Most requests hold a connection for a few
 * milliseconds between other waits (a bank call, a coalesced batch's commit), so a pool serves
 * several at once without queueing inside it.
 */
const IN_FLIGHT_PER_CONNECTION = 4
/** Waiting requests per place in flight: a short burst is absorbed rather than refused. */
const QUEUE_PER_IN_FLIGHT = 4
const QUEUE_WAIT_MS = 2_000

export function admissionLimitsFor(poolMax: number): AdmissionLimits {
  const inFlightMax = poolMax * IN_FLIGHT_PER_CONNECTION
  return { inFlightMax, queueMax: inFlightMax * QUEUE_PER_IN_FLIGHT, queueWaitMs: QUEUE_WAIT_MS }
}

interface Waiter {
  admit(): void
  timer: NodeJS.Timeout
}

/** A counting semaphore with a bounded FIFO queue and a bounded wait. */
export class AdmissionGate {
  private inFlight = 0
  private readonly waiting: Waiter[] = []
  private readonly limits: AdmissionLimits

  constructor(limits: AdmissionLimits) {
    if (limits.inFlightMax < 1 || limits.queueMax < 0 || limits.queueWaitMs < 0) throw new Error(`invalid admission limits ${JSON.stringify(limits)}`)
    this.limits = limits
  }

  /** Resolves true once admitted (call leave() exactly once after), false when refused. */
  enter(): Promise<boolean> | boolean {
    if (this.inFlight < this.limits.inFlightMax) {
      this.inFlight += 1
      return true
    }
    if (this.waiting.length >= this.limits.queueMax) return false
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(waiter.timer)
          resolve(true)
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1)
          resolve(false)
        }, this.limits.queueWaitMs),
      }
      this.waiting.push(waiter)
    })
  }

  leave(): void {
    const next = this.waiting.shift()
    // The place passes straight to the next waiter: inFlight stays as it is.
    if (next) next.admit()
    else this.inFlight -= 1
  }

  get state(): { inFlight: number; waiting: number } {
    return { inFlight: this.inFlight, waiting: this.waiting.length }
  }
}

/**
 * Every route not marked `admission: false` passes the gate first, before authentication (which
 * may read the database). The place is given back when the response is finished or the
 * connection closes, whichever comes first.
 */
export function installAdmission(app: HttpServer, gate: AdmissionGate): void {
  app.addHook('onRequest', async (request: FastifyRequest, reply) => {
    if (request.routeOptions.config.admission === false) return
    if (!(await gate.enter())) {
      throw new RailError('overloaded', 'Rail is at capacity and did nothing with this request; retry shortly', undefined, { retryAfterS: OVERLOADED_RETRY_AFTER_S })
    }
    let left = false
    reply.raw.once('close', () => {
      if (left) return
      left = true
      gate.leave()
    })
  })
}
