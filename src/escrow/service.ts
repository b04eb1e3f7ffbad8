// Escrow (seed 002): a partner creates an escrow, the payer funds it, Rail holds the funds in the
// partner's escrow holding account, and the partner releases it to the recipient or cancels it
// (the payer is refunded); an escrow not funded within its TTL expires (refunded likewise).
//
// Every change is one transaction: the status change (checked against the transition table in
// SQL), the ledger transfers, and the signed event. Release, cancel, expiry and funding racing on
// one escrow serialise on its row; the first to commit wins and money moves once.
//
// Money: credits → escrow_holding (funding); escrow_holding → the recipient payable (release);
// escrow_holding → the payer refund payable (cancel, expiry, and any excess funding on release).
import { assertCallbackUrlAllowed, recordEvent, type EventSigning } from '../events/service.ts'
import { classifyAddress } from '../events/address-guard.ts'
import { createAccount, createTransfers, derivedId, ensurePartnerAccount, type TransferInput } from '../ledger/service.ts'
import type { Partner } from '../partners/service.ts'
import type { Clock } from '../platform/clock.ts'
import { randomBase62, seal } from '../platform/crypto.ts'
import { withKeyLock, withTransaction, type Pool, type Queryable, type Tx } from '../platform/db.ts'
import { fieldError, notFound, RailError } from '../platform/errors.ts'
import { requestHash } from '../platform/idempotency.ts'
import { uuidv7 } from '../platform/ids.ts'
import { addJob } from '../platform/jobs.ts'
import { pageQueryLimit, toPage } from '../platform/pagination.ts'
import { allocateIntentAccount, createIntentInTransaction, getIntentById, type IntentView } from '../payment-intents/service.ts'
import { bankName, type Caller, type CollectionsDeps } from '../virtual-accounts/service.ts'
import * as repo from './repo.ts'
import type { EscrowStatus } from './states.ts'

export type { Escrow, EscrowType } from './repo.ts'

/** Only naira is held in escrow (docs/design.md §5); another ISO 4217 code is 422 unsupported_currency. */
export const ESCROW_CURRENCY = 'NGN'
/** Seed 002: the smallest escrow, ₦100. */
export const AMOUNT_MIN_KOBO = 10_000
/** Seed 002. */
export const DESCRIPTION_MAX_CHARS = 255
/** Seed 002: the reason of a release or a cancel. */
export const REASON_MAX_CHARS = 500
/** Seed 002: the TTL when none is given. */
export const TTL_HOURS_DEFAULT = 24
/** 30 days: an unfunded escrow should not linger longer; a new one is cheap. */
export const TTL_HOURS_MAX = 720
/** Metadata rides on every event; 4 KiB of JSON keeps events small. */
export const METADATA_MAX_BYTES = 4_096
/** The partner's idempotency reference. */
export const REFERENCE_MAX_CHARS = 64
/** A webhookSecret shorter than this is too easy to guess; longer than the max is a mistake. */
export const WEBHOOK_SECRET_MIN_CHARS = 8
export const WEBHOOK_SECRET_MAX_CHARS = 256
export const ESCROW_PAGE_MAX = 100
/** Escrows expired per sweep run; the next run (a minute later) takes the rest. */
const EXPIRY_SWEEP_BATCH = 500

export const EXPIRE_TASK = 'escrow_expire'
export const EXPIRY_SWEEP_TASK = 'escrow_expiry_sweep'
/** Every minute: initiated escrows past their TTL expire (each also has a job at its own expiresAt). */
export const ESCROW_CRONTAB = `* * * * * ${EXPIRY_SWEEP_TASK}`

export interface EscrowDeps {
  pool: Pool
  /** Seals registered webhook secrets. */
  masterKey: Buffer
  clock: Clock
  /** Sandbox partners may use loopback webhook URLs (RAIL_ALLOW_LOOPBACK_CALLBACKS). */
  allowLoopbackCallbacks: boolean
  /** Funding: every escrow composes a payment intent whose virtual account the payer pays into. */
  collections: CollectionsDeps
}

export interface CreateRequest {
  type: repo.EscrowType
  amount: number
  currency: string
  payerEmail: string
  recipientEmail: string
  description: string
  ttlHours?: number
  webhookUrl?: string
  metadata?: Record<string, unknown>
  reference?: string
}

/**
 * How the payer funds the escrow: a virtual account of a composed payment intent and its
 * checkoutToken (docs/design.md §10).
 */
