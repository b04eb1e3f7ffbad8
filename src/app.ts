// Composition root: builds the HTTP API and the background workers from configuration, a pool
// and the master key. Modules are wired here and nowhere else.
import type { FastifyServerOptions } from 'fastify'
import type { Runner, TaskList } from 'graphile-worker'
import type { DeliverySettings } from './events/delivery.ts'
import { EVENTS_CRONTAB, eventTasks } from './events/jobs.ts'
import { registerEventRoutes } from './events/routes.ts'
import { registerEventStreamRoute, type StreamSettings } from './events/stream.ts'
import { bringForwardDeliveries } from './events/service.ts'
import { partnerCallbackUrls } from './events/service.ts'
import { LEDGER_CRONTAB, ledgerTasks } from './ledger/jobs.ts'
import { registerBankRoutes } from './banking/banks/routes.ts'
import { registerCheckoutRoutes } from './web/checkout/routes.ts'
import { DASHBOARD_CRONTAB, dashboardTasks } from './web/dashboard/jobs.ts'
import { registerDashboardRoutes } from './web/dashboard/routes.ts'
import { registerCounterpartyRoutes } from './money-out/counterparties/routes.ts'
import { registerFboRoutes } from './collections/fbo/routes.ts'
import { collectionTasks } from './collections/credits/jobs.ts'
import { registerInvoiceRoutes } from './invoices/routes.ts'
import { invoicePaymentIntentOf, plugInvoices } from './invoices/service.ts'
import { registerInboundCreditRoutes } from './collections/credits/routes.ts'
import { registerWalletFundingRoutes } from './collections/credits/wallet-routes.ts'
import {
  accountSweepCrontab,
  accountSweepSettings,
  collectionsRegistries,
  creditsForRefunds,
  INBOUND_CREDITS_CRONTAB,
  plugTriage,
  type AccountSweepSettings,
  type CollectionsRegistries,
  type InboundDeps,
} from './collections/credits/service.ts'
import { escrowTasks } from './escrow/jobs.ts'
import { registerEscrowRoutes } from './escrow/routes.ts'
import { ESCROW_CRONTAB, EXPIRY_SWEEP_TASK as ESCROW_EXPIRY_SWEEP_TASK, plugEscrow } from './escrow/service.ts'
import { registerFloatRoutes } from './money-out/outbound/float-routes.ts'
import { outboundOwner } from './money-out/outbound/owner.ts'
import { payoutOrigins, type PayoutOrigins } from './money-out/outbound/types.ts'
import { registerOutboundRoutes } from './money-out/outbound/routes.ts'
import { outboundDeps, type OutboundDeps } from './money-out/outbound/service.ts'
import { registerPaymentIntentRoutes } from './collections/intents/routes.ts'
import { registerRefundRoutes } from './money-out/refunds/routes.ts'
import { plugRefunds, refundOrigins, type RefundOrigins, type RefundsDeps } from './money-out/refunds/service.ts'
import { EXPIRE_TASK as INTENT_EXPIRE_TASK, PAYMENT_INTENTS_CRONTAB } from './collections/intents/service.ts'
import { installAuthentication } from './partners/auth.ts'
import { registerPartnerRoutes } from './partners/routes.ts'
import { paymentTasks } from './money-out/pipeline/jobs.ts'
import {
  bringForwardPartner,
  PAYMENTS_CRONTAB,
  paymentSettings,
  withStepWriter,
  type PaymentSettings,
  type PaymentsDeps,
} from './money-out/pipeline/service.ts'
import { ProviderRegistry, type ProviderSettings } from './banking/providers/registry.ts'
import { SANDBOX_MONNIFY_PROFILE, SANDBOX_PAYSTACK_PROFILE, type SandboxDialectJobDeps } from './sandbox/dialects.ts'
import { sandboxBankTasks } from './sandbox/jobs.ts'
import { monnifyCreditNotifier, registerSandboxMonnifyRoutes, sandboxMonnifyTasks } from './sandbox/monnify/index.ts'
import {
  paystackCreditNotifier,
  registerSandboxPaystackRoutes,
  sandboxPaystackTasks,
} from './sandbox/paystack/index.ts'
import { registerSandboxBankRoutes } from './sandbox/routes.ts'
import { registerStatementRoutes } from './statements/routes.ts'
import { settlementTasks } from './settlement/jobs.ts'
import { registerSettlementRoutes } from './settlement/routes.ts'
import { plugSettlement, RUN_DUE_TASK as SETTLEMENT_RUN_DUE_TASK, SETTLEMENT_CRONTAB } from './settlement/service.ts'
import { SandboxBank } from './sandbox/service.ts'
import { registerSandboxClockRoutes } from './partners/sandbox-clock/routes.ts'
import type { OnAdvance } from './partners/sandbox-clock/service.ts'
import { installAmountLimit, MAX_AMOUNT_KOBO_DEFAULT } from './platform/amounts.ts'
import { systemClock, type Clock } from './platform/clock.ts'
import { SANDBOX_BANK_POOL_MAX } from './platform/connections.ts'
import { createSiblingPool, type Pool } from './platform/db.ts'
import { registerHealthRoutes } from './platform/health.ts'
import { admissionLimitsFor, AdmissionGate, installAdmission, type AdmissionLimits } from './platform/admission.ts'
import { createHttpServer, type HttpServer, type HttpTimeouts } from './platform/http.ts'
import {
  installRateLimits,
  PARTNER_RPS_DEFAULT,
  UNAUTHENTICATED_RPS_DEFAULT,
  type RateLimits,
} from './platform/rate-limit.ts'
import { addJob, startWorkers } from './platform/jobs.ts'
import { installMetrics } from './platform/metrics.ts'
import { registerDatabaseGauges } from './platform/observability/database-gauges.ts'
import { watchPool } from './platform/observability/pools.ts'
import { installRequestStages } from './platform/observability/stages.ts'
import { installRequestTracing, tracingOn } from './platform/observability/tracing.ts'
import { observeWorkers, type WorkerObservationSettings } from './platform/observability/workers.ts'
import type { Registry } from 'prom-client'
import { setPublicUrl } from './platform/public-url.ts'
import { registerOpenApi } from './platform/openapi.ts'
import { WORKER_LIVENESS_CRONTAB, workerLivenessTasks } from './platform/worker-liveness.ts'
import { claimBatcherFor, walletOwner } from './wallets/moves.ts'
import { registerMoveRoutes } from './wallets/moves-routes.ts'
import { registerWalletRoutes } from './wallets/routes.ts'
import { registerVirtualAccountRoutes } from './collections/virtual-accounts/routes.ts'

