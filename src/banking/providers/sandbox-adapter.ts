// The sandbox provider adapter: reaches the sandbox bank over real HTTP (http.ts: undici, explicit
// timeouts), signs each request with the bank's shared secret, classifies each answer by its NIP
// code, and records every call and its answer in provider_calls.
import { signRequest, TIMESTAMP_TOLERANCE_S } from '../../client/signing.ts'
import { nipMessage, nipOutcome } from '../nip/codes.ts'
import { systemClock, unixSeconds, type Clock } from '../../platform/clock.ts'
import type { Coalescer } from '../../platform/coalescer.ts'
import type { Pool } from '../../platform/db.ts'
import { verifyRequestSignature } from '../../platform/request-signature.ts'
import { ProviderHttp } from './http.ts'
import type { NewProviderCall } from './repo.ts'
import type {
  MoveRequest,
  ProviderAccount,
  ProviderAdapter,
  SandboxControls,
  WebhookRequest,
  ProviderCredit,
  ProviderOutcome,
  ProviderResult,
  ProviderTraits,
  ProviderWebhook,
} from './types.ts'
import { failed, successful } from './results.ts'

/**
 * The sandbox bank keeps a reference once (a resend is answered 26 and moves nothing), and refuses
 * a request whose signed timestamp is more than its tolerance (TIMESTAMP_TOLERANCE_S unless it is
 * configured otherwise) from its clock: a send signed with its attempt's commit time can no longer
 * move money once that long has passed.
 */
export function sandboxTraits(requestValidityS: number = TIMESTAMP_TOLERANCE_S): ProviderTraits {
  return {
    deduplicatesReferences: true,
    requestValidityWindowMs: requestValidityS * 1000,
    referenceFormat: 'any string of 1 to 128 characters (Rail sends its own reference as it is)',
    amountUnit: 'kobo',
    webhookAuthentication:
      "X-Sandbox-Timestamp and X-Sandbox-Signature: Rail's request signature keyed with the sandbox bank's secret",
  }
}

export interface SandboxAdapterOptions {
  provider: string
  /** Base URL of the sandbox bank, e.g. http://127.0.0.1:8080 (it serves /sandbox-bank/v1). */
  baseUrl: string
  secret: string
  pool: Pool
  /**
   * Coalesces the call records of concurrent requests into shared transactions (the registry's);
   * without it, one INSERT each. Either way a call's record is committed before its answer is returned.
   */
  recorder?: Coalescer<NewProviderCall, null>
  timeoutMs?: number
  /** Rail's request id, recorded with each call. */
  requestId?: string
  /**
   * The time requests to the bank are signed at and the bank's notices are checked against: the
   * time Rail and the bank share (the system clock unless told), not a partner's sandbox clock.
   */
  clock?: Clock
  /** The bank's request validity window, as it is configured (TIMESTAMP_TOLERANCE_S unless told). */
  requestValidityS?: number
}

interface BankAnswer {
  responseCode: string
  responseMessage: string
  sessionId?: string
  [field: string]: unknown
}

type CallAnswer =
  { ok: true; httpStatus: number; body: BankAnswer } | { ok: false; httpStatus: number | null; error: string }

export class SandboxAdapter implements ProviderAdapter, SandboxControls {
  readonly traits: ProviderTraits
  readonly #options: SandboxAdapterOptions
  readonly #http: ProviderHttp

  constructor(options: SandboxAdapterOptions) {
    this.#options = options
    this.#http = new ProviderHttp(options)
    this.traits = sandboxTraits(options.requestValidityS)
  }

