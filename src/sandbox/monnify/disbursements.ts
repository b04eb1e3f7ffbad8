// Monnify's disbursements on the bank's books: a single transfer, its status by reference, the
// merchant's balance and name enquiry. A transfer from the merchant's main account is a payout
// from the bank's settlement pool, in progress until the settlement simulator registers its
// outcome by the same reference (and REVERSED once the simulator reverses it after it was paid);
// one from a wallet is an interbank send that settles by itself and cannot be reversed.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { findBank } from '../../banking/nip/banks.ts'
import { nipMessage } from '../../banking/nip/codes.ts'
import { nuban } from '../../banking/nip/nuban.ts'
import { withTransaction } from '../../platform/db.ts'
import type { DialectHandler, SandboxDialectDeps } from '../dialects.ts'
import {
  announceIfSettled,
  REVERSED_DESCRIPTION,
  transactionReferenceOf,
  watchDisbursement,
  type DisbursementStatus,
} from './announce.ts'
import {
  findDisbursement,
  insertDisbursement,
  isReversed,
  mainAccountMovements,
  walletBy,
  type Disbursement,
} from './repo.ts'
import { apiTime, koboToNaira, nairaToKobo, ok, queryValue, refuse } from './wire.ts'

/**
 * The merchant's main account (its Monnify wallet, the disbursements' source): the NUBAN of the
 * bank's settlement pool, which every payout is paid from. Rail's sandbox Monnify profile sends it
 * as sourceAccountNumber.
 */
export function monnifyMainAccountNumber(bankCode: string): string {
  return nuban(bankCode, '000000001')
}

/**
 * What the merchant's main account held before anything happened in the sandbox: ₦1,000,000,000.
 * The settlement pool is not booked, so the balance shown is this, plus what came into reserved
 * accounts, less what was paid out (a sandbox figure: payouts are not refused for it).
 */
export const MAIN_ACCOUNT_OPENING_KOBO = 100_000_000_000

const REFERENCE_PATTERN = /^[A-Za-z0-9._|-]{1,64}$/
const NARRATION_CHARS_MAX = 100

interface SingleRequest {
  amount?: unknown
  reference?: unknown
  narration?: unknown
  destinationBankCode?: unknown
  destinationAccountNumber?: unknown
  destinationAccountName?: unknown
  currency?: unknown
  sourceAccountNumber?: unknown
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined)

/** What fault injection reads from a disbursement request: its amount in kobo and its reference. */
export function disbursementFaultSubject(body: unknown): { amountKobo?: number; transferReference?: string } {
  const request = (body ?? {}) as SingleRequest
  const converted = nairaToKobo(request.amount)
  return {
    amountKobo: 'amountKobo' in converted ? converted.amountKobo : undefined,
    transferReference: text(request.reference),
  }
}

/** The body's refusal in words, or the disbursement it asks for. */
function readSingle(
  body: unknown,
): { refused: string } | { request: Omit<Disbursement, 'createdAt' | 'completedAt' | 'sourceKind'> } {
  const request = (body ?? {}) as SingleRequest
  const amount = nairaToKobo(request.amount)
  if ('refused' in amount) return amount
  const reference = text(request.reference)
  if (!reference || !REFERENCE_PATTERN.test(reference))
    return { refused: 'reference must be 1 to 64 letters, digits or ._|-' }
  const narration = text(request.narration)
  if (!narration || narration.length > NARRATION_CHARS_MAX)
    return { refused: `narration is required (at most ${NARRATION_CHARS_MAX} characters)` }
  const destinationBankCode = text(request.destinationBankCode)
  const destinationAccountNumber = text(request.destinationAccountNumber)
  if (!destinationBankCode || !/^[0-9]{3,6}$/.test(destinationBankCode))
    return { refused: 'destinationBankCode is required' }
  if (!destinationAccountNumber || !/^[0-9]{10}$/.test(destinationAccountNumber))
    return { refused: 'destinationAccountNumber must be 10 digits' }
  if (request.currency !== 'NGN') return { refused: 'currency must be NGN' }
  const sourceAccountNumber = text(request.sourceAccountNumber)
  if (!sourceAccountNumber) return { refused: 'sourceAccountNumber is required' }
  const destinationAccountName = text(request.destinationAccountName) || null
  return {
    request: {
      reference,
      amountKobo: amount.amountKobo,
      narration,
      destinationBankCode,
      destinationAccountNumber,
      destinationAccountName,
      sourceAccountNumber,
    },
  }
}

/** Monnify's answer to a transfer, made or looked up. */
function transferBody(
  disbursement: Disbursement,
  status: DisbursementStatus,
  responseCode: string,
  sessionId: string,
): Record<string, unknown> {
  return {
    amount: koboToNaira(disbursement.amountKobo),
    reference: disbursement.reference,
    status,
    dateCreated: apiTime(disbursement.createdAt),
    totalFee: 0,
    sessionId,
    destinationAccountName: disbursement.destinationAccountName,
    destinationBankName: findBank(disbursement.destinationBankCode)?.name ?? null,
    destinationAccountNumber: disbursement.destinationAccountNumber,
    destinationBankCode: disbursement.destinationBankCode,
    comment: nipMessage(responseCode),
  }
}

