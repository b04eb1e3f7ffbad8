// How Paystack's answers read in Rail's words, as pure functions: its `status`/`message`/`data`
// envelope, its transfer statuses in the NIP vocabulary the payment pipeline reads
// (src/banking/nip/codes.ts), its refusals, and its references (reference.ts). Anything these functions
// cannot place is `unknown`, never a failure: only a status known to be final may fail a payout.
// Credits, dedicated accounts and webhooks are read in credits.ts.
import { nipMessage } from '../../nip/codes.ts'
import type { HttpAnswer } from '../http.ts'
import { objectOf, textOf } from '../json.ts'
import type { ProviderResult } from '../types.ts'

export {
  fitsPaystackReference,
  paystackReference,
  railReferenceOf,
  PAYSTACK_REFERENCE_LENGTH_MAX,
  PAYSTACK_REFERENCE_LENGTH_MIN,
} from './reference.ts'
export {
  creditOfTransaction,
  dedicatedAccountBankCode,
  readDedicatedAccount,
  readPaystackWebhook,
  readTransactionPage,
  type DedicatedAccount,
} from './credits.ts'
import { failed, successful } from '../results.ts'

/** Paystack's envelope: whether it did what was asked, its message, and what it returned. */
export interface PaystackEnvelope {
  status: boolean
  message: string
  data: unknown
}

/** The envelope of a readable answer; undefined when the body is not one. */
export function readEnvelope(body: Record<string, unknown>): PaystackEnvelope | undefined {
  if (typeof body.status !== 'boolean') return undefined
  return { status: body.status, message: typeof body.message === 'string' ? body.message : '', data: body.data }
}

// ---- Transfer statuses ----------------------------------------------------------------------

/** Being processed, or waiting for an approval Paystack asked for: requeried (09). */
const IN_PROGRESS = new Set(['pending', 'processing', 'queued', 'received'])
/** Final: Paystack will not process the transfer (a failure at the processor, a refused or unapproved one). */
const FINAL_FAILURES = new Set(['failed', 'rejected', 'abandoned', 'blocked'])

/** The final NIP code a failure reads as, by what Paystack says of it: 05 unless a better one applies. */
export function failureCode(reason: string): string {
  const text = reason.toLowerCase()
  if (/insufficient|not enough|balance is low/.test(text)) return '51'
  if (
    /invalid account|account (?:number )?(?:is )?invalid|could not resolve|cannot resolve|unable to resolve|no such account/.test(
      text,
    )
  )
    return '07'
  if (/bank.{0,20}(?:not available|unavailable|down)/.test(text)) return '91'
  return '05'
}

/**
 * A transfer's status (POST /transfer's or a verify's) in the NIP vocabulary, with Paystack's own
 * status at the start of the message so that an operator sees it. `reason` is what Paystack says
 * of a failure (its gateway response or failures), to find a better code than 05.
 */
export function readTransferStatus(
  status: unknown,
  transfer: { transferCode: string | null; reason: string | null },
): ProviderResult<null> {
  const said = transfer.reason ? ` (${transfer.reason})` : ''
  if (status === 'success') {
    return successful(`success: ${nipMessage('00')}`, transfer.transferCode ?? '', null)
  }
  if (typeof status !== 'string') return { outcome: 'unknown', error: 'the transfer has no status' }
  if (IN_PROGRESS.has(status))
    return {
      outcome: 'pending',
      responseCode: '09',
      responseMessage: `${status}: ${nipMessage('09')}`,
      providerReference: transfer.transferCode,
    }
  if (status === 'otp') {
    const message =
      'otp: the transfer waits for an OTP; OTP must be disabled for API transfers (Paystack dashboard, transfer confirmation)'
    return {
      outcome: 'pending',
      responseCode: '09',
      responseMessage: message,
      providerReference: transfer.transferCode,
    }
  }
  if (status === 'reversed') {
    // Paid, then taken back: the money is at Paystack again and nothing reached the beneficiary.
    return {
      outcome: 'failed',
      responseCode: '05',
      responseMessage: `reversed: the transfer was reversed${said}`,
      providerReference: transfer.transferCode,
      reversed: true,
    }
  }
  if (FINAL_FAILURES.has(status)) {
    const code = failureCode(transfer.reason ?? '')
    return failed(code, `${status}: ${nipMessage(code)}${said}`, transfer.transferCode)
  }
  return {
    outcome: 'unknown',
    error: `Paystack answered a transfer status Rail does not know: ${JSON.stringify(status.slice(0, 40))}`,
  }
}

