// The Monnify adapter: Rail's provider operations over Monnify's API (token login, disbursements,
// reserved accounts, wallets), every call made and recorded by ProviderHttp. Monnify's answers are
// read by the pure functions of mapping.ts and amounts.ts; what they cannot place is `unknown`.
import { nipMessage } from '../../nip/codes.ts'
import type { RealAdapterOptions } from '../adapter-options.ts'
import type { HttpAnswer } from '../http.ts'
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
import { jsonWithAmount, koboFromNaira, nairaFromKobo } from './amounts.ts'
import { MonnifyAuth } from './auth.ts'
import {
  customerEmailFor,
  DUPLICATE_REQUEST_CODE,
  failureCode,
  isDuplicateReference,
  isNotFound,
  monnifyReference,
  readEnvelope,
  readMonnifyWebhook,
  transferResult,
  type MonnifyEnvelope,
} from './mapping.ts'
import { readCreditPages, type CreditListing } from './credits.ts'
import { failed, successful } from '../results.ts'

export const MONNIFY_TRAITS: ProviderTraits = {
  // Monnify refuses a disbursement whose reference it has seen: a resend never pays twice.
  deduplicatesReferences: true,
  // Monnify promises no window after which it will not act on a request.
  requestValidityWindowMs: null,
  referenceFormat:
    "unique per merchant; letters, digits, '-' and '_', up to 64 (Rail's UUID as is, anything else as rail- and a digest)",
  amountUnit: 'naira',
  webhookAuthentication: 'monnify-signature: HMAC-SHA512 hex of the raw body keyed with the client secret',
}

/** Monnify's wallets have no merchant credit or debit, and no transfer between wallets: 58, without a call. */
const NOT_PERMITTED: ProviderResult<null> = failed('58', nipMessage('58'))
/** Monnify's bank of its own accounts (Moniepoint MFB), preferred for reserved accounts unless a profile says otherwise. */
const PREFERRED_BANK_DEFAULT = '50515'
/** The domain of the customer emails derived for reserved accounts and wallets, unless a profile says otherwise. */
const CUSTOMER_EMAIL_DOMAIN_DEFAULT = 'customers.rail.invalid'
/** Monnify refuses a narration over 100 characters. */
const NARRATION_CHARS_MAX = 100

type Method = 'GET' | 'POST' | 'DELETE'
/** A disbursement's answer, with whether Monnify refused the request itself (then the adapter asks what it has under the reference). */
export type Disbursement = ProviderResult<null> & { refusal?: 'refused' | 'duplicate' }

/** A readable answer's envelope, or why there is none to read. */
function envelopeOf(answer: HttpAnswer): { envelope: MonnifyEnvelope; httpStatus: number } | { error: string } {
  if (!answer.ok) return { error: answer.error }
  const envelope = readEnvelope(answer.body)
  return envelope
    ? { envelope, httpStatus: answer.httpStatus }
    : { error: `answer ${answer.httpStatus} is not Monnify's envelope` }
}

/** Monnify refused the request itself (not its credentials): a 4xx other than 401/403 with requestSuccessful false. */
function isRefusal(httpStatus: number, envelope: MonnifyEnvelope): boolean {
  return (
    !envelope.requestSuccessful && httpStatus >= 400 && httpStatus < 500 && httpStatus !== 401 && httpStatus !== 403
  )
}

function unknown(error: string): ProviderResult<never> {
  return { outcome: 'unknown', error }
}

/** What a successful envelope returned, when the request was carried out. */
function bodyOf(answer: HttpAnswer): Record<string, unknown> | undefined {
  const read = envelopeOf(answer)
  if ('error' in read || read.httpStatus !== 200 || !read.envelope.requestSuccessful) return undefined
  return objectOf(read.envelope.responseBody)
}

/** An account as Monnify gives one (a reserved account's bank, a wallet's top-up account). */
function accountOf(value: unknown): ProviderAccount | undefined {
  const account = objectOf(value)
  const { bankCode, accountNumber, accountName } = account ?? {}
  if (typeof bankCode !== 'string' || typeof accountNumber !== 'string' || typeof accountName !== 'string')
    return undefined
  return /^[0-9]{3,6}$/.test(bankCode) && /^[0-9]{10}$/.test(accountNumber)
    ? { bankCode, accountNumber, accountName }
    : undefined
}