function fundingOf(funding: IntentView | undefined) {
  if (!funding) return null
  const { intent, account } = funding
  return {
    virtualAccount: account.accountNumber,
    virtualAccountName: account.accountName,
    bankCode: account.bankCode,
    bankName: bankName(account.bankCode),
    trackingId: account.trackingId,
    checkoutToken: intent.checkoutToken,
    amountKobo: intent.amountKobo,
    currency: intent.currency,
    expiresAt: intent.expiresAt.toISOString(),
  }
}

/** The funding intent of an escrow (every escrow has one: it is composed at create). */
export async function fundingOfEscrow(db: Queryable, escrow: repo.Escrow): Promise<IntentView | undefined> {
  return escrow.fundingPaymentIntentId ? getIntentById(db, escrow.fundingPaymentIntentId) : undefined
}

/** The escrow object of seed 002 (inside `escrow` of the read answer), with funding progress. */
export function toEscrowJson(escrow: repo.Escrow, funding: IntentView | undefined) {
  return {
    ref: escrow.ref,
    reference: escrow.reference,
    type: escrow.type,
    status: escrow.status,
    amount: escrow.amountKobo,
    fundedAmount: escrow.fundedAmountKobo,
    currency: escrow.currency,
    description: escrow.description,
    payerEmail: escrow.payerEmail,
    recipientEmail: escrow.recipientEmail,
    metadata: escrow.metadata,
    webhookUrl: escrow.webhookUrl,
    funding: fundingOf(funding),
    createdAt: escrow.createdAt.toISOString(),
    expiresAt: escrow.expiresAt.toISOString(),
    fundedAt: escrow.fundedAt?.toISOString() ?? null,
    releasedAt: escrow.releasedAt?.toISOString() ?? null,
    cancelledAt: escrow.cancelledAt?.toISOString() ?? null,
    expiredAt: escrow.expiredAt?.toISOString() ?? null,
  }
}

/** The answer of create (seed 002), also given to a replay. */
export function toCreatedJson(escrow: repo.Escrow, funding: IntentView | undefined) {
  return {
    success: true,
    ref: escrow.ref,
    status: escrow.status,
    amount: escrow.amountKobo,
    currency: escrow.currency,
    expiresAt: escrow.expiresAt.toISOString(),
    message: 'Escrow created; it awaits funding by the payer',
    funding: fundingOf(funding),
  }
}

/** Checks what the schema cannot: currency, metadata size, webhook URL. Nothing is written before. */
async function assertCreatable(deps: EscrowDeps, partner: Partner, request: CreateRequest): Promise<void> {
  if (request.currency !== ESCROW_CURRENCY) throw new RailError('unsupported_currency', `Only ${ESCROW_CURRENCY} is served`, { currency: request.currency })
  if (request.metadata !== undefined && Buffer.byteLength(JSON.stringify(request.metadata), 'utf8') > METADATA_MAX_BYTES) {
    throw fieldError('metadata', `must be at most ${METADATA_MAX_BYTES} bytes of JSON`)
  }
  if (request.webhookUrl !== undefined) await assertCallbackUrlAllowed(request.webhookUrl, partner.environment, deps.allowLoopbackCallbacks, 'webhookUrl')
}

/**
 * Creates an escrow in `initiated`, with the job that expires it at its TTL, in one transaction.
 * Idempotent on `reference` per partner: the same body answers the existing escrow (replayed),
 * another body is 409 idempotency_conflict.
 */
