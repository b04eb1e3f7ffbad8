// Monnify's wallets and reserved accounts on the bank's books: a wallet is a customer account the
// dialect opens (client sandbox-monnify, opening reference = walletReference), a reserved account a
// virtual account it allocates (client reference = accountReference). Credits paid into either are
// announced by the bank's notice job in Monnify's words (announce.ts).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { findBank } from '../../banking/nip/banks.ts'
import { SANDBOX_MONNIFY_PROFILE, type DialectHandler, type SandboxDialectDeps } from '../dialects.ts'
import { sandboxMonnifyCredentials } from '../dialect-credentials.ts'
import { collectionOf, collectionReferenceOf } from './announce.ts'
import {
  allWallets,
  markDeallocated,
  reservedAccountBy,
  upsertReservedAccount,
  upsertWallet,
  walletBy,
  walletMovements,
  type ReservedAccount,
  type Wallet,
} from './repo.ts'
import { apiTime, koboToNaira, ok, pageOf, paged, queryValue, refuse } from './wire.ts'

/** The largest page a listing answers. */
const PAGE_SIZE_MAX = 100
const NAME_CHARS_MAX = 100
const REFERENCE_PATTERN = /^[A-Za-z0-9._|-]{1,64}$/

const text = (value: unknown, max = NAME_CHARS_MAX) =>
  typeof value === 'string' && value.trim().length > 0 && value.length <= max ? value : undefined

function walletBody(wallet: Wallet, bankCode: string): Record<string, unknown> {
  return {
    walletName: wallet.walletName,
    walletReference: wallet.walletReference,
    customerName: wallet.customerName,
    customerEmail: wallet.customerEmail,
    feeBearer: 'SELF',
    bvnDetails: { bvn: wallet.bvn, bvnDateOfBirth: wallet.bvnDateOfBirth },
    accountNumber: wallet.accountNumber,
    accountName: wallet.walletName,
    topUpAccountDetails: {
      accountNumber: wallet.accountNumber,
      accountName: wallet.walletName,
      bankCode,
      bankName: findBank(bankCode)?.name ?? '',
    },
    createdOn: apiTime(wallet.createdAt),
  }
}

/** POST /api/v1/disbursements/wallet: once per walletReference; asked again, the wallet it made. */
export const createWallet: DialectHandler = async (deps, request, reply) => {
  const body = (request.body ?? {}) as Record<string, unknown>
  const walletReference = text(body.walletReference, 64)
  const walletName = text(body.walletName)
  const customerName = text(body.customerName)
  const customerEmail = text(body.customerEmail, 254)
  if (!walletReference || !REFERENCE_PATTERN.test(walletReference))
    return refuse(reply, 400, 'walletReference must be 1 to 64 letters, digits or ._|-')
  if (!walletName || !customerName || !customerEmail)
    return refuse(reply, 400, 'walletName, customerName and customerEmail are required')
  const existing = await walletBy(deps.pool, 'wallet_reference', walletReference)
  if (existing) return ok(reply, walletBody(existing, deps.bank.bankCode))
  const account = await deps.bank.openAccount(walletName, walletReference, SANDBOX_MONNIFY_PROFILE)
  if (account === 'reference_taken') return refuse(reply, 400, `walletReference ${walletReference} is already used`)
  const bvnDetails = (body.bvnDetails ?? {}) as Record<string, unknown>
  const wallet = await upsertWallet(deps.pool, {
    walletReference,
    accountNumber: account.accountNumber,
    walletName,
    customerName,
    customerEmail,
    bvn: text(bvnDetails.bvn, 11) ?? null,
    bvnDateOfBirth: text(bvnDetails.bvnDateOfBirth, 10) ?? null,
  })
  return ok(reply, walletBody(wallet, deps.bank.bankCode))
}

