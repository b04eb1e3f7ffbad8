// How Monnify's answers read in Rail's words, as pure functions: its envelope, its disbursement
// statuses in the NIP vocabulary the payment pipeline reads (src/banking/nip/codes.ts), its references, its
// times and its credits. Anything these functions cannot place is `unknown` (or undefined), never
// a failure: only a status known to be final may fail a payout.
import { createHash } from 'node:crypto'
import { nipMessage } from '../../nip/codes.ts'
import { objectOf, textOf } from '../json.ts'
import type { ProviderCredit, ProviderResult, ProviderWebhook, TransferEvent, WebhookRequest } from '../types.ts'
import { verifiedBody } from '../webhooks.ts'
import { koboFromNaira } from './amounts.ts'
import { successful } from '../results.ts'

/** Every Monnify answer: whether it did what was asked, its own code and message, and what it returned. */
export interface MonnifyEnvelope {
  requestSuccessful: boolean
  responseCode: string
  responseMessage: string
  responseBody: unknown
}

/** Monnify's envelope, read; undefined when the body is not one. */
export function readEnvelope(body: Record<string, unknown>): MonnifyEnvelope | undefined {
  const { requestSuccessful, responseCode, responseMessage, responseBody } = body
  if (typeof requestSuccessful !== 'boolean') return undefined
  return {
    requestSuccessful,
    responseCode: typeof responseCode === 'string' || typeof responseCode === 'number' ? String(responseCode) : '',
    responseMessage: typeof responseMessage === 'string' ? responseMessage : '',
    responseBody,
  }
}

// ---- References -----------------------------------------------------------------------------

/** What Monnify takes as a disbursement reference: unique per merchant, letters, digits, '-' and '_'. */
export const MONNIFY_REFERENCE = /^[A-Za-z0-9_-]{1,64}$/
const HASHED_PREFIX = 'rail-'

/**
 * The reference Monnify is sent for Rail's: Rail's own when it fits (its references are lowercase
 * UUIDs, and the sandbox's settlement simulator registers outcomes by them), otherwise a digest of
 * it — the same every time, so a resend is a duplicate at Monnify, never a second payout.
 */
export function monnifyReference(railReference: string): string {
  if (MONNIFY_REFERENCE.test(railReference) && !railReference.startsWith(HASHED_PREFIX)) return railReference
  return `${HASHED_PREFIX}${createHash('sha256').update(railReference).digest('hex').slice(0, 40)}`
}

/** Rail's reference of a Monnify reference, when it can be told (a digest cannot be undone): undefined otherwise. */
export function railReferenceOf(reference: string): string | undefined {
  return MONNIFY_REFERENCE.test(reference) && !reference.startsWith(HASHED_PREFIX) ? reference : undefined
}

/**
 * The customer email Monnify requires for a reserved account or a wallet, derived from its reference
 * (Rail gives no holder's email to a provider): the same reference always gives the same address.
 */
export function customerEmailFor(reference: string, domain: string): string {
  return `rail-${createHash('sha256').update(reference).digest('hex').slice(0, 24)}@${domain}`
}

// ---- Times ----------------------------------------------------------------------------------

/**
 * The offset of the times Monnify writes without one (a collection's paidOn, 2024-05-01 09:30:00.000):
 * read as UTC, as its other API times say explicitly (+0000).
 */
const MONNIFY_OFFSET = 'Z'
const TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})?$/

/** A time as Monnify writes it (ISO with Z, +01:00 or +0000, or zoneless); undefined otherwise. */
export function readMonnifyTime(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined
  const match = TIME.exec(value.trim())
  if (!match) return undefined
  const [, date, time, fraction = '', zone] = match
  const offset =
    zone === undefined
      ? MONNIFY_OFFSET
      : zone === 'Z'
        ? 'Z'
        : zone.includes(':')
          ? zone
          : `${zone.slice(0, 3)}:${zone.slice(3)}`
  const at = new Date(`${date}T${time}${fraction.slice(0, 4)}${offset}`)
  return Number.isNaN(at.getTime()) ? undefined : at
}

// ---- Disbursement statuses --------------------------------------------------------------------

type StatusReading = { outcome: 'successful' | 'pending' | 'failed'; code: string; message?: string; reversed?: true }

const OTP_MESSAGE =
  'Monnify holds this transfer for an OTP: two-factor authorisation must be disabled for API disbursements'

/**
 * Every disbursement status Monnify documents, and what it is in the NIP vocabulary. A status not
 * here is unknown: Rail asks again rather than guess, since failing a paid transfer is the worse mistake.
 */