export async function createEscrow(deps: EscrowDeps, caller: Caller, request: CreateRequest): Promise<{ escrow: repo.Escrow; funding: IntentView | undefined; replayed: boolean }> {
  const partner = caller.partner
  const hash = requestHash(request)
  if (request.reference !== undefined) {
    const known = await repo.selectByReference(deps.pool, partner.id, request.reference)
    if (known) return replay(deps.pool, known, hash)
  }
  await assertCreatable(deps, partner, request)
  const now = deps.clock.now()
  const id = uuidv7()
  const expiresAt = new Date(now.getTime() + (request.ttlHours ?? TTL_HOURS_DEFAULT) * 3_600_000)
  // The funding account: a payment intent owned by the escrow, allocated at the provider before
  // the transaction — no account, no escrow (502 or 403, and the same reference can be retried).
  const fundingRequest = { reference: `escrow:${id}`, amountKobo: request.amount, currency: request.currency, purposeTag: 'escrow', expiresAt: expiresAt.toISOString() }
  const allocated = await allocateIntentAccount(deps.collections, caller, fundingRequest)
  // With a reference, concurrent duplicates wait for the first outside any transaction (withKeyLock).
  const run = <T>(work: (tx: Tx) => Promise<T>) =>
    request.reference === undefined ? withTransaction(deps.pool, work) : withKeyLock(deps.pool, `escrow:${partner.id}:${request.reference}`, work)
  return run(async (tx) => {
    const inserted = await repo.insertEscrow(tx, {
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
      createdAt: now,
      expiresAt,
    })
    // A concurrent create with this reference committed first (the insert waited for it).
    if (!inserted) return replay(tx, (await repo.selectByReference(tx, partner.id, request.reference!))!, hash)
    const funding = await createIntentInTransaction(tx, caller, fundingRequest, allocated, { type: 'escrow', id })
    const escrow = await repo.setFundingIntent(tx, id, funding.intent.id)
    await addJob(tx, EXPIRE_TASK, { id }, { runAt: expiresAt, jobKey: expireJobKey(id) })
    return { escrow, funding, replayed: false }
  })
}

async function replay(db: Queryable, known: repo.Escrow, hash: string): Promise<{ escrow: repo.Escrow; funding: IntentView | undefined; replayed: boolean }> {
  if (known.requestHash !== hash) {
    throw new RailError('idempotency_conflict', `reference ${known.reference} was already used with a different request`, { ref: known.ref })
  }
  return { escrow: known, funding: await fundingOfEscrow(db, known), replayed: true }
}

function expireJobKey(id: string): string {
  return `escrow_expire:${id}`
}

export async function getEscrow(db: Queryable, partnerId: string, ref: string): Promise<repo.Escrow> {
  const escrow = await repo.selectByRef(db, partnerId, ref)
  if (!escrow) throw notFound('Escrow')
  return escrow
}

export async function listEscrows(db: Queryable, filter: { partnerId: string; status?: EscrowStatus; limit: number; cursor?: string }) {
  const rows = await repo.selectEscrows(db, { partnerId: filter.partnerId, status: filter.status, beforeId: filter.cursor, limit: pageQueryLimit(filter.limit) })
  const page = toPage(rows, filter.limit)
  return { escrows: page.items, nextCursor: page.nextCursor }
}

/** Release: only from funded. The amount goes to the recipient payable, any excess back to the payer. */
export async function releaseEscrow(deps: EscrowDeps, partnerId: string, ref: string, reason: string | undefined): Promise<repo.Escrow> {
  return withTransaction(deps.pool, async (tx) => {
    const released = await repo.transition(tx, { partnerId, ref }, 'released', { at: deps.clock.now(), reason: reason ?? null })
    if (!released) throw await refusal(tx, partnerId, ref, 'released')
    const moves = [await payRecipient(tx, released)]
    const excessKobo = released.fundedAmountKobo - released.amountKobo
    if (excessKobo > 0) moves.push(await refundPayer(tx, released, excessKobo, 'excess_refund'))
    await move(tx, released, moves)
    await emit(tx, released, 'escrow.released')
    return released
  })
}

/** Cancel: from initiated or funded; whatever was funded goes back to the payer. */
export async function cancelEscrow(deps: EscrowDeps, partnerId: string, ref: string, reason: string): Promise<repo.Escrow> {
  return withTransaction(deps.pool, async (tx) => {
    const cancelled = await repo.transition(tx, { partnerId, ref }, 'cancelled', { at: deps.clock.now(), reason })
    if (!cancelled) throw await refusal(tx, partnerId, ref, 'cancelled')
    if (cancelled.fundedAmountKobo > 0) await move(tx, cancelled, [await refundPayer(tx, cancelled, cancelled.fundedAmountKobo, 'refund')])
    await emit(tx, cancelled, 'escrow.cancelled')
    return cancelled
  })
}

/**
 * Expiry: an initiated escrow whose TTL has elapsed by the clock becomes expired, and any partial
 * funding goes back to the payer. Undefined when it was not due or is elsewhere already.
 */
