// One delivery attempt, made by a graphile-worker job (docs/design.md §9): claim the attempt, sign, POST,
// and record what happened, then deliver the next event of the same object or schedule a retry.
//
// Guarantees (docs/webhooks.md):
// - At least once: a delivery is pending until an attempt gets a 2xx; a worker killed mid-attempt
//   leaves a claim that lapses, and the sweep brings the delivery back.
// - One attempt at a time: the claim (a lease on the delivery row) is taken by one worker only.
// - Per object and URL, in order: a delivery is not attempted while an earlier delivery for the
//   same object to the same URL is pending; it goes when that one is delivered or has failed.
import { Agent, request } from 'undici'
import { getPartner, currentCallbackSecret, type PartnerEnvironment } from '../partners/service.ts'
import { unixSeconds, type Clock } from '../platform/clock.ts'
import { open } from '../platform/crypto.ts'
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { uuidv7Ms } from '../platform/ids.ts'
import { checkCallbackUrl, guardedLookup, type CallbackPolicy } from '../platform/address-guard.ts'
import * as deliveries from './deliveries-repo.ts'
import type * as repo from './repo.ts'
import {
  callbackPolicyFor,
  DELIVER_TASK,
  DELIVERY_JOB_KEY_PREFIX,
  deliveryJob,
  enqueueAfterClaim,
  enqueueDelivery,
  RETRY_PRIORITY,
  EVENT_DELIVERY_FAILED,
  recordEvent,
} from './service.ts'
import { deliveryHeaders } from './signing.ts'
import { UrlThrottle } from './url-throttle.ts'

/** docs/design.md §9: the wait before each retry; the first attempt is at once. About three days in all. */
export const RETRY_DELAYS_MS: readonly number[] = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400].map(
  (s) => s * 1000,
)
/** docs/webhooks.md: a delivery succeeds when the receiver answers 2xx within 10 s. */
export const DELIVERY_TIMEOUT_MS = 10_000
/** Only the first bytes of an answer are read and kept. */
export const RESPONSE_EXCERPT_BYTES = 1_024
const RETRY_AFTER_MAX_MS = 86_400_000
const JITTER_FRACTION = 0.1

export interface DeliverySettings {
  /** A 2xx must arrive within this; DELIVERY_TIMEOUT_MS (10 s) unless set (tests give a fraction of a second). */
  timeoutMs?: number
  /** An attempt running longer than this makes its URL failing; UrlThrottle.SLOW_MS (5 s) unless set. */
  slowAfterMs?: number
  /** Waits before the 2nd, 3rd, … attempt; its length + 1 is the number of attempts. */
  retryDelaysMs?: readonly number[]
  /** Sandbox partners may use loopback receivers (RAIL_ALLOW_LOOPBACK_CALLBACKS). */
  allowLoopbackCallbacks: boolean
}

export interface DeliveryDeps {
  pool: Pool
  masterKey: Buffer
  settings: DeliverySettings
  /** Retry schedules, signature timestamps and the secret cache go by it (tests move it). */
  clock: Clock
  /** Told of each attempt once it is recorded (metrics, the job's log line). */
  onAttempt?: (attempt: {
    statusCode: number | null
    result: 'delivered' | 'retrying' | 'failed'
    durationMs: number
  }) => void
}

type AttemptResult =
  | { kind: 'answered'; statusCode: number; retryAfterMs: number | undefined; excerpt: string; durationMs: number }
  | { kind: 'no_answer'; error: string; durationMs: number }

/** A delivery held back while its URL is new waits this long (with jitter) for its job to come round again. */
const DEFER_UNPROVEN_MS = [1_000, 3_000] as const
/** The deliveries to a failing URL wait about this long, all at once; the sweep brings them back. */
const DEFER_FAILING_MS = 120_000
/** A delivery made this long before a URL's deliveries were put off is taken as covered by it (clocks may differ a little). */
const DEFER_COVER_MARGIN_MS = 2_000
/** A job finding its delivery due within this is taken as run early by another clock, and comes back when it is due. */
const CLOCK_SKEW_MARGIN_MS = 10_000
/** A callback-signing secret read from the database is reused for this long. */
const SECRET_CACHE_MS = 1_000

