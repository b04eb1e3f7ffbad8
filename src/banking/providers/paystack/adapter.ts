// The Paystack adapter: Rail's provider operations over Paystack's API (its base URL is the profile's,
// or the sandbox's /sandbox-paystack dialect), every call made and recorded by ProviderHttp, every
// answer read by the pure functions of mapping.ts. Paystack pays out of the merchant's balance to
// a transfer recipient (made once per beneficiary account and kept), collects through dedicated
// accounts opened for customers, and has no wallets.
import type { RealAdapterOptions } from '../adapter-options.ts'
import type { HttpAnswer, ProviderCallSpec } from '../http.ts'
import { objectOf } from '../json.ts'
import { keepAccountReference, selectAccountReference } from '../repo.ts'
import type {
  MoveRequest,
  ProviderAccount,
  ProviderAdapter,
  ProviderCredit,
  ProviderOutcome,
  ProviderResult,
  ProviderTraits,
  ProviderWebhook,
  WebhookRequest,
} from '../types.ts'
import { CUSTOMER_EMAIL_DOMAIN, DEDICATED_ACCOUNT_CHANNEL } from './credits.ts'
import {
  answerMessage,
  creditOfTransaction,
  dedicatedAccountBankCode,
  paystackReference,
  readBalanceAnswer,
  readCustomerAnswer,
  readDedicatedAccount,
  readEnvelope,
  readNameEnquiryAnswer,
  readPaystackWebhook,
  readRecipientAnswer,
  readTransactionPage,
  readTransferAnswer,
  readVerifyAnswer,
  type DedicatedAccount,
} from './mapping.ts'
import { keepRecipientCode, selectRecipientCode, type RecipientKey } from './repo.ts'
import { failed, successful } from '../results.ts'

/**
 * Paystack refuses a transfer reference it has seen, so a resend never moves money twice; it
 * promises no window after which a request is no longer acted on, so "no record" never proves a
 * payout was not received.
 */
export const PAYSTACK_TRAITS: ProviderTraits = {
  deduplicatesReferences: true,
  requestValidityWindowMs: null,
  referenceFormat: 'lowercase a-z, 0-9, - and _, 16 to 50 characters (Rail escapes any other reference behind r_)',
  amountUnit: 'kobo',
  webhookAuthentication: 'x-paystack-signature: HMAC-SHA512 hex of the raw body keyed with the secret key',
}

/** The bank a dedicated account is opened at unless the profile's `preferredBank` says: Paystack's test bank for a test key. */
const PREFERRED_BANK_TEST = 'test-bank'
const PREFERRED_BANK_LIVE = 'wema-bank'
/** A recipient's name when Rail does not know the holder's (Paystack pays by account number). */
const RECIPIENT_NAME_DEFAULT = 'Rail beneficiary'
/** Credits read per page of GET /transaction, and pages read at most: past that the list is not an answer Rail reads. */
const TRANSACTIONS_PER_PAGE = 100
const TRANSACTION_PAGES_MAX = 50
/** Paystack's customer names: first and last, each cut to this. */
const NAME_CHARS_MAX = 50

/** What Paystack cannot do (it has no wallets): answered without a call, should Rail ever ask. */
const NO_WALLETS: ProviderResult<never> = failed('58', 'Paystack has no wallets: not permitted on this channel')

export class PaystackAdapter implements ProviderAdapter {
  readonly traits: ProviderTraits = PAYSTACK_TRAITS
  readonly #options: RealAdapterOptions
  readonly #secretKey: string

  constructor(options: RealAdapterOptions) {
    if (!options.secrets.secretKey) throw new Error(`the Paystack profile ${options.profile.name} has no secret key`)
    this.#options = options
    this.#secretKey = options.secrets.secretKey
  }

  async createWallet(): Promise<ProviderResult<ProviderAccount>> {
    return NO_WALLETS
  }

  async credit(): Promise<ProviderResult<null>> {
    return NO_WALLETS
  }

  async debit(): Promise<ProviderResult<null>> {
    return NO_WALLETS
  }

  async walletTransfer(): Promise<ProviderResult<null>> {
    return NO_WALLETS
  }

  async sendToBank(): Promise<ProviderResult<null>> {
    return NO_WALLETS
  }