export class MonnifyAdapter implements ProviderAdapter {
  readonly traits = MONNIFY_TRAITS
  readonly #options: RealAdapterOptions
  readonly #auth: MonnifyAuth

  constructor(options: RealAdapterOptions) {
    this.#options = options
    this.#auth = new MonnifyAuth(options)
  }

  credit(): Promise<ProviderResult<null>> {
    return Promise.resolve(NOT_PERMITTED)
  }

  debit(): Promise<ProviderResult<null>> {
    return Promise.resolve(NOT_PERMITTED)
  }

  walletTransfer(): Promise<ProviderResult<null>> {
    return Promise.resolve(NOT_PERMITTED)
  }

  payout(
    request: MoveRequest & { destinationBankCode: string; destinationAccountNumber: string },
  ): Promise<ProviderResult<null>> {
    return this.#disburse('payout', request, this.#setting('sourceAccountNumber'))
  }

  /** A wallet's payout: the same disbursement, from the wallet's account. */
  sendToBank(
    request: MoveRequest & { fromAccountNumber: string; destinationBankCode: string; destinationAccountNumber: string },
  ): Promise<ProviderResult<null>> {
    return this.#disburse('send_to_bank', request, request.fromAccountNumber)
  }

  async requery(reference: string): Promise<ProviderResult<null>> {
    const path = `/api/v2/disbursements/single/summary?reference=${encodeURIComponent(monnifyReference(reference))}`
    return this.#call('requery', reference, 'GET', path, undefined, readSummary)
  }