  async createWallet(request: {
    customerReference: string
    accountName: string
    reference?: string
  }): Promise<ProviderResult<ProviderAccount>> {
    // Opening an account answers 201 with the account, not a NIP code; 409 when the opening
    // reference opened an account for another request (in another name).
    const taken = (answer: CallAnswer) => answer.ok && answer.httpStatus === 409
    const opened = (answer: CallAnswer): ProviderOutcome =>
      answer.ok && answer.httpStatus === 201 ? 'successful' : taken(answer) ? 'failed' : 'unknown'
    // The bank announces credits paid into the account to this provider profile (wallet funding by transfer).
    const asked = {
      accountName: request.accountName,
      ...(request.reference === undefined ? {} : { openingReference: request.reference }),
      client: this.#options.provider,
    }
    const answer = await this.#call(
      'create_wallet',
      request.reference ?? request.customerReference,
      'POST',
      '/accounts',
      asked,
      opened,
    )
    if (!answer.ok) return { outcome: 'unknown', error: answer.error }
    if (taken(answer)) return failed('26', nipMessage('26'))
    const body = answer.body as unknown as ProviderAccount
    if (answer.httpStatus !== 201 || typeof body.accountNumber !== 'string')
      return { outcome: 'unknown', error: `unexpected answer ${answer.httpStatus}` }
    return successful('Account opened', body.accountNumber, {
      bankCode: body.bankCode,
      accountNumber: body.accountNumber,
      accountName: body.accountName,
    })
  }

  credit(request: MoveRequest & { accountNumber: string }): Promise<ProviderResult<null>> {
    return this.#move('credit', request, {
      kind: 'credit',
      creditAccountNumber: request.accountNumber,
      amountKobo: request.amountKobo,
      narration: request.narration,
    })
  }

  debit(request: MoveRequest & { accountNumber: string }): Promise<ProviderResult<null>> {
    return this.#move('debit', request, {
      kind: 'debit',
      debitAccountNumber: request.accountNumber,
      amountKobo: request.amountKobo,
      narration: request.narration,
    })
  }

  walletTransfer(
    request: MoveRequest & { fromAccountNumber: string; toAccountNumber: string },
  ): Promise<ProviderResult<null>> {
    return this.#move('wallet_transfer', request, {
      kind: 'book',
      debitAccountNumber: request.fromAccountNumber,
      creditAccountNumber: request.toAccountNumber,
      amountKobo: request.amountKobo,
      narration: request.narration,
    })
  }

  sendToBank(
    request: MoveRequest & { fromAccountNumber: string; destinationBankCode: string; destinationAccountNumber: string },
  ): Promise<ProviderResult<null>> {
    return this.#move('send_to_bank', request, {
      kind: 'interbank',
      debitAccountNumber: request.fromAccountNumber,
      destinationBankCode: request.destinationBankCode,
      destinationAccountNumber: request.destinationAccountNumber,
      amountKobo: request.amountKobo,
      narration: request.narration,
    })
  }

  payout(
    request: MoveRequest & { destinationBankCode: string; destinationAccountNumber: string },
  ): Promise<ProviderResult<null>> {
    return this.#move('payout', request, {
      kind: 'payout',
      destinationBankCode: request.destinationBankCode,
      destinationAccountNumber: request.destinationAccountNumber,
      amountKobo: request.amountKobo,
      narration: request.narration,
    })
  }

  async registerPayoutOutcome(reference: string, outcome: 'confirmed' | 'failed'): Promise<ProviderResult<null>> {
    // 200: registered; a 4xx the bank answered: no payout in progress has the reference; no
    // readable answer (lost, a 5xx): unknown — the bank may have registered it or not.
    const registered = (answer: CallAnswer): ProviderOutcome =>
      !answer.ok ? 'unknown' : answer.httpStatus === 200 ? 'successful' : answer.httpStatus < 500 ? 'failed' : 'unknown'
    const answer = await this.#call(
      'register_payout_outcome',
      reference,
      'POST',
      `/transfers/${encodeURIComponent(reference)}/outcome`,
      { outcome },
      registered,
    )
    const result = registered(answer)
    if (result === 'successful')
      return {
        outcome: result,
        responseCode: '00',
        responseMessage: 'Outcome registered',
        providerReference: reference,
        value: null,
      }
    if (result === 'failed')
      return {
        outcome: result,
        responseCode: '25',
        responseMessage: 'No payout in progress has this reference',
        providerReference: null,
      }
    return { outcome: 'unknown', error: answer.ok ? `unexpected answer ${answer.httpStatus}` : answer.error }
  }

  async allocateVirtualAccount(request: {
    reference: string
    accountName: string
  }): Promise<ProviderResult<ProviderAccount>> {
    const allocated = (answer: CallAnswer): ProviderOutcome =>
      answer.ok && answer.httpStatus === 201 ? 'successful' : 'unknown'
    const body = {
      client: this.#options.provider,
      clientReference: request.reference,
      accountName: request.accountName,
    }
    const answer = await this.#call(
      'allocate_virtual_account',
      request.reference,
      'POST',
      '/virtual-accounts',
      body,
      allocated,
    )
    if (!answer.ok) return { outcome: 'unknown', error: answer.error }
    const account = answer.body as unknown as ProviderAccount
    if (answer.httpStatus !== 201 || typeof account.accountNumber !== 'string')
      return { outcome: 'unknown', error: `unexpected answer ${answer.httpStatus}` }
    return successful('Virtual account allocated', `${this.#options.provider}:${request.reference}`, {
      bankCode: account.bankCode,
      accountNumber: account.accountNumber,
      accountName: account.accountName,
    })
  }

  async archiveVirtualAccount(accountNumber: string): Promise<ProviderResult<null>> {
    const archived = (answer: CallAnswer): ProviderOutcome =>
      answer.ok && answer.httpStatus === 200
        ? 'successful'
        : answer.ok && answer.httpStatus === 404
          ? 'failed'
          : 'unknown'
    const answer = await this.#call(
      'archive_virtual_account',
      accountNumber,
      'POST',
      `/virtual-accounts/${accountNumber}/archive`,
      { client: this.#options.provider },
      archived,
    )
    const outcome = archived(answer)
    if (outcome === 'successful') return successful('Archived', accountNumber, null)
    if (outcome === 'failed') return failed('07', 'No such virtual account')
    return { outcome: 'unknown', error: answer.ok ? `unexpected answer ${answer.httpStatus}` : answer.error }
  }

  async listCredits(accountNumber: string, since?: Date): Promise<ProviderResult<ProviderCredit[]>> {
    const listed = (answer: CallAnswer): ProviderOutcome =>
      answer.ok && answer.httpStatus === 200 ? 'successful' : 'unknown'
    const sinceQuery = since === undefined ? '' : `&since=${encodeURIComponent(since.toISOString())}`
    const path = `/virtual-accounts/${accountNumber}/credits?client=${encodeURIComponent(this.#options.provider)}${sinceQuery}`
    const answer = await this.#call('list_credits', accountNumber, 'GET', path, undefined, listed)
    if (!answer.ok || answer.httpStatus !== 200)
      return { outcome: 'unknown', error: answer.ok ? `unexpected answer ${answer.httpStatus}` : answer.error }
    const credits = (answer.body as unknown as { credits?: unknown }).credits
    if (!Array.isArray(credits)) return { outcome: 'unknown', error: 'the answer has no credits' }
    const read = credits.map(readCreditNotice)
    if (read.some((credit) => credit === undefined))
      return { outcome: 'unknown', error: 'a credit in the answer is unreadable' }
    return successful('Credits listed', accountNumber, read as ProviderCredit[])
  }

  /** The sandbox float: what the bank's settlement pool holds for its clients is not booked, so there is no balance to read. */
  async balance(): Promise<ProviderResult<{ balanceKobo: number }>> {
    return failed('58', 'The sandbox bank keeps no float balance to read (its settlement pool is not booked)')
  }

  readWebhook(request: WebhookRequest): ProviderWebhook {
    const verified = verifyRequestSignature({
      secret: this.#options.secret,
      timestamp: request.headers['x-sandbox-timestamp'],
      signature: request.headers['x-sandbox-signature'],
      clock: this.#options.clock ?? systemClock,
      method: 'POST',
      pathWithQuery: request.pathWithQuery,
      body: request.rawBody,
    })
    if (!verified.ok) return { kind: 'unauthorized' }
    let parsed: unknown
    try {
      parsed = JSON.parse(request.rawBody)
    } catch {
      return { kind: 'invalid', message: 'the body is not JSON' }
    }
    if ((parsed as { type?: unknown } | null)?.type !== 'credit.received')
      return { kind: 'invalid', message: 'unknown notice type' }
    const credit = readCreditNotice(parsed)
    return credit ? { kind: 'credit', credit } : { kind: 'invalid', message: 'the credit notice is incomplete' }
  }

  async simulateInboundCredit(request: {
    accountNumber: string
    amountKobo: number
    payerName?: string
    payerAccountNumber?: string
    payerBankCode?: string
  }): Promise<ProviderResult<{ sessionId: string; notified: boolean }>> {
    const answer = await this.#call(
      'simulate_inbound_credit',
      request.accountNumber,
      'POST',
      '/inbound-credits',
      request,
    )
    const result = classify(answer)
    if (result.outcome !== 'successful' || !answer.ok)
      return result.outcome === 'successful' ? { outcome: 'unknown', error: 'no answer' } : result
    return { ...result, value: { sessionId: String(answer.body.sessionId), notified: answer.body.notified === true } }
  }

  async nameEnquiry(request: {
    bankCode: string
    accountNumber: string
  }): Promise<ProviderResult<{ accountName: string }>> {
    const answer = await this.#call(
      'name_enquiry',
      `${request.bankCode}:${request.accountNumber}`,
      'POST',
      '/name-enquiry',
      request,
    )
    const result = classify(answer)
    if (result.outcome !== 'successful') return result
    const accountName = answer.ok ? answer.body.accountName : undefined
    if (typeof accountName !== 'string') return { outcome: 'unknown', error: 'name enquiry answered 00 without a name' }
    return { ...result, value: { accountName } }
  }

  async requery(reference: string): Promise<ProviderResult<null>> {
    return classify(
      await this.#call('requery', reference, 'GET', `/transfers/${encodeURIComponent(reference)}`, undefined),
    )
  }

  async #move(operation: string, request: MoveRequest, body: Record<string, unknown>): Promise<ProviderResult<null>> {
    const { reference } = request
    const answer = await this.#call(
      operation,
      reference,
      'POST',
      '/transfers',
      { reference, ...body },
      undefined,
      request.signedAt,
    )
    const result = classify(answer)
    // 26: the bank has this reference already and moved nothing now; what happened to the
    // original is the answer, so ask for it (docs/banking.md: never debit again, requery).
    if (result.outcome !== 'unknown' && result.responseCode === '26') return this.requery(reference)
    return result
  }

  /** One signed HTTP call, recorded with the outcome `outcomeOf` reads from its answer (by NIP code unless told otherwise). */
  async #call(
    operation: string,
    reference: string,
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    outcomeOf: (answer: CallAnswer) => ProviderOutcome = (answer) => classify(answer).outcome,
    signedAt?: Date,
  ): Promise<CallAnswer> {
    const fullPath = `/sandbox-bank/v1${path}`
    const text = body === undefined ? '' : JSON.stringify(body)
    const timestampS = signedAt
      ? Math.floor(signedAt.getTime() / 1000)
      : unixSeconds(this.#options.clock ?? systemClock)
    const signed = signRequest({
      keyId: 'sandbox',
      signingSecret: this.#options.secret,
      method,
      pathWithQuery: fullPath,
      body: text,
      timestampS,
    })
    const headers: Record<string, string> = {
      'X-Sandbox-Timestamp': signed['X-Rail-Timestamp']!,
      'X-Sandbox-Signature': signed['X-Rail-Signature']!,
    }
    if (text) headers['Content-Type'] = 'application/json'
    if (this.#options.requestId) headers['X-Request-Id'] = this.#options.requestId
    const answer = await this.#http.call({
      operation,
      reference,
      method,
      url: `${this.#options.baseUrl}${fullPath}`,
      headers,
      body: text || undefined,
      classify: (read) => {
        const answer = read as CallAnswer
        return {
          outcome: outcomeOf(answer),
          responseCode: answer.ok ? String(answer.body.responseCode ?? '') || null : null,
        }
      },
    })
    return answer as CallAnswer
  }
}

