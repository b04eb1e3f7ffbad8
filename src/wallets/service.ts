// Wallets (docs/contracts/wallets.md): creation at a provider and balances from the ledger.
import { createAccount, derivedId, getBalance, getBalances } from '../ledger/service.ts'
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { fieldError, onNotFound, RailError } from '../platform/errors.ts'
import { uuidv7 } from '../platform/ids.ts'
import { pageQueryLimit, toPage } from '../platform/pagination.ts'
import { readPage } from '../platform/read-pool.ts'
import {
  claimReference,
  findReplay,
  idempotencyConflict,
  requestHash,
  type Claimed,
  type ReferenceKey,
  type ReferenceKind,
} from '../platform/idempotency.ts'
import {
  canOpenWallets,
  getProvider,
  providerFor,
  type ProviderProfile,
  type ProviderRegistry,
} from '../banking/providers/service.ts'
import * as movesRepo from './moves-repo.ts'
import * as repo from './repo.ts'

export type { Wallet } from './repo.ts'

/** Wallets hold naira; another currency is refused with unsupported_currency. */
export const WALLET_CURRENCY = 'NGN'

/** For inbound credits (wallet funding by transfer): the wallet an account number at this provider belongs to. */
export function walletOfAccountNumber(
  db: Queryable,
  provider: string,
  accountNumber: string,
): Promise<repo.Wallet | undefined> {
  return repo.selectWalletByAccountNumber(db, provider, accountNumber)
}

/** For the sandbox's simulated credits: the partner's wallet with this account number (another partner's is not found). */
export function partnerWalletOfAccountNumber(
  db: Queryable,
  partnerId: string,
  accountNumber: string,
): Promise<repo.Wallet | undefined> {
  return repo.selectPartnerWalletByAccountNumber(db, partnerId, accountNumber)
}

/** For the credit sweep: wallets' account numbers in (provider, account number) order after `after`. */
export function walletAccountsAfter(
  db: Queryable,
  after: { provider: string; accountNumber: string } | null,
  limit: number,
): Promise<{ provider: string; accountNumber: string }[]> {
  return repo.selectAccountNumbersAfter(db, after, limit)
}

/** What a statement line shows of the moves behind it (statements): each one's reference and narration. */
export function moveStatementFacts(
  db: Queryable,
  ids: readonly string[],
): Promise<{ id: string; reference: string; narration: string | null }[]> {
  return movesRepo.selectStatementFacts(db, ids)
}

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
export async function createWallet(
  deps: WalletsDeps,
  partnerId: string,
  input: NewWallet,
  requestId?: string,
): Promise<Created<repo.Wallet>> {
  const key = { reference: input.customerReference, requestHash: requestHash(input) }
  const stored = () => repo.selectWalletByCustomerReference(deps.pool, partnerId, input.customerReference)
  const known = await findReplay(WALLET_REFERENCE, key, stored)
  if (known) return { value: known.replayed, replayed: true }
  // The provider named, else the partner's wallets route, else the sandbox.
  const provider =
    input.provider !== undefined
      ? await walletProvider(deps.pool, input.provider)
      : await providerFor(deps.pool, partnerId, 'wallets')
  // Fails closed before any call: a provider with no wallets (Paystack) would refuse, read as unavailable.
  if (!canOpenWallets(provider)) {
    throw new RailError('capability_disabled', `Provider ${provider.name} has no wallets; nothing was attempted`, {
      provider: provider.name,
      capability: 'wallets',
    })
  }
  const opened = await (
    await deps.providers.adapterFor(provider, requestId)
  ).createWallet({
    reference: openingReference(partnerId, input.customerReference),
    customerReference: input.customerReference,
    accountName: input.name,
  })
  if (opened.outcome === 'failed' && opened.responseCode === '26') {
    // The opening reference opened an account for another request with this customer reference.
    const other = await findReplay(WALLET_REFERENCE, key, stored)
    if (other) return { value: other.replayed, replayed: true }
    throw idempotencyConflict(WALLET_REFERENCE, key, null)
  }
  if (opened.outcome !== 'successful') {
    throw new RailError(
      'provider_unavailable',
      `Provider ${provider.name} did not open the account; retry with the same customerReference`,
    )
  }
  const claimed = await recordWallet(deps.pool, key, {
    id: uuidv7(),
    partnerId,
    customerReference: input.customerReference,
    name: input.name,
    provider: provider.name,
    currency: WALLET_CURRENCY,
    bankCode: opened.value.bankCode,
    accountNumber: opened.value.accountNumber,
    requestHash: key.requestHash,
  })
  return claimed.created ? { value: claimed.created, replayed: false } : { value: claimed.replayed, replayed: true }
}