/** What Paystack says of a transfer's failure, when it says anything. */
function transferReason(data: Record<string, unknown>): string | null {
  const { failures } = data
  const failure =
    typeof failures === 'string'
      ? failures
      : failures === null || failures === undefined
        ? null
        : JSON.stringify(failures).slice(0, 200)
  return textOf(data.gateway_response) ?? textOf(failure)
}

/** A transfer object (POST /transfer's data, a verify's data), read by its status. */
function readTransferData(data: unknown): ProviderResult<null> {
  const transfer = objectOf(data)
  if (!transfer) return { outcome: 'unknown', error: 'the answer has no transfer' }
  return readTransferStatus(transfer.status, {
    transferCode: textOf(transfer.transfer_code),
    reason: transferReason(transfer),
  })
}

// ---- Answers --------------------------------------------------------------------------------

/** Paystack's message of an answer, for an error or a record; the HTTP status when it has none. */
export function answerMessage(answer: HttpAnswer): string {
  if (!answer.ok) return answer.error
  const message = readEnvelope(answer.body)?.message
  return message
    ? `Paystack answered ${answer.httpStatus}: ${message.slice(0, 200)}`
    : `Paystack answered ${answer.httpStatus}`
}

/** A refusal of a reference Paystack has seen: nothing moved now, and the original is what to ask about. */
export function isDuplicateReference(message: string): boolean {
  const text = message.toLowerCase()
  return /duplicate/.test(text) || /reference.{0,40}(?:already|exists|been used)/.test(text)
}

/** A refusal of POST /transfer Rail can read as final: nothing was taken, and this transfer will not be. */
function finalRefusal(message: string): string | undefined {
  const code = failureCode(message)
  return code === '05' ? undefined : code
}

/**
 * POST /transfer's answer: the transfer's status; `duplicate` when Paystack has the reference already
 * (the adapter then asks for the original: never a second move). A refusal Rail cannot place — a
 * key Paystack does not take, a limit, a message it does not know — is unknown: the pipeline asks
 * again, and a transfer Paystack never made is then "not found" and sent again, same reference.
 */
export function readTransferAnswer(answer: HttpAnswer): ProviderResult<null> | 'duplicate' {
  if (!answer.ok) return { outcome: 'unknown', error: answer.error }
  const envelope = readEnvelope(answer.body)
  if (!envelope) return { outcome: 'unknown', error: `unexpected answer ${answer.httpStatus}` }
  if (envelope.status && answer.httpStatus < 300) return readTransferData(envelope.data)
  if (envelope.status) return { outcome: 'unknown', error: answerMessage(answer) }
  if (isDuplicateReference(envelope.message)) return 'duplicate'
  const code = answer.httpStatus === 400 || answer.httpStatus === 422 ? finalRefusal(envelope.message) : undefined
  if (code) return failed(code, `refused: ${envelope.message.slice(0, 200)}`)
  return { outcome: 'unknown', error: answerMessage(answer) }
}

