// The sandbox's Monnify dialect: what src/app.ts mounts and runs (its routes, its background work, and
// its announcements of credits to accounts it allocated). Its routes answer with Monnify's paths,
// envelope, statuses and HTTP status codes under /sandbox-monnify, on the sandbox bank's books, with
// the bank's fault injection and magic amounts (docs/sandbox.md §Sandbox Monnify).
import type { Task } from 'graphile-worker'
import {
  DIALECT_ROUTE_OPTIONS,
  dialectRoutes,
  SANDBOX_MONNIFY_PREFIX,
  type SandboxDialectDeps,
  type SandboxDialectJobDeps,
} from '../dialects.ts'
import type { CreditNotifier } from '../jobs.ts'
import { SandboxBank } from '../service.ts'
import {
  createWallet,
  deallocateReservedAccount,
  listWallets,
  getReservedAccount,
  reserveAccount,
  reservedAccountTransactions,
  walletTransactions,
} from './accounts.ts'
import {
  announcePayoutChange,
  collectionOf,
  disbursementEvent,
  PAYOUT_CHANGE_TASK,
  PAYOUT_LISTENER,
  postWebhook,
  WATCH_TASK,
  watchOnce,
  WEBHOOK_TASK,
  type PayoutChange,
} from './announce.ts'
import { login, requireBearer } from './auth.ts'
import {
  disbursementFaultSubject,
  initiateSingle,
  singleSummary,
  validateAccount,
  walletBalance,
} from './disbursements.ts'

export { monnifyMainAccountNumber } from './disbursements.ts'
export { monnifySignature } from './announce.ts'

export function registerSandboxMonnifyRoutes(deps: SandboxDialectDeps): void {
  // A payout made through the dialect is announced again when the bank's simulator reverses it.
  deps.bank.onPayoutChange(PAYOUT_LISTENER)
  // Login is the one route without a bearer token, and without fault injection.
  deps.app.post(`${SANDBOX_MONNIFY_PREFIX}/api/v1/auth/login`, DIALECT_ROUTE_OPTIONS, async (request, reply) =>
    login(request, reply, deps),
  )
  const route = dialectRoutes(deps, SANDBOX_MONNIFY_PREFIX, requireBearer(deps))
  route('GET', '/api/v1/disbursements/account/validate', validateAccount)
  route('POST', '/api/v2/disbursements/single', initiateSingle, (request) => disbursementFaultSubject(request.body))
  route('GET', '/api/v2/disbursements/single/summary', singleSummary)
  route('GET', '/api/v2/disbursements/wallet-balance', walletBalance)
  route('POST', '/api/v1/disbursements/wallet', createWallet)
  route('GET', '/api/v1/disbursements/wallet', listWallets)
  route('GET', '/api/v1/disbursements/wallet/balance', async (deps, request, reply) =>
    walletBalance(deps, request, reply, false),
  )
  route('GET', '/api/v1/disbursements/wallet/transactions', walletTransactions)
  route('POST', '/api/v2/bank-transfer/reserved-accounts', reserveAccount)
  route('GET', '/api/v1/bank-transfer/reserved-accounts/transactions', reservedAccountTransactions)
  route('GET', '/api/v2/bank-transfer/reserved-accounts/:accountReference', getReservedAccount)
  route('DELETE', '/api/v1/bank-transfer/reserved-accounts/reference/:accountReference', deallocateReservedAccount)
}

/** The dialect's background work: watching disbursements until they settle, their webhooks, and reversals'. */
export function sandboxMonnifyTasks(deps: SandboxDialectJobDeps): Record<string, Task> {
  const bank = new SandboxBank(deps.pool, deps.bankCode, deps.clock)
  return {
    [WATCH_TASK]: async (payload) =>
      watchOnce(deps.pool, bank, deps.clock, payload as { reference: string; attempt: number }),
    [WEBHOOK_TASK]: async (payload) => {
      const event = await disbursementEvent(deps.pool, bank, (payload as { reference: string }).reference)
      if (event) await postWebhook(deps, event)
    },
    [PAYOUT_CHANGE_TASK]: async (payload) => announcePayoutChange(deps, bank, payload as PayoutChange),
  }
}

/** Announces a credit to a reserved account or wallet the dialect opened: SUCCESSFUL_TRANSACTION, signed. */
export function monnifyCreditNotifier(deps: SandboxDialectJobDeps): CreditNotifier {
  return async (notice) => {
    const eventData = await collectionOf(deps.pool, notice)
    // An account of the dialect's client that it has no record of (opened by a request whose
    // record was lost) has no Monnify words: the notice is not sent, and not retried forever.
    if (!eventData) return
    await postWebhook(deps, { eventType: 'SUCCESSFUL_TRANSACTION', eventData })
  }
}
