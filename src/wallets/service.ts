// Wallets (seed 000): creation at a provider and balances from the ledger.
import { createAccount, derivedId, getBalance, getBalances } from '../ledger/service.ts'
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { fieldError, onNotFound, RailError } from '../platform/errors.ts'
import { uuidv7 } from '../platform/ids.ts'
import { pageQueryLimit, toPage } from '../platform/pagination.ts'
import { requestHash } from '../platform/idempotency.ts'
import type { ProviderRegistry } from '../providers/registry.ts'
import { DEFAULT_PROVIDER, getProvider, type ProviderProfile } from '../providers/service.ts'
import * as repo from './repo.ts'

export type { Wallet } from './repo.ts'
/** For inbound credits (wallet funding by transfer): the wallet behind an account number. */
export { selectWalletByAccountNumber as walletOfAccountNumber, selectPartnerWalletByAccountNumber as partnerWalletOfAccountNumber } from './repo.ts'

/** Wallets hold naira; another currency is refused with unsupported_currency. */
export const WALLET_CURRENCY = 'NGN'

export interface WalletsDeps {
  pool: Pool
  providers: ProviderRegistry
}

export interface NewWallet {
  customerReference: string
  name: string
  provider?: string
}

export interface Created<T> {
  value: T
  /** True when the same request was made before and this is its stored result. */
  replayed: boolean
}

/**
 * Opens the customer's account at the provider and its ledger account, once per customer
 * reference. No transaction and no connection is held across the provider call: the provider is
 * given an opening reference derived from the partner and the customer reference, and answers the
 * same account however often it is asked with it (a retry, a concurrent duplicate, a request
 * whose answer was lost). The wallet is then recorded in one short transaction; a concurrent
 * duplicate that recorded it first is replayed. A failed provider call records nothing, and a
 * retry with the same request completes the opening.
 */
export async function createWallet(deps: WalletsDeps, partnerId: string, input: NewWallet, requestId?: string): Promise<Created<repo.Wallet>> {
  const hash = requestHash(input)
  const replay = (existing: repo.Wallet): Created<repo.Wallet> => {
    if (existing.requestHash !== hash) {
      throw new RailError('idempotency_conflict', `customerReference ${input.customerReference} was already used with a different request`, { walletId: existing.id })
    }
    return { value: existing, replayed: true }
  }
  const stored = () => repo.selectWalletByCustomerReference(deps.pool, partnerId, input.customerReference)
  const existing = await stored()
  if (existing) return replay(existing)
  const provider = await walletProvider(deps.pool, input.provider ?? DEFAULT_PROVIDER)
  const opened = await deps.providers.adapterFor(provider, requestId).createWallet({
    reference: openingReference(partnerId, input.customerReference),
    customerReference: input.customerReference,
    accountName: input.name,
  })
  if (opened.outcome === 'failed' && opened.responseCode === '26') {
    // The opening reference opened an account for another request with this customer reference.
    const other = await stored()
    if (other) return replay(other)
    throw new RailError('idempotency_conflict', `customerReference ${input.customerReference} was already used with a different request; retry it as it was`)
  }
  if (opened.outcome !== 'successful') {
    throw new RailError('provider_unavailable', `Provider ${provider.name} did not open the account; retry with the same customerReference`)
  }
  const recorded = await recordWallet(deps.pool, {
    id: uuidv7(),
    partnerId,
    customerReference: input.customerReference,
    name: input.name,
    provider: provider.name,
    currency: WALLET_CURRENCY,
    bankCode: opened.value.bankCode,
    accountNumber: opened.value.accountNumber,
    requestHash: hash,
  })
  return recorded ? { value: recorded, replayed: false } : replay((await stored())!)
}

/** The reference under which the provider opens the account of a partner's customer: the same inputs, the same reference. */
export function openingReference(partnerId: string, customerReference: string): string {
  return derivedId(partnerId, `wallet:${customerReference}`)
}

/** The named provider; only a provider that does not exist is the caller's mistake (422), any other failure propagates. */
function walletProvider(pool: Pool, name: string): Promise<ProviderProfile> {
  return getProvider(pool, name).catch(onNotFound(() => fieldError('provider', `${name} is not a known provider`)))
}

/** Throws to roll back a wallet's ledger account when another request recorded the wallet first. */
class AlreadyRecorded extends Error {}

/** The wallet and its ledger account, in one transaction; undefined when a concurrent creation recorded it first. */
async function recordWallet(pool: Pool, wallet: Omit<repo.Wallet, 'createdAt' | 'ledgerAccountId'>): Promise<repo.Wallet | undefined> {
  try {
    return await withTransaction(pool, async (tx) => {
      const ledgerAccountId = await createAccount(tx, { partnerId: wallet.partnerId, currency: WALLET_CURRENCY, kind: 'wallet', debitsMustNotExceedCredits: true })
      const inserted = await repo.insertWallet(tx, { ...wallet, ledgerAccountId })
      if (!inserted) throw new AlreadyRecorded()
      return inserted
    })
  } catch (error) {
    if (error instanceof AlreadyRecorded) return undefined
    throw error
  }
}

export const WALLETS_PAGE_MAX = 100

export interface ListedWallet {
  wallet: repo.Wallet
  availableBalanceKobo: number
  bookedBalanceKobo: number
}

/**
 * A page of the partner's wallets, newest first, with their balances (one ledger read for the
 * page); the cursor is the last wallet id of the previous page.
 */
export async function listWallets(pool: Pool, filter: Omit<repo.WalletListFilter, 'beforeId'> & { cursor?: string }): Promise<{ wallets: ListedWallet[]; nextCursor: string | null }> {
  const rows = await repo.selectWallets(pool, { ...filter, beforeId: filter.cursor, limit: pageQueryLimit(filter.limit) })
  const page = toPage(rows, filter.limit)
  const balances = new Map((await getBalances(pool, page.items.map((wallet) => wallet.ledgerAccountId))).map((balance) => [balance.accountId, balance]))
  const wallets = page.items.map((wallet) => {
    const balance = balances.get(wallet.ledgerAccountId)
    if (!balance) throw new Error(`wallet ${wallet.id} has no ledger account`)
    return { wallet, availableBalanceKobo: balance.availableKobo, bookedBalanceKobo: balance.bookedKobo }
  })
  return { wallets, nextCursor: page.nextCursor }
}

export async function findWallet(db: Queryable, partnerId: string, walletId: string): Promise<repo.Wallet> {
  const wallet = await repo.selectWallet(db, partnerId, walletId)
  if (!wallet) throw new RailError('not_found', 'Wallet not found')
  return wallet
}

export interface WalletBalance {
  walletId: string
  availableBalanceKobo: number
  bookedBalanceKobo: number
  currency: string
}

export async function walletBalance(pool: Pool, partnerId: string, walletId: string): Promise<WalletBalance> {
  const wallet = await findWallet(pool, partnerId, walletId)
  const balance = await getBalance(pool, wallet.ledgerAccountId)
  if (!balance) throw new Error(`wallet ${wallet.id} has no ledger account`)
  return { walletId: wallet.id, availableBalanceKobo: balance.availableKobo, bookedBalanceKobo: balance.bookedKobo, currency: wallet.currency }
}
