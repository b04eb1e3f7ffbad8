// Composition root: builds the HTTP API and the background workers from configuration, a pool
// and the master key. Modules are wired here and nowhere else.
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyServerOptions } from 'fastify'
import type { Runner, TaskList } from 'graphile-worker'
import type { DeliverySettings } from './events/delivery.ts'
import { EVENTS_CRONTAB, eventTasks } from './events/jobs.ts'
import { registerEventRoutes } from './events/routes.ts'
import { LEDGER_CRONTAB, ledgerTasks } from './ledger/jobs.ts'
import { registerCounterpartyRoutes } from './counterparties/routes.ts'
import { registerFboRoutes } from './fbo/routes.ts'
import { collectionTasks } from './inbound-credits/jobs.ts'
import { registerInvoiceRoutes } from './invoices/routes.ts'
import { takeInvoicePayment } from './invoices/service.ts'
import { registerInboundCreditRoutes } from './inbound-credits/routes.ts'
import { registerWalletFundingRoutes } from './inbound-credits/wallet-routes.ts'
import { INBOUND_CREDITS_CRONTAB, settleTriageRefunds, type CreditOwners, type InboundDeps, type OwnedCredit } from './inbound-credits/service.ts'
import { escrowTasks } from './escrow/jobs.ts'
import { registerEscrowRoutes } from './escrow/routes.ts'
import { applyEscrowFunding, ESCROW_CRONTAB, settleEscrowPayouts, settleEscrowRefunds } from './escrow/service.ts'
import { registerFloatRoutes } from './outbound-transfers/float-routes.ts'
import { outboundOwner } from './outbound-transfers/owner.ts'
import { registerOutboundRoutes } from './outbound-transfers/routes.ts'
import { submitBatcherFor, type OutboundDeps } from './outbound-transfers/service.ts'
import { registerPaymentIntentRoutes } from './payment-intents/routes.ts'
import { registerRefundRoutes } from './refunds/routes.ts'
import { refundPayoutsEnded, type RefundsDeps } from './refunds/service.ts'
import { PAYMENT_INTENTS_CRONTAB } from './payment-intents/service.ts'
import { installAuthentication } from './partners/auth.ts'
import { registerPartnerRoutes } from './partners/routes.ts'
import { paymentTasks } from './payments/jobs.ts'
import { PAYMENTS_CRONTAB, paymentSettings, stepWriterFor, type PaymentSettings, type PaymentsDeps } from './payments/service.ts'
import { ProviderRegistry, type ProviderSettings } from './providers/registry.ts'
import { sandboxBankTasks } from './sandbox-bank/jobs.ts'
import { registerSandboxBankRoutes } from './sandbox-bank/routes.ts'
import { registerStatementRoutes } from './statements/routes.ts'
import { settlementTasks } from './settlement/jobs.ts'
import { registerSettlementRoutes } from './settlement/routes.ts'
import { SETTLEMENT_CRONTAB, settlementTransfersFor, settleSettlementPayouts } from './settlement/service.ts'
import { SandboxBank } from './sandbox-bank/service.ts'
import { installAmountLimit, MAX_AMOUNT_KOBO_DEFAULT } from './platform/amounts.ts'
import { systemClock, type Clock } from './platform/clock.ts'
import { SANDBOX_BANK_POOL_MAX } from './platform/connections.ts'
import { createPool, type Pool, type Tx } from './platform/db.ts'
import { registerHealthRoutes } from './platform/health.ts'
import { admissionLimitsFor, AdmissionGate, installAdmission, type AdmissionLimits } from './platform/admission.ts'
import { createHttpServer, type HttpServer, type HttpTimeouts } from './platform/http.ts'
import { installRateLimits, PARTNER_RPS_DEFAULT, UNAUTHENTICATED_RPS_DEFAULT, type RateLimits } from './platform/rate-limit.ts'
import { startWorkers } from './platform/jobs.ts'
import { installMetrics } from './platform/metrics.ts'
import { ErrorBodySchema } from './platform/schemas.ts'
import { claimBatcherFor, walletOwner } from './wallets/moves.ts'
import { registerMoveRoutes } from './wallets/moves-routes.ts'
import { registerWalletRoutes } from './wallets/routes.ts'
import { registerVirtualAccountRoutes } from './virtual-accounts/routes.ts'