/** How a wallet takes its customer reference (platform/idempotency.ts). */
const WALLET_REFERENCE: ReferenceKind<repo.Wallet> = {
  field: 'customerReference',
  hashOf: (wallet) => wallet.requestHash,
  idOf: (wallet) => wallet.id,
}

/** The reference under which the provider opens the account of a partner's customer: the same inputs, the same reference. */
export function openingReference(partnerId: string, customerReference: string): string {
  return derivedId(partnerId, `wallet:${customerReference}`)
}

/** The named provider; only a provider that does not exist is the caller's mistake (422), any other failure propagates. */
function walletProvider(pool: Pool, name: string): Promise<ProviderProfile> {
  return getProvider(pool, name).catch(onNotFound(() => fieldError('provider', `${name} is not a known provider`)))
}

/** Carries a replay out of a transaction that must not commit: the ledger account it made goes with it. */
class AlreadyRecorded extends Error {
  readonly replayed: repo.Wallet
  constructor(replayed: repo.Wallet) {
    super('wallet already recorded')
    this.replayed = replayed
  }
}

/**
 * Records the wallet and its ledger account in one transaction; the wallet's row claims its
 * customer reference. The ledger account comes first (the wallet's row refers to it): when a
 * concurrent creation recorded the wallet first, the transaction rolls back with its account and
 * that wallet is answered.
 */
async function recordWallet(
  pool: Pool,
  key: ReferenceKey,
  wallet: Omit<repo.Wallet, 'createdAt' | 'ledgerAccountId'>,
): Promise<Claimed<repo.Wallet>> {
  try {
    return await withTransaction(pool, async (tx) => {
      const ledgerAccountId = await createAccount(tx, {
        partnerId: wallet.partnerId,
        currency: WALLET_CURRENCY,
        kind: 'wallet',
        debitsMustNotExceedCredits: true,
      })
      const claimed = await claimReference(
        WALLET_REFERENCE,
        key,
        () => repo.insertWallet(tx, { ...wallet, ledgerAccountId }),
        () => repo.selectWalletByCustomerReference(tx, wallet.partnerId, wallet.customerReference),
      )
      if (claimed.replayed) throw new AlreadyRecorded(claimed.replayed)
      return claimed
    })
  } catch (error) {
    if (error instanceof AlreadyRecorded) return { replayed: error.replayed }
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
export async function listWallets(
  pool: Pool,
  filter: Omit<repo.WalletListFilter, 'beforeId'> & { cursor?: string },
): Promise<{ wallets: ListedWallet[]; nextCursor: string | null }> {
  const { page, balanceRows } = await readPage(pool, filter.cursor, async (reader, before) => {
    const page = toPage(
      await repo.selectWallets(reader, { ...filter, beforeId: before, limit: pageQueryLimit(filter.limit) }),
      filter.limit,
    )
    return {
      page,
      balanceRows: await getBalances(
        reader,
        page.items.map((wallet) => wallet.ledgerAccountId),
      ),
    }
  })
  const balances = new Map(balanceRows.map((balance) => [balance.accountId, balance]))
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
  return {
    walletId: wallet.id,
    availableBalanceKobo: balance.availableKobo,
    bookedBalanceKobo: balance.bookedKobo,
    currency: wallet.currency,
  }
}
