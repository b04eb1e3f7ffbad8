// Creating an escrow: the request checked, the funding intent composed, the escrow recorded under its
// reference (platform/idempotency.ts) with the job that expires it, in one transaction.
import { checkAccountHolder } from '../banking/banks/service.ts'
import type { Caller, Partner } from '../partners/service.ts'
import { randomBase62 } from '../platform/crypto.ts'
import { withTransaction, type Queryable } from '../platform/db.ts'
import { fieldError, RailError } from '../platform/errors.ts'
import { claimReference, findReplay, requestHash, type ReferenceKind } from '../platform/idempotency.ts'
import { uuidv7 } from '../platform/ids.ts'
import { addJob } from '../platform/jobs.ts'
import { allocateIntentAccount, createIntentInTransaction, type IntentView } from '../collections/intents/service.ts'
import { partnerClock } from '../partners/sandbox-clock/service.ts'
import * as repo from './repo.ts'
import {
  type CreateRequest,
  ESCROW_CURRENCY,
  type EscrowDeps,
  EXPIRE_TASK,
  METADATA_MAX_BYTES,
  TTL_HOURS_DEFAULT,
} from './types.ts'
import { fundingOfEscrow } from './views.ts'
import { assertEscrowWebhookUrl } from './webhooks.ts'

/** Checks what the schema cannot: currency, metadata size, webhook URL. Nothing is written before. */
async function assertCreatable(deps: EscrowDeps, partner: Partner, request: CreateRequest): Promise<void> {
  if (request.currency !== ESCROW_CURRENCY)
    throw new RailError('unsupported_currency', `Only ${ESCROW_CURRENCY} is served`, { currency: request.currency })
  if (
    request.metadata !== undefined &&
    Buffer.byteLength(JSON.stringify(request.metadata), 'utf8') > METADATA_MAX_BYTES
  ) {
    throw fieldError('metadata', `must be at most ${METADATA_MAX_BYTES} bytes of JSON`)
  }
  if (request.webhookUrl !== undefined) await assertEscrowWebhookUrl(deps, partner, request.webhookUrl)
  if (request.disbursement !== undefined) await assertDestination(deps, partner.id, request.disbursement)
}

/**
 * A destination is a NUBAN at a Nigerian bank whose holder the name names, by the bank's name
 * enquiry asked now, before anything is written: a mismatch is 422 naming disbursement.accountName
 * (the bank's name in details), a bank that does not answer 502 provider_unavailable, a partner
 * past its name-enquiry budget 429 rate_limited. The payment pipeline asks the bank again when it
 * sends the payout.
 */
export async function assertDestination(
  deps: EscrowDeps,
  partnerId: string,
  destination: repo.Destination,
): Promise<void> {
  await checkAccountHolder(
    { pool: deps.pool, providers: deps.outbound.payments.providers },
    partnerId,
    destination,
    'disbursement',
  )
}

/**
 * Creates an escrow in `initiated`, with the job that expires it at its TTL, in one transaction.
 * Idempotent on `reference` per partner: the same body answers the existing escrow (replayed),
 * another body is 409 idempotency_conflict.
 */
export async function createEscrow(
  deps: EscrowDeps,
  caller: Caller,
  request: CreateRequest,
): Promise<{ escrow: repo.Escrow; funding: IntentView | undefined; replayed: boolean }> {
  const partner = caller.partner
  const hash = requestHash(request)
  // Without a reference a create is never a replay; with one, the escrow's row claims it.
  const key = request.reference === undefined ? undefined : { reference: request.reference, requestHash: hash }
  const stored = (db: Queryable) => () => repo.selectByReference(db, partner.id, request.reference!)
  const known = key && (await findReplay(ESCROW_REFERENCE, key, stored(deps.pool)))
  if (known)
    return { escrow: known.replayed, funding: await fundingOfEscrow(deps.pool, known.replayed), replayed: true }
  await assertCreatable(deps, partner, request)
  // The TTL counts from the partner's time (its sandbox test clock, if moved); expiry is judged by it too.
  const now = (await partnerClock(deps.pool, deps.clock, partner)).now()
  const id = uuidv7()
  const expiresAt = new Date(now.getTime() + (request.ttlHours ?? TTL_HOURS_DEFAULT) * 3_600_000)
  // The funding account: a payment intent owned by the escrow, allocated at the provider before
  // the transaction — no account, no escrow (502 or 403, and the same reference can be retried).
  const fundingRequest = {
    reference: `escrow:${id}`,
    amountKobo: request.amount,
    currency: request.currency,
    purposeTag: 'escrow',
    expiresAt: expiresAt.toISOString(),
  }
  const allocated = await allocateIntentAccount(deps.collections, caller, fundingRequest)
  return withTransaction(deps.pool, async (tx) => {
    const row: repo.NewEscrow = {
      id,
      partnerId: partner.id,
      ref: `EPT-${now.getTime()}-${randomBase62(12)}`,
      reference: request.reference ?? null,
      requestHash: hash,
      type: request.type,
      amountKobo: request.amount,
      currency: request.currency,
      description: request.description,
      payerEmail: request.payerEmail,
      recipientEmail: request.recipientEmail,
      metadata: request.metadata ?? {},
      webhookUrl: request.webhookUrl ?? null,
      destination: request.disbursement ?? null,
      createdAt: now,
      expiresAt,
    }
    // The transaction's first write; a concurrent create with the reference waits for it and replays it.
    const claimed = key
      ? await claimReference(ESCROW_REFERENCE, key, () => repo.insertEscrow(tx, row), stored(tx))
      : { created: (await repo.insertEscrow(tx, row))! }
    if (claimed.replayed)
      return { escrow: claimed.replayed, funding: await fundingOfEscrow(tx, claimed.replayed), replayed: true }
    const funding = await createIntentInTransaction(tx, caller, fundingRequest, allocated, now, { type: 'escrow', id })
    const escrow = await repo.setFundingIntent(tx, id, funding.intent.id)
    // A wait, not a time: the job runs by the database's clock, and expiresAt is on the partner's
    // (a sandbox partner's may be moved ahead); the sweep expires what a later move makes due.
    const ttlMs = expiresAt.getTime() - now.getTime()
    await addJob(tx, EXPIRE_TASK, { id }, { runAfterMs: ttlMs, jobKey: expireJobKey(id) })
    return { escrow, funding, replayed: false }
  })
}

/** How an escrow takes its reference (platform/idempotency.ts); the API knows it by its ref. */
const ESCROW_REFERENCE: ReferenceKind<repo.Escrow> = {
  field: 'reference',
  hashOf: (escrow) => escrow.requestHash,
  idOf: (escrow) => escrow.ref,
}

function expireJobKey(id: string): string {
  return `escrow_expire:${id}`
}
