// Wallets (seed 000): creation at a provider and balances from the ledger.
import { createAccount, getBalance } from '../ledger/service.ts'
import { withKeyLock, type Pool, type Queryable } from '../platform/db.ts'
import { RailError } from '../platform/errors.ts'
import { uuidv7 } from '../platform/ids.ts'
import { requestHash } from '../platform/idempotency.ts'
import type { ProviderRegistry } from '../providers/registry.ts'
import { DEFAULT_PROVIDER, getProvider } from '../providers/service.ts'
import * as repo from './repo.ts'

export type { Wallet } from './repo.ts'

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
 * reference. The provider is called inside the transaction that holds the reference's lock:
 * wallet creation is rare, and this way a concurrent duplicate waits and then replays, and a
 * failed provider call leaves nothing behind.
 */
export async function createWallet(deps: WalletsDeps, partnerId: string, input: NewWallet, requestId?: string): Promise<Created<repo.Wallet>> {
  const hash = requestHash(input)
  const providerName = input.provider ?? DEFAULT_PROVIDER
  const replay = (existing: repo.Wallet): Created<repo.Wallet> => {
    if (existing.requestHash !== hash) {
      throw new RailError('idempotency_conflict', `customerReference ${input.customerReference} was already used with a different request`, { walletId: existing.id })
    }
    return { value: existing, replayed: true }
  }
  const existing = await repo.selectWalletByCustomerReference(deps.pool, partnerId, input.customerReference)
  if (existing) return replay(existing)
  const provider = await getProvider(deps.pool, providerName).catch(() => {
    throw new RailError('validation_error', `provider: unknown provider ${providerName}`, { fields: [{ field: 'provider', message: 'is not a known provider' }] })
  })
  return withKeyLock(deps.pool, `wallet:${partnerId}:${input.customerReference}`, async (tx) => {
    const raced = await repo.selectWalletByCustomerReference(tx, partnerId, input.customerReference)
    if (raced) return replay(raced)
    const opened = await deps.providers.adapterFor(provider, requestId).createWallet({ customerReference: input.customerReference, accountName: input.name })
    if (opened.outcome !== 'successful') {
      throw new RailError('provider_unavailable', `Provider ${provider.name} did not open the account; retry with the same customerReference`)
    }
    const ledgerAccountId = await createAccount(tx, { partnerId, currency: WALLET_CURRENCY, kind: 'wallet', debitsMustNotExceedCredits: true })
    const wallet = await repo.insertWallet(tx, {
      id: uuidv7(),
      partnerId,
      customerReference: input.customerReference,
      name: input.name,
      provider: provider.name,
      currency: WALLET_CURRENCY,
      ledgerAccountId,
      bankCode: opened.value.bankCode,
      accountNumber: opened.value.accountNumber,
      requestHash: hash,
    })
    return { value: wallet, replayed: false }
  })
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
