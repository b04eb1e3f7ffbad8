// The credits of an account, page after page: a reserved account's transactions (paid ones only),
// or a wallet's transactions (its credits). A page Rail cannot read makes the whole listing unknown:
// a sweep that skipped a credit would never look for it again.
import type { HttpAnswer } from '../http.ts'
import type { ProviderCredit, ProviderResult } from '../types.ts'
import { koboFromNaira } from './amounts.ts'
import { objectOf, textOf } from '../json.ts'
import { creditsSince, isPaid, readEnvelope, readMonnifyTime, readReservedCredit } from './mapping.ts'
import { successful } from '../results.ts'

/** Transactions asked for per page (Monnify's pages are small by default). */
export const CREDIT_PAGE_SIZE = 100
/** Pages read at most per listing: past this many transactions, the listing is not an answer Rail trusts to be whole. */
export const CREDIT_PAGES_MAX = 50

export type CreditListing =
  | {
      kind: 'reserved'
      accountNumber: string
      accountReference: string
      pagePath: (page: number, size: number) => string
    }
  | { kind: 'wallet'; accountNumber: string; pagePath: (page: number, size: number) => string }

/** One page read: its credits (unreadable items refused) and whether it is the last. */
export interface CreditPage {
  credits: ProviderCredit[]
  last: boolean
}

/**
 * A wallet transaction, when it is money received: a CREDIT, completed, with an exact amount.
 * Undefined when it is a credit Rail cannot read; null when it is not a credit at all.
 */
export function readWalletCredit(
  item: Record<string, unknown>,
  accountNumber: string,
): ProviderCredit | null | undefined {
  if (item.transactionType !== 'CREDIT') return null
  if (item.status !== undefined && item.status !== 'COMPLETED' && item.status !== 'SUCCESS') return null
  const sessionId =
    textOf(item.monnifyTransactionReference) ??
    textOf(item.walletTransactionReference) ??
    textOf(item.transactionReference)
  const amountKobo = koboFromNaira(item.amount)
  const creditedAt = readMonnifyTime(item.transactionDate ?? item.createdOn)
  if (
    sessionId === null ||
    sessionId.length > 64 ||
    amountKobo === undefined ||
    amountKobo <= 0 ||
    creditedAt === undefined
  )
    return undefined
  return {
    sessionId,
    accountNumber,
    amountKobo,
    currency: 'NGN',
    payerName: textOf(item.sourceAccountName),
    payerAccountNumber: textOf(item.sourceAccountNumber),
    payerBankCode: textOf(item.sourceBankCode),
    narration: textOf(item.narration),
    creditedAt,
    accountReference: null,
  }
}

/** One page of a listing's answer, read. */
export function readCreditPage(answer: HttpAnswer, listing: CreditListing, page: number): ProviderResult<CreditPage> {
  if (!answer.ok) return { outcome: 'unknown', error: answer.error }
  const envelope = readEnvelope(answer.body)
  const body = objectOf(envelope?.responseBody)
  if (answer.httpStatus !== 200 || !envelope?.requestSuccessful || !body || !Array.isArray(body.content)) {
    return {
      outcome: 'unknown',
      error: `Monnify answered ${answer.httpStatus} ${envelope?.responseCode ?? ''} listing transactions`,
    }
  }
  const credits: ProviderCredit[] = []
  for (const value of body.content) {
    const item = objectOf(value)
    if (!item) return { outcome: 'unknown', error: 'a transaction in the answer is not an object' }
    if (listing.kind === 'reserved') {
      if (!isPaid(item)) continue
      const credit = readReservedCredit(item, listing.accountNumber, listing.accountReference)
      if (!credit)
        return {
          outcome: 'unknown',
          error: `the paid transaction ${String(item.transactionReference)} is unreadable or its amount is not exact`,
        }
      credits.push(credit)
    } else {
      const credit = readWalletCredit(item, listing.accountNumber)
      if (credit === undefined)
        return { outcome: 'unknown', error: 'a credit to the wallet is unreadable or its amount is not exact' }
      if (credit) credits.push(credit)
    }
  }
  const totalPages = typeof body.totalPages === 'number' ? body.totalPages : undefined
  const last =
    body.last === true || (totalPages !== undefined && page + 1 >= totalPages) || body.content.length < CREDIT_PAGE_SIZE
  return successful('Transactions listed', '', { credits, last })
}

/** Every page of a listing, its credits at or after `since`, oldest first; unknown if any page is unreadable or there are too many. */
export async function readCreditPages(
  listing: CreditListing,
  since: Date | undefined,
  fetchPage: (
    path: string,
    read: (answer: HttpAnswer) => ProviderResult<CreditPage>,
  ) => Promise<ProviderResult<CreditPage>>,
): Promise<ProviderResult<ProviderCredit[]>> {
  const credits: ProviderCredit[] = []
  for (let page = 0; page < CREDIT_PAGES_MAX; page++) {
    const answer = await fetchPage(listing.pagePath(page, CREDIT_PAGE_SIZE), (reply) =>
      readCreditPage(reply, listing, page),
    )
    if (answer.outcome === 'unknown') return answer
    if (answer.outcome !== 'successful') return { outcome: 'unknown', error: 'a page of transactions was not listed' }
    credits.push(...answer.value.credits)
    if (answer.value.last) {
      return successful('Credits listed', listing.accountNumber, creditsSince(credits, since))
    }
  }
  return { outcome: 'unknown', error: `more than ${CREDIT_PAGES_MAX} pages of transactions` }
}