/**
 * The code the sandbox bank's requery answers for a payout reversed after it settled. NIP has no
 * code for a reversal, so this one is the sandbox's own, set on the bank's books by a test; the
 * adapter reads it as real providers' adapters read their `reversed` status.
 */
export const SANDBOX_REVERSED_CODE = '98'

/** A readable answer with a NIP code is successful, failed or pending by that code; anything else is unknown. */
function classify(answer: CallAnswer): ProviderResult<null> {
  if (!answer.ok) return { outcome: 'unknown', error: answer.error }
  const { responseCode, responseMessage, sessionId } = answer.body
  if (answer.httpStatus !== 200 || typeof responseCode !== 'string')
    return { outcome: 'unknown', error: `unexpected answer ${answer.httpStatus}` }
  const outcome = nipOutcome(responseCode)
  const providerReference = typeof sessionId === 'string' && sessionId !== '' ? sessionId : null
  if (responseCode === SANDBOX_REVERSED_CODE) {
    return {
      outcome: 'failed',
      responseCode: '05',
      responseMessage: 'reversed: the sandbox bank reversed the payout after it settled',
      providerReference,
      reversed: true,
    }
  }
  if (outcome === 'success') {
    return {
      outcome: 'successful',
      responseCode,
      responseMessage: String(responseMessage ?? ''),
      providerReference: providerReference ?? '',
      value: null,
    }
  }
  // Not final either way (in progress, or no record: 25): what it means is the pipeline's to read.
  return {
    outcome: outcome === 'failed' ? 'failed' : 'pending',
    responseCode,
    responseMessage: String(responseMessage ?? ''),
    providerReference,
  }
}