export interface AppDeps {
  pool: Pool
  masterKey: Buffer
  clock?: Clock
  logger?: FastifyServerOptions['logger']
  /** The largest amount one instruction may carry (RAIL_MAX_AMOUNT_KOBO); NIP's largest single transfer when absent. */
  maxAmountKobo?: number
  /** Mounts the sandbox bank on this server when given (development and sandbox deployments). */
  sandboxBank?: { secret: string; bankCode?: string }
  /** How to reach providers; without it, operations that call a provider fail. */
  providers?: ProviderSettings
  /** Sandbox partners may register loopback callback URLs (RAIL_ALLOW_LOOPBACK_CALLBACKS). */
  allowLoopbackCallbacks?: boolean
  /** The payment pipeline's requery schedules, lease and send bound (tests shorten them). */
  payments?: Partial<PaymentSettings>
  /** Slow clients are cut off after these (tests shorten them). */
  httpTimeouts?: HttpTimeouts
  /** Requests admitted at once and queued; derived from the pool's size when absent. */
  admission?: AdmissionLimits
  /** Per-partner and per-IP request rates (RAIL_RATE_LIMIT_RPS, RAIL_RATE_LIMIT_UNAUTHENTICATED_RPS). */
  rateLimits?: RateLimits
}

export async function buildApi(deps: AppDeps): Promise<HttpServer> {
  const clock = deps.clock ?? systemClock
  const app = createHttpServer(deps.logger ?? false, deps.httpTimeouts)
  // First of all hooks: a request that cannot be served soon is refused before anything is read.
  installAdmission(app, new AdmissionGate(deps.admission ?? admissionLimitsFor(deps.pool.options.max)))
  await registerOpenApi(app)
  const rateLimiter = await installRateLimits(app, deps.rateLimits ?? { partnerRps: PARTNER_RPS_DEFAULT, unauthenticatedRps: UNAUTHENTICATED_RPS_DEFAULT })
  installAuthentication(app, { pool: deps.pool, masterKey: deps.masterKey, clock, rateLimiter })
  installMetrics(app)
  const maxAmountKobo = deps.maxAmountKobo ?? MAX_AMOUNT_KOBO_DEFAULT
  // Before any route: every AmountKobo() body field registered after this is checked against it.
  installAmountLimit(app, { maxAmountKobo })
  registerHealthRoutes(app, deps.pool)
  const allowLoopbackCallbacks = deps.allowLoopbackCallbacks ?? false
  registerPartnerRoutes(app, { pool: deps.pool, allowLoopbackCallbacks })
  registerEventRoutes(app, { pool: deps.pool })
  registerFloatRoutes(app, { pool: deps.pool, maxAmountKobo })
  registerCounterpartyRoutes(app, { pool: deps.pool })
  const providers = new ProviderRegistry(deps.pool, deps.providers)
  const payments = paymentsDeps({ pool: deps.pool, providers, clock, settings: deps.payments, log: (level, message) => app.log[level](message) })
  const outbound: OutboundDeps = { pool: deps.pool, allowLoopbackCallbacks, payments }
  outbound.submitBatcher = submitBatcherFor(outbound)
  registerOutboundRoutes(app, outbound)
  const collections = collectionsDeps(outbound)
  registerVirtualAccountRoutes(app, collections)
  registerPaymentIntentRoutes(app, collections)
  registerFboRoutes(app, collections)
  registerInboundCreditRoutes(app, collections)
  registerWalletFundingRoutes(app, collections)
  registerInvoiceRoutes(app, collections)
  registerRefundRoutes(app, collections.refunds)
  registerWalletRoutes(app, { pool: deps.pool, providers })
  registerStatementRoutes(app, { pool: deps.pool })
  registerSettlementRoutes(app, { pool: deps.pool, outbound, clock, maxAmountKobo })
  // Concurrent claims of wallet moves share transactions, as outbound submits do.
  registerMoveRoutes(app, { pool: deps.pool, payments, claimer: claimBatcherFor({ pool: deps.pool, payments }) })
  registerEscrowRoutes(app, { pool: deps.pool, masterKey: deps.masterKey, clock, allowLoopbackCallbacks, collections, outbound })
  if (deps.sandboxBank) {
    // The bank is another system: its own connections, so that Rail's requests waiting on a
    // provider call inside a transaction (allocation, idempotent creates) cannot starve it.
    const bankPool = sandboxBankPool(deps.pool)
    app.addHook('onClose', async () => {
      if (bankPool !== deps.pool) await bankPool.end()
    })
    registerSandboxBankRoutes(app, { bank: new SandboxBank(bankPool, deps.sandboxBank.bankCode), secret: deps.sandboxBank.secret, pool: bankPool })
  }
  await app.ready()
  return app
}