/** GET /api/v1/disbursements/wallet?walletReference=&pageNo=&pageSize=: the merchant's wallets, or the one of a reference. */
export const listWallets: DialectHandler = async (deps, request, reply) => {
  const walletReference = queryValue(request.query, 'walletReference')
  const { page, size } = pageOf(request.query, 'pageNo', 'pageSize', PAGE_SIZE_MAX)
  const wallets = walletReference
    ? [await walletBy(deps.pool, 'wallet_reference', walletReference)].filter((wallet) => wallet !== undefined)
    : await allWallets(deps.pool)
  return ok(
    reply,
    paged(
      wallets.map((wallet) => walletBody(wallet, deps.bank.bankCode)),
      page,
      size,
    ),
  )
}

/** GET /api/v1/disbursements/wallet/transactions?accountNumber=&pageNo=&pageSize=: newest first. */
export const walletTransactions: DialectHandler = async (deps, request, reply) => {
  const accountNumber = queryValue(request.query, 'accountNumber')
  const wallet = accountNumber && (await walletBy(deps.pool, 'account_number', accountNumber))
  if (!accountNumber || !wallet)
    return refuse(reply, 404, `Wallet with account number ${accountNumber ?? ''} not found`)
  const { page, size } = pageOf(request.query, 'pageNo', 'pageSize', PAGE_SIZE_MAX)
  const moves = (await walletMovements(deps.pool, accountNumber)).reverse()
  const items = moves.map((move) => ({
    walletTransactionReference: move.reference,
    // A credit's reference is the one its SUCCESSFUL_TRANSACTION webhook gave: one credit, one reference.
    monnifyTransactionReference: collectionReferenceOf(move.sessionId),
    availableBalanceBefore: koboToNaira(move.balanceAfterKobo - move.signedKobo),
    availableBalanceAfter: koboToNaira(move.balanceAfterKobo),
    amount: koboToNaira(move.amountKobo),
    transactionDate: apiTime(move.createdAt),
    transactionType: move.signedKobo > 0 ? 'CREDIT' : 'DEBIT',
    narration: move.narration,
    status: move.responseCode === '00' ? 'SUCCESS' : 'PENDING',
    ...(move.signedKobo > 0
      ? {
          sourceAccountName: move.payerName,
          sourceAccountNumber: move.payerAccountNumber,
          sourceBankCode: move.payerBankCode,
        }
      : {}),
  }))
  return ok(reply, paged(items, page, size))
}

function reservedBody(
  account: ReservedAccount,
  bankCode: string,
  status: 'ACTIVE' | 'INACTIVE',
): Record<string, unknown> {
  return {
    contractCode: account.contractCode,
    accountReference: account.accountReference,
    accountName: account.accountName,
    currencyCode: account.currencyCode,
    customerEmail: account.customerEmail,
    customerName: account.customerName,
    accounts: [
      {
        bankCode,
        bankName: findBank(bankCode)?.name ?? '',
        accountNumber: account.accountNumber,
        accountName: account.accountName,
      },
    ],
    collectionChannel: 'RESERVED_ACCOUNT',
    reservationReference: `RSV${account.accountNumber}`,
    reservedAccountType: 'GENERAL',
    status,
    createdOn: apiTime(account.createdAt),
    incomeSplitConfig: [],
    restrictPaymentSource: false,
  }
}