export const TRANSFER_STATUSES: Readonly<Record<string, StatusReading>> = {
  SUCCESS: { outcome: 'successful', code: '00' },
  COMPLETED: { outcome: 'successful', code: '00' },
  // Accepted, not final: asked again until it is.
  PENDING: { outcome: 'pending', code: '09' },
  AWAITING_PROCESSING: { outcome: 'pending', code: '09' },
  IN_PROGRESS: { outcome: 'pending', code: '09' },
  // Held for an OTP nobody will enter: pending until it expires (EXPIRED), with the cause said.
  PENDING_AUTHORIZATION: { outcome: 'pending', code: '09', message: OTP_MESSAGE },
  PENDING_BATCH_AUTHORIZATION: { outcome: 'pending', code: '09', message: OTP_MESSAGE },
  OTP_EMAIL_DISPATCH_FAILED: { outcome: 'pending', code: '09', message: OTP_MESSAGE },
  // Final: nothing paid.
  FAILED: { outcome: 'failed', code: '05' },
  EXPIRED: { outcome: 'failed', code: '05', message: 'The transfer expired unauthorised at Monnify' },
  // Paid, then the money came back: nothing paid in the end.
  REVERSED: { outcome: 'failed', code: '05', message: 'Monnify reversed the transfer', reversed: true },
}

/** A failure's better NIP code, read from Monnify's words where they say the cause plainly. */
const FAILURE_CAUSES: ReadonlyArray<{ pattern: RegExp; code: string }> = [
  { pattern: /insufficient|sufficient (balance|funds)/i, code: '51' },
  { pattern: /invalid (destination |beneficiary )?account|account (number )?(is )?invalid/i, code: '07' },
  { pattern: /dormant/i, code: '06' },
  { pattern: /invalid bank code|unknown bank/i, code: '16' },
  { pattern: /bank (is )?not available|bank (is )?unavailable/i, code: '91' },
]

export function failureCode(comment: string | null): string {
  return (comment && FAILURE_CAUSES.find((cause) => cause.pattern.test(comment))?.code) || '05'
}

/**
 * A disbursement (the answer to a payout, or its summary), read. Unknown when its status is not
 * Monnify's, its amount is not an exact naira amount, or it disagrees with the amount sent.
 */
export function transferResult(transfer: Record<string, unknown>, expectedAmountKobo?: number): ProviderResult<null> {
  const status = typeof transfer.status === 'string' ? transfer.status : undefined
  const reading = status === undefined ? undefined : TRANSFER_STATUSES[status]
  if (!reading) return { outcome: 'unknown', error: `unknown Monnify transfer status ${String(transfer.status)}` }
  if (transfer.amount !== undefined && transfer.amount !== null) {
    const amountKobo = koboFromNaira(transfer.amount)
    if (amountKobo === undefined)
      return {
        outcome: 'unknown',
        error: `the transfer's amount ${String(transfer.amount)} is not an exact naira amount`,
      }
    if (expectedAmountKobo !== undefined && amountKobo !== expectedAmountKobo) {
      return {
        outcome: 'unknown',
        error: `Monnify answered for ${amountKobo} kobo, not the ${expectedAmountKobo} sent`,
      }
    }
  }
  const comment = textOf(transfer.comment) ?? textOf(transfer.transactionDescription)
  const sessionId = textOf(transfer.sessionId)
  if (reading.outcome === 'successful') {
    return successful(nipMessage('00'), sessionId ?? textOf(transfer.reference) ?? '', null)
  }
  const code =
    reading.outcome === 'failed' && !reading.reversed && status === 'FAILED' ? failureCode(comment) : reading.code
  const responseMessage = reading.message ?? comment ?? nipMessage(code)
  return {
    outcome: reading.outcome,
    responseCode: code,
    responseMessage,
    providerReference: sessionId,
    ...(reading.reversed ? { reversed: true as const } : {}),
  }
}

// ---- Refusals ---------------------------------------------------------------------------------

/** Monnify's code for a second transfer of the same amount to the same account within minutes. */
export const DUPLICATE_REQUEST_CODE = 'D07'

/** A payout Monnify refused because its reference was used before (the original is what to ask about). */
export function isDuplicateReference(envelope: MonnifyEnvelope): boolean {
  return (
    !envelope.requestSuccessful &&
    envelope.responseCode !== DUPLICATE_REQUEST_CODE &&
    /duplicate|already (been )?(used|exists?)/i.test(envelope.responseMessage)
  )
}

/** Monnify has no transfer (or account, or wallet) by that reference. */
export function isNotFound(httpStatus: number, envelope: MonnifyEnvelope | undefined): boolean {
  if (httpStatus === 404) return true
  // Only a refusal of the request itself (400): a 401, 403 or 429 ("merchant not found") says nothing of the transfer.
  return (
    httpStatus === 400 &&
    envelope !== undefined &&
    !envelope.requestSuccessful &&
    /not (be )?found|could not find|does not exist|no (such|record)/i.test(envelope.responseMessage)
  )
}