function sandboxBankPool(pool: Pool): Pool {
  const connectionString = (pool as Pool & { options: { connectionString?: string } }).options.connectionString
  return connectionString ? createPool(connectionString, SANDBOX_BANK_POOL_MAX, 'rail-sandbox-bank') : pool
}

async function registerOpenApi(app: HttpServer): Promise<void> {
  app.addSchema(ErrorBodySchema)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Rail API',
        version: '1.0.0',
        description: 'Wallets, collections, payouts, invoices and escrow for Nigerian partners. Amounts are integer kobo.',
      },
      components: {
        securitySchemes: {
          railKeyId: { type: 'apiKey', in: 'header', name: 'X-Rail-Key-Id', description: 'Credential id; see docs/authentication.md' },
          railTimestamp: { type: 'apiKey', in: 'header', name: 'X-Rail-Timestamp', description: 'Unix seconds, within ±300 s' },
          railSignature: { type: 'apiKey', in: 'header', name: 'X-Rail-Signature', description: 'v1=<hex HMAC-SHA256>' },
          escrowApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Escrow API key' },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const auth = route.config?.auth
      const security =
        auth === 'signature' ? [{ railKeyId: [], railTimestamp: [], railSignature: [] }] : auth === 'api-key' ? [{ escrowApiKey: [] }] : undefined
      return { schema: security && schema ? { ...schema, security } : schema, url }
    },
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () => app.swagger())
}

/**
 * The payment pipeline and the owners of its instructions: wallet moves, and outbound transfers,
 * whose origins (a refund, an escrow's disbursement, a settlement) hear when their payout ends.
 */
export function paymentsDeps(deps: Pick<PaymentsDeps, 'pool' | 'providers' | 'clock' | 'log'> & { settings?: Partial<PaymentSettings> }): PaymentsDeps {
  const owners = { wallet_move: walletOwner, outbound_transfer: outboundOwner({ refund: refundPayoutsEnded(REFUND_ENDINGS), escrow: settleEscrowPayouts, settlement: settleSettlementPayouts }) }
  const payments: PaymentsDeps = { pool: deps.pool, providers: deps.providers, clock: deps.clock, log: deps.log, owners, settings: paymentSettings(deps.settings) }
  payments.writer = stepWriterFor(payments)
  return payments
}

/** What the origin that asked for a refund does when it ends (on the pipeline's transaction). */
const REFUND_ENDINGS: RefundsDeps['onEnded'] = { triage: settleTriageRefunds, escrow: settleEscrowRefunds }

/** The refunds core: refunds are payouts of the pipeline; their endings go back to the origin that asked. */
export function refundsDeps(outbound: OutboundDeps): RefundsDeps {
  return { outbound, onEnded: REFUND_ENDINGS }
}