  async nameEnquiry(request: {
    bankCode: string
    accountNumber: string
  }): Promise<ProviderResult<{ accountName: string }>> {
    const query = `accountNumber=${encodeURIComponent(request.accountNumber)}&bankCode=${encodeURIComponent(request.bankCode)}`
    return this.#call(
      'name_enquiry',
      `${request.bankCode}:${request.accountNumber}`,
      'GET',
      `/api/v1/disbursements/account/validate?${query}`,
      undefined,
      readNameEnquiry,
    )
  }

  async createWallet(request: {
    customerReference: string
    accountName: string
    reference?: string
  }): Promise<ProviderResult<ProviderAccount>> {
    const walletReference = request.reference ?? request.customerReference
    const body = JSON.stringify({
      walletReference,
      walletName: request.accountName,
      customerName: request.accountName,
      customerEmail: customerEmailFor(walletReference, this.#emailDomain()),
    })
    const created = await this.#call(
      'create_wallet',
      walletReference,
      'POST',
      '/api/v1/disbursements/wallet',
      body,
      (answer) => readWallet(answer, request.accountName),
    )
    if (created.outcome !== 'failed' || created.responseCode !== '26' || created.providerReference !== null)
      return created
    // The reference was used before: the wallet it opened is the answer, if it was opened for this name.
    const path = `/api/v1/disbursements/wallet?walletReference=${encodeURIComponent(walletReference)}`
    return this.#call('create_wallet', walletReference, 'GET', path, undefined, (answer) =>
      readWalletListing(answer, walletReference, request.accountName),
    )
  }

  async allocateVirtualAccount(request: {
    reference: string
    accountName: string
  }): Promise<ProviderResult<ProviderAccount>> {
    const body = JSON.stringify({
      accountReference: request.reference,
      accountName: request.accountName,
      currencyCode: 'NGN',
      contractCode: this.#setting('contractCode'),
      customerEmail: customerEmailFor(request.reference, this.#emailDomain()),
      customerName: request.accountName,
      getAllAvailableBanks: false,
      preferredBanks: [this.#options.profile.settings.preferredBank ?? PREFERRED_BANK_DEFAULT],
    })
    const reserved = await this.#call(
      'allocate_virtual_account',
      request.reference,
      'POST',
      '/api/v2/bank-transfer/reserved-accounts',
      body,
      readReservedAccount,
    )
    if (reserved.outcome !== 'failed') return this.#kept(reserved)
    // Refused: most likely the reference was reserved before (a retry after a lost answer); that account is the answer.
    const path = `/api/v2/bank-transfer/reserved-accounts/${encodeURIComponent(request.reference)}`
    const found = await this.#call(
      'allocate_virtual_account',
      request.reference,
      'GET',
      path,
      undefined,
      readReservedAccount,
    )
    return found.outcome === 'failed' ? reserved : this.#kept(found)
  }

  /** An allocation answered: its reference kept by account number before Rail records the account (archive and credits ask by number). */
  async #kept(result: ProviderResult<ProviderAccount>): Promise<ProviderResult<ProviderAccount>> {
    if (result.outcome === 'successful')
      await keepAccountReference(
        this.#options.pool,
        this.#options.profile.name,
        result.value.accountNumber,
        result.providerReference,
      )
    return result
  }

  async archiveVirtualAccount(accountNumber: string): Promise<ProviderResult<null>> {
    const accountReference = await selectAccountReference(this.#options.pool, this.#options.profile.name, accountNumber)
    if (accountReference === undefined) return failed('07', 'No reserved account has this number')
    const path = `/api/v1/bank-transfer/reserved-accounts/reference/${encodeURIComponent(accountReference)}`
    return this.#call('archive_virtual_account', accountNumber, 'DELETE', path, undefined, readArchive)
  }

  async listCredits(accountNumber: string, since?: Date): Promise<ProviderResult<ProviderCredit[]>> {
    const accountReference = await selectAccountReference(this.#options.pool, this.#options.profile.name, accountNumber)
    const listing: CreditListing =
      accountReference === undefined
        ? {
            kind: 'wallet',
            accountNumber,
            pagePath: (page, size) =>
              `/api/v1/disbursements/wallet/transactions?accountNumber=${encodeURIComponent(accountNumber)}&pageNo=${page}&pageSize=${size}`,
          }
        : {
            kind: 'reserved',
            accountNumber,
            accountReference,
            pagePath: (page, size) =>
              `/api/v1/bank-transfer/reserved-accounts/transactions?accountReference=${encodeURIComponent(accountReference)}&page=${page}&size=${size}`,
          }
    return readCreditPages(listing, since, (path, read) =>
      this.#call('list_credits', accountNumber, 'GET', path, undefined, read),
    )
  }

  async balance(): Promise<ProviderResult<{ balanceKobo: number }>> {
    const sourceAccountNumber = this.#setting('sourceAccountNumber')
    const path = `/api/v2/disbursements/wallet-balance?accountNumber=${encodeURIComponent(sourceAccountNumber)}`
    return this.#call('balance', sourceAccountNumber, 'GET', path, undefined, readBalance)
  }

  readWebhook(request: WebhookRequest): ProviderWebhook {
    const { secretKey } = this.#options.secrets
    if (!secretKey) return { kind: 'unauthorized' }
    return readMonnifyWebhook(request, secretKey, this.#options.profile.webhookSourceAddresses)
  }

  /**
   * One disbursement. Refused outright, or as a duplicate, what Monnify has under the reference is
   * the answer (a requery): the original of a duplicate, or nothing — then the refusal is final.
   */
  async #disburse(
    operation: string,
    request: MoveRequest & { destinationBankCode: string; destinationAccountNumber: string },
    sourceAccountNumber: string,
  ): Promise<ProviderResult<null>> {
    const body = jsonWithAmount(
      {
        reference: monnifyReference(request.reference),
        narration: (request.narration ?? 'Transfer').slice(0, NARRATION_CHARS_MAX),
        destinationBankCode: request.destinationBankCode,
        destinationAccountNumber: request.destinationAccountNumber,
        currency: 'NGN',
        sourceAccountNumber,
      },
      nairaFromKobo(request.amountKobo),
    )
    const sent = await this.#call(
      operation,
      request.reference,
      'POST',
      '/api/v2/disbursements/single',
      body,
      (answer) => readDisbursement(answer, request.amountKobo),
    )
    if (sent.refusal === undefined) return sent
    const asked = await this.requery(request.reference)
    const noRecord = asked.outcome === 'pending' && asked.responseCode === '25'
    // Monnify has something under the reference (the original of a duplicate): that is the answer.
    // A duplicate with no record is no refusal of anything either: what the requery said stands.
    if (!noRecord || sent.refusal === 'duplicate' || sent.outcome !== 'failed') return asked
    return failed(sent.responseCode, sent.responseMessage)
  }

  /** One call with the bearer token (renewed once if Monnify answers 401 to it), read by `read` and recorded as it reads. */
  async #call<R extends { outcome: ProviderOutcome }>(
    operation: string,
    reference: string,
    method: Method,
    path: string,
    body: string | undefined,
    read: (answer: HttpAnswer) => R,
  ): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      const bearer = await this.#auth.bearer()
      // No token, no call: read as no answer (every reader makes that unknown).
      if ('error' in bearer) return read({ ok: false, httpStatus: null, error: bearer.error })
      const headers: Record<string, string> = { Authorization: `Bearer ${bearer.token}`, Accept: 'application/json' }
      if (body !== undefined) headers['Content-Type'] = 'application/json'
      const answer = await this.#options.http.call({
        operation,
        reference,
        method,
        url: `${this.#options.baseUrl}${path}`,
        headers,
        body,
        classify: (reply) => ({
          outcome: read(reply).outcome,
          responseCode: reply.ok ? String(reply.body.responseCode ?? '') : null,
        }),
      })
      if (answer.ok && answer.httpStatus === 401 && attempt === 1) {
        this.#auth.invalidate(bearer.token)
        continue
      }
      return read(answer)
    }
  }

  /** A setting the profile must have (`rail provider set … --setting name=value`): without it nothing is sent. */
  #setting(name: 'contractCode' | 'sourceAccountNumber'): string {
    const value = this.#options.profile.settings[name]
    if (!value) throw new Error(`provider ${this.#options.profile.name} has no Monnify setting ${name}`)
    return value
  }

  #emailDomain(): string {
    return this.#options.profile.settings.customerEmailDomain ?? CUSTOMER_EMAIL_DOMAIN_DEFAULT
  }
}

