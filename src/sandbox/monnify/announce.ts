// The Monnify dialect's webhooks to its client (Rail), as Monnify sends them: a JSON body with
// eventType and eventData, signed in the monnify-signature header with the lowercase hex
// HMAC-SHA512 of the raw body keyed with the client secret. A disbursement is watched until it
// settles, then announced once (SUCCESSFUL_DISBURSEMENT or FAILED_DISBURSEMENT) by a job retried
// until the client answers 2xx; a payout the bank's simulator reverses afterwards is announced
// (REVERSED_DISBURSEMENT) by the job the reversal itself queues (PAYOUT_LISTENER); a credit to a
// reserved account or wallet is announced (SUCCESSFUL_TRANSACTION) by the bank's own notice job,
// through monnifyCreditNotifier.
import { findBank } from '../../banking/nip/banks.ts'
import { nipMessage } from '../../banking/nip/codes.ts'
import type { Clock } from '../../platform/clock.ts'
import { hmacSha512Hex } from '../../platform/crypto.ts'
import { withTransaction, type Pool, type Queryable } from '../../platform/db.ts'
import { addJob } from '../../platform/jobs.ts'
import { NOTICE_ATTEMPTS_MAX, postToClient } from '../client-webhooks.ts'
import { sandboxMonnifyCredentials } from '../dialect-credentials.ts'
import { SANDBOX_MONNIFY_PROFILE } from '../dialects.ts'
import type { InboundCreditNotice, SandboxBank, TransferAnswer } from '../service.ts'
import type { PayoutListener } from '../transfers.ts'
import { claimAnnouncement, findDisbursement, reservedAccountBy, walletBy } from './repo.ts'
import { disbursementTime, koboToNaira, paidOnTime } from './wire.ts'

/**
 * The statuses of a Monnify transfer. The sandbox answers PENDING, SUCCESS, FAILED and REVERSED (a
 * payout paid, then reversed by the bank's simulator); Monnify also has AWAITING_PROCESSING and
 * IN_PROGRESS (pending), PENDING_AUTHORIZATION and PENDING_BATCH_AUTHORIZATION (awaiting an OTP),
 * OTP_EMAIL_DISPATCH_FAILED, COMPLETED (paid) and EXPIRED (a batch), which the sandbox never gives
 * (docs/sandbox.md §Sandbox Monnify).
 */
export type DisbursementStatus = 'PENDING' | 'SUCCESS' | 'FAILED' | 'REVERSED'

/** What a reversed disbursement's summary and webhook say of it (NIP has no code for a reversal). */
export const REVERSED_DESCRIPTION = 'Transaction reversed: the amount was returned to the source account'

/** Watches a disbursement until it settles. */
export const WATCH_TASK = 'sandbox_monnify_disbursement_watch'
/** Sends one disbursement's webhook, retried until the client answers 2xx. */
export const WEBHOOK_TASK = 'sandbox_monnify_disbursement_webhook'
/** Announces a change the bank made to a payout of the dialect's (its reversal), retried until the client answers 2xx. */
export const PAYOUT_CHANGE_TASK = 'sandbox_monnify_payout_change'
/** A watch looks again after 1 s, doubling up to this: a settled disbursement is announced within it. */
const WATCH_DELAY_MS_MAX = 30_000
/** A disbursement still in progress after this is no longer watched (it is never announced, as one pending for good). */
const WATCH_AGE_MS_MAX = 24 * 60 * 60 * 1000

/**
 * The dialect's interest in the bank's payouts (disbursements from the main account): a reversal of
 * one queues its REVERSED_DISBURSEMENT in the statement that reverses it. A registered outcome
 * queues a job too, which does nothing: the watch announces settlements, once (claimAnnouncement).
 */
export const PAYOUT_LISTENER: PayoutListener = {
  payoutsTable: 'sandbox_bank.monnify_disbursements',
  task: PAYOUT_CHANGE_TASK,
  maxAttempts: NOTICE_ATTEMPTS_MAX,
}

/** What a payout change job announces: the bank's payload (`change` as the bank's statement wrote it). */
export interface PayoutChange {
  reference: string
  change: 'settled' | 'reversed'
}

/** Queues a look at a disbursement, on the caller's transaction (`attempt` sets the delay). */
export async function watchDisbursement(db: Queryable, reference: string, attempt: number): Promise<void> {
  const delayMs = Math.min(1_000 * 2 ** attempt, WATCH_DELAY_MS_MAX)
  // graphile-worker runs jobs by the database's time, so the delay is real time, not the bank's clock.
  await addJob(db, WATCH_TASK, { reference, attempt }, { runAfterMs: delayMs })
}

/**
 * What the bank says of a disbursement now (a settlement that is due happens as it is asked); once
 * it has settled, its webhook is queued — once, whoever asks first.
 */
export async function announceIfSettled(
  pool: Pool,
  bank: SandboxBank,
  reference: string,
  clock: Clock,
): Promise<TransferAnswer> {
  const answer = await bank.requery(reference)
  if (answer.responseCode === '09' || answer.responseCode === '25') return answer
  const status = answer.responseCode === '00' ? 'SUCCESS' : 'FAILED'
  await withTransaction(pool, async (tx) => {
    if (await claimAnnouncement(tx, reference, status, clock.now()))
      await addJob(tx, WEBHOOK_TASK, { reference }, { maxAttempts: NOTICE_ATTEMPTS_MAX })
  })
  return answer
}

/** The watch: announce a settled disbursement, or look again later while it is young enough. */
export async function watchOnce(
  pool: Pool,
  bank: SandboxBank,
  clock: Clock,
  payload: { reference: string; attempt: number },
): Promise<void> {
  const disbursement = await findDisbursement(pool, payload.reference)
  if (!disbursement) return
  const answer = await announceIfSettled(pool, bank, payload.reference, clock)
  if (answer.responseCode !== '09') return
  if (clock.now().getTime() - disbursement.createdAt.getTime() > WATCH_AGE_MS_MAX) return
  await watchDisbursement(pool, payload.reference, payload.attempt + 1)
}