/** POST /api/v2/bank-transfer/reserved-accounts: a reference reserves one account; asked again, Monnify's duplicate refusal. */
export const reserveAccount: DialectHandler = async (deps, request, reply) => {
  const body = (request.body ?? {}) as Record<string, unknown>
  const accountReference = text(body.accountReference, 64)
  const accountName = text(body.accountName)
  const customerName = text(body.customerName)
  const customerEmail = text(body.customerEmail, 254)
  if (!accountReference || !REFERENCE_PATTERN.test(accountReference))
    return refuse(reply, 400, 'accountReference must be 1 to 64 letters, digits or ._|-')
  if (!accountName || !customerName || !customerEmail)
    return refuse(reply, 400, 'accountName, customerName and customerEmail are required')
  if (body.currencyCode !== 'NGN') return refuse(reply, 400, 'currencyCode must be NGN')
  const { contractCode } = sandboxMonnifyCredentials(deps.bankSecret)
  if (body.contractCode !== contractCode) return refuse(reply, 400, 'Invalid contract code')
  // Whatever banks are preferred, the sandbox reserves the account at its one bank.
  if (typeof body.getAllAvailableBanks !== 'boolean') return refuse(reply, 400, 'getAllAvailableBanks is required')
  if (!body.getAllAvailableBanks && !(Array.isArray(body.preferredBanks) && body.preferredBanks.length > 0))
    return refuse(reply, 400, 'preferredBanks is required when getAllAvailableBanks is false')
  if (await reservedAccountBy(deps.pool, 'account_reference', accountReference)) {
    return refuse(reply, 400, `There is an existing reserved account with reference ${accountReference}`)
  }
  const allocated = await deps.bank.allocateVirtualAccount(SANDBOX_MONNIFY_PROFILE, accountReference, accountName)
  const account = await upsertReservedAccount(deps.pool, {
    accountReference,
    accountNumber: allocated.accountNumber,
    accountName: allocated.accountName,
    currencyCode: 'NGN',
    contractCode,
    customerEmail,
    customerName,
  })
  return ok(reply, reservedBody(account, deps.bank.bankCode, 'ACTIVE'))
}

/** The reserved account the path names, unless it was deallocated; else Monnify's 404, sent. */
async function activeReserved(
  deps: SandboxDialectDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<ReservedAccount | FastifyReply> {
  const { accountReference } = request.params as { accountReference: string }
  const account = await reservedAccountBy(deps.pool, 'account_reference', accountReference)
  if (!account || account.deallocatedAt)
    return refuse(reply, 404, `Cannot find reserved account with reference ${accountReference}`)
  return account
}

/** GET /api/v2/bank-transfer/reserved-accounts/{accountReference}. */
export const getReservedAccount: DialectHandler = async (deps, request, reply) => {
  const account = await activeReserved(deps, request, reply)
  if (!('accountReference' in account)) return account
  return ok(reply, reservedBody(account, deps.bank.bankCode, 'ACTIVE'))
}

/** DELETE /api/v1/bank-transfer/reserved-accounts/reference/{accountReference}: the account is archived at the bank. */
export const deallocateReservedAccount: DialectHandler = async (deps, request, reply) => {
  const account = await activeReserved(deps, request, reply)
  if (!('accountReference' in account)) return account
  await deps.bank.archiveVirtualAccount(SANDBOX_MONNIFY_PROFILE, account.accountNumber)
  await markDeallocated(deps.pool, account.accountReference)
  return ok(reply, reservedBody(account, deps.bank.bankCode, 'INACTIVE'))
}

/** GET /api/v1/bank-transfer/reserved-accounts/transactions?accountReference=&page=&size=: its credits, newest first. */
export const reservedAccountTransactions: DialectHandler = async (deps, request, reply) => {
  const accountReference = queryValue(request.query, 'accountReference')
  const account = accountReference && (await reservedAccountBy(deps.pool, 'account_reference', accountReference))
  if (!accountReference || !account)
    return refuse(reply, 404, `Cannot find reserved account with reference ${accountReference ?? ''}`)
  const { page, size } = pageOf(request.query, 'page', 'size', PAGE_SIZE_MAX)
  const credits = (await deps.bank.inboundCredits(SANDBOX_MONNIFY_PROFILE, account.accountNumber)) ?? []
  const items: Record<string, unknown>[] = []
  for (const credit of credits.reverse()) {
    const collection = (await collectionOf(deps.pool, credit))!
    items.push({
      ...collection,
      customerDTO: { email: account.customerEmail, name: account.customerName, merchantCode: deps.bank.bankCode },
      amount: collection.amountPaid,
      payableAmount: collection.amountPaid,
      fee: 0,
      currencyCode: 'NGN',
      createdOn: apiTime(new Date(credit.creditedAt)),
      completedOn: apiTime(new Date(credit.creditedAt)),
      completed: true,
      flagged: false,
    })
  }
  return ok(reply, paged(items, page, size))
}
