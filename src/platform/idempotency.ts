// Idempotency (docs/design.md §5): a request is identified by its reference, and told apart from a
// different request with the same reference by a hash of its body. Every create and move takes its
// reference the same way (claimReference): the object's row is inserted with INSERT … ON CONFLICT
// DO NOTHING RETURNING as the first write of the create's own transaction. A concurrent duplicate's
// insert waits only for the first transaction to end (milliseconds: no bank is called inside it),
// then reads the committed row; the stored object is answered (a replay) when the body is the same,
// and 409 idempotency_conflict, in one form, when it is not.
import { createHash } from 'node:crypto'
import { RailError } from './errors.ts'

/** SHA-256 of the body with object keys sorted, so that key order does not make a new request. */
export function requestHash(body: unknown): string {
  return createHash('sha256').update(stableJson(body)).digest('hex')
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${stableJson(field)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/** The header a replayed response carries. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed'

/** What one kind of object taken by a reference says about itself. */
export interface ReferenceKind<T> {
  /** The request field the partner puts the reference in, as messages name it (`clientReference`). */
  field: string
  /** The request hash stored with the object. */
  hashOf(stored: T): string
  /** The object's id as the API shows it: a conflict's details name it. */
  idOf(stored: T): string
}

/** One request's reference: the partner's reference and the hash of the request's body. */
export interface ReferenceKey {
  reference: string
  requestHash: string
}

/** A claim's result: the object this request made, or the one an earlier request with the reference made. */
export type Claimed<T> = { created: T; replayed?: undefined } | { replayed: T; created?: undefined }

/** When a caller asks again whose reference's claim is not visible yet: a claim is one short transaction. */
const CLAIM_IN_PROGRESS_RETRY_AFTER_S = 1

/**
 * Claims a reference on the caller's transaction. `insert` is the object's INSERT … ON CONFLICT
 * DO NOTHING RETURNING on the reference's unique key, and must be the transaction's first write:
 * it answers the new object, or undefined when the reference is taken — by then the request that
 * took it has committed (the insert waited for it), so `findExisting`, on the same transaction,
 * reads it. A taken reference answers the stored object (same body) or throws 409.
 */
export async function claimReference<T>(
  kind: ReferenceKind<T>,
  key: ReferenceKey,
  insert: () => Promise<T | undefined>,
  findExisting: () => Promise<T | undefined>,
): Promise<Claimed<T>> {
  const created = await insert()
  if (created !== undefined) return { created }
  return replayOf(kind, key, await findExisting())
}

/**
 * The fast path before a create's transaction (and the way back to a reference a batched claim
 * found taken): the stored object under the reference, as a replay — or 409 for another body —
 * or undefined when there is none yet.
 */
export async function findReplay<T>(
  kind: ReferenceKind<T>,
  key: ReferenceKey,
  findExisting: () => Promise<T | undefined>,
): Promise<{ replayed: T } | undefined> {
  const stored = await findExisting()
  return stored === undefined ? undefined : replayOf(kind, key, stored)
}

/**
 * The answer to a reference found taken: the stored object when the request is the same, else
 * 409 idempotency_conflict naming it. Not visible (a claim taken back in the same batch, say):
 * 409 request_in_progress with Retry-After — the caller asks again for the stored result.
 */
export function replayOf<T>(kind: ReferenceKind<T>, key: ReferenceKey, stored: T | undefined): { replayed: T } {
  if (stored === undefined) {
    throw new RailError(
      'request_in_progress',
      `The first request with ${kind.field} ${key.reference} is still being recorded; retry for its result`,
      { reference: key.reference },
      {
        retryAfterS: CLAIM_IN_PROGRESS_RETRY_AFTER_S,
      },
    )
  }
  if (kind.hashOf(stored) !== key.requestHash) throw idempotencyConflict(kind, key, kind.idOf(stored))
  return { replayed: stored }
}

/**
 * The one 409 idempotency_conflict: the reference was used with another body. `existingId` names
 * the object that request made; null only where a provider, not Rail, holds the other request's
 * result (a wallet opened at the provider whose recording has not happened).
 */
export function idempotencyConflict<T>(
  kind: ReferenceKind<T>,
  key: ReferenceKey,
  existingId: string | null,
): RailError {
  return new RailError(
    'idempotency_conflict',
    `${kind.field} ${key.reference} was already used with a different request`,
    { reference: key.reference, id: existingId },
  )
}

/**
 * Claims many references with one insert (a batch of coalesced requests): `insertMany` is the
 * rows' INSERT … ON CONFLICT DO NOTHING RETURNING, and a row it does not return had its reference
 * taken — before, or earlier in the same batch. Answers each row's object, or undefined where
 * the reference was taken (the caller answers it with findReplay once the batch has committed).
 */
export async function claimReferences<R extends { id: string }, T extends { id: string }>(
  rows: readonly R[],
  insertMany: (rows: readonly R[]) => Promise<T[]>,
): Promise<(T | undefined)[]> {
  const created = new Map((await insertMany(rows)).map((object) => [object.id, object]))
  return rows.map((row) => created.get(row.id))
}

/**
 * A reply with its status set (`reply.code(201)`): its `send` takes only the body that status's
 * response schema describes, so the compiler checks each create's body against its schema.
 */
interface CodedReply<Body, R> {
  header(name: string, value: string): unknown
  send: (body: Body) => R
}

/**
 * How every route answers a create or move: the same status and body for the first request and
 * its replays, the replays marked `Idempotent-Replayed: true`. The status is set by the caller
 * (`sendOnce(reply.code(201), …)`) so that the body is typed by that status's schema.
 */
export function sendOnce<Body, R>(reply: CodedReply<Body, R>, replayed: boolean, body: NoInfer<Body>): R {
  if (replayed) void reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true')
  return reply.send(body)
}