/** A payout change: its reversal is announced; a settlement is the watch's to announce (nothing here). */
export async function announcePayoutChange(
  deps: { pool: Pool; bankSecret: string; clientBaseUrl: () => string },
  bank: SandboxBank,
  payload: PayoutChange,
): Promise<void> {
  if (payload.change !== 'reversed') return
  const event = await disbursementEvent(deps.pool, bank, payload.reference, 'reversed')
  if (event) await postWebhook(deps, event)
}

const EVENT_TYPES = {
  SUCCESS: 'SUCCESSFUL_DISBURSEMENT',
  FAILED: 'FAILED_DISBURSEMENT',
  REVERSED: 'REVERSED_DISBURSEMENT',
} as const

/**
 * The body of a disbursement's webhook, from its record and the bank's answer: its outcome as it
 * settled (even if the payout was reversed since: that has its own event), or its reversal.
 */
export async function disbursementEvent(
  pool: Pool,
  bank: SandboxBank,
  reference: string,
  change: PayoutChange['change'] = 'settled',
): Promise<Record<string, unknown> | undefined> {
  const disbursement = await findDisbursement(pool, reference)
  if (!disbursement) return undefined
  const answer = await bank.requery(reference)
  const status = change === 'reversed' ? 'REVERSED' : answer.responseCode === '00' ? 'SUCCESS' : 'FAILED'
  return {
    eventType: EVENT_TYPES[status],
    eventData: {
      amount: koboToNaira(disbursement.amountKobo),
      transactionReference: transactionReferenceOf(answer.sessionId),
      fee: 0,
      transactionDescription: status === 'REVERSED' ? REVERSED_DESCRIPTION : nipMessage(answer.responseCode),
      destinationAccountNumber: disbursement.destinationAccountNumber,
      sessionId: answer.sessionId,
      createdOn: disbursementTime(disbursement.createdAt),
      destinationAccountName: disbursement.destinationAccountName,
      reference,
      destinationBankCode: disbursement.destinationBankCode,
      completedOn: disbursementTime(disbursement.completedAt ?? disbursement.createdAt),
      narration: disbursement.narration,
      currency: 'NGN',
      destinationBankName: findBank(disbursement.destinationBankCode)?.name ?? null,
      status,
    },
  }
}

/** Monnify's own reference of a disbursement, made from the bank's NIP session id. */
export function transactionReferenceOf(sessionId: string): string {
  return `MFDS${sessionId.slice(6)}`
}

/** Monnify's reference of a collection, made from the bank's NIP session id. */
export function collectionReferenceOf(sessionId: string): string {
  return `MNFY|${sessionId.slice(4, 6)}|20${sessionId.slice(6, 18)}|${sessionId.slice(-6)}`
}

/** A credit to a reserved account or wallet as Monnify tells of it: a webhook's eventData, an item of a listing. */
export async function collectionOf(
  pool: Pool,
  notice: InboundCreditNotice,
): Promise<Record<string, unknown> | undefined> {
  const reserved = await reservedAccountBy(pool, 'account_number', notice.accountNumber)
  const wallet = reserved ? undefined : await walletBy(pool, 'account_number', notice.accountNumber)
  const owner = reserved
    ? { reference: reserved.accountReference, name: reserved.customerName, email: reserved.customerEmail }
    : wallet && { reference: wallet.walletReference, name: wallet.customerName, email: wallet.customerEmail }
  if (!owner) return undefined
  const amountPaid = koboToNaira(notice.amountKobo)
  const transactionReference = collectionReferenceOf(notice.sessionId)
  return {
    product: { reference: owner.reference, type: 'RESERVED_ACCOUNT' },
    transactionReference,
    paymentReference: transactionReference,
    paidOn: paidOnTime(new Date(notice.creditedAt)),
    paymentDescription: notice.narration ?? '',
    metaData: {},
    paymentSourceInformation: [
      {
        bankCode: notice.payerBankCode ?? '',
        amountPaid,
        accountName: notice.payerName ?? '',
        sessionId: notice.sessionId,
        accountNumber: notice.payerAccountNumber ?? '',
      },
    ],
    destinationAccountInformation: {
      bankCode: notice.bankCode,
      bankName: findBank(notice.bankCode)?.name ?? '',
      accountNumber: notice.accountNumber,
    },
    amountPaid,
    totalPayable: amountPaid,
    cardDetails: {},
    paymentMethod: 'ACCOUNT_TRANSFER',
    currency: 'NGN',
    settlementAmount: amountPaid,
    paymentStatus: 'PAID',
    customer: { name: owner.name, email: owner.email },
  }
}

/** The monnify-signature of a raw body: lowercase hex HMAC-SHA512 keyed with the client secret. */
export function monnifySignature(rawBody: string, secretKey: string): string {
  return hmacSha512Hex(secretKey, rawBody)
}

/** Posts a webhook to the client's Monnify webhook route, signed; anything but 2xx throws (the job retries). */
export async function postWebhook(
  deps: { bankSecret: string; clientBaseUrl: () => string },
  event: Record<string, unknown>,
): Promise<void> {
  const rawBody = JSON.stringify(event)
  const { secretKey } = sandboxMonnifyCredentials(deps.bankSecret)
  await postToClient(
    deps.clientBaseUrl(),
    SANDBOX_MONNIFY_PROFILE,
    rawBody,
    { 'monnify-signature': monnifySignature(rawBody, secretKey) },
    'the Monnify webhook',
  )
}
