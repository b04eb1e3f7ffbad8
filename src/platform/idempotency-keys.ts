// The Idempotency-Key header (docs/api.md, "Replays and idempotency"; docs/decisions/0018-idempotency-key.md).
// A create or move is idempotent on the caller's reference (src/platform/idempotency.ts); every
// other state-changing route takes one optional client-chosen key, Stripe's convention: the first
// request's answer is stored under (partner, key) with a hash of its method, path and body; the
// same request again with the key is answered from the store (`Idempotent-Replayed: true`), and
// another request with the key is 409 idempotency_conflict. Without a key a request is simply run.
//
// A route takes the key in one of three ways (`config.idempotencyKey`):
// - 'claimed-before' (the default): the key is claimed in a statement of its own before the
//   handler runs, as a call to another system needs. The same request with the key meanwhile is
//   409 request_in_progress (another is idempotency_conflict, as ever); the answer is stored once sent. An error answer means nothing was
//   done (Rail's services refuse before any write): the claim is released and the key may be sent
//   again — except an answer whose outcome is unknown (`details.outcome: 'unknown'`), stored like
//   a success, so that a retry cannot do twice what may have been done once.
// - 'in-transaction': the service claims the key (claimKeyInTransaction) in the transaction that
//   makes the effect, so a concurrent request with the key waits for that transaction and then
//   makes nothing; both answer the object. A request refused inside it takes its claim back with it.
// - 'reference': a create on the caller's reference, which decides; the key is checked and unused.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Pool, Queryable } from './db.ts'
import { errorBody, fieldError, RailError, type ErrorBody } from './errors.ts'
import type { HttpServer } from './http.ts'
import { IDEMPOTENT_REPLAYED_HEADER, requestHash } from './idempotency.ts'
import { timeStage } from './observability/stages.ts'

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key'
/** Stripe's limit: room for a UUID with a prefix, or a hash, and no more. */
export const IDEMPOTENCY_KEY_MAX_CHARS = 255
/** A key is kept this long (Stripe's 24 h): longer than any client's retries, so a retry is never run twice. */
export const IDEMPOTENCY_KEY_KEPT_S = 24 * 60 * 60
/** Expired keys deleted by one claim, at most: the work of a claim stays bounded however long a partner was idle. */
const EXPIRED_DELETED_PER_CLAIM_MAX = 100
/** When a request with a key still being worked may be asked again: a claimed-before request is one call to another system. */
const IN_PROGRESS_RETRY_AFTER_S = 1
/** Printable ASCII, space to tilde: what a header carries unchanged through every proxy. */
const KEY_PATTERN = /^[\x20-\x7e]+$/
const STATE_CHANGING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export type IdempotencyKeyMode = 'claimed-before' | 'in-transaction' | 'reference'

/** Whether a route with these methods changes state, and so takes an Idempotency-Key. */
export function takesIdempotencyKey(method: string | readonly string[]): boolean {
  return (typeof method === 'string' ? [method] : method).some((name) => STATE_CHANGING_METHODS.has(name.toUpperCase()))
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How a state-changing route takes the Idempotency-Key header; 'claimed-before' when absent (see the file's header). */
    idempotencyKey?: IdempotencyKeyMode
  }
  interface FastifyRequest {
    /** The request's Idempotency-Key, checked, on a state-changing route whose key is not its reference's. */
    idempotencyKey: IdempotencyKey | undefined
  }
}

/** One request's key: whose it is, the key, and what names the request (method, path, body). */
export interface IdempotencyKey {
  partnerId: string
  key: string
  requestHash: string
  /** Set once this request holds the key: its answer is then stored. */
  claimed: boolean
}

/** A key for a request that does not come over HTTP (a dashboard form's hidden reference): `request` names what it asks. */
export function idempotencyKeyFor(partnerId: string, key: string, request: unknown): IdempotencyKey {
  return { partnerId, key, requestHash: requestHash(request), claimed: false }
}

interface StoredKey {
  request_hash: string
  response_status: number | null
  response_body: string | null
}

/** A claim's result: the key is this request's now, or an earlier request with it holds it. */
type Claim = { kind: 'claimed' } | { kind: 'held'; stored: StoredKey }

export interface IdempotencyKeyOptions {
  pool: Pool
  /** The authenticated partner of a request; undefined on a route without credentials, which takes no key. */
  partnerIdOf(request: FastifyRequest): string | undefined
}