  async nameEnquiry(request: {
    bankCode: string
    accountNumber: string
  }): Promise<ProviderResult<{ accountName: string }>> {
    const query = new URLSearchParams({ account_number: request.accountNumber, bank_code: request.bankCode })
    const answer = await this.#call(
      'name_enquiry',
      `${request.bankCode}:${request.accountNumber}`,
      'GET',
      `/bank/resolve?${query}`,
      undefined,
      readNameEnquiryAnswer,
    )
    return readNameEnquiryAnswer(answer)
  }

  async payout(
    request: MoveRequest & { destinationBankCode: string; destinationAccountNumber: string },
  ): Promise<ProviderResult<null>> {
    const reference = paystackReference(request.reference)
    const recipient = await this.#recipient(request.reference, {
      provider: this.#options.profile.name,
      bankCode: request.destinationBankCode,
      accountNumber: request.destinationAccountNumber,
    })
    if ('outcome' in recipient) return recipient
    const body = {
      source: 'balance',
      amount: request.amountKobo,
      recipient: recipient.recipientCode,
      reference,
      ...(request.narration === undefined ? {} : { reason: request.narration }),
      currency: 'NGN',
    }
    const answer = await this.#call('payout', request.reference, 'POST', '/transfer', body, readTransferAnswer)
    const result = readTransferAnswer(answer)
    // Paystack has the reference already and moved nothing now: what happened to the original is the answer.
    if (result === 'duplicate') return this.requery(request.reference)
    if (result.outcome !== 'failed') return result
    // A refusal may be a resend's (its original's answer lost, the original spending the balance the
    // resend is refused for): it stands only when Paystack has no transfer under the reference.
    const asked = await this.requery(request.reference)
    if (asked.outcome === 'pending' && asked.responseCode === '25') return result
    return asked
  }

  async requery(reference: string): Promise<ProviderResult<null>> {
    const answer = await this.#call(
      'requery',
      reference,
      'GET',
      `/transfer/verify/${encodeURIComponent(paystackReference(reference))}`,
      undefined,
      readVerifyAnswer,
    )
    return readVerifyAnswer(answer)
  }

  async allocateVirtualAccount(request: {
    reference: string
    accountName: string
  }): Promise<ProviderResult<ProviderAccount>> {
    const customerAnswer = await this.#call(
      'allocate_virtual_account',
      request.reference,
      'POST',
      '/customer',
      customerBody(request),
      (answer) => (readCustomerAnswer(answer) ? 'successful' : 'unknown'),
    )
    const customer = readCustomerAnswer(customerAnswer)
    if (!customer) return { outcome: 'unknown', error: `no customer: ${answerMessage(customerAnswer)}` }
    const asked = { customer: customer.customerCode, preferred_bank: this.#preferredBank() }
    const created = await this.#call(
      'allocate_virtual_account',
      request.reference,
      'POST',
      '/dedicated_account',
      asked,
      (answer) => (dedicatedAccountOf(answer) ? 'successful' : 'unknown'),
    )
    // The customer has its account already (an allocation asked again): that account is the answer.
    const account =
      dedicatedAccountOf(created) ??
      (refused(created) ? await this.#existingDedicatedAccount(request.reference, customer.id) : undefined)
    if (!account) return { outcome: 'unknown', error: `no dedicated account: ${answerMessage(created)}` }
    const bankCode = dedicatedAccountBankCode(account.bank, this.#options.profile.settings.dedicatedAccountBankCode)
    if (!bankCode)
      return {
        outcome: 'unknown',
        error: `the dedicated account's bank (${account.bank.slug ?? account.bank.name ?? 'unnamed'}) has no CBN code Rail knows`,
      }
    // Kept by number before Rail records the account: deactivating it and listing its credits ask by number.
    await keepAccountReference(
      this.#options.pool,
      this.#options.profile.name,
      account.accountNumber,
      `${customer.id}:${account.id}`,
    )
    return successful('Dedicated account allocated', `${customer.id}:${account.id}`, {
      bankCode,
      accountNumber: account.accountNumber,
      accountName: account.accountName,
    })
  }

  async archiveVirtualAccount(accountNumber: string): Promise<ProviderResult<null>> {
    const allocation = await this.#allocation(accountNumber)
    if (!allocation) return failed('07', 'No such virtual account')
    const deactivated = (answer: HttpAnswer): ProviderOutcome =>
      answer.ok && answer.httpStatus < 300 && answer.body.status === true
        ? 'successful'
        : answer.ok && answer.httpStatus === 404
          ? 'failed'
          : 'unknown'
    const answer = await this.#call(
      'archive_virtual_account',
      accountNumber,
      'DELETE',
      `/dedicated_account/${allocation.dedicatedAccountId}`,
      undefined,
      deactivated,
    )
    const outcome = deactivated(answer)
    if (outcome === 'successful') return successful('Deactivated', accountNumber, null)
    if (outcome === 'failed') return failed('07', 'No such dedicated account')
    return { outcome: 'unknown', error: answerMessage(answer) }
  }

  async listCredits(accountNumber: string, since?: Date): Promise<ProviderResult<ProviderCredit[]>> {
    const credits = new Map<string, ProviderCredit>()
    for (let page = 1; page <= TRANSACTION_PAGES_MAX; page += 1) {
      const query = transactionQuery({ accountNumber, since, page })
      const answer = await this.#call(
        'list_credits',
        accountNumber,
        'GET',
        `/transaction?${query}`,
        undefined,
        (read) => (readTransactionPage(read) ? 'successful' : 'unknown'),
      )
      const read = readTransactionPage(answer)
      if (!read) return { outcome: 'unknown', error: answerMessage(answer) }
      for (const transaction of read.transactions) {
        const credit = creditOfTransaction(transaction)
        // Paystack's `from` is a filter of its own: the credit's time is checked again here.
        if (credit && credit.accountNumber === accountNumber && (since === undefined || credit.creditedAt >= since))
          credits.set(credit.sessionId, credit)
      }
      const last = read.pageCount === null ? read.transactions.length < TRANSACTIONS_PER_PAGE : page >= read.pageCount
      if (last) {
        const oldestFirst = [...credits.values()].sort((a, b) => a.creditedAt.getTime() - b.creditedAt.getTime())
        return successful('Credits listed', accountNumber, oldestFirst)
      }
    }
    return { outcome: 'unknown', error: `more than ${TRANSACTION_PAGES_MAX} pages of transactions` }
  }

  async balance(): Promise<ProviderResult<{ balanceKobo: number }>> {
    const answer = await this.#call('balance', this.#options.profile.name, 'GET', '/balance', undefined, (read) =>
      readBalanceAnswer(read) === undefined ? 'unknown' : 'successful',
    )
    const balanceKobo = readBalanceAnswer(answer)
    if (balanceKobo === undefined) return { outcome: 'unknown', error: answerMessage(answer) }
    return successful('Balance', this.#options.profile.name, { balanceKobo })
  }

  readWebhook(request: WebhookRequest): ProviderWebhook {
    return readPaystackWebhook(request, {
      secretKey: this.#secretKey,
      allowedAddresses: this.#options.profile.webhookSourceAddresses,
    })
  }

  /** The beneficiary's recipient: the one kept, or one made now and kept (a refusal of the account fails the payout: nothing was sent). */
  async #recipient(reference: string, key: RecipientKey): Promise<{ recipientCode: string } | ProviderResult<null>> {
    const kept = await selectRecipientCode(this.#options.pool, key)
    if (kept !== undefined) return { recipientCode: kept }
    const body = {
      type: 'nuban',
      name: RECIPIENT_NAME_DEFAULT,
      account_number: key.accountNumber,
      bank_code: key.bankCode,
      currency: 'NGN',
    }
    const answer = await this.#call(
      'create_recipient',
      reference,
      'POST',
      '/transferrecipient',
      body,
      readRecipientAnswer,
    )
    const made = readRecipientAnswer(answer)
    if ('outcome' in made) return made
    return { recipientCode: await keepRecipientCode(this.#options.pool, key, made.recipientCode) }
  }

  /** A customer's active dedicated account, the one at the preferred bank first. */
  async #existingDedicatedAccount(reference: string, customerId: number): Promise<DedicatedAccount | undefined> {
    const query = new URLSearchParams({ active: 'true', customer: String(customerId) })
    const answer = await this.#call(
      'allocate_virtual_account',
      reference,
      'GET',
      `/dedicated_account?${query}`,
      undefined,
      (read) => (read.ok && read.body.status === true ? 'successful' : 'unknown'),
    )
    if (!answer.ok || answer.body.status !== true || !Array.isArray(answer.body.data)) return undefined
    const accounts = answer.body.data
      .map(readDedicatedAccount)
      .filter((account) => account !== undefined && account.active) as DedicatedAccount[]
    return accounts.find((account) => account.bank.slug === this.#preferredBank()) ?? accounts[0]
  }

  /** What Rail recorded of a dedicated account when it allocated it: Paystack's customer and account ids. */
  async #allocation(accountNumber: string): Promise<{ customerId: string; dedicatedAccountId: string } | undefined> {
    const providerReference = await selectAccountReference(
      this.#options.pool,
      this.#options.profile.name,
      accountNumber,
    )
    const match = providerReference === undefined ? null : /^([0-9]+):([0-9]+)$/.exec(providerReference)
    return match ? { customerId: match[1]!, dedicatedAccountId: match[2]! } : undefined
  }

  #preferredBank(): string {
    return (
      this.#options.profile.settings.preferredBank ??
      (this.#secretKey.startsWith('sk_test_') ? PREFERRED_BANK_TEST : PREFERRED_BANK_LIVE)
    )
  }

  /** One call to Paystack with the secret key as bearer token (never recorded), recorded with the outcome `outcomeOf` reads. */
  #call(
    operation: string,
    reference: string,
    method: ProviderCallSpec['method'],
    path: string,
    body: unknown,
    outcomeOf: (
      answer: HttpAnswer,
    ) => ProviderOutcome | ProviderResult<unknown> | 'duplicate' | { recipientCode: string },
  ): Promise<HttpAnswer> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.#secretKey}`, Accept: 'application/json' }
    if (body !== undefined) headers['Content-Type'] = 'application/json'
    return this.#options.http.call({
      operation,
      reference,
      method,
      url: `${this.#options.baseUrl}${path}`,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      classify: (answer) => ({ outcome: outcomeRecorded(outcomeOf(answer)), responseCode: paystackStatusOf(answer) }),
    })
  }
}