/** Makes the attempts of deliveries: one Agent per policy, kept for the life of the worker. */
export class Deliverer {
  private readonly deps: DeliveryDeps
  private readonly timeoutMs: number
  private readonly retryDelaysMs: readonly number[]
  private readonly agents = new Map<string, Agent>()
  private readonly throttle: UrlThrottle
  /** A partner's environment never changes, so it is looked up once. */
  private readonly environments = new Map<string, PartnerEnvironment>()
  private readonly secrets = new Map<string, { secret: string | undefined; readAtMs: number }>()
  /** When this process last put off all deliveries to a failing URL. */
  private readonly urlsDeferredAtMs = new Map<string, number>()

  constructor(deps: DeliveryDeps) {
    this.deps = deps
    this.timeoutMs = deps.settings.timeoutMs ?? DELIVERY_TIMEOUT_MS
    this.retryDelaysMs = deps.settings.retryDelaysMs ?? RETRY_DELAYS_MS
    this.throttle = new UrlThrottle({ slowAfterMs: deps.settings.slowAfterMs })
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((agent) => agent.close()))
  }

  /**
   * Makes the next attempt of a delivery if it is due and free; otherwise does nothing. `url`
   * (from the job) lets a busy URL be held back before any database work.
   */
  async attempt(deliveryId: string, url?: string): Promise<void> {
    if (url === undefined) {
      await this.claimAndAttempt(deliveryId)
      return
    }
    const slot = await this.throttle.admit(url)
    if (slot === undefined) {
      await this.holdBack(deliveryId, url)
      return
    }
    let learned: { success: boolean } | undefined
    try {
      learned = await this.claimAndAttempt(deliveryId)
    } finally {
      this.throttle.release(url, slot, learned)
    }
    if (learned?.success) await this.resumePutOff(url)
  }

  /**
   * A URL this process put off (holdBack) has answered 2xx: its put-off deliveries come back now
   * rather than when the sweep finds them due. A URL taken for failing only because an attempt ran
   * slowly on a busy machine then costs its other deliveries seconds, not minutes.
   */
  private async resumePutOff(url: string): Promise<void> {
    if (!this.urlsDeferredAtMs.delete(url)) return
    await deliveries.resumeDeliveriesToUrl(
      this.deps.pool,
      url,
      { task: DELIVER_TASK, jobKeyPrefix: DELIVERY_JOB_KEY_PREFIX, priority: RETRY_PRIORITY },
      this.deps.clock.now(),
    )
  }

  /**
   * A delivery whose URL is at its limit. While a URL is new, the delivery alone comes back in a
   * second or two. Once it is failing, all of its due deliveries are put off in one statement, and
   * the jobs of deliveries made before that (their UUIDv7 id tells when) end without touching the
   * database — so a burst of events to a dead receiver costs little more than the jobs themselves.
   */
  private async holdBack(deliveryId: string, url: string): Promise<void> {
    if (this.throttle.stateOf(url) !== 'failing') {
      const [low, high] = DEFER_UNPROVEN_MS
      await deliveries.deferDelivery(
        this.deps.pool,
        deliveryId,
        low + Math.random() * (high - low),
        deliveryJob(deliveryId, url, RETRY_PRIORITY),
        this.deps.clock.now(),
      )
      return
    }
    const deferredAtMs = this.urlsDeferredAtMs.get(url)
    if (deferredAtMs !== undefined && uuidv7Ms(deliveryId) < deferredAtMs - DEFER_COVER_MARGIN_MS) return
    const startedMs = Date.now() // compared with a UUIDv7's wall-clock milliseconds
    await deliveries.deferDeliveriesToUrl(this.deps.pool, url, DEFER_FAILING_MS, this.deps.clock.now())
    if (this.urlsDeferredAtMs.size >= 10_000) this.urlsDeferredAtMs.clear()
    this.urlsDeferredAtMs.set(url, startedMs)
  }

  /** Claims and makes the attempt; answers whether it succeeded (undefined: no attempt was made). */
  private async claimAndAttempt(deliveryId: string): Promise<{ success: boolean } | undefined> {
    const claimed = await deliveries.claimAttempt(
      this.deps.pool,
      deliveryId,
      this.timeoutMs + 5_000,
      this.deps.clock.now(),
    )
    if (!claimed) {
      await this.comeBackWhenClaimLapses(deliveryId)
      return undefined
    }
    const { delivery, event, urlDisabled } = claimed
    if (urlDisabled) {
      const error = `callback URL disabled at ${urlDisabled.disabledAt.toISOString()}: ${urlDisabled.reason}`
      await withTransaction(this.deps.pool, async (tx) => {
        const finished = await deliveries.finishAttempt(tx, delivery.id, claimed.attemptNumber, {
          status: 'failed',
          error,
          at: this.deps.clock.now(),
        })
        if (finished.finished) await this.afterFailure(tx, delivery, event, error, finished.next)
      })
      return undefined
    }
    const policy = callbackPolicyFor(
      await this.environmentOf(delivery.partnerId),
      this.deps.settings.allowLoopbackCallbacks,
    )
    const startedAt = new Date() // the attempt's wall-clock start, recorded with its duration
    const result = await this.post(delivery.url, policy, event, await this.secretFor(event))
    await this.recordOutcome(claimed, startedAt, result)
    return { success: result.kind === 'answered' && isSuccess(result.statusCode) }
  }

  /**
   * Another worker holds the delivery. Should it fail before recording its attempt (its job
   * throws on a lost connection; graphile-worker's retry comes while the claim still holds), the
   * delivery comes back when the claim lapses, not a minute later with the sweep. A delivery due
   * moments from now by this worker's clock (its job ran early: the process that scheduled it, or
   * the database that ran it, keeps a clock a little ahead) comes back when it is due.
   */
  private async comeBackWhenClaimLapses(deliveryId: string): Promise<void> {
    const now = this.deps.clock.now()
    const unclaimed = await deliveries.selectUnclaimed(this.deps.pool, deliveryId, now)
    if (unclaimed?.leaseUntil) await enqueueAfterClaim(this.deps.pool, deliveryId, unclaimed.url, unclaimed.leaseUntil)
    else if (unclaimed?.dueAt && unclaimed.dueAt.getTime() - now.getTime() <= CLOCK_SKEW_MARGIN_MS) {
      await enqueueDelivery(
        this.deps.pool,
        deliveryId,
        unclaimed.url,
        unclaimed.dueAt.getTime() - now.getTime(),
        RETRY_PRIORITY,
      )
    }
  }

  private async environmentOf(partnerId: string): Promise<PartnerEnvironment> {
    let environment = this.environments.get(partnerId)
    if (!environment) {
      environment = (await getPartner(this.deps.pool, partnerId))?.environment ?? 'live'
      this.environments.set(partnerId, environment)
    }
    return environment
  }

  private async secretFor(event: repo.EventRecord): Promise<string | undefined> {
    if (event.signing === 'sealed') return open(this.deps.masterKey, event.secretSealed!, event.secretBoundTo!)
    if (event.signing === 'none') return undefined
    const cached = this.secrets.get(event.partnerId)
    const nowMs = this.deps.clock.now().getTime()
    if (cached && nowMs - cached.readAtMs < SECRET_CACHE_MS) return cached.secret
    const secret = await currentCallbackSecret(this.deps.pool, this.deps.masterKey, event.partnerId)
    this.secrets.set(event.partnerId, { secret, readAtMs: nowMs })
    return secret
  }

  private agentFor(policy: CallbackPolicy): Agent {
    const key = `${policy.requireHttps}:${policy.allowLoopback}`
    let agent = this.agents.get(key)
    if (!agent) {
      // The connection resolves names through the guard, so it reaches only addresses the guard allowed.
      agent = new Agent({
        connect: { lookup: guardedLookup(policy), timeout: this.timeoutMs },
        keepAliveTimeout: 4_000,
      })
      this.agents.set(key, agent)
    }
    return agent
  }

  private async post(
    url: string,
    policy: CallbackPolicy,
    event: repo.EventRecord,
    secret: string | undefined,
  ): Promise<AttemptResult> {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const check = await checkCallbackUrl(url, policy)
    if (!check.ok) return { kind: 'no_answer', error: `refused: callback URL ${check.reason}`, durationMs: elapsed() }
    const headers = deliveryHeaders({
      eventId: event.id,
      eventType: event.type,
      body: event.body,
      timestampS: unixSeconds(this.deps.clock),
      secret,
    })
    try {
      const response = await request(url, {
        method: 'POST',
        headers,
        body: event.body,
        dispatcher: this.agentFor(policy), // undici's request never follows redirects: a 3xx is a failed attempt
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      })
      const excerpt = await readExcerpt(response.body)
      return {
        kind: 'answered',
        statusCode: response.statusCode,
        retryAfterMs: parseRetryAfter(response.headers['retry-after'], this.deps.clock.now().getTime()),
        excerpt,
        durationMs: elapsed(),
      }
    } catch (error) {
      return { kind: 'no_answer', error: describeError(error, this.timeoutMs), durationMs: elapsed() }
    }
  }

  private async recordOutcome(
    claimed: deliveries.ClaimedAttempt,
    startedAt: Date,
    result: AttemptResult,
  ): Promise<void> {
    const { delivery, attemptNumber } = claimed
    const statusCode = result.kind === 'answered' ? result.statusCode : null
    const error =
      result.kind === 'answered' ? (isSuccess(result.statusCode) ? null : `HTTP ${result.statusCode}`) : result.error
    const attempt: deliveries.Attempt = {
      deliveryId: delivery.id,
      attemptNumber,
      url: delivery.url,
      startedAt,
      durationMs: result.durationMs,
      statusCode,
      error,
      responseExcerpt: result.kind === 'answered' ? result.excerpt : null,
    }
    const report = (outcome: 'delivered' | 'retrying' | 'failed') =>
      this.deps.onAttempt?.({ statusCode, result: outcome, durationMs: result.durationMs })
    if (statusCode !== null && isSuccess(statusCode)) {
      // The common case is one statement; waking the next event of the object may follow (the sweep covers a crash in between).
      const finished = await deliveries.finishAttempt(
        this.deps.pool,
        delivery.id,
        attemptNumber,
        { status: 'delivered', error: null, at: this.deps.clock.now() },
        attempt,
      )
      report('delivered')
      if (finished.next)
        await enqueueDelivery(
          this.deps.pool,
          finished.next.id,
          finished.next.url,
          this.dueInMs(finished.next.nextAttemptAt),
        )
      return
    }
    const gaveUp = statusCode === 410 || attemptNumber > this.retryDelaysMs.length
    await withTransaction(this.deps.pool, (tx) => this.recordUnsuccessful(tx, claimed, attempt, result, error))
    report(gaveUp ? 'failed' : 'retrying')
  }

  /**
   * An attempt that did not deliver, on one transaction: a 410 disables the URL and fails the
   * delivery, the last attempt fails it, any other schedules the next attempt by the retry plan
   * (or the receiver's Retry-After).
   */
  private async recordUnsuccessful(
    tx: Queryable,
    claimed: deliveries.ClaimedAttempt,
    attempt: deliveries.Attempt,
    result: AttemptResult,
    error: string | null,
  ): Promise<void> {
    const { delivery, event, attemptNumber } = claimed
    const statusCode = result.kind === 'answered' ? result.statusCode : null
    if (statusCode === 410) {
      // The receiver says the endpoint is gone for good: stop, and stop its other deliveries too.
      await deliveries.insertDisabledUrl(
        tx,
        delivery.partnerId,
        delivery.url,
        `the receiver answered 410 Gone to event ${event.id}`,
      )
      const finished = await deliveries.finishAttempt(
        tx,
        delivery.id,
        attemptNumber,
        { status: 'failed', error: 'HTTP 410: endpoint disabled', at: this.deps.clock.now() },
        attempt,
      )
      if (finished.finished)
        await this.afterFailure(
          tx,
          delivery,
          event,
          'HTTP 410 Gone: the URL is disabled until it is set again',
          finished.next,
        )
    } else if (attemptNumber > this.retryDelaysMs.length) {
      const finished = await deliveries.finishAttempt(
        tx,
        delivery.id,
        attemptNumber,
        { status: 'failed', error, at: this.deps.clock.now() },
        attempt,
      )
      if (finished.finished) await this.afterFailure(tx, delivery, event, error, finished.next)
    } else {
      const retryAfterMs = result.kind === 'answered' ? result.retryAfterMs : undefined
      const nextAttemptAt = new Date(
        this.deps.clock.now().getTime() + retryDelayMs(this.retryDelaysMs, attemptNumber, retryAfterMs),
      )
      const finished = await deliveries.finishAttempt(
        tx,
        delivery.id,
        attemptNumber,
        { status: 'pending', error, nextAttemptAt, at: this.deps.clock.now() },
        attempt,
      )
      if (finished.finished)
        await enqueueDelivery(tx, delivery.id, delivery.url, this.dueInMs(nextAttemptAt), RETRY_PRIORITY)
    }
  }

  /** How long until a time of this worker's clock (negative when past). */
  private dueInMs(at: Date): number {
    return at.getTime() - this.deps.clock.now().getTime()
  }

  /** A delivery failed for good: record it where the partner can see it, and let the next one of the object go. */
  private async afterFailure(
    tx: Queryable,
    delivery: deliveries.Delivery,
    event: repo.EventRecord,
    error: string | null,
    next: deliveries.Finished['next'],
  ): Promise<void> {
    await recordEvent(tx, this.deps.clock, {
      partnerId: event.partnerId,
      type: EVENT_DELIVERY_FAILED,
      objectType: 'event',
      objectId: event.id,
      data: { eventId: event.id, eventType: event.type, url: delivery.url, deliveryId: delivery.id, lastError: error },
      recordOnly: true,
    })
    if (next) await enqueueDelivery(tx, next.id, next.url, this.dueInMs(next.nextAttemptAt))
  }
}