// ---- Credits ----------------------------------------------------------------------------------

/** Who paid, from Monnify's payment source information (an object, or a list of them: the first). */
function payerOf(value: unknown): { name: string | null; accountNumber: string | null; bankCode: string | null } {
  const source = objectOf(Array.isArray(value) ? value[0] : value)
  return {
    name: textOf(source?.accountName),
    accountNumber: textOf(source?.accountNumber),
    bankCode: textOf(source?.bankCode),
  }
}

/**
 * A paid credit to a reserved account (a SUCCESSFUL_TRANSACTION's data, or an item of the account's
 * transactions), read; undefined when a field Rail needs is missing or wrong (the amount above all).
 */
export function readReservedCredit(
  data: Record<string, unknown>,
  accountNumber: string,
  accountReference: string | null,
): ProviderCredit | undefined {
  const sessionId = textOf(data.transactionReference)
  if (sessionId === null || sessionId.length > 64) return undefined
  if (!/^[0-9]{10}$/.test(accountNumber)) return undefined
  const amountKobo = koboFromNaira(data.amountPaid ?? data.amount)
  if (amountKobo === undefined || amountKobo <= 0) return undefined
  const currency = textOf(data.currency) ?? textOf(data.currencyCode) ?? 'NGN'
  if (!/^[A-Z]{3}$/.test(currency)) return undefined
  const creditedAt = readMonnifyTime(data.paidOn ?? data.completedOn ?? data.createdOn)
  if (creditedAt === undefined) return undefined
  const payer = payerOf(data.paymentSourceInformation)
  return {
    sessionId,
    accountNumber,
    amountKobo,
    currency,
    payerName: payer.name,
    payerAccountNumber: payer.accountNumber,
    payerBankCode: payer.bankCode,
    narration: textOf(data.paymentDescription),
    creditedAt,
    accountReference: accountReference !== null && accountReference.length <= 64 ? accountReference : null,
  }
}

/** Whether a reserved account's transaction is money received (a listing also shows unpaid and failed ones). */
export function isPaid(data: Record<string, unknown>): boolean {
  return data.paymentStatus === 'PAID' || data.paymentStatus === 'OVERPAID'
}

/** The credits at or after `since`, oldest first. */
export function creditsSince(credits: readonly ProviderCredit[], since?: Date): ProviderCredit[] {
  return credits
    .filter((credit) => since === undefined || credit.creditedAt.getTime() >= since.getTime())
    .sort((a, b) => a.creditedAt.getTime() - b.creditedAt.getTime())
}

// ---- Webhooks ---------------------------------------------------------------------------------

const TRANSFER_EVENTS: Readonly<Record<string, TransferEvent>> = {
  SUCCESSFUL_DISBURSEMENT: 'success',
  FAILED_DISBURSEMENT: 'failed',
  REVERSED_DISBURSEMENT: 'reversed',
}

/**
 * A Monnify webhook, verified and read: a reserved account's credit, a payout's news by Rail's
 * reference (a hint the pipeline acts on by requery), or a verified event Rail does not act on.
 */
export function readMonnifyWebhook(
  request: WebhookRequest,
  clientSecret: string,
  allowlist: readonly string[] | null,
): ProviderWebhook {
  const verified = verifiedBody(request, 'monnify-signature', clientSecret, allowlist)
  if ('kind' in verified) return verified
  const notice = verified.body
  const eventType = notice?.eventType
  const data = objectOf(notice?.eventData)
  if (typeof eventType !== 'string' || data === undefined)
    return { kind: 'invalid', message: 'the body has no eventType and eventData' }
  const transferEvent = TRANSFER_EVENTS[eventType]
  if (transferEvent !== undefined) {
    const reference = textOf(data.reference)
    if (reference === null) return { kind: 'invalid', message: `${eventType} has no reference` }
    const railReference = railReferenceOf(reference)
    return railReference === undefined
      ? { kind: 'ignored', event: eventType }
      : { kind: 'transfer', reference: railReference, event: transferEvent }
  }
  if (eventType !== 'SUCCESSFUL_TRANSACTION') return { kind: 'ignored', event: eventType }
  const product = objectOf(data.product)
  if (product?.type !== 'RESERVED_ACCOUNT') return { kind: 'ignored', event: `${eventType}:${String(product?.type)}` }
  if (!isPaid(data)) return { kind: 'ignored', event: `${eventType}:${String(data.paymentStatus)}` }
  const accountNumber = textOf(objectOf(data.destinationAccountInformation)?.accountNumber)
  const credit = accountNumber === null ? undefined : readReservedCredit(data, accountNumber, textOf(product.reference))
  return credit
    ? { kind: 'credit', credit }
    : { kind: 'invalid', message: 'the credit notice is incomplete or its amount is not exact' }
}