/** POST /api/v2/disbursements/single. */
export const initiateSingle: DialectHandler = async (deps, request, reply) => {
  const read = readSingle(request.body)
  if ('refused' in read) return refuse(reply, 400, read.refused)
  const wanted = read.request
  const main = wanted.sourceAccountNumber === monnifyMainAccountNumber(deps.bank.bankCode)
  const wallet = main ? undefined : await walletBy(deps.pool, 'account_number', wanted.sourceAccountNumber)
  if (!main && !wallet) return refuse(reply, 400, `Invalid source account number: ${wanted.sourceAccountNumber}`)
  const destinationAccountName =
    wanted.destinationAccountName ??
    (await deps.bank.nameEnquiry(wanted.destinationBankCode, wanted.destinationAccountNumber)).accountName
  const transfer = {
    reference: wanted.reference,
    amountKobo: wanted.amountKobo,
    narration: wanted.narration,
    destinationBankCode: wanted.destinationBankCode,
    destinationAccountNumber: wanted.destinationAccountNumber,
  }
  const answer = await deps.bank.transfer(
    main
      ? { ...transfer, kind: 'payout' }
      : { ...transfer, kind: 'interbank', debitAccountNumber: wanted.sourceAccountNumber },
  )
  // The bank refuses a reference it has seen: nothing moved, and Monnify's duplicate answer says so.
  if (answer.responseCode === '26')
    return refuse(reply, 400, `Duplicate reference: a transfer with reference ${wanted.reference} already exists`)
  const disbursement = { ...wanted, destinationAccountName, sourceKind: main ? ('main' as const) : ('wallet' as const) }
  const createdAt = deps.clock.now()
  await withTransaction(deps.pool, async (tx) => {
    await insertDisbursement(tx, disbursement, createdAt)
    await watchDisbursement(tx, wanted.reference, 0)
  })
  const status = statusOf(answer.responseCode)
  return ok(
    reply,
    transferBody({ ...disbursement, createdAt, completedAt: null }, status, answer.responseCode, answer.sessionId),
  )
}

/**
 * A transfer's status in Monnify's words, from the bank's NIP code (25, no record, is not a status)
 * and whether the bank reversed it after it was paid (the bank still answers 00 for that).
 */
export function statusOf(responseCode: string, reversed = false): DisbursementStatus {
  if (responseCode === '09') return 'PENDING'
  if (responseCode !== '00') return 'FAILED'
  return reversed ? 'REVERSED' : 'SUCCESS'
}

/** GET /api/v2/disbursements/single/summary?reference=. */
export const singleSummary: DialectHandler = async (deps, request, reply) => {
  const reference = queryValue(request.query, 'reference')
  if (!reference) return refuse(reply, 400, 'reference is required')
  const disbursement = await findDisbursement(deps.pool, reference)
  const answer = disbursement && (await announceIfSettled(deps.pool, deps.bank, reference, deps.clock))
  if (!disbursement || !answer || answer.responseCode === '25')
    return refuse(reply, 404, `Could not find transfer with reference ${reference}`)
  // Read after the requery: a reversal needs the payout settled, which the requery may just have done.
  const status = statusOf(answer.responseCode, await isReversed(deps.pool, reference))
  return ok(reply, {
    amount: koboToNaira(disbursement.amountKobo),
    reference,
    narration: disbursement.narration,
    currency: 'NGN',
    fee: 0,
    twoFaEnabled: false,
    status,
    transactionDescription: status === 'REVERSED' ? REVERSED_DESCRIPTION : nipMessage(answer.responseCode),
    transactionReference: transactionReferenceOf(answer.sessionId),
    sessionId: answer.sessionId,
    createdOn: apiTime(disbursement.createdAt),
    sourceAccountNumber: disbursement.sourceAccountNumber,
    destinationAccountNumber: disbursement.destinationAccountNumber,
    destinationAccountName: disbursement.destinationAccountName,
    destinationBankCode: disbursement.destinationBankCode,
    destinationBankName: findBank(disbursement.destinationBankCode)?.name ?? null,
  })
}

/**
 * GET /api/v2/disbursements/wallet-balance?accountNumber=: the merchant's main account, or one of
 * its wallets; GET /api/v1/disbursements/wallet/balance (`mainAccountToo` false) answers wallets
 * only. A wallet's balance is what its account at the bank holds (a send in progress has left it already).
 */
export async function walletBalance(
  deps: SandboxDialectDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  mainAccountToo = true,
): Promise<FastifyReply> {
  const accountNumber = queryValue(request.query, 'accountNumber')
  if (!accountNumber) return refuse(reply, 400, 'accountNumber is required')
  if (mainAccountToo && accountNumber === monnifyMainAccountNumber(deps.bank.bankCode)) {
    const moves = await mainAccountMovements(deps.pool)
    const ledgerKobo = MAIN_ACCOUNT_OPENING_KOBO + moves.creditedKobo - moves.settledOutKobo
    const availableBalance = koboToNaira(ledgerKobo - moves.pendingOutKobo)
    return ok(reply, { availableBalance, ledgerBalance: koboToNaira(ledgerKobo) })
  }
  const wallet = await walletBy(deps.pool, 'account_number', accountNumber)
  const account = wallet && (await deps.bank.getAccount(accountNumber))
  if (!account) return refuse(reply, 404, `Wallet with account number ${accountNumber} not found`)
  const balance = koboToNaira(account.balanceKobo)
  return ok(reply, { availableBalance: balance, ledgerBalance: balance })
}

/** GET /api/v1/disbursements/account/validate?accountNumber=&bankCode=: the holder's name, or Monnify's refusal. */
export const validateAccount: DialectHandler = async ({ bank }, request, reply) => {
  const accountNumber = queryValue(request.query, 'accountNumber')
  const bankCode = queryValue(request.query, 'bankCode')
  if (!accountNumber || !bankCode) return refuse(reply, 400, 'accountNumber and bankCode are required')
  const answer = await bank.nameEnquiry(bankCode, accountNumber)
  if (answer.responseCode === '16') return refuse(reply, 400, `Invalid bank code: ${bankCode}`)
  if (answer.responseCode !== '00' || answer.accountName === null)
    return refuse(reply, 400, 'Could not validate account details')
  return ok(reply, { accountNumber, accountName: answer.accountName, bankCode })
}