/** Reads, claims and stores the Idempotency-Key of every authenticated state-changing request. */
export function installIdempotencyKeys(app: HttpServer, options: IdempotencyKeyOptions): void {
  app.decorateRequest('idempotencyKey', undefined)
  app.addHook('preHandler', async (request, reply) => {
    if (!STATE_CHANGING_METHODS.has(request.method)) return
    const partnerId = options.partnerIdOf(request)
    const key = partnerId === undefined ? undefined : keyOf(request)
    const mode = request.routeOptions.config.idempotencyKey ?? 'claimed-before'
    if (partnerId === undefined || key === undefined || mode === 'reference') return
    const idempotencyKey: IdempotencyKey = {
      partnerId,
      key,
      requestHash: requestHash({ method: request.method, path: request.url, body: request.body ?? null }),
      claimed: false,
    }
    request.idempotencyKey = idempotencyKey
    if (mode === 'in-transaction') {
      // The fast path: an answer already stored needs no transaction. Otherwise the service claims.
      const stored = await timeStage('idempotency', () => selectKey(options.pool, idempotencyKey))
      if (stored?.response_status != null) return sendStored(reply, idempotencyKey, stored)
      return
    }
    const claim = await timeStage('idempotency', () => claimKey(options.pool, idempotencyKey))
    if (claim.kind === 'held') {
      // Another request under the key is a conflict whether or not the first has its answer yet.
      if (claim.stored.request_hash !== idempotencyKey.requestHash) throw conflict(idempotencyKey)
      if (claim.stored.response_status === null) throw inProgress(idempotencyKey)
      return sendStored(reply, idempotencyKey, claim.stored)
    }
  })
  app.addHook('onSend', async (request, reply, payload) => {
    const key = request.idempotencyKey
    if (!key?.claimed) return payload
    key.claimed = false
    const mode = request.routeOptions.config.idempotencyKey ?? 'claimed-before'
    if (isStored(mode, reply.statusCode, payload))
      await timeStage('answer_write', () => storeResponse(options.pool, key, reply.statusCode, payload))
    else if (mode === 'claimed-before') await timeStage('answer_write', () => releaseKey(options.pool, key))
    return payload
  })
}

/** The request's key, checked: absent, or 1–255 printable ASCII characters (422 naming the header otherwise). */
function keyOf(request: FastifyRequest): string | undefined {
  const value = request.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()]
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw fieldError(IDEMPOTENCY_KEY_HEADER, 'must be sent once')
  if (value.length === 0 || value.length > IDEMPOTENCY_KEY_MAX_CHARS || !KEY_PATTERN.test(value)) {
    throw fieldError(IDEMPOTENCY_KEY_HEADER, `must be 1 to ${IDEMPOTENCY_KEY_MAX_CHARS} printable ASCII characters`)
  }
  return value
}

/**
 * Whether an answer is kept for the key's replays: a success is; an error is not — nothing was
 * done, so the key may be sent again (claimed in the effect's transaction, the rollback took the
 * claim back) — unless it says its outcome is unknown.
 */
function isStored(mode: IdempotencyKeyMode, statusCode: number, payload: unknown): boolean {
  if (statusCode < 400) return true
  return mode === 'claimed-before' && typeof payload === 'string' && outcomeUnknown(payload)
}

/**
 * Runs `effect` once for a key, as a claimed-before route does, for a caller that is not an HTTP
 * route (a dashboard form, the checkout page, whose hidden random key makes a double submit one):
 * the same key again answers the stored answer; while the first is worked, 409
 * request_in_progress; an error that did nothing releases the key, one whose outcome is unknown
 * is kept and thrown again.
 */
export async function onceForKey<T>(
  pool: Pool,
  key: IdempotencyKey,
  effect: () => Promise<T>,
): Promise<{ answer: T; replayed: boolean }> {
  const claim = await claimKey(pool, key)
  if (claim.kind === 'held') {
    if (claim.stored.request_hash !== key.requestHash) throw conflict(key)
    if (claim.stored.response_status === null || claim.stored.response_body === null) throw inProgress(key)
    const stored = JSON.parse(claim.stored.response_body) as unknown
    if (claim.stored.response_status >= 400) {
      const error = stored as ErrorBody
      throw new RailError(error.error, error.message, error.details)
    }
    return { answer: stored as T, replayed: true }
  }
  try {
    const answer = await effect()
    await storeResponse(pool, key, 200, JSON.stringify(answer))
    return { answer, replayed: false }
  } catch (error) {
    if (error instanceof RailError && error.details?.outcome === 'unknown')
      await storeResponse(pool, key, error.statusCode, JSON.stringify(errorBody(error)))
    else await releaseKey(pool, key)
    throw error
  }
}