export async function expireEscrow(deps: Pick<EscrowDeps, 'pool' | 'clock'>, id: string): Promise<repo.Escrow | undefined> {
  return withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now()
    const expired = await repo.transition(tx, { id }, 'expired', { at: now, dueBy: now })
    if (!expired) return undefined
    if (expired.fundedAmountKobo > 0) await move(tx, expired, [await refundPayer(tx, expired, expired.fundedAmountKobo, 'refund')])
    await emit(tx, expired, 'escrow.expired')
    return expired
  })
}

/** The sweep: expires initiated escrows past their TTL, each in its own transaction. */
export async function expireDueEscrows(deps: Pick<EscrowDeps, 'pool' | 'clock'>): Promise<number> {
  const ids = await repo.selectDueToExpire(deps.pool, deps.clock.now(), EXPIRY_SWEEP_BATCH)
  let expired = 0
  for (const id of ids) if (await expireEscrow(deps, id)) expired++
  return expired
}

/** 404 when the caller has no such escrow; else 400 invalid_escrow_status naming its status. */
async function refusal(tx: Queryable, partnerId: string, ref: string, next: 'released' | 'cancelled'): Promise<RailError> {
  const current = await repo.selectByRef(tx, partnerId, ref)
  if (!current) return notFound('Escrow')
  const needs = next === 'released' ? 'release needs funded' : 'cancel needs initiated or funded'
  return new RailError('invalid_escrow_status', `Escrow ${ref} is ${current.status}; ${needs}`)
}

/**
 * The seam for collections: a credit to the escrow's funding account, already posted to the
 * partner's collections account, applied inside the caller's transaction. An initiated escrow
 * takes it (collections → escrow holding) and becomes funded once its credits reach the amount;
 * any other escrow (or currency) takes nothing: 'unmatched', for the caller's unmatched triage.
 * Applying the same creditId again changes nothing and answers 'applied'.
 */
export async function applyEscrowFunding(
  tx: Queryable,
  credit: { escrowId: string; partnerId: string; amountKobo: number; currency: string; creditId: string; collectionsAccountId: string },
): Promise<'applied' | 'unmatched'> {
  if (!Number.isSafeInteger(credit.amountKobo) || credit.amountKobo <= 0) throw new Error(`escrow funding: amount ${credit.amountKobo} is not a positive kobo integer`)
  const escrow = await repo.selectForUpdate(tx, credit.escrowId, credit.partnerId)
  if (!escrow || escrow.status !== 'initiated' || escrow.currency !== credit.currency) return 'unmatched'
  const [outcome] = await createTransfers(tx, [
    {
      id: derivedId(credit.creditId, 'escrow_funding'),
      debitAccountId: credit.collectionsAccountId,
      creditAccountId: await ensurePartnerAccount(tx, escrow.partnerId, escrow.currency, 'escrow_holding'),
      amountKobo: credit.amountKobo,
      currency: escrow.currency,
      code: 'escrow_funding',
      sourceType: 'escrow',
      sourceId: escrow.id,
    },
  ])
  if (outcome!.result === 'exists') return 'applied' // this credit was applied already, with its funded amount
  if (outcome!.result !== 'ok') throw new Error(`escrow ${escrow.id} funding from credit ${credit.creditId}: ${outcome!.result}`)
  const funded = await repo.addFunding(tx, escrow.id, credit.amountKobo, new Date())
  if (funded.status === 'funded') await emit(tx, funded, 'escrow.funded')
  return 'applied'
}

async function holdingOf(tx: Queryable, escrow: repo.Escrow): Promise<string> {
  return ensurePartnerAccount(tx, escrow.partnerId, escrow.currency, 'escrow_holding')
}

/** A payable never goes below zero: only what was put in it can be paid out of it. */
async function newPayable(tx: Queryable, escrow: repo.Escrow): Promise<string> {
  return createAccount(tx, { partnerId: escrow.partnerId, currency: escrow.currency, kind: 'payable', debitsMustNotExceedCredits: true })
}

async function payRecipient(tx: Queryable, escrow: repo.Escrow): Promise<TransferInput> {
  let payable = escrow.recipientPayableAccountId
  if (!payable) {
    payable = await newPayable(tx, escrow)
    await repo.setRecipientPayableAccount(tx, escrow.id, payable)
  }
  return transfer(escrow, 'release', await holdingOf(tx, escrow), payable, escrow.amountKobo)
}