export interface AppDeps {
  pool: Pool
  /** Work that needs a session (the credential cache's LISTEN): `pool` when absent; beside a pooler, a pool straight to PostgreSQL. */
  sessionPool?: Pool
  masterKey: Buffer
  clock?: Clock
  logger?: FastifyServerOptions['logger']
  /** The largest amount one instruction may carry (RAIL_MAX_AMOUNT_KOBO); NIP's largest single transfer when absent. */
  maxAmountKobo?: number
  /** Mounts the sandbox bank on this server when given (development and sandbox deployments). */
  /** requestValidityS: how long the bank acts on a signed request (TIMESTAMP_TOLERANCE_S unless told; tests shorten it). */
  sandboxBank?: { secret: string; bankCode?: string; requestValidityS?: number }
  /** How to reach providers; without it, operations that call a provider fail. */
  providers?: ProviderSettings
  /** Sandbox partners may register loopback callback URLs (RAIL_ALLOW_LOOPBACK_CALLBACKS). */
  allowLoopbackCallbacks?: boolean
  /** The payment pipeline's requery schedules, lease and send bound (tests shorten them). */
  payments?: Partial<PaymentSettings>
  /** Slow clients are cut off after these (tests shorten them). */
  httpTimeouts?: HttpTimeouts
  /** The event stream's polling, heartbeat and bounds: STREAM_SETTINGS_DEFAULT (a heartbeat every 15 s) unless set (tests shorten them). */
  eventStream?: Partial<StreamSettings>
  /** Requests admitted at once and queued; derived from the pool's size when absent. */
  admission?: AdmissionLimits
  /** Per-partner and per-IP request rates (RAIL_RATE_LIMIT_RPS, RAIL_RATE_LIMIT_UNAUTHENTICATED_RPS). */
  rateLimits?: RateLimits
  /** Base of hosted checkout page URLs (PUBLIC_URL); the address the server listens on when absent. */
  publicUrl?: string
  /** Where `rail serve` keeps the sandbox partner's credentials: a rotation from the dashboard updates them there. */
  sandboxPartnerDataDir?: string
  /** The registry /metrics serves (shared with the workers of the same process); a new one when absent. */
  metrics?: Registry
  /** /metrics also reads the database gauges at each scrape (`rail serve`); `rail api` leaves them to the workers' endpoints. */
  databaseGauges?: boolean
}