/** A credit notice of the sandbox bank (webhook body or requery item), read; undefined when a field is missing or wrong. */
function readCreditNotice(value: unknown): ProviderCredit | undefined {
  const notice = value as Record<string, unknown> | null
  if (typeof notice !== 'object' || notice === null) return undefined
  const text = (field: string) => (typeof notice[field] === 'string' ? (notice[field] as string) : null)
  const { sessionId, accountNumber, amountKobo, currency, creditedAt } = notice
  if (typeof sessionId !== 'string' || !/^[0-9]{1,64}$/.test(sessionId)) return undefined
  if (typeof accountNumber !== 'string' || !/^[0-9]{10}$/.test(accountNumber)) return undefined
  if (typeof amountKobo !== 'number' || !Number.isSafeInteger(amountKobo) || amountKobo <= 0) return undefined
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return undefined
  const at = typeof creditedAt === 'string' ? new Date(creditedAt) : new Date(Number.NaN)
  if (Number.isNaN(at.getTime())) return undefined
  return {
    sessionId,
    accountNumber,
    amountKobo,
    currency,
    payerName: text('payerName'),
    payerAccountNumber: text('payerAccountNumber'),
    payerBankCode: text('payerBankCode'),
    narration: text('narration'),
    creditedAt: at,
    accountReference: text('clientReference'),
  }
}