async function refundPayer(tx: Queryable, escrow: repo.Escrow, amountKobo: number, purpose: 'refund' | 'excess_refund'): Promise<TransferInput> {
  let payable = escrow.payerRefundAccountId
  if (!payable) {
    payable = await newPayable(tx, escrow)
    await repo.setPayerRefundAccount(tx, escrow.id, payable)
  }
  return transfer(escrow, purpose, await holdingOf(tx, escrow), payable, amountKobo)
}

function transfer(escrow: repo.Escrow, purpose: 'release' | 'refund' | 'excess_refund', debitAccountId: string, creditAccountId: string, amountKobo: number): TransferInput {
  return {
    id: derivedId(escrow.id, `escrow_${purpose}`),
    debitAccountId,
    creditAccountId,
    amountKobo,
    currency: escrow.currency,
    code: `escrow_${purpose}`,
    sourceType: 'escrow',
    sourceId: escrow.id,
  }
}

/** The transfers of one change, all or none; the holding account must hold them (else a bug). */
async function move(tx: Queryable, escrow: repo.Escrow, transfers: TransferInput[]): Promise<void> {
  const results = await createTransfers(tx, transfers, { linked: true })
  const refused = results.find((outcome) => outcome.result !== 'ok')
  if (refused) throw new Error(`escrow ${escrow.id} ${escrow.status}: transfer ${refused.id} ${refused.result}`)
}

/** Seals a webhookSecret to its partner's registration: a copy on another row does not open. */
function webhookSecretBinding(partnerId: string): string {
  return `escrow_webhook:${partnerId}`
}

/**
 * The signed event of a change. Target: the escrow's own webhookUrl, else the registered escrow
 * webhook, else (neither) the partner's default callback URL like any event. Signature: the
 * registered webhookSecret when there is one; none for an escrow webhook without a secret (the
 * seed signs only when a secret is registered); the partner's callback secret on the default URL.
 */
async function emit(tx: Queryable, escrow: repo.Escrow, type: 'escrow.funded' | 'escrow.released' | 'escrow.cancelled' | 'escrow.expired'): Promise<void> {
  const webhook = await repo.selectWebhook(tx, escrow.partnerId)
  const url = escrow.webhookUrl ?? webhook?.url ?? null
  const signing: EventSigning = webhook?.secretSealed
    ? { kind: 'sealed', secretSealed: webhook.secretSealed, boundTo: webhookSecretBinding(escrow.partnerId) }
    : url !== null
      ? { kind: 'none' }
      : { kind: 'partner' }
  const data: Record<string, unknown> = { ref: escrow.ref, status: escrow.status, amount: escrow.amountKobo, currency: escrow.currency }
  if (type === 'escrow.released') data.releasedAt = escrow.releasedAt!.toISOString()
  await recordEvent(tx, { partnerId: escrow.partnerId, type, objectType: 'escrow', objectId: escrow.ref, data, metadata: escrow.metadata, callbackUrl: url, signing })
}

export interface WebhookRequest {
  webhookUrl: string
  /** Omitted: the registered secret stays; null: it is removed. */
  webhookSecret?: string | null
}

/**
 * Registers or updates the partner's escrow webhook. The URL must be https; a sandbox partner may
 * use http to a loopback receiver when loopback callbacks are allowed (local development). The
 * SSRF guard of Events applies as to every callback URL.
 */
export async function registerWebhook(deps: EscrowDeps, partner: Partner, request: WebhookRequest) {
  const url = new URL(request.webhookUrl)
  const localReceiver = partner.environment === 'sandbox' && deps.allowLoopbackCallbacks && isLoopbackHost(url.hostname)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && localReceiver)) throw fieldError('webhookUrl', 'must be an https URL')
  await assertCallbackUrlAllowed(request.webhookUrl, partner.environment, deps.allowLoopbackCallbacks, 'webhookUrl')
  const sealed =
    request.webhookSecret === undefined ? undefined : request.webhookSecret === null ? null : seal(deps.masterKey, request.webhookSecret, webhookSecretBinding(partner.id))
  const webhook = await repo.upsertWebhook(deps.pool, partner.id, request.webhookUrl, sealed)
  const hasSecret = webhook.secretSealed !== null
  return {
    success: true,
    webhookUrl: webhook.url,
    hasSecret,
    message: hasSecret
      ? 'Webhook registered; events are signed in X-Rail-Signature with your webhookSecret'
      : 'Webhook registered without a secret; events are not signed (registering a webhookSecret is strongly recommended)',
  }
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '')
  return host === 'localhost' || classifyAddress(host) === 'loopback'
}