/** Collections, and the owners that decide what a credit to an intent they composed means. */
export function collectionsDeps(outbound: OutboundDeps): InboundDeps {
  const owners: CreditOwners = { invoice: takeInvoicePayment, escrow: fundEscrow }
  return { pool: outbound.pool, providers: outbound.payments.providers, allowLoopbackCallbacks: outbound.allowLoopbackCallbacks, outbound, owners, refunds: refundsDeps(outbound), settlement: settlementTransfersFor }
}

/** The escrow's rule for a credit to its funding account: all of it while initiated, none after. */
async function fundEscrow(tx: Tx, credit: OwnedCredit): Promise<{ takenKobo: number; movedOnKobo: number }> {
  const outcome = await applyEscrowFunding(tx, { ...credit, escrowId: credit.ownerId })
  const takenKobo = outcome === 'applied' ? credit.amountKobo : 0
  // The escrow takes what it funds out of collections into its holding account: nothing of it is settled.
  return { takenKobo, movedOnKobo: takenKobo }
}

/** Every background task of every module, by name. */
export function buildTaskList(deps: Omit<WorkerDeps, 'concurrency'>): TaskList {
  const providers = new ProviderRegistry(deps.pool, deps.providers)
  const allowLoopbackCallbacks = deps.events?.allowLoopbackCallbacks ?? false
  const log = deps.log ?? (() => {})
  const payments = paymentsDeps({ pool: deps.pool, providers, clock: deps.clock ?? systemClock, settings: deps.payments, log })
  const outbound: OutboundDeps = { pool: deps.pool, allowLoopbackCallbacks, payments }
  // The sandbox bank announces inbound credits to Rail, on whose server it is mounted.
  const bank = deps.providers && sandboxBankTasks({ pool: deps.pool, secret: deps.providers.sandboxBankSecret, clientBaseUrl: deps.providers.sandboxBankUrl })
  return {
    ...ledgerTasks,
    ...paymentTasks(payments),
    ...collectionTasks(collectionsDeps(outbound)),
    ...eventTasks({ pool: deps.pool, masterKey: deps.masterKey, settings: deps.events ?? { allowLoopbackCallbacks: false } }),
    ...bank,
    ...escrowTasks({ pool: deps.pool, clock: deps.clock ?? systemClock, outbound }),
    ...settlementTasks({ pool: deps.pool, outbound, clock: deps.clock ?? systemClock, maxAmountKobo: deps.maxAmountKobo }),
  }
}

/** Every recurring task of every module (graphile-worker crontab lines). */
export function buildCrontab(): string {
  return [LEDGER_CRONTAB, PAYMENTS_CRONTAB, EVENTS_CRONTAB, PAYMENT_INTENTS_CRONTAB, INBOUND_CREDITS_CRONTAB, ESCROW_CRONTAB, SETTLEMENT_CRONTAB].join('\n')
}

export interface WorkerDeps {
  pool: Pool
  /** Opens the secrets that sign callbacks. */
  masterKey: Buffer
  concurrency: number
  providers?: ProviderSettings
  /** Callback delivery: loopback receivers, and (in tests) a shorter timeout and retry schedule. */
  events?: DeliverySettings
  /** The payment pipeline's requery schedules, lease and send bound (tests shorten them). */
  payments?: Partial<PaymentSettings>
  /** The time escrow expiry and the payment pipeline's schedule are judged by (tests move it instead of sleeping). */
  clock?: Clock
  /** The maximum of one instruction (RAIL_MAX_AMOUNT_KOBO), which caps a settlement cycle's payout; the default otherwise. */
  maxAmountKobo?: number
  log?: (level: string, message: string) => void
}

export async function startBackgroundWorkers(deps: WorkerDeps): Promise<Runner> {
  return startWorkers({ pool: deps.pool, concurrency: deps.concurrency, taskList: buildTaskList(deps), crontab: buildCrontab(), log: deps.log })
}