/**
 * A disbursement's answer. Carried out: its transfer, read. Refused: failed with the cause's code
 * (the adapter then asks what Monnify has under the reference), 26 when the reference was used
 * before. Anything else, unknown.
 */
export function readDisbursement(answer: HttpAnswer, amountKobo: number): Disbursement {
  const read = envelopeOf(answer)
  if ('error' in read) return unknown(read.error)
  const { envelope, httpStatus } = read
  const transfer = objectOf(envelope.responseBody)
  if (envelope.requestSuccessful && httpStatus === 200 && transfer) return transferResult(transfer, amountKobo)
  if (!isRefusal(httpStatus, envelope))
    return unknown(`Monnify answered ${httpStatus} ${envelope.responseCode}: ${envelope.responseMessage}`)
  if (isDuplicateReference(envelope)) {
    return {
      outcome: 'pending',
      responseCode: '26',
      responseMessage: envelope.responseMessage || nipMessage('26'),
      providerReference: null,
      refusal: 'duplicate',
    }
  }
  // D07 (the same amount to the same account within minutes) may be this payout's own original,
  // not yet in its summary: never final. The payout stays in progress and is asked about (and at its
  // deadline becomes unknown, for an operator), rather than risk paying it twice.
  if (envelope.responseCode === DUPLICATE_REQUEST_CODE) {
    return {
      outcome: 'pending',
      responseCode: '09',
      responseMessage: `D07: ${envelope.responseMessage || 'the same amount to the same account within minutes'}`,
      providerReference: null,
      refusal: 'duplicate',
    }
  }
  const code = failureCode(envelope.responseMessage)
  return {
    outcome: 'failed',
    responseCode: code,
    responseMessage: envelope.responseMessage || nipMessage(code),
    providerReference: null,
    refusal: 'refused',
  }
}

/** A transfer's summary: its transfer, read; no such transfer is 25 (no record); anything else unknown. */
export function readSummary(answer: HttpAnswer): ProviderResult<null> {
  const read = envelopeOf(answer)
  if ('error' in read) return unknown(read.error)
  const transfer = objectOf(read.envelope.responseBody)
  if (read.envelope.requestSuccessful && read.httpStatus === 200 && transfer) return transferResult(transfer)
  if (isNotFound(read.httpStatus, read.envelope))
    return { outcome: 'pending', responseCode: '25', responseMessage: nipMessage('25'), providerReference: null }
  return unknown(`Monnify answered ${read.httpStatus} ${read.envelope.responseCode}: ${read.envelope.responseMessage}`)
}

