// Sandbox: the bank receives a real credit into one of the caller's accounts (a virtual account,
// or a wallet's account number) and announces it to Rail, whose real path then applies it.
import { findBank } from '../nip/banks.ts'
import { isValidNuban } from '../nip/nuban.ts'
import type { Partner } from '../partners/service.ts'
import type { Pool } from '../platform/db.ts'
import { fieldError, RailError } from '../platform/errors.ts'
import { claimSignature, forgetSignature, storeSignatureResponse } from '../platform/signed-requests.ts'
import { getProvider } from '../providers/service.ts'
import { selectByPartnerAndNumber as selectAccountByNumber } from '../virtual-accounts/service.ts'
import { partnerWalletOfAccountNumber } from '../wallets/service.ts'
import type { InboundDeps } from './deps.ts'

export interface SimulatedCredit {
  virtualAccount: string
  amountKobo: number
  payerName?: string
  payerAccountNumber?: string
  payerBankCode?: string
}

export type SimulatedCreditAnswer = Awaited<ReturnType<typeof payInto>>

/**
 * Sandbox: the bank receives a real credit into one of the caller's accounts and announces it to
 * Rail. The request has no reference, so its signature is its key: the same signed request again
 * (a replay within the signature's window, or an identical retry) pays nothing and answers what
 * the first one did (`replayed`); while the first is still at the bank, 409 request_in_progress.
 */
export async function simulateInboundCredit(deps: InboundDeps, partner: Partner, request: SimulatedCredit, signature: string): Promise<SimulatedCreditAnswer & { replayed: boolean }> {
  if (request.payerBankCode !== undefined && !findBank(request.payerBankCode)) throw fieldError('payerBankCode', 'is not a bank code of a Nigerian bank')
  if (request.payerAccountNumber !== undefined && request.payerBankCode !== undefined && !isValidNuban(request.payerBankCode, request.payerAccountNumber)) {
    throw fieldError('payerAccountNumber', 'is not a valid NUBAN at that bank')
  }
  const account = await simulationTarget(deps.pool, partner.id, request.virtualAccount)
  const claim = await claimSignature(deps.pool, partner.id, signature)
  if (claim.kind === 'seen') {
    if (claim.response === null) throw new RailError('request_in_progress', 'The same signed request is still being worked; retry for its answer', undefined, { retryAfterS: 1 })
    return { ...(claim.response as SimulatedCreditAnswer), replayed: true }
  }
  let answer: SimulatedCreditAnswer
  try {
    answer = await payInto(deps, account, request)
  } catch (error) {
    // Forgotten only when nothing can have been paid in — the bank refused, or was never reached —
    // so that the same request may be tried again. When the bank's answer is unknown the credit
    // may have been made: the signature stays taken (a retry answers request_in_progress, and the
    // credit, if made, arrives by the bank's notice); a new payment is a newly signed request.
    if (!isOutcomeUnknown(error)) await forgetSignature(deps.pool, partner.id, signature)
    throw error
  }
  await storeSignatureResponse(deps.pool, partner.id, signature, answer)
  return { ...answer, replayed: false }
}

/** Where a simulated credit is paid: one of the partner's virtual accounts, else one of its wallets; anyone else's is not found. */
interface SimulationTarget {
  provider: string
  accountNumber: string
  trackingId: string | null
  walletId: string | null
}

async function simulationTarget(pool: Pool, partnerId: string, accountNumber: string): Promise<SimulationTarget> {
  const account = await selectAccountByNumber(pool, partnerId, accountNumber)
  if (account) return { provider: account.provider, accountNumber: account.accountNumber, trackingId: account.trackingId, walletId: null }
  const wallet = await partnerWalletOfAccountNumber(pool, partnerId, accountNumber)
  if (wallet) return { provider: wallet.provider, accountNumber: wallet.accountNumber, trackingId: null, walletId: wallet.id }
  throw new RailError('not_found', 'Virtual account or wallet not found')
}

function isOutcomeUnknown(error: unknown): boolean {
  return error instanceof RailError && error.details?.outcome === 'unknown'
}

async function payInto(deps: InboundDeps, account: SimulationTarget, request: SimulatedCredit) {
  const provider = await getProvider(deps.pool, account.provider)
  const paid = await deps.providers.sandboxControlsFor(provider).simulateInboundCredit({
    accountNumber: account.accountNumber,
    amountKobo: request.amountKobo,
    payerName: request.payerName,
    payerAccountNumber: request.payerAccountNumber,
    payerBankCode: request.payerBankCode,
  })
  if (paid.outcome === 'unknown') {
    throw new RailError('provider_unavailable', `The sandbox bank's answer was lost (${paid.error}); the credit may have been made and would arrive by its notice`, { outcome: 'unknown' })
  }
  if (paid.outcome !== 'successful') throw new RailError('provider_unavailable', `The sandbox bank did not take the credit: ${paid.responseCode}`)
  return {
    virtualAccount: account.accountNumber,
    trackingId: account.trackingId,
    walletId: account.walletId,
    amountKobo: request.amountKobo,
    sessionId: paid.value.sessionId,
    notified: paid.value.notified,
    message: paid.value.notified
      ? 'The sandbox bank received the credit and is announcing it to Rail; the callback follows'
      : `The sandbox bank received the credit but lost its announcement (magic amount); Rail's sweep of every account finds it within minutes, or requery the ${account.walletId ? 'wallet' : 'account'} to find it now`,
  }
}