export async function buildApi(deps: AppDeps): Promise<HttpServer> {
  const clock = deps.clock ?? systemClock
  const app = createHttpServer(deps.logger ?? false, deps.httpTimeouts)
  const metrics = await installEdge(app, deps, clock)
  watchPool(metrics, 'rail', deps.pool)
  const maxAmountKobo = deps.maxAmountKobo ?? MAX_AMOUNT_KOBO_DEFAULT
  // Before any route: every AmountKobo() body field registered after this is checked against it.
  installAmountLimit(app, { maxAmountKobo })
  registerHealthRoutes(app, deps.pool)
  installPublicUrl(app, deps.publicUrl)
  const allowLoopbackCallbacks = deps.allowLoopbackCallbacks ?? false
  registerPartnerRoutes(app, { pool: deps.pool, allowLoopbackCallbacks, callbackUrls: partnerCallbackUrls })
  registerEventRoutes(app, { pool: deps.pool, clock })
  registerEventStreamRoute(app, { pool: deps.pool, settings: deps.eventStream })
  registerFloatRoutes(app, { pool: deps.pool, maxAmountKobo })
  registerCounterpartyRoutes(app, { pool: deps.pool })
  // Rail signs its requests to the bank, and the bank checks them, by the app's clock.
  // One name-enquiry budget per partner for every route of this process that may show a holder's name.
  const providers = new ProviderRegistry(
    deps.pool,
    deps.providers && { clock, ...deps.providers },
    deps.rateLimits?.nameEnquiriesPerMinute,
    deps.masterKey,
  )
  const registries = pluggedRegistries()
  const payments = paymentsDeps(
    { pool: deps.pool, providers, clock, settings: deps.payments, log: (level, message) => app.log[level](message) },
    registries,
  )
  const outbound = outboundDeps({ pool: deps.pool, allowLoopbackCallbacks, payments })
  registerOutboundRoutes(app, outbound)
  const collections = collectionsDeps(outbound, registries)
  registerVirtualAccountRoutes(app, collections)
  registerPaymentIntentRoutes(app, collections)
  registerFboRoutes(app, collections)
  registerInboundCreditRoutes(app, collections)
  registerWalletFundingRoutes(app, collections)
  registerInvoiceRoutes(app, collections)
  registerCheckoutRoutes(app, { pool: deps.pool, clock, inbound: collections, maxAmountKobo })
  registerDashboardRoutes(app, {
    pool: deps.pool,
    clock,
    masterKey: deps.masterKey,
    allowLoopbackCallbacks,
    maxAmountKobo,
    outbound,
    collections,
    sandboxPartnerDataDir: deps.sandboxPartnerDataDir,
  })
  registerRefundRoutes(app, { ...collections.refunds, invoiceIntentOf: invoicePaymentIntentOf })
  registerWalletRoutes(app, { pool: deps.pool, providers })
  registerBankRoutes(app, { pool: deps.pool, providers })
  registerStatementRoutes(app, { pool: deps.pool })
  registerSettlementRoutes(app, { pool: deps.pool, outbound, clock, maxAmountKobo })
  // Concurrent claims of wallet moves share transactions, as outbound submits do.
  registerMoveRoutes(app, { pool: deps.pool, payments, claimer: claimBatcherFor({ pool: deps.pool, payments }) })
  registerEscrowRoutes(app, {
    pool: deps.pool,
    masterKey: deps.masterKey,
    clock,
    allowLoopbackCallbacks,
    collections,
    outbound,
  })
  registerSandboxClockRoutes(app, { pool: deps.pool, clock, onAdvance: dueOnSandboxClockAdvance(payments) })
  if (deps.sandboxBank) mountSandboxBank(app, deps.pool, deps.sandboxBank, { metrics, clock })
  await app.ready()
  return app
}

