// The requery for missed credits: the provider lists every credit of one of the caller's
// accounts (or wallets' account numbers); those Rail has not seen are recorded, once each, and
// applied through the one write path (batch.ts), each as a batch of one.
import { RailError } from '../../platform/errors.ts'
import { getProvider } from '../../banking/providers/service.ts'
import { getAccount } from '../virtual-accounts/service.ts'
import { findWallet } from '../../wallets/service.ts'
import { applyCreditAlone } from './batch.ts'
import type { InboundDeps } from './deps.ts'
import { recordCredit } from './intake.ts'
import * as repo from './repo.ts'
import { toCreditJson } from './views.ts'

/**
 * Asks the provider for every credit of one of the caller's accounts and applies, once each,
 * those Rail has not seen (a lost webhook). Answers what was found and what was new.
 */
export async function requeryAccount(deps: InboundDeps, partnerId: string, trackingId: string) {
  const account = await getAccount(deps.pool, partnerId, trackingId, ['payment_intent', 'persistent', 'fbo'])
  return {
    trackingId: account.trackingId,
    virtualAccount: account.accountNumber,
    ...(await requeryCredits(deps, account.provider, account.accountNumber)),
  }
}

/** The same for one of the caller's wallets (wallet funding by transfer): credits to its account number Rail has not seen. */
export async function requeryWallet(deps: InboundDeps, partnerId: string, walletId: string) {
  const wallet = await findWallet(deps.pool, partnerId, walletId)
  return {
    walletId: wallet.id,
    accountNumber: wallet.accountNumber,
    ...(await requeryCredits(deps, wallet.provider, wallet.accountNumber)),
  }
}

/**
 * Lists the credits the provider has for one account number, records those Rail has not seen
 * (once each: unique on the provider's session id, so a webhook racing the requery records
 * nothing twice) and applies each through the one write path, as a batch of one.
 */
async function requeryCredits(deps: InboundDeps, providerName: string, accountNumber: string) {
  const provider = await getProvider(deps.pool, providerName)
  const listed = await (await deps.providers.adapterFor(provider)).listCredits(accountNumber)
  if (listed.outcome !== 'successful')
    throw new RailError('provider_unavailable', `Provider ${provider.name} did not answer the requery; try again`)
  const ofAccount = listed.value.filter((credit) => credit.accountNumber === accountNumber)
  const recorded: string[] = []
  for (const credit of ofAccount) {
    const { creditId, duplicate } = await recordCredit(deps.pool, provider.name, credit, 'requery')
    if (!duplicate) recorded.push(creditId)
    // Applied here rather than by the job, so the answer shows the result; the job then finds it done.
    await applyCreditAlone(deps, creditId)
  }
  const credits = await Promise.all(
    ofAccount.map(async (credit) => (await repo.selectBySession(deps.pool, provider.name, credit.sessionId))!),
  )
  return { creditsFound: ofAccount.length, creditsRecorded: recorded.length, credits: credits.map(toCreditJson) }
}