function outcomeUnknown(payload: string): boolean {
  try {
    return (JSON.parse(payload) as { details?: { outcome?: unknown } }).details?.outcome === 'unknown'
  } catch {
    return false
  }
}

function sendStored(reply: FastifyReply, key: IdempotencyKey, stored: StoredKey): FastifyReply {
  if (stored.request_hash !== key.requestHash) throw conflict(key)
  return reply
    .code(stored.response_status!)
    .header(IDEMPOTENT_REPLAYED_HEADER, 'true')
    .type('application/json; charset=utf-8')
    .send(stored.response_body)
}

function conflict(key: IdempotencyKey): RailError {
  return new RailError(
    'idempotency_conflict',
    `${IDEMPOTENCY_KEY_HEADER} ${key.key} was already used with a different request`,
    { idempotencyKey: key.key },
  )
}

function inProgress(key: IdempotencyKey): RailError {
  return new RailError(
    'request_in_progress',
    `The first request with ${IDEMPOTENCY_KEY_HEADER} ${key.key} is still being worked; retry for its answer`,
    { idempotencyKey: key.key },
    {
      retryAfterS: IN_PROGRESS_RETRY_AFTER_S,
    },
  )
}

/**
 * Claims the request's key in the transaction that makes its effect (routes whose mode is
 * 'in-transaction'). 'first': no key was sent, or the key is this request's now — make the
 * effect. 'replayed': an earlier request with the key made it (the claim waited for its
 * transaction to end) — make nothing and answer the object as it is. Another request under the
 * key is 409 idempotency_conflict.
 */
export async function claimKeyInTransaction(
  tx: Queryable,
  key: IdempotencyKey | undefined,
): Promise<'first' | 'replayed'> {
  if (key === undefined) return 'first'
  const claim = await claimKey(tx, key)
  if (claim.kind === 'claimed') return 'first'
  if (claim.stored.request_hash !== key.requestHash) throw conflict(key)
  return 'replayed'
}

/**
 * Inserts the key, or reads the request that holds it. A concurrent claim of the same key waits
 * on the first one's row until its transaction ends. The partner's expired keys go in the same
 * statement (locked ones are left to the next claim: no claim waits on another's clean-up).
 */
async function claimKey(db: Queryable, key: IdempotencyKey): Promise<Claim> {
  for (let attempt = 1; ; attempt++) {
    const inserted = await db.query(
      `WITH expired AS (
         DELETE FROM idempotency_keys WHERE (partner_id, key) IN (
           SELECT partner_id, key FROM idempotency_keys
            WHERE partner_id = $1 AND created_at < now() - make_interval(secs => $4)
            ORDER BY created_at LIMIT $5 FOR UPDATE SKIP LOCKED))
       INSERT INTO idempotency_keys (partner_id, key, request_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [key.partnerId, key.key, key.requestHash, IDEMPOTENCY_KEY_KEPT_S, EXPIRED_DELETED_PER_CLAIM_MAX],
    )
    if (inserted.rowCount === 1) {
      key.claimed = true
      return { kind: 'claimed' }
    }
    // A statement of its own: its snapshot sees the row the conflicting request committed.
    const stored = await selectKey(db, key)
    if (stored) return { kind: 'held', stored }
    // The holder released it, or it expired and went, between the two statements: claim again.
    if (attempt >= 3) throw new Error('idempotency_keys: a key was claimed and released three times in a row')
  }
}

async function selectKey(db: Queryable, key: IdempotencyKey): Promise<StoredKey | undefined> {
  const { rows } = await db.query<StoredKey>(
    `SELECT request_hash, response_status, response_body FROM idempotency_keys
      WHERE partner_id = $1 AND key = $2 AND created_at >= now() - make_interval(secs => $3)`,
    [key.partnerId, key.key, IDEMPOTENCY_KEY_KEPT_S],
  )
  return rows[0]
}

async function storeResponse(db: Queryable, key: IdempotencyKey, statusCode: number, payload: unknown): Promise<void> {
  const body = typeof payload === 'string' ? payload : null
  await db.query(
    `UPDATE idempotency_keys SET response_status = $3, response_body = $4 WHERE partner_id = $1 AND key = $2`,
    [key.partnerId, key.key, statusCode, body],
  )
}

/** Gives a claimed-before key back when its request did nothing, so that it may be sent again. */
async function releaseKey(db: Queryable, key: IdempotencyKey): Promise<void> {
  await db.query(`DELETE FROM idempotency_keys WHERE partner_id = $1 AND key = $2 AND response_status IS NULL`, [
    key.partnerId,
    key.key,
  ])
}