/** The HTTP edge, in the order requests meet it: stages, admission, the document, rate limits, authentication, tracing, metrics. */
async function installEdge(app: HttpServer, deps: AppDeps, clock: Clock): Promise<Registry> {
  // Every request's stages are timed from its first hook (observability/stages.ts).
  installRequestStages(app, tracingOn())
  // First of the hooks that act: a request that cannot be served soon is refused before anything is read.
  installAdmission(app, new AdmissionGate(deps.admission ?? admissionLimitsFor(deps.pool.options.max)))
  await registerOpenApi(app, deps.publicUrl)
  const rateLimiter = await installRateLimits(
    app,
    deps.rateLimits ?? { partnerRps: PARTNER_RPS_DEFAULT, unauthenticatedRps: UNAUTHENTICATED_RPS_DEFAULT },
  )
  installAuthentication(app, {
    pool: deps.pool,
    sessionPool: deps.sessionPool,
    masterKey: deps.masterKey,
    clock,
    rateLimiter,
  })
  installRequestTracing(app)
  const metrics = installMetrics(app, deps.metrics)
  if (deps.databaseGauges)
    registerDatabaseGauges(metrics, deps.pool, {
      tasks: taskNames({ pool: deps.pool, masterKey: deps.masterKey, providers: deps.providers }),
      clock,
    })
  return metrics
}

/** The sandbox bank and its provider dialects, mounted on this server over their own connections. */
function mountSandboxBank(
  app: HttpServer,
  pool: Pool,
  sandboxBank: NonNullable<AppDeps['sandboxBank']>,
  { metrics, clock }: { metrics: Registry; clock: Clock },
): void {
  // The bank is another system: its own connections, so that Rail's requests waiting on a
  // provider call inside a transaction (allocation, idempotent creates) cannot starve it.
  const bankPool = sandboxBankPool(pool)
  if (bankPool !== pool) watchPool(metrics, 'rail-sandbox-bank', bankPool)
  app.addHook('onClose', async () => {
    if (bankPool !== pool) await bankPool.end()
  })
  const bank = new SandboxBank(bankPool, sandboxBank.bankCode, clock)
  registerSandboxBankRoutes(app, {
    bank,
    secret: sandboxBank.secret,
    pool: bankPool,
    clock,
    requestValidityS: sandboxBank.requestValidityS,
  })
  // The provider dialects, on the same books: Rail's real adapters run end to end against them.
  const dialect = { app, bank, pool: bankPool, bankSecret: sandboxBank.secret, clock }
  registerSandboxPaystackRoutes(dialect)
  registerSandboxMonnifyRoutes(dialect)
}

/** Page URLs start with PUBLIC_URL, else with the address this server listens on (known once listening). */
function installPublicUrl(app: HttpServer, publicUrl: string | undefined): void {
  if (publicUrl !== undefined) return setPublicUrl(publicUrl)
  app.addHook('onListen', async () => {
    const address = app.server.address()
    if (typeof address !== 'object' || !address) return
    const host =
      address.family === 'IPv6'
        ? `[${address.address === '::' ? '::1' : address.address}]`
        : address.address === '0.0.0.0'
          ? '127.0.0.1'
          : address.address
    setPublicUrl(`http://${host}:${address.port}`)
  })
}

function sandboxBankPool(pool: Pool): Pool {
  const connectionString = (pool as Pool & { options: { connectionString?: string } }).options.connectionString
  return connectionString ? createSiblingPool(pool, SANDBOX_BANK_POOL_MAX, 'rail-sandbox-bank') : pool
}

/**
 * The registries money-out and collections call back through, every product plugged in: a payout's
 * origin (refunds, escrow, settlement) hears when its payout ends; a refund's origin (escrow,
 * triage) when its refund ends; an intent's owner (invoice, escrow) takes the credits to its
 * intent; settlement settles what credits leave in collections. Each product registers its own
 * handlers (plug…); each registry calls them in the order its module declares.
 */
export interface Registries extends CollectionsRegistries {
  origins: PayoutOrigins
  refundOrigins: RefundOrigins
}

export function pluggedRegistries(): Registries {
  const registries: Registries = {
    origins: payoutOrigins(),
    refundOrigins: refundOrigins(),
    ...collectionsRegistries(),
  }
  plugRefunds(registries)
  plugTriage(registries)
  plugEscrow(registries)
  plugSettlement(registries)
  plugInvoices(registries)
  return registries
}

