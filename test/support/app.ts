// Boots the real app on an ephemeral port over a fresh database, and makes partners for tests.
import { randomBytes } from 'node:crypto'
import { buildApi, paymentsDeps, type AppDeps } from '../../src/app.ts'
import type { PaymentSettings, PaymentsDeps } from '../../src/money-out/pipeline/service.ts'
import { ProviderRegistry } from '../../src/banking/providers/registry.ts'
import { systemClock } from '../../src/platform/clock.ts'
import { RailClient } from '../../src/client/index.ts'
import { createPartner, type NewPartner, type PartnerCredentials } from '../../src/partners/service.ts'
import type { Clock } from '../../src/platform/clock.ts'
import type { HttpServer } from '../../src/platform/http.ts'
import { createTestDatabase, type TestDatabase } from './database.ts'

export interface TestApp {
  baseUrl: string
  db: TestDatabase
  api: HttpServer
  masterKey: Buffer
  /** The payment pipeline on this app's database and bank, for a test to drive by hand. */
  payments(settings?: Partial<PaymentSettings>): PaymentsDeps
  /** A new partner and a signing client for it. */
  newPartner(overrides?: Partial<NewPartner>): Promise<{ credentials: PartnerCredentials; client: RailClient }>
  close(): Promise<void>
}

export interface TestAppOptions {
  clock?: Clock
  sandboxBankSecret?: string
  /** How long the sandbox bank acts on a signed request (its default unless told: a test shortens it to see a window pass). */
  sandboxBankRequestValidityS?: number
  providerTimeoutMs?: number
  payments?: Partial<PaymentSettings>
  /** The maximum of one instruction (RAIL_MAX_AMOUNT_KOBO); the default otherwise. */
  maxAmountKobo?: number
  /** The HTTP edge: slow-client timeouts, admission limits, rate limits (their defaults otherwise). */
  edge?: Pick<AppDeps, 'httpTimeouts' | 'admission' | 'rateLimits'>
  /** The event stream's settings (a heartbeat every 15 s, …) unless given. */
  eventStream?: AppDeps['eventStream']
  /** Connections of the app's pool (the test database's default otherwise). */
  poolMax?: number
  /** As `rail serve` gives it: where the sandbox partner's credentials file is kept. */
  sandboxPartnerDataDir?: string
  /** As `rail serve` observes its API: a logger (a test may capture its lines), the /metrics registry, the database gauges at each scrape. */
  observe?: Pick<AppDeps, 'logger' | 'metrics' | 'databaseGauges'>
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const db = await createTestDatabase(options.poolMax)
  const masterKey = randomBytes(32)
  // Every test app mounts the sandbox bank: collections (and escrow funding) allocate accounts there.
  const sandboxBank = {
    secret: options.sandboxBankSecret ?? randomBytes(16).toString('hex'),
    requestValidityS: options.sandboxBankRequestValidityS,
  }
  // The app reaches its own sandbox bank over real HTTP, at the address it gets once listening.
  let baseUrl = ''
  const providers = {
    sandboxBankUrl: () => baseUrl,
    sandboxBankSecret: sandboxBank.secret,
    timeoutMs: options.providerTimeoutMs,
    clock: options.clock,
    requestValidityS: options.sandboxBankRequestValidityS,
  }
  const api = await buildApi({
    pool: db.pool,
    masterKey,
    clock: options.clock,
    sandboxBank,
    providers,
    allowLoopbackCallbacks: true,
    payments: options.payments,
    maxAmountKobo: options.maxAmountKobo,
    sandboxPartnerDataDir: options.sandboxPartnerDataDir,
    eventStream: options.eventStream,
    ...options.edge,
    ...options.observe,
  })
  await api.listen({ host: '127.0.0.1', port: 0 })
  const address = api.server.address()
  baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  return {
    baseUrl,
    db,
    api,
    masterKey,
    payments(settings) {
      const registry = new ProviderRegistry(db.pool, providers)
      return paymentsDeps({
        pool: db.pool,
        providers: registry,
        clock: options.clock ?? systemClock,
        settings: settings ?? options.payments,
        log: () => {},
      })
    },
    async newPartner(overrides = {}) {
      const credentials = await createPartner(db.pool, masterKey, {
        name: 'Test Partner',
        customerClass: 'fintech',
        environment: 'sandbox',
        ...overrides,
      })
      return { credentials, client: new RailClient(baseUrl, credentials) }
    },
    async close() {
      await api.close()
      await db.drop()
    },
  }
}
