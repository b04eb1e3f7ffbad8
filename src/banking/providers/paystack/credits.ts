// How Paystack speaks of money paid in, as pure functions: its dedicated accounts, the
// transactions credited to them (a `charge.success` webhook's data and GET /transaction's items are
// the same object), and its webhooks — signed with an HMAC-SHA512 of the raw body keyed with the
// secret key, and sent from addresses Paystack publishes.
import { BANKS } from '../../nip/banks.ts'
import type { HttpAnswer } from '../http.ts'
import { objectOf, textOf } from '../json.ts'
import type { ProviderCredit, ProviderWebhook, TransferEvent, WebhookRequest } from '../types.ts'
import { verifiedBody } from '../webhooks.ts'
import { railReferenceOf } from './reference.ts'

/** The channel of a transfer into a dedicated account: the only transactions that are credits to Rail. */
export const DEDICATED_ACCOUNT_CHANNEL = 'dedicated_nuban'
/** The domain of the email a customer is made with: `${allocation reference}@` it (deterministic, never delivered). */
export const CUSTOMER_EMAIL_DOMAIN = 'customers.rail.invalid'
const SESSION_ID_CHARS_MAX = 64

// ---- Dedicated accounts ---------------------------------------------------------------------

export interface DedicatedAccount {
  id: number
  accountNumber: string
  accountName: string
  active: boolean
  bank: { name: string | null; slug: string | null }
}

/** A dedicated account object (POST /dedicated_account's data, a list's item); undefined when a field is missing. */
export function readDedicatedAccount(value: unknown): DedicatedAccount | undefined {
  const account = objectOf(value)
  const bank = objectOf(account?.bank)
  if (!account || typeof account.id !== 'number' || !Number.isSafeInteger(account.id)) return undefined
  const accountNumber = account.account_number
  if (typeof accountNumber !== 'string' || !/^[0-9]{10}$/.test(accountNumber)) return undefined
  const accountName = textOf(account.account_name)
  if (!accountName) return undefined
  return {
    id: account.id,
    accountNumber,
    accountName,
    active: account.active !== false,
    bank: { name: textOf(bank?.name), slug: textOf(bank?.slug) },
  }
}

/** CBN codes of the banks Paystack opens dedicated accounts at, by Paystack's slug. */
const DEDICATED_ACCOUNT_BANKS: Readonly<Record<string, string>> = {
  'wema-bank': '035',
  'access-bank': '044',
}

/**
 * The CBN code of the bank a dedicated account is at: the profile's setting when it names one
 * (a bank Rail's table does not know), else by Paystack's slug, else by the bank's name.
 */
export function dedicatedAccountBankCode(
  bank: DedicatedAccount['bank'],
  configured: string | undefined,
): string | undefined {
  if (configured !== undefined && /^[0-9]{3,6}$/.test(configured)) return configured
  const bySlug = bank.slug === null ? undefined : DEDICATED_ACCOUNT_BANKS[bank.slug]
  return bySlug ?? bankCodeByName(bank.name)
}

function bankCodeByName(name: string | null): string | undefined {
  const wanted = name?.trim().toLowerCase()
  return wanted ? BANKS.find((bank) => bank.name.toLowerCase() === wanted)?.code : undefined
}

// ---- Credits --------------------------------------------------------------------------------

/**
 * A transaction into a dedicated account as a credit; undefined when it is not one (another
 * channel, not successful) or a field Rail needs is missing. The session id is Paystack's reference
 * of the transaction: the same in the webhook and in the list, so a credit is applied once.
 */