/** What the record of a call says it came to. */
function outcomeRecorded(
  read: ProviderOutcome | ProviderResult<unknown> | 'duplicate' | { recipientCode: string },
): ProviderOutcome {
  if (typeof read === 'string') return read === 'duplicate' ? 'pending' : read
  return 'outcome' in read ? read.outcome : 'successful'
}

/** Paystack's own word of an answer, for the record: a transfer's status, else its error code. */
function paystackStatusOf(answer: HttpAnswer): string | null {
  if (!answer.ok) return null
  const data = objectOf(answer.body.data)
  if (typeof data?.status === 'string') return data.status
  return typeof answer.body.code === 'string' ? answer.body.code : null
}

function refused(answer: HttpAnswer): boolean {
  return answer.ok && answer.httpStatus >= 400 && answer.httpStatus < 500 && readEnvelope(answer.body)?.status === false
}

function dedicatedAccountOf(answer: HttpAnswer): DedicatedAccount | undefined {
  if (!answer.ok || answer.httpStatus >= 300 || answer.body.status !== true) return undefined
  return readDedicatedAccount(answer.body.data)
}

/** A customer for an allocation: its email made from the reference (Paystack answers the same customer for the same email). */
function customerBody(request: { reference: string; accountName: string }): Record<string, string> {
  const words = request.accountName
    .trim()
    .split(/\s+/)
    .filter((word) => word !== '')
  const firstName = (words[0] ?? request.accountName).slice(0, NAME_CHARS_MAX)
  const lastName = (words.slice(1).join(' ') || firstName).slice(0, NAME_CHARS_MAX)
  return { email: `${request.reference}@${CUSTOMER_EMAIL_DOMAIN}`, first_name: firstName, last_name: lastName }
}

/**
 * GET /transaction's query for the successful transfers into one dedicated account since a time,
 * one page: by the filters Paystack's API description declares (its account filter spares reading
 * the customer's other transactions; the answer is filtered again all the same).
 */
export function transactionQuery(request: { accountNumber: string; since?: Date; page: number }): URLSearchParams {
  const query = new URLSearchParams({
    status: 'success',
    channel: DEDICATED_ACCOUNT_CHANNEL,
    virtual_account_number: request.accountNumber,
  })
  if (request.since !== undefined) query.set('from', request.since.toISOString())
  query.set('per_page', String(TRANSACTIONS_PER_PAGE))
  query.set('page', String(request.page))
  return query
}
