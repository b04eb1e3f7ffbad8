// What keeps a replayed signed request harmless (docs/api.md, "Replays and idempotency"). A
// signature is accepted for ±300 s, so within that window the same request can arrive again — a
// client's retry or someone else's replay. Routes with a reference are idempotent on it; the two
// mechanisms here cover the rest, once, for every route that needs them:
// - decideSignedChange: a change that sets values is applied only if it was signed no earlier
//   than the last change applied to the same object (a replayed older change must not undo a
//   newer one), while an identical retry within the same second still answers 200.
// - claimSignature: a route with no reference remembers each signature, so the same signed
//   request again repeats nothing.
// Both read the signature headers, which authentication verified before any handler runs.
import type { FastifyRequest } from 'fastify'
import type { Queryable } from './db.ts'
import { RailError } from './errors.ts'
import { requestHash } from './idempotency.ts'

/** A signature is accepted this long either side of now (docs/authentication.md); a remembered one is kept twice as long. */
const SIGNATURE_REMEMBERED_S = 600
/**
 * Distinct changes to one object applied within one signed second, at most. Each is remembered
 * (by its body hash) until a later second's change; past this the client is asked to wait a second.
 */
export const CHANGES_PER_SECOND_MAX = 16

export interface SignedRequest {
  /** X-Rail-Timestamp: the whole second the client signed the request at. */
  signedAtS: number
  /** X-Rail-Signature: it covers the timestamp, method, path and body, so it names the exact request. */
  signature: string
}

/** The verified signature headers of a request on a route whose scheme is 'signature'. */
export function signedRequestOf(request: FastifyRequest): SignedRequest {
  const timestamp = request.headers['x-rail-timestamp']
  const signature = request.headers['x-rail-signature']
  if (typeof timestamp !== 'string' || typeof signature !== 'string') {
    throw new Error(`route ${request.routeOptions.url} read signature headers without signature authentication`)
  }
  return { signedAtS: Number(timestamp), signature }
}

/** What an object remembers of the signed changes applied to it. */
export interface SignedChanges {
  /** The signed second of the last change applied; null when none was. */
  signedAtS: number | null
  /** Body hashes of the changes applied within that second, in order. */
  bodyHashes: readonly string[]
}

export type SignedChangeDecision =
  /** Apply the change, then remember `next`. */
  | { kind: 'apply'; next: SignedChanges }
  /** The last change applied, sent again: change nothing, answer the object as it is. */
  | { kind: 'repeat' }

/**
 * Decides a signed change against what the object remembers; throws 409 stale_request when the
 * change was signed before the last one applied, or is an earlier change of the same second sent
 * again after a later one (either would undo a newer change).
 */
export function decideSignedChange(last: SignedChanges, signed: SignedRequest, body: unknown): SignedChangeDecision {
  const bodyHash = requestHash(body)
  if (last.signedAtS === null || signed.signedAtS > last.signedAtS) return { kind: 'apply', next: { signedAtS: signed.signedAtS, bodyHashes: [bodyHash] } }
  const details = { lastChangeSignedAt: new Date(last.signedAtS * 1000).toISOString(), signedAt: new Date(signed.signedAtS * 1000).toISOString() }
  if (signed.signedAtS < last.signedAtS) throw new RailError('stale_request', 'A change signed later than this request was already applied; nothing changed', details)
  if (last.bodyHashes.at(-1) === bodyHash) return { kind: 'repeat' }
  if (last.bodyHashes.includes(bodyHash)) {
    // A replay of the earlier change, or the same change made again on purpose: within one second
    // the two cannot be told apart, so the client is asked to sign it again a second later.
    throw new RailError('stale_request', 'This change was already applied and another change signed in the same second followed it; nothing changed (sign it again to make it anew)', details, { retryAfterS: 1 })
  }
  if (last.bodyHashes.length >= CHANGES_PER_SECOND_MAX) {
    throw new RailError('stale_request', `At most ${CHANGES_PER_SECOND_MAX} changes to one object are taken per signed second; sign it again`, details, { retryAfterS: 1 })
  }
  return { kind: 'apply', next: { signedAtS: signed.signedAtS, bodyHashes: [...last.bodyHashes, bodyHash] } }
}

/** What the first request with a signature left: nothing yet (still being worked), or its answer. */
export type SignatureClaim = { kind: 'first' } | { kind: 'seen'; response: unknown }

/**
 * Remembers a signature for the partner, or tells that it was seen. Run in the transaction that
 * makes the request's effect: a concurrent request with the same signature waits on the key
 * until this one commits (then it is `seen`) or rolls back (then it is `first` in turn). When the
 * effect is a call to another system instead, run it alone before the call, store the answer
 * after, and forget the signature only when the call certainly did nothing. Also forgets the
 * partner's signatures that are past the window.
 */
export async function claimSignature(db: Queryable, partnerId: string, signature: string): Promise<SignatureClaim> {
  for (let attempt = 1; ; attempt++) {
    const inserted = await db.query(
      `WITH forgotten AS (
         DELETE FROM signed_requests WHERE partner_id = $1 AND created_at < now() - make_interval(secs => $3)
       )
       INSERT INTO signed_requests (partner_id, signature) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
      [partnerId, signature, SIGNATURE_REMEMBERED_S],
    )
    if (inserted.rowCount === 1) return { kind: 'first' }
    // A statement of its own: its snapshot sees the row that the conflicting request committed.
    const { rows } = await db.query<{ response: unknown }>(`SELECT response FROM signed_requests WHERE partner_id = $1 AND signature = $2`, [partnerId, signature])
    if (rows[0]) return { kind: 'seen', response: rows[0].response }
    // The first request forgot its signature (it failed) between the two statements: claim again.
    if (attempt >= 3) throw new Error('signed_requests: a signature was claimed and forgotten three times in a row')
  }
}

/** Stores the answer of the first request with a signature, for its replays. */
export async function storeSignatureResponse(db: Queryable, partnerId: string, signature: string, response: unknown): Promise<void> {
  await db.query(`UPDATE signed_requests SET response = $3 WHERE partner_id = $1 AND signature = $2`, [partnerId, signature, JSON.stringify(response)])
}

/** Forgets a signature whose first request failed before any effect, so that a retry of it is worked again. */
export async function forgetSignature(db: Queryable, partnerId: string, signature: string): Promise<void> {
  await db.query(`DELETE FROM signed_requests WHERE partner_id = $1 AND signature = $2`, [partnerId, signature])
}