export function creditOfTransaction(value: unknown): ProviderCredit | undefined {
  const transaction = objectOf(value)
  const authorization = objectOf(transaction?.authorization)
  if (
    !transaction ||
    !authorization ||
    transaction.channel !== DEDICATED_ACCOUNT_CHANNEL ||
    transaction.status !== 'success'
  )
    return undefined
  const reference = textOf(transaction.reference)
  const sessionId =
    reference !== null && reference.length <= SESSION_ID_CHARS_MAX
      ? reference
      : typeof transaction.id === 'number'
        ? String(transaction.id)
        : null
  const { amount, currency } = transaction
  const accountNumber = authorization.receiver_bank_account_number
  const paidAt = new Date(
    typeof transaction.paid_at === 'string'
      ? transaction.paid_at
      : typeof transaction.paidAt === 'string'
        ? transaction.paidAt
        : Number.NaN,
  )
  if (sessionId === null || typeof accountNumber !== 'string' || !/^[0-9]{10}$/.test(accountNumber)) return undefined
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) return undefined
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency) || Number.isNaN(paidAt.getTime())) return undefined
  const payerAccountNumber = textOf(authorization.sender_bank_account_number)
  return {
    sessionId,
    accountNumber,
    amountKobo: amount,
    currency,
    payerName: textOf(authorization.sender_name),
    // Paystack may mask the payer's number: only a whole one is a payer's account (a refund may pay it).
    payerAccountNumber:
      payerAccountNumber !== null && /^[0-9]{10}$/.test(payerAccountNumber) ? payerAccountNumber : null,
    payerBankCode: bankCodeByName(textOf(authorization.sender_bank)) ?? null,
    narration: textOf(authorization.narration),
    creditedAt: paidAt,
    accountReference: allocationReferenceOf(objectOf(transaction.customer)?.email),
  }
}

/** The allocation reference a customer was made with (its email's local part), when it is one of Rail's. */
function allocationReferenceOf(email: unknown): string | null {
  const suffix = `@${CUSTOMER_EMAIL_DOMAIN}`
  return typeof email === 'string' && email.endsWith(suffix) && email.length > suffix.length
    ? email.slice(0, -suffix.length)
    : null
}

/** A page of GET /transaction: its items and how many pages there are (null when Paystack does not say). */
export function readTransactionPage(
  answer: HttpAnswer,
): { transactions: unknown[]; pageCount: number | null } | undefined {
  if (!answer.ok || answer.httpStatus >= 300 || answer.body.status !== true || !Array.isArray(answer.body.data))
    return undefined
  const pageCount = objectOf(answer.body.meta)?.pageCount
  return {
    transactions: answer.body.data,
    pageCount: typeof pageCount === 'number' && Number.isSafeInteger(pageCount) ? pageCount : null,
  }
}

// ---- Webhooks -------------------------------------------------------------------------------

const TRANSFER_EVENTS: Readonly<Record<string, TransferEvent>> = {
  'transfer.success': 'success',
  'transfer.failed': 'failed',
  'transfer.reversed': 'reversed',
}

/**
 * A webhook Paystack sent, verified and read: from an allowed address when the profile keeps an
 * allowlist, signed with the secret key, then by its event — a credit to a dedicated account, a
 * transfer's news by Rail's reference, or something verified Rail does not act on.
 */
export function readPaystackWebhook(
  request: WebhookRequest,
  options: { secretKey: string; allowedAddresses: readonly string[] | null },
): ProviderWebhook {
  const verified = verifiedBody(request, 'x-paystack-signature', options.secretKey, options.allowedAddresses)
  if ('kind' in verified) return verified
  const body = verified.body
  const event = body?.event
  const data = objectOf(body?.data)
  if (typeof event !== 'string' || event === '' || !data)
    return { kind: 'invalid', message: 'the body has no event and data' }
  if (event === 'charge.success') {
    if (data.channel !== DEDICATED_ACCOUNT_CHANNEL) return { kind: 'ignored', event }
    const credit = creditOfTransaction(data)
    return credit ? { kind: 'credit', credit } : { kind: 'invalid', message: 'the credit is incomplete' }
  }
  const transferEvent = TRANSFER_EVENTS[event]
  if (transferEvent === undefined) return { kind: 'ignored', event: event.slice(0, 100) }
  if (typeof data.reference !== 'string') return { kind: 'invalid', message: 'the transfer has no reference' }
  try {
    return { kind: 'transfer', reference: railReferenceOf(data.reference), event: transferEvent }
  } catch {
    // Another system's transfer on the same integration: acknowledged, so that Paystack stops sending it.
    return { kind: 'ignored', event: event.slice(0, 100) }
  }
}
