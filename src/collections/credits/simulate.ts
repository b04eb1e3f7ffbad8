// Sandbox: the bank receives a real credit into one of the caller's accounts (a virtual account,
// or a wallet's account number) and announces it to Rail, whose real path then applies it.
import { findBank } from '../../banking/nip/banks.ts'
import { isValidNuban } from '../../banking/nip/nuban.ts'
import type { Partner } from '../../partners/service.ts'
import type { Pool } from '../../platform/db.ts'
import { fieldError, RailError } from '../../platform/errors.ts'
import { idempotencyKeyFor, onceForKey } from '../../platform/idempotency-keys.ts'
import { getProvider } from '../../banking/providers/service.ts'
import { selectByPartnerAndNumber as selectAccountByNumber } from '../virtual-accounts/service.ts'
import { partnerWalletOfAccountNumber } from '../../wallets/service.ts'
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
 * Rail. The request has no reference: its Idempotency-Key, claimed before the bank is called
 * (src/platform/idempotency-keys.ts), makes the same request again pay nothing and answer what
 * the first one did. A refusal is an error that did nothing, so the key may be sent again; a lost
 * answer is marked `outcome: 'unknown'`, which keeps the key: the credit may have been made and
 * arrives by the bank's notice.
 */
export async function simulateInboundCredit(
  deps: InboundDeps,
  partner: Partner,
  request: SimulatedCredit,
): Promise<SimulatedCreditAnswer> {
  if (request.payerBankCode !== undefined && !findBank(request.payerBankCode))
    throw fieldError('payerBankCode', 'is not a bank code of a Nigerian bank')
  if (
    request.payerAccountNumber !== undefined &&
    request.payerBankCode !== undefined &&
    !isValidNuban(request.payerBankCode, request.payerAccountNumber)
  ) {
    throw fieldError('payerAccountNumber', 'is not a valid NUBAN at that bank')
  }
  return payInto(deps, await simulationTarget(deps.pool, partner.id, request.virtualAccount), request)
}

/**
 * The same, from a form (the dashboard's, the checkout page's) whose hidden one-time `formKey`
 * makes a form posted twice pay once: the key is claimed as an Idempotency-Key is.
 */
export async function simulateInboundCreditOnce(
  deps: InboundDeps,
  partner: Partner,
  request: SimulatedCredit,
  formKey: string,
): Promise<SimulatedCreditAnswer> {
  const key = idempotencyKeyFor(partner.id, formKey, { simulateInboundCredit: request })
  return (await onceForKey(deps.pool, key, () => simulateInboundCredit(deps, partner, request))).answer
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
  if (account)
    return {
      provider: account.provider,
      accountNumber: account.accountNumber,
      trackingId: account.trackingId,
      walletId: null,
    }
  const wallet = await partnerWalletOfAccountNumber(pool, partnerId, accountNumber)
  if (wallet)
    return { provider: wallet.provider, accountNumber: wallet.accountNumber, trackingId: null, walletId: wallet.id }
  throw new RailError('not_found', 'Virtual account or wallet not found')
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
    throw new RailError(
      'provider_unavailable',
      `The sandbox bank's answer was lost (${paid.error}); the credit may have been made and would arrive by its notice`,
      { outcome: 'unknown' },
    )
  }
  if (paid.outcome !== 'successful')
    throw new RailError('provider_unavailable', `The sandbox bank did not take the credit: ${paid.responseCode}`)
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