/**
 * The payment pipeline and the owners of its instructions: wallet moves, and outbound transfers,
 * whose origins (a refund, an escrow's disbursement, a settlement) hear through `registries.origins`
 * when their payout ends.
 */
export function paymentsDeps(
  deps: Pick<PaymentsDeps, 'pool' | 'providers' | 'clock' | 'log'> & { settings?: Partial<PaymentSettings> },
  registries: Pick<Registries, 'origins'> = pluggedRegistries(),
): PaymentsDeps {
  const owners = { wallet_move: walletOwner, outbound_transfer: outboundOwner(registries.origins) }
  return withStepWriter({
    pool: deps.pool,
    providers: deps.providers,
    clock: deps.clock,
    log: deps.log,
    owners,
    settings: paymentSettings(deps.settings),
  })
}

/**
 * What a sandbox partner's clock moving on makes due, at once: the sweeps that judge expiry and
 * settlement cut-offs by each partner's time are queued now (not at the next minute), and the
 * partner's payments in flight and callback deliveries waiting to retry are brought forward.
 */
function dueOnSandboxClockAdvance(payments: PaymentsDeps): OnAdvance[] {
  const sweepNow =
    (task: string): OnAdvance =>
    (tx) =>
      addJob(tx, task, {}, { jobKey: `sandbox-clock:${task}` })
  return [
    sweepNow(INTENT_EXPIRE_TASK),
    sweepNow(ESCROW_EXPIRY_SWEEP_TASK),
    sweepNow(SETTLEMENT_RUN_DUE_TASK),
    (tx, partnerId, seconds) => bringForwardPartner(tx, payments.clock, partnerId, seconds),
    (tx, partnerId, seconds) => bringForwardDeliveries(tx, payments.clock, partnerId, seconds),
  ]
}

/** The refunds core: refunds are payouts of the pipeline, made of the credits inbound credits hand over. */
export function refundsDeps(outbound: OutboundDeps): RefundsDeps {
  return { outbound, credits: creditsForRefunds }
}

/** Collections, with the owners and the settlement registered in collections' registries. */
export function collectionsDeps(
  outbound: OutboundDeps,
  registries: CollectionsRegistries = pluggedRegistries(),
): InboundDeps {
  return {
    pool: outbound.pool,
    clock: outbound.payments.clock,
    providers: outbound.payments.providers,
    allowLoopbackCallbacks: outbound.allowLoopbackCallbacks,
    outbound,
    owners: registries.creditOwners.handlers,
    refunds: refundsDeps(outbound),
    settlement: registries.collected.get('settlement'),
  }
}

/** Every background task of every module, by name. */
export function buildTaskList(deps: Omit<WorkerDeps, 'concurrency'>): TaskList {
  const providers = new ProviderRegistry(
    deps.pool,
    deps.providers && { clock: deps.clock ?? systemClock, ...deps.providers },
    undefined,
    deps.masterKey,
  )
  const allowLoopbackCallbacks = deps.events?.allowLoopbackCallbacks ?? false
  const log = deps.log ?? (() => {})
  const observed = deps.observe && observeWorkers(deps.observe)
  const registries = pluggedRegistries()
  const payments = paymentsDeps(
    { pool: deps.pool, providers, clock: deps.clock ?? systemClock, settings: deps.payments, log },
    registries,
  )
  const outbound = outboundDeps({ pool: deps.pool, allowLoopbackCallbacks, payments })
  // The sandbox bank announces inbound credits to Rail, on whose server it is mounted.
  const bank = deps.providers && sandboxTasks(deps.pool, deps.providers, deps.clock ?? systemClock)
  const tasks: TaskList = {
    ...ledgerTasks({ pool: deps.pool, onVerified: observed?.onLedgerVerified }),
    ...paymentTasks(payments),
    ...collectionTasks(collectionsDeps(outbound, registries), {
      accountSweep: deps.creditSweep,
      onAccountSweep: observed?.onAccountSweep,
    }),
    ...eventTasks({
      pool: deps.pool,
      masterKey: deps.masterKey,
      clock: deps.clock ?? systemClock,
      settings: deps.events ?? { allowLoopbackCallbacks: false },
      onAttempt: observed?.onDeliveryAttempt,
    }),
    ...bank,
    ...escrowTasks({ pool: deps.pool, clock: deps.clock ?? systemClock, outbound }),
    ...settlementTasks({
      pool: deps.pool,
      outbound,
      clock: deps.clock ?? systemClock,
      maxAmountKobo: deps.maxAmountKobo,
    }),
    ...dashboardTasks({ pool: deps.pool, clock: deps.clock ?? systemClock }),
    ...workerLivenessTasks({ pool: deps.pool }),
  }
  return observed ? observed.instrument(tasks) : tasks
}

