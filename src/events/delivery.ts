// One delivery attempt, made by a graphile-worker job (DESIGN §9): claim the attempt, sign, POST,
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
import { open } from '../platform/crypto.ts'
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { checkCallbackUrl, guardedLookup, type CallbackPolicy } from './address-guard.ts'
import * as repo from './repo.ts'
import { callbackPolicyFor, enqueueDelivery, EVENT_DELIVERY_FAILED, recordEvent } from './service.ts'
import { deliveryHeaders } from './signing.ts'

/** DESIGN §9: the wait before each retry; the first attempt is at once. About three days in all. */
export const RETRY_DELAYS_MS: readonly number[] = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400].map((s) => s * 1000)
export const DELIVERY_TIMEOUT_MS = 10_000
/** Only the first bytes of an answer are read and kept. */
export const RESPONSE_EXCERPT_BYTES = 1_024
const RETRY_AFTER_MAX_MS = 86_400_000
const JITTER_FRACTION = 0.1

export interface DeliverySettings {
  /** A 2xx must arrive within this. */
  timeoutMs?: number
  /** Waits before the 2nd, 3rd, … attempt; its length + 1 is the number of attempts. */
  retryDelaysMs?: readonly number[]
  /** Sandbox partners may use loopback receivers (RAIL_ALLOW_LOOPBACK_CALLBACKS). */
  allowLoopbackCallbacks: boolean
}

export interface DeliveryDeps {
  pool: Pool
  masterKey: Buffer
  settings: DeliverySettings
}

type AttemptResult =
  | { kind: 'answered'; statusCode: number; retryAfterMs: number | undefined; excerpt: string; durationMs: number }
  | { kind: 'no_answer'; error: string; durationMs: number }

/** Makes the attempts of deliveries: one Agent per policy, kept for the life of the worker. */
export class Deliverer {
  private readonly deps: DeliveryDeps
  private readonly timeoutMs: number
  private readonly retryDelaysMs: readonly number[]
  private readonly agents = new Map<string, Agent>()
  /** A partner's environment never changes, so it is looked up once. */
  private readonly environments = new Map<string, PartnerEnvironment>()

