// Admission control in front of the connection pool. A burst larger than the service can take
// does not queue inside the pool, where a connection timeout could fire after a request had
// claimed something (a move recorded, a hold taken): it queues here, before anything is read or
// written, with a bounded length and a bounded wait, and whatever cannot be admitted is refused
// at once with 503 `overloaded` and Retry-After. Admitted requests are a few per pooled connection
// (most hold one only for moments between waits on a bank or a shared batch), so they find one
// soon; the pool's own timeout stays as the last resort, and its error is answered 503 too.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { OVERLOADED_RETRY_AFTER_S, RailError } from './errors.ts'
import type { HttpServer } from './http.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * When the route takes its place: on arrival (the default), once its body is in ('after-body':
     * a route without credentials that must not hold a place while a client trickles a body), or
     * never (false: health, metrics, the sandbox bank's own API, which use no connection of Rail's pool).
     */
    admission?: true | 'after-body' | false
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
    if (limits.inFlightMax < 1 || limits.queueMax < 0 || limits.queueWaitMs < 0)
      throw new Error(`invalid admission limits ${JSON.stringify(limits)}`)
    this.limits = limits
  }

  /**
   * Resolves true once admitted (call leave() exactly once after), false when refused or when
   * `abandoned` fires first (the client went away while waiting: its place in the queue is given up).
   */
  enter(abandoned?: AbortSignal): Promise<boolean> | boolean {
    if (abandoned?.aborted) return false
    if (this.inFlight < this.limits.inFlightMax) {
      this.inFlight += 1
      return true
    }
    if (this.waiting.length >= this.limits.queueMax) return false
    return new Promise<boolean>((resolve) => {
      const giveUp = () => {
        const index = this.waiting.indexOf(waiter)
        if (index >= 0) this.waiting.splice(index, 1)
        clearTimeout(waiter.timer)
        resolve(false)
      }
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(waiter.timer)
          abandoned?.removeEventListener('abort', giveUp)
          resolve(true)
        },
        timer: setTimeout(giveUp, this.limits.queueWaitMs),
      }
      abandoned?.addEventListener('abort', giveUp, { once: true })
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
 * Every route takes its place before anything else is done with it (or once its body is in, where
 * it says so). The place is given back when the response is finished or the connection closes,
 * whichever comes first; a client that goes away while waiting leaves the queue.
 */
export function installAdmission(app: HttpServer, gate: AdmissionGate): void {
  const admit = async (request: FastifyRequest, reply: FastifyReply) => {
    const closed = new AbortController()
    let admitted = false
    let left = false
    const leave = () => {
      if (admitted && !left) {
        left = true
        gate.leave()
      }
    }
    reply.raw.once('close', () => {
      closed.abort()
      leave()
    })
    const waitStartMs = performance.now()
    admitted = await gate.enter(closed.signal)
    // Every admitted route has the stage, at once or after a wait: its p99 is over all of them.
    request.stages?.add('admission', waitStartMs, performance.now())
    // The connection may have closed while the admission resolved: the place goes back at once.
    if (closed.signal.aborted) leave()
    if (!admitted) {
      throw new RailError(
        'overloaded',
        'Rail is at capacity and did nothing with this request; retry shortly',
        undefined,
        { retryAfterS: OVERLOADED_RETRY_AFTER_S },
      )
    }
  }
  app.addHook('onRequest', async (request, reply) => {
    if ((request.routeOptions.config.admission ?? true) === true) await admit(request, reply)
  })
  // Only the few routes admitted after their body carry this hook (routes are registered after this).
  app.addHook('onRoute', (route) => {
    if (route.config?.admission !== 'after-body') return
    const existing =
      route.preValidation === undefined
        ? []
        : Array.isArray(route.preValidation)
          ? route.preValidation
          : [route.preValidation]
    route.preValidation = [admit, ...existing]
  })
}