/** GET /transfer/verify/{reference}'s answer: the transfer's status, or no record (25) when Paystack has none. */
export function readVerifyAnswer(answer: HttpAnswer): ProviderResult<null> {
  if (!answer.ok) return { outcome: 'unknown', error: answer.error }
  const envelope = readEnvelope(answer.body)
  if (!envelope) return { outcome: 'unknown', error: `unexpected answer ${answer.httpStatus}` }
  if (envelope.status && answer.httpStatus < 300) return readTransferData(envelope.data)
  // Only an answer about the transfer: a 401 or 429 whose message says "not found" is no record of nothing.
  const notFound =
    answer.httpStatus === 404 ||
    (answer.httpStatus === 400 && !envelope.status && /transfer not found/i.test(envelope.message))
  // No record is not "never received": Paystack promises no validity window (the pipeline decides).
  if (notFound)
    return {
      outcome: 'pending',
      responseCode: '25',
      responseMessage: `not found: ${envelope.message || nipMessage('25')}`.slice(0, 200),
      providerReference: null,
    }
  return { outcome: 'unknown', error: answerMessage(answer) }
}

/** GET /bank/resolve's answer: the holder's name; Paystack's refusal is an invalid account (07). */
export function readNameEnquiryAnswer(answer: HttpAnswer): ProviderResult<{ accountName: string }> {
  if (!answer.ok) return { outcome: 'unknown', error: answer.error }
  const envelope = readEnvelope(answer.body)
  if (!envelope) return { outcome: 'unknown', error: `unexpected answer ${answer.httpStatus}` }
  if (envelope.status && answer.httpStatus < 300) {
    const data = objectOf(envelope.data)
    const accountName = textOf(data?.account_name)
    if (!accountName) return { outcome: 'unknown', error: 'the name enquiry answered without a name' }
    return successful(nipMessage('00'), textOf(data?.account_number) ?? '', { accountName })
  }
  if (!envelope.status && [400, 404, 422].includes(answer.httpStatus)) {
    return failed('07', `refused: ${envelope.message || nipMessage('07')}`.slice(0, 200))
  }
  return { outcome: 'unknown', error: answerMessage(answer) }
}

/**
 * POST /transferrecipient's answer: the recipient's code; a refusal of the account (Paystack could
 * not resolve it) fails the payout with 07 — nothing was sent. Anything else is unknown.
 */
export function readRecipientAnswer(answer: HttpAnswer): { recipientCode: string } | ProviderResult<null> {
  if (!answer.ok) return { outcome: 'unknown', error: answer.error }
  const envelope = readEnvelope(answer.body)
  if (!envelope) return { outcome: 'unknown', error: `unexpected answer ${answer.httpStatus}` }
  if (envelope.status && answer.httpStatus < 300) {
    const recipientCode = textOf(objectOf(envelope.data)?.recipient_code)
    return recipientCode && recipientCode.length <= 64
      ? { recipientCode }
      : { outcome: 'unknown', error: 'the recipient has no code' }
  }
  const refusedAccount =
    (answer.httpStatus === 400 || answer.httpStatus === 422) && /account|resolve/i.test(envelope.message)
  if (!envelope.status && refusedAccount) {
    return failed('07', `refused: ${envelope.message}`.slice(0, 200))
  }
  return { outcome: 'unknown', error: answerMessage(answer) }
}

/** GET /balance's answer: the NGN balance in kobo; undefined when there is none to read. */
export function readBalanceAnswer(answer: HttpAnswer): number | undefined {
  if (!answer.ok || answer.httpStatus >= 300) return undefined
  const envelope = readEnvelope(answer.body)
  if (!envelope?.status || !Array.isArray(envelope.data)) return undefined
  const naira = envelope.data.map(objectOf).find((entry) => entry?.currency === 'NGN')
  const balanceKobo = naira?.balance
  return typeof balanceKobo === 'number' && Number.isSafeInteger(balanceKobo) ? balanceKobo : undefined
}

/** A customer Paystack made (or had: the same email answers the same customer). */
export function readCustomerAnswer(answer: HttpAnswer): { id: number; customerCode: string } | undefined {
  if (!answer.ok || answer.httpStatus >= 300) return undefined
  const envelope = readEnvelope(answer.body)
  const data = envelope?.status ? objectOf(envelope.data) : undefined
  const customerCode = textOf(data?.customer_code)
  return data && typeof data.id === 'number' && Number.isSafeInteger(data.id) && customerCode
    ? { id: data.id, customerCode }
    : undefined
}
