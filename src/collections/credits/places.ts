// What each credit of a batch was paid into, found (and locked) before anything is decided: the
// virtual accounts of the batch's numbers, locked at once in id order (every path that changes an
// account or its owner locks it first), then their intents, in id order; a number that is no
// virtual account's is a wallet's, or none of Rail's — then the partner the provider's allocation
// reference names, if Rail knows it (an allocation whose request failed).
import { getPartner } from '../../partners/service.ts'
import { lockIntentsOfAccounts, type PaymentIntent } from '../intents/service.ts'
import type { Queryable, Tx } from '../../platform/db.ts'
import { lockByNumbers, partnerOfAllocation, type VirtualAccount } from '../virtual-accounts/service.ts'
import { walletOfAccountNumber, type Wallet } from '../../wallets/service.ts'
import type { CreditPlace } from './matching.ts'
import type { InboundCredit } from './repo.ts'

export type Place = CreditPlace<VirtualAccount, PaymentIntent, Wallet>

export interface Places {
  of(credit: InboundCredit): Place
  /** The batch's intents, locked, by account id. */
  intents: Map<string, PaymentIntent>
}

export async function locatePlaces(tx: Tx, credits: readonly InboundCredit[]): Promise<Places> {
  const numberOf = (credit: Pick<InboundCredit, 'provider' | 'accountNumber'>) =>
    `${credit.provider}:${credit.accountNumber}`
  const accounts = await lockByNumbers(
    tx,
    credits.map((credit) => ({ provider: credit.provider, accountNumber: credit.accountNumber })),
  )
  const accountOf = new Map(accounts.map((account) => [numberOf(account), account]))
  const intents = await lockIntentsOfAccounts(
    tx,
    accounts.filter((account) => account.purpose === 'payment_intent').map((account) => account.id),
  )
  // The rest, one look-up each: a wallet's number, or none of Rail's (rare beside the accounts' credits).
  const elsewhere = new Map<string, Place>()
  for (const credit of credits) {
    if (accountOf.has(numberOf(credit)) || elsewhere.has(placeKey(credit))) continue
    elsewhere.set(placeKey(credit), await placeElsewhere(tx, credit))
  }
  return {
    intents,
    of: (credit) => {
      const account = accountOf.get(numberOf(credit))
      return account ? { kind: 'account', account, intent: intents.get(account.id) } : elsewhere.get(placeKey(credit))!
    },
  }
}

/** A number and the allocation reference it came with (the reference names the partner of an unknown number). */
function placeKey(credit: InboundCredit): string {
  return `${credit.provider}:${credit.accountNumber}:${credit.accountReference ?? ''}`
}

async function placeElsewhere(db: Queryable, credit: InboundCredit): Promise<Place> {
  const wallet = await walletOfAccountNumber(db, credit.provider, credit.accountNumber)
  if (wallet) return { kind: 'wallet', wallet }
  const partnerId = partnerOfAllocation(credit.accountReference)
  return { kind: 'unknown', partnerId: partnerId && (await getPartner(db, partnerId)) ? partnerId : null }
}