  constructor(deps: DeliveryDeps) {
    this.deps = deps
    this.timeoutMs = deps.settings.timeoutMs ?? DELIVERY_TIMEOUT_MS
    this.retryDelaysMs = deps.settings.retryDelaysMs ?? RETRY_DELAYS_MS
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((agent) => agent.close()))
  }

  /** Makes the next attempt of a delivery if it is due and free; otherwise does nothing. */
  async attempt(deliveryId: string): Promise<void> {
    const { pool } = this.deps
    const claimed = await repo.claimAttempt(pool, deliveryId, this.timeoutMs + 5_000)
    if (!claimed) return
    const { delivery, event } = claimed
    const disabled = await repo.selectUrlDisabled(pool, delivery.partnerId, delivery.url)
    if (disabled) {
      await this.failWithoutAttempt(delivery, event, `callback URL disabled at ${disabled.disabledAt.toISOString()}: ${disabled.reason}`)
      return
    }
    const policy = callbackPolicyFor(await this.environmentOf(delivery.partnerId), this.deps.settings.allowLoopbackCallbacks)
    const startedAt = new Date()
    const result = await this.post(delivery.url, policy, event, await this.secretFor(event))
    await this.recordOutcome(claimed, startedAt, result)
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
    if (event.signing === 'partner') return currentCallbackSecret(this.deps.pool, this.deps.masterKey, event.partnerId)
    if (event.signing === 'sealed') return open(this.deps.masterKey, event.secretSealed!, event.secretBoundTo!)
    return undefined
  }

  private agentFor(policy: CallbackPolicy): Agent {
    const key = `${policy.requireHttps}:${policy.allowLoopback}`
    let agent = this.agents.get(key)
    if (!agent) {
      // The connection resolves names through the guard, so it reaches only addresses the guard allowed.
      agent = new Agent({ connect: { lookup: guardedLookup(policy), timeout: this.timeoutMs }, keepAliveTimeout: 4_000 })
      this.agents.set(key, agent)
    }
    return agent
  }

  private async post(url: string, policy: CallbackPolicy, event: repo.EventRecord, secret: string | undefined): Promise<AttemptResult> {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const check = await checkCallbackUrl(url, policy)
    if (!check.ok) return { kind: 'no_answer', error: `refused: callback URL ${check.reason}`, durationMs: elapsed() }
    const headers = deliveryHeaders({ eventId: event.id, eventType: event.type, body: event.body, timestampS: Math.floor(Date.now() / 1000), secret })
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
      return { kind: 'answered', statusCode: response.statusCode, retryAfterMs: parseRetryAfter(response.headers['retry-after']), excerpt, durationMs: elapsed() }
    } catch (error) {
      return { kind: 'no_answer', error: describeError(error, this.timeoutMs), durationMs: elapsed() }
    }
  }

  private async recordOutcome(claimed: repo.ClaimedAttempt, startedAt: Date, result: AttemptResult): Promise<void> {
    const { delivery, event, attemptNumber } = claimed
    const statusCode = result.kind === 'answered' ? result.statusCode : null
    const error = result.kind === 'answered' ? (isSuccess(result.statusCode) ? null : `HTTP ${result.statusCode}`) : result.error
    await withTransaction(this.deps.pool, async (tx) => {
      await repo.insertAttempt(tx, {
        deliveryId: delivery.id,
        attemptNumber,
        url: delivery.url,
        startedAt,
        durationMs: result.durationMs,
        statusCode,
        error,
        responseExcerpt: result.kind === 'answered' ? result.excerpt : null,
      })
      if (statusCode !== null && isSuccess(statusCode)) {
        if (await repo.finishAttempt(tx, delivery.id, attemptNumber, { status: 'delivered', error: null })) await this.closeDelivery(tx, delivery, event, 'delivered')
      } else if (statusCode === 410) {
        // The receiver says the endpoint is gone for good: stop, and stop its other deliveries too.
        const reason = `the receiver answered 410 Gone to event ${event.id}`
        await repo.insertDisabledUrl(tx, delivery.partnerId, delivery.url, reason)
        if (await repo.finishAttempt(tx, delivery.id, attemptNumber, { status: 'failed', error: `HTTP 410: endpoint disabled` })) {
          await this.closeDelivery(tx, delivery, event, 'failed', `HTTP 410 Gone: the URL is disabled until it is set again`)
        }
      } else if (attemptNumber > this.retryDelaysMs.length) {
        if (await repo.finishAttempt(tx, delivery.id, attemptNumber, { status: 'failed', error })) await this.closeDelivery(tx, delivery, event, 'failed', error)
      } else {
        const nextAttemptAt = new Date(Date.now() + this.retryDelayMs(attemptNumber, result))
        if (await repo.finishAttempt(tx, delivery.id, attemptNumber, { status: 'pending', error, nextAttemptAt })) await enqueueDelivery(tx, delivery.id, nextAttemptAt)
      }
    })
  }

  /** The wait after attempt `attemptNumber`: the schedule with ±10 % jitter, or the receiver's Retry-After on 429/503. */
  private retryDelayMs(attemptNumber: number, result: AttemptResult): number {
    if (result.kind === 'answered' && (result.statusCode === 429 || result.statusCode === 503) && result.retryAfterMs !== undefined) {
      return result.retryAfterMs
    }
    const base = this.retryDelaysMs[attemptNumber - 1]!
    return Math.round(base * (1 - JITTER_FRACTION + Math.random() * 2 * JITTER_FRACTION))
  }

  private async failWithoutAttempt(delivery: repo.Delivery, event: repo.EventRecord, error: string): Promise<void> {
    await withTransaction(this.deps.pool, async (tx) => {
      if (await repo.failWithoutAttempt(tx, delivery.id, error)) await this.closeDelivery(tx, delivery, event, 'failed', error)
    })
  }

  /** A delivery reached its end: say so on the event, record a failure, and let the next one of the object go. */
  private async closeDelivery(tx: Queryable, delivery: repo.Delivery, event: repo.EventRecord, status: 'delivered' | 'failed', error?: string | null): Promise<void> {
    await repo.updateEventDeliveryStatus(tx, event.id, status)
    if (status === 'failed') {
      await recordEvent(tx, {
        partnerId: event.partnerId,
        type: EVENT_DELIVERY_FAILED,
        objectType: 'event',
        objectId: event.id,
        data: { eventId: event.id, eventType: event.type, url: delivery.url, deliveryId: delivery.id, lastError: error ?? null },
        recordOnly: true,
      })
    }
    const ordering = await repo.selectOrderingKey(tx, delivery.id)
    const next = ordering && (await repo.selectNextInOrder(tx, ordering.url, ordering.orderingKey))
    if (next) await enqueueDelivery(tx, next.id, next.nextAttemptAt)
  }
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
export function parseRetryAfter(value: string | string[] | undefined, nowMs = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value
  if (!text) return undefined
  const seconds = /^\d+$/.test(text.trim()) ? Number(text.trim()) * 1000 : Date.parse(text) - nowMs
  if (!Number.isFinite(seconds)) return undefined
  return Math.min(Math.max(seconds, 1_000), RETRY_AFTER_MAX_MS)
}

function describeError(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } }
  if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `no answer within ${timeoutMs} ms`
  }
  const code = e.code ?? e.cause?.code
  const message = e.message ?? e.cause?.message ?? String(error)
  return code ? `${code}: ${message}` : message
}
