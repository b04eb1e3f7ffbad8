// The sandbox's Monnify dialect: what src/app.ts mounts and runs (its routes, its background work, and
// its announcements of credits to accounts it allocated). Its routes answer with Monnify's paths,
// envelope, statuses and HTTP status codes under /sandbox-monnify, on the sandbox bank's books, with
// the bank's fault injection and magic amounts (docs/sandbox.md §Sandbox Monnify).
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Task } from 'graphile-worker'
import { systemClock } from '../../platform/clock.ts'
import { SANDBOX_MONNIFY_PREFIX, type SandboxDialectDeps, type SandboxDialectJobDeps } from '../dialects.ts'
import type { CreditNotifier } from '../jobs.ts'
import { injectBankFault, type FaultSubject } from '../routes.ts'
import { SANDBOX_BANK_CODE_DEFAULT, SandboxBank } from '../service.ts'
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
  customerWalletBalance,
  disbursementFaultSubject,
  initiateSingle,
  singleSummary,
  validateAccount,
  walletBalance,
} from './disbursements.ts'
import { queryValue, refuse } from './wire.ts'

export { monnifyMainAccountNumber } from './disbursements.ts'
export { monnifySignature } from './announce.ts'

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>

export function registerSandboxMonnifyRoutes(deps: SandboxDialectDeps): void {
  const { app } = deps
  // A payout made through the dialect is announced again when the bank's simulator reverses it.
  deps.bank.onPayoutChange(PAYOUT_LISTENER)
  // The dialect checks its own credentials; like the bank's, its routes use no admission or rate
  // limit of Rail's. They are Monnify's API, not Rail's: hidden from Rail's OpenAPI documents.
  const config = { auth: 'none' as const, admission: false as const, rateLimited: false as const }
  const schema = { hide: true }
  const preValidation = requireBearer(deps)
  const business = (subject: (request: FastifyRequest) => FaultSubject) => ({
    config,
    schema,
    preValidation,
    preHandler: async (request: FastifyRequest, reply: FastifyReply) =>
      injectBankFault(deps.pool, deps.bank, request, reply, subject(request)),
  })
  const plain = business(() => ({}))
  const path = (rest: string) => `${SANDBOX_MONNIFY_PREFIX}${rest}`
  const route = (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    options: ReturnType<typeof business>,
    handler: Handler,
  ) => app.route({ method, url: path(url), ...options, handler })

  app.post(path('/api/v1/auth/login'), { config, schema }, async (request, reply) => login(request, reply, deps))
  route('GET', '/api/v1/disbursements/account/validate', plain, (request, reply) =>
    validateAccount(deps.bank, request, reply),
  )
  route(
    'POST',
    '/api/v2/disbursements/single',
    business((request) => disbursementFaultSubject(request.body)),
    (request, reply) => initiateSingle(deps, request, reply),
  )
  route('GET', '/api/v2/disbursements/single/summary', plain, (request, reply) => singleSummary(deps, request, reply))
  route('GET', '/api/v2/disbursements/wallet-balance', plain, (request, reply) => walletBalance(deps, request, reply))
  route('POST', '/api/v1/disbursements/wallet', plain, (request, reply) => createWallet(deps, request, reply))
  route('GET', '/api/v1/disbursements/wallet', plain, (request, reply) => listWallets(deps, request, reply))
  route('GET', '/api/v1/disbursements/wallet/balance', plain, async (request, reply) => {
    const accountNumber = queryValue(request.query, 'accountNumber')
    return accountNumber
      ? customerWalletBalance(deps, accountNumber, reply)
      : refuse(reply, 400, 'accountNumber is required')
  })
  route('GET', '/api/v1/disbursements/wallet/transactions', plain, (request, reply) =>
    walletTransactions(deps, request, reply),
  )
  route('POST', '/api/v2/bank-transfer/reserved-accounts', plain, (request, reply) =>
    reserveAccount(deps, request, reply),
  )
  route('GET', '/api/v1/bank-transfer/reserved-accounts/transactions', plain, (request, reply) =>
    reservedAccountTransactions(deps, request, reply),
  )
  route('GET', '/api/v2/bank-transfer/reserved-accounts/:accountReference', plain, (request, reply) =>
    getReservedAccount(deps, referenceParam(request), reply),
  )
  route('DELETE', '/api/v1/bank-transfer/reserved-accounts/reference/:accountReference', plain, (request, reply) =>
    deallocateReservedAccount(deps, referenceParam(request), reply),
  )
}

function referenceParam(request: FastifyRequest): string {
  return (request.params as { accountReference: string }).accountReference
}

function jobBank(deps: SandboxDialectJobDeps): SandboxBank {
  return new SandboxBank(deps.pool, deps.bankCode ?? SANDBOX_BANK_CODE_DEFAULT, deps.clock ?? systemClock)
}

/** The dialect's background work: watching disbursements until they settle, their webhooks, and reversals'. */
export function sandboxMonnifyTasks(deps: SandboxDialectJobDeps): Record<string, Task> {
  const bank = jobBank(deps)
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