export function readNameEnquiry(answer: HttpAnswer): ProviderResult<{ accountName: string }> {
  const read = envelopeOf(answer)
  if ('error' in read) return unknown(read.error)
  const accountName = bodyOf(answer)?.accountName
  if (typeof accountName === 'string' && accountName !== '') return successful(nipMessage('00'), '', { accountName })
  if (isRefusal(read.httpStatus, read.envelope)) {
    const code = failureCode(read.envelope.responseMessage) === '16' ? '16' : '07'
    return failed(code, read.envelope.responseMessage || nipMessage(code))
  }
  return unknown(`Monnify answered ${read.httpStatus} ${read.envelope.responseCode}: ${read.envelope.responseMessage}`)
}

/** A wallet, as Monnify gives one: its account, paid into by transfer at its top-up bank, paying out from its number. */
function walletAccount(
  wallet: Record<string, unknown> | undefined,
  walletName: string,
): ProviderResult<ProviderAccount> | undefined {
  const topUp = objectOf(wallet?.topUpAccountDetails)
  const account = accountOf({
    bankCode: topUp?.bankCode,
    accountNumber: wallet?.accountNumber,
    accountName: wallet?.accountName,
  })
  if (!account) return undefined
  // Opened before under this reference for another name: not this request's wallet (26, and a
  // providerReference, so that the adapter does not look it up again).
  if (typeof wallet?.walletName === 'string' && wallet.walletName !== walletName) {
    return failed('26', 'The wallet reference opened a wallet in another name', String(wallet.walletReference ?? ''))
  }
  return successful('Wallet opened', String(wallet?.walletReference ?? account.accountNumber), account)
}

export function readWallet(answer: HttpAnswer, walletName: string): ProviderResult<ProviderAccount> {
  const read = envelopeOf(answer)
  if ('error' in read) return unknown(read.error)
  const opened = walletAccount(bodyOf(answer), walletName)
  if (opened) return opened
  // Refused: the reference may have opened a wallet before; the adapter looks it up (26 until it does).
  if (isRefusal(read.httpStatus, read.envelope)) return failed('26', read.envelope.responseMessage)
  return unknown(`Monnify answered ${read.httpStatus} ${read.envelope.responseCode}: ${read.envelope.responseMessage}`)
}

export function readWalletListing(
  answer: HttpAnswer,
  walletReference: string,
  walletName: string,
): ProviderResult<ProviderAccount> {
  const body = bodyOf(answer)
  if (!body) return unknown(answer.ok ? `Monnify answered ${answer.httpStatus} listing wallets` : answer.error)
  const content = Array.isArray(body.content) ? body.content : []
  const wallet = content.map(objectOf).find((item) => item?.walletReference === walletReference)
  if (!wallet) return failed('25', 'Monnify refused the wallet and has none by its reference')
  return walletAccount(wallet, walletName) ?? unknown('the wallet Monnify listed has no readable account')
}

/** A reserved account: its first bank account (one preferred bank is asked for). */
export function readReservedAccount(answer: HttpAnswer): ProviderResult<ProviderAccount> {
  const read = envelopeOf(answer)
  if ('error' in read) return unknown(read.error)
  const body = bodyOf(answer)
  const accounts = Array.isArray(body?.accounts) ? body.accounts : []
  const account = accountOf(accounts[0])
  if (account && typeof body?.accountReference === 'string') {
    return successful('Reserved account allocated', body.accountReference, account)
  }
  if (isRefusal(read.httpStatus, read.envelope)) return failed('05', read.envelope.responseMessage)
  return unknown(`Monnify answered ${read.httpStatus} ${read.envelope.responseCode}: ${read.envelope.responseMessage}`)
}

export function readArchive(answer: HttpAnswer): ProviderResult<null> {
  const read = envelopeOf(answer)
  if ('error' in read) return unknown(read.error)
  if (read.httpStatus === 200 && read.envelope.requestSuccessful) return successful('Deallocated', '', null)
  if (isNotFound(read.httpStatus, read.envelope)) return failed('07', 'No such reserved account')
  return unknown(`Monnify answered ${read.httpStatus} ${read.envelope.responseCode}: ${read.envelope.responseMessage}`)
}

export function readBalance(answer: HttpAnswer): ProviderResult<{ balanceKobo: number }> {
  const body = bodyOf(answer)
  if (!body) return unknown(answer.ok ? `Monnify answered ${answer.httpStatus} for the balance` : answer.error)
  const balanceKobo = koboFromNaira(body.availableBalance)
  if (balanceKobo === undefined)
    return unknown(`the balance ${String(body.availableBalance)} is not an exact naira amount`)
  return successful('Balance', '', { balanceKobo })
}