/**
 * The wait after failed attempt `attemptNumber`: the schedule's delay with ±10 % jitter, or longer
 * when the receiver's answer (any failure status) carried Retry-After — but never longer than the
 * schedule's longest delay. A receiver may slow its retries down, within the schedule's bounds; it
 * can neither hurry them (a 503 with `Retry-After: 7` once spent all ten attempts in 63 s) nor park
 * a delivery beyond the schedule.
 */
export function retryDelayMs(
  retryDelaysMs: readonly number[],
  attemptNumber: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  const base = retryDelaysMs[attemptNumber - 1]!
  const scheduledMs = Math.round(base * (1 - JITTER_FRACTION + random() * 2 * JITTER_FRACTION))
  if (retryAfterMs === undefined) return scheduledMs
  return Math.max(scheduledMs, Math.min(retryAfterMs, Math.max(...retryDelaysMs)))
}

function isSuccess(statusCode: number): boolean {
  return statusCode >= 200 && statusCode < 300
}

async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    chunks.push(chunk)
    size += chunk.length
    if (size >= RESPONSE_EXCERPT_BYTES) {
      body.destroy() // a receiver may answer with anything; we never read more than this
      break
    }
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8')
}

/** Retry-After in seconds or as an HTTP date, bounded to a day. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value
  if (!text) return undefined
  const seconds = /^\d+$/.test(text.trim()) ? Number(text.trim()) * 1000 : Date.parse(text) - nowMs
  if (!Number.isFinite(seconds)) return undefined
  return Math.min(Math.max(seconds, 1_000), RETRY_AFTER_MAX_MS)
}

function describeError(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } }
  if (
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `no answer within ${timeoutMs} ms`
  }
  const code = e.code ?? e.cause?.code
  const message = e.message ?? e.cause?.message ?? String(error)
  return code ? `${code}: ${message}` : message
}