/** The sandbox bank's background work and its dialects' (their webhooks to Rail, on whose server they are mounted). */
function sandboxTasks(pool: Pool, providers: NonNullable<WorkerDeps['providers']>, clock: Clock): TaskList {
  const dialect: SandboxDialectJobDeps = {
    pool,
    bankSecret: providers.sandboxBankSecret,
    clientBaseUrl: providers.sandboxBankUrl,
    clock,
  }
  const dialectNotifiers = {
    [SANDBOX_PAYSTACK_PROFILE]: paystackCreditNotifier(dialect),
    [SANDBOX_MONNIFY_PROFILE]: monnifyCreditNotifier(dialect),
  }
  return {
    ...sandboxBankTasks({
      pool,
      secret: providers.sandboxBankSecret,
      clientBaseUrl: providers.sandboxBankUrl,
      dialectNotifiers,
    }),
    ...sandboxPaystackTasks(dialect),
    ...sandboxMonnifyTasks(dialect),
  }
}

/** The names of every background task (the job gauges have a series for each). */
export function taskNames(deps: Pick<WorkerDeps, 'pool' | 'masterKey' | 'providers'>): string[] {
  return Object.keys(buildTaskList(deps))
}

/** Every recurring task of every module (graphile-worker crontab lines); `creditSweep` sets how often the account sweep runs. */
export function buildCrontab(creditSweep?: Partial<AccountSweepSettings>): string {
  const accountSweep = accountSweepCrontab(accountSweepSettings(creditSweep))
  return [
    LEDGER_CRONTAB,
    PAYMENTS_CRONTAB,
    EVENTS_CRONTAB,
    PAYMENT_INTENTS_CRONTAB,
    INBOUND_CREDITS_CRONTAB,
    accountSweep,
    ESCROW_CRONTAB,
    SETTLEMENT_CRONTAB,
    DASHBOARD_CRONTAB,
    WORKER_LIVENESS_CRONTAB,
  ].join('\n')
}

export interface WorkerDeps {
  pool: Pool
  /** graphile-worker's own pool (its LISTEN, fetching and completing jobs): `pool` when absent; beside a pooler, one straight to PostgreSQL. */
  queuePool?: Pool
  /** Opens the secrets that sign callbacks. */
  masterKey: Buffer
  concurrency: number
  providers?: ProviderSettings
  /** Callback delivery: loopback receivers, and (in tests) a shorter timeout and retry schedule. */
  events?: DeliverySettings
  /** The payment pipeline's requery schedules, lease and send bound (tests shorten them). */
  payments?: Partial<PaymentSettings>
  /** The sweep of every account for credits whose notice never came: how often, how many accounts a run, the grace left to notices (tests shorten it). */
  creditSweep?: Partial<AccountSweepSettings>
  /** The time escrow expiry and the payment pipeline's schedule are judged by (tests move it instead of sleeping). */
  clock?: Clock
  /** The maximum of one instruction (RAIL_MAX_AMOUNT_KOBO), which caps a settlement cycle's payout; the default otherwise. */
  maxAmountKobo?: number
  log?: (level: string, message: string) => void
  /** Job metrics, one log line per job and delivery outcomes, in this registry and logger. */
  observe?: WorkerObservationSettings
}

export async function startBackgroundWorkers(deps: WorkerDeps): Promise<Runner> {
  if (deps.observe) watchPool(deps.observe.registry, 'rail-worker', deps.pool)
  return startWorkers({
    pool: deps.pool,
    queuePool: deps.queuePool,
    concurrency: deps.concurrency,
    taskList: buildTaskList(deps),
    crontab: buildCrontab(deps.creditSweep),
    log: deps.log,
  })
}
