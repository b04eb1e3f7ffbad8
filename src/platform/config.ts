// Configuration comes from the environment, read once, validated, and passed down explicitly.
// Nothing else in the code reads process.env.
import path from 'node:path'
import { MAX_AMOUNT_KOBO_DEFAULT } from './amounts.ts'
import { PARTNER_RPS_DEFAULT, UNAUTHENTICATED_RPS_DEFAULT } from './rate-limit.ts'

export interface Config {
  /** Where the HTTP API listens. */
  host: string
  port: number
  /** A PostgreSQL URL; when absent, Rail runs embedded PostgreSQL under `dataDir`. */
  databaseUrl: string | undefined
  /**
   * DATABASE_DIRECT_URL: PostgreSQL itself, set when DATABASE_URL is a pooler in transaction mode
   * (PgBouncer). Its presence is what says DATABASE_URL is one: pooled connections then send
   * unnamed statements and no statement_timeout, and session work (LISTEN, session locks,
   * migrations, graphile-worker's queue) goes here. Undefined: DATABASE_URL is PostgreSQL itself.
   */
  databaseDirectUrl: string | undefined
  /** Local state of a development install: embedded database, master key, runtime file. */
  dataDir: string
  /** 32-byte key for AES-256-GCM encryption of secrets at rest; undefined means "use the dev key file". */
  masterKeyHex: string | undefined
  /** Shared secret of the sandbox bank; undefined means the dev secret file (serve) or no sandbox bank (api). */
  sandboxBankSecret: string | undefined
  /** Where the sandbox adapter reaches the sandbox bank; undefined means this same server. */
  sandboxBankUrl: string | undefined
  /** CBN code of the bank the sandbox bank plays (its NUBANs use it). */
  sandboxBankCode: string | undefined
  /** Background job concurrency per worker process. */
  workerConcurrency: number
  /** Pool size per process. */
  databasePoolMax: number
  logLevel: string
  /** LOG_FORMAT: `json` (one JSON object a line, for log collectors) or `text` (a line a person reads); text by default only in a terminal outside production. */
  logFormat: LogFormat
  /** Sandbox partners may register loopback callback URLs (local receivers); on unless production. */
  allowLoopbackCallbacks: boolean
  /** Production refuses dev conveniences (a generated master key). */
  production: boolean
  /** Test failpoints to turn on in this process (RAIL_FAILPOINTS; see platform/failpoints.ts); unset in production use. */
  failpoints: string | undefined
  /** Requests per second per partner, and per client IP without credentials; 0 turns a limit off. */
  rateLimits: { partnerRps: number; unauthenticatedRps: number; nameEnquiriesPerMinute?: number }
  /** The payment pipeline's requery schedule; unset values keep its defaults (5 s; 24 h live, 3 min sandbox). */
  payments: {
    live?: { firstDelayMs: number; deadlineMs: number }
    sandbox?: { firstDelayMs: number; deadlineMs: number }
    leaseMs?: number
  }
  /** How long the sandbox bank acts on a signed request (SANDBOX_BANK_REQUEST_VALIDITY_S; its 300 s unless set). */
  sandboxBankRequestValidityS: number | undefined
  /** The sweep of every account for credits whose notice never came: every RAIL_CREDIT_SWEEP_EVERY_MINUTES (1–59), RAIL_CREDIT_SWEEP_ACCOUNTS_PER_RUN accounts a run; unset values keep its defaults (src/collections/credits/account-sweep.ts). */
  creditSweep: { everyMinutes?: number; accountsPerRun?: number }
  /** The largest amount one instruction may carry (RAIL_MAX_AMOUNT_KOBO; default NIP's largest single transfer, platform/amounts.ts). */
  maxAmountKobo: number
  /** Base of the URLs payers open (hosted checkout pages), e.g. https://pay.example.com (PUBLIC_URL); undefined means the server's own address. */
  publicUrl: string | undefined
  /** Where `rail worker` serves /healthz, /readyz and /metrics (WORKER_HTTP_PORT, default 8081, on HOST); 0: not served. */
  workerHttpPort: number
  /** Traces exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the SDK reads the other OTEL_* variables); undefined: off. */
  tracing: { serviceName: string } | undefined
  /** How far lists stay below the oldest open transaction (RAIL_LIST_CLOCK_MARGIN_MS; platform/pagination.ts): 1,000 in production, else 0. */
  listClockMarginMs: number
  /** DATABASE_READ_URL, a streaming replica of DATABASE_URL that API processes read lists, statements and events from (platform/read-pool.ts); undefined: every read on the primary. */
  readReplica: ReadReplicaConfig | undefined
}

export interface ReadReplicaConfig {
  url: string
  /** DATABASE_READ_POOL_MAX: connections to the replica per API process. */
  poolMax: number
  /** RAIL_READ_REPLICA_MAX_WAIT_MS: how long a read waits for the replica to catch up before it goes to the primary. */
  maxWaitMs: number
}

export type LogFormat = 'json' | 'text'

function parseLogFormat(value: string | undefined, terminal: boolean): LogFormat {
  if (value === undefined || value === '') return terminal ? 'text' : 'json'
  if (value !== 'json' && value !== 'text') throw new ConfigError(`LOG_FORMAT must be json or text, got "${value}"`)
  return value
}

export const PORT_DEFAULT = 8080
/** `rail worker`'s own endpoints, beside the API's default port. */
export const WORKER_HTTP_PORT_DEFAULT = 8081
/** Background work is mostly waiting on HTTP (providers, callback receivers), so many jobs run at once. */
export const WORKER_CONCURRENCY_DEFAULT = 32
const DATABASE_POOL_MAX_DEFAULT = 20
/** Clocks kept by NTP, and an id made at most this long before its transaction begins (a pool wait, say). */
const LIST_CLOCK_MARGIN_MS_PRODUCTION = 1_000

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    host: env.HOST ?? '127.0.0.1',
    port: parsePort(env.PORT, PORT_DEFAULT),
    databaseUrl: nonEmpty(env.DATABASE_URL),
    databaseDirectUrl: parseDirectUrl(env),
    dataDir: path.resolve(nonEmpty(env.RAIL_DATA_DIR) ?? '.rail'),
    masterKeyHex: parseMasterKey(nonEmpty(env.RAIL_MASTER_KEY)),
    sandboxBankSecret: nonEmpty(env.SANDBOX_BANK_SECRET),
    sandboxBankUrl: nonEmpty(env.SANDBOX_BANK_URL),
    sandboxBankRequestValidityS:
      nonEmpty(env.SANDBOX_BANK_REQUEST_VALIDITY_S) === undefined
        ? undefined
        : parsePositiveInt('SANDBOX_BANK_REQUEST_VALIDITY_S', env.SANDBOX_BANK_REQUEST_VALIDITY_S, 1),
    sandboxBankCode: nonEmpty(env.SANDBOX_BANK_CODE),
    workerConcurrency: parsePositiveInt('WORKER_CONCURRENCY', env.WORKER_CONCURRENCY, WORKER_CONCURRENCY_DEFAULT),
    databasePoolMax: parsePositiveInt('DATABASE_POOL_MAX', env.DATABASE_POOL_MAX, DATABASE_POOL_MAX_DEFAULT),
    logLevel: env.LOG_LEVEL ?? 'info',
    logFormat: parseLogFormat(env.LOG_FORMAT, env.NODE_ENV !== 'production' && process.stdout.isTTY === true),
    allowLoopbackCallbacks: parseFlag(
      'RAIL_ALLOW_LOOPBACK_CALLBACKS',
      env.RAIL_ALLOW_LOOPBACK_CALLBACKS,
      env.NODE_ENV !== 'production',
    ),
    production: env.NODE_ENV === 'production',
    payments: requerySchedules(env),
    creditSweep: creditSweepSettings(env),
    rateLimits: {
      partnerRps: parseNonNegativeInt('RAIL_RATE_LIMIT_RPS', env.RAIL_RATE_LIMIT_RPS, PARTNER_RPS_DEFAULT),
      unauthenticatedRps: parseNonNegativeInt(
        'RAIL_RATE_LIMIT_UNAUTHENTICATED_RPS',
        env.RAIL_RATE_LIMIT_UNAUTHENTICATED_RPS,
        UNAUTHENTICATED_RPS_DEFAULT,
      ),
      // Unset: the banks routes' own default (60 a minute).
      nameEnquiriesPerMinute:
        nonEmpty(env.RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE) === undefined
          ? undefined
          : parseNonNegativeInt(
              'RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE',
              env.RAIL_RATE_LIMIT_NAME_ENQUIRIES_PER_MINUTE,
              0,
            ),
    },
    failpoints: nonEmpty(env.RAIL_FAILPOINTS),
    maxAmountKobo: parseAmountMax(env.RAIL_MAX_AMOUNT_KOBO),
    publicUrl: parsePublicUrl(env.PUBLIC_URL),
    workerHttpPort: parsePort(env.WORKER_HTTP_PORT, WORKER_HTTP_PORT_DEFAULT, 'WORKER_HTTP_PORT'),
    tracing:
      nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) === undefined
        ? undefined
        : { serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? 'rail' },
    listClockMarginMs: parseNonNegativeInt(
      'RAIL_LIST_CLOCK_MARGIN_MS',
      env.RAIL_LIST_CLOCK_MARGIN_MS,
      env.NODE_ENV === 'production' ? LIST_CLOCK_MARGIN_MS_PRODUCTION : 0,
    ),
    readReplica: parseReadReplica(env),
  }
}

/** Requeries start REQUERY_FIRST_DELAY_MS after a send and end at each environment's deadline. */
const REQUERY_FIRST_DELAY_MS_DEFAULT = 5_000
const REQUERY_DEADLINE_S_DEFAULT = 24 * 60 * 60
const SANDBOX_REQUERY_DEADLINE_S_DEFAULT = 180

function requerySchedules(env: NodeJS.ProcessEnv): Config['payments'] {
  const firstDelayMs = parsePositiveInt(
    'RAIL_REQUERY_FIRST_DELAY_MS',
    env.RAIL_REQUERY_FIRST_DELAY_MS,
    REQUERY_FIRST_DELAY_MS_DEFAULT,
  )
  return {
    live: {
      firstDelayMs,
      deadlineMs:
        1000 * parsePositiveInt('RAIL_REQUERY_DEADLINE_S', env.RAIL_REQUERY_DEADLINE_S, REQUERY_DEADLINE_S_DEFAULT),
    },
    sandbox: {
      firstDelayMs,
      deadlineMs:
        1000 *
        parsePositiveInt(
          'RAIL_SANDBOX_REQUERY_DEADLINE_S',
          env.RAIL_SANDBOX_REQUERY_DEADLINE_S,
          SANDBOX_REQUERY_DEADLINE_S_DEFAULT,
        ),
    },
    // How long a worker holds a payment (60 s unless set): longer than one step's bank calls.
    ...(nonEmpty(env.RAIL_PAYMENT_LEASE_MS) === undefined
      ? {}
      : { leaseMs: parsePositiveInt('RAIL_PAYMENT_LEASE_MS', env.RAIL_PAYMENT_LEASE_MS, 1) }),
  }
}

/** A crontab step: the sweep runs every n minutes of the hour, n from 1 to 59. */
const CREDIT_SWEEP_EVERY_MINUTES_MAX = 59

function creditSweepSettings(env: NodeJS.ProcessEnv): Config['creditSweep'] {
  const settings: Config['creditSweep'] = {}
  if (nonEmpty(env.RAIL_CREDIT_SWEEP_EVERY_MINUTES) !== undefined) {
    settings.everyMinutes = parsePositiveInt('RAIL_CREDIT_SWEEP_EVERY_MINUTES', env.RAIL_CREDIT_SWEEP_EVERY_MINUTES, 1)
    if (settings.everyMinutes > CREDIT_SWEEP_EVERY_MINUTES_MAX)
      throw new ConfigError(`RAIL_CREDIT_SWEEP_EVERY_MINUTES must be 1 to ${CREDIT_SWEEP_EVERY_MINUTES_MAX}`)
  }
  if (nonEmpty(env.RAIL_CREDIT_SWEEP_ACCOUNTS_PER_RUN) !== undefined) {
    settings.accountsPerRun = parsePositiveInt(
      'RAIL_CREDIT_SWEEP_ACCOUNTS_PER_RUN',
      env.RAIL_CREDIT_SWEEP_ACCOUNTS_PER_RUN,
      1,
    )
  }
  return settings
}

export class ConfigError extends Error {}

/** DATABASE_DIRECT_URL only beside a DATABASE_URL: without one there is no pooler to go around. */
function parseDirectUrl(env: NodeJS.ProcessEnv): string | undefined {
  const directUrl = nonEmpty(env.DATABASE_DIRECT_URL)
  if (directUrl !== undefined && nonEmpty(env.DATABASE_URL) === undefined) {
    throw new ConfigError(
      'DATABASE_DIRECT_URL is set without DATABASE_URL: it names PostgreSQL itself when DATABASE_URL is a pooler (PgBouncer)',
    )
  }
  return directUrl
}

const READ_POOL_MAX_DEFAULT = 5
const READ_REPLICA_MAX_WAIT_MS_DEFAULT = 20

function parseReadReplica(env: NodeJS.ProcessEnv): ReadReplicaConfig | undefined {
  const url = nonEmpty(env.DATABASE_READ_URL)
  if (url === undefined) return undefined
  return {
    url,
    poolMax: parsePositiveInt('DATABASE_READ_POOL_MAX', env.DATABASE_READ_POOL_MAX, READ_POOL_MAX_DEFAULT),
    maxWaitMs: parseNonNegativeInt(
      'RAIL_READ_REPLICA_MAX_WAIT_MS',
      env.RAIL_READ_REPLICA_MAX_WAIT_MS,
      READ_REPLICA_MAX_WAIT_MS_DEFAULT,
    ),
  }
}

/** At most 2^53 − 1: every amount must stay an exact JavaScript number. */
function parseAmountMax(value: string | undefined): number {
  const maximumKobo = parsePositiveInt('RAIL_MAX_AMOUNT_KOBO', value, MAX_AMOUNT_KOBO_DEFAULT)
  if (!Number.isSafeInteger(maximumKobo))
    throw new ConfigError(`RAIL_MAX_AMOUNT_KOBO must be at most ${Number.MAX_SAFE_INTEGER}, got "${value}"`)
  return maximumKobo
}

/** An http(s) URL without query or fragment; its trailing slash is dropped. */
function parsePublicUrl(value: string | undefined): string | undefined {
  const trimmed = nonEmpty(value)
  if (trimmed === undefined) return undefined
  const url = URL.canParse(trimmed) ? new URL(trimmed) : undefined
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`PUBLIC_URL must be an http(s) URL without query or fragment, got "${value}"`)
  }
  return trimmed.replace(/\/+$/, '')
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}

function parsePort(value: string | undefined, fallback: number, name = 'PORT'): number {
  if (value === undefined || value === '') return fallback
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`${name} must be an integer 0..65535, got "${value}"`)
  return port
}

function parsePositiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new ConfigError(`${name} must be a positive integer, got "${value}"`)
  return n
}

function parseNonNegativeInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0) throw new ConfigError(`${name} must be an integer 0 or more, got "${value}"`)
  return n
}

function parseFlag(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value.trim() === '') return fallback
  if (value.trim() === '1' || value.trim() === 'true') return true
  if (value.trim() === '0' || value.trim() === 'false') return false
  throw new ConfigError(`${name} must be 1 or 0, got "${value}"`)
}

/** Accepts 64 hex characters or base64 of 32 bytes; returns hex. */
function parseMasterKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  if (/^[0-9a-fA-F]{64}$/.test(value)) return value.toLowerCase()
  const bytes = Buffer.from(value, 'base64')
  if (bytes.length === 32) return bytes.toString('hex')
  throw new ConfigError('RAIL_MASTER_KEY must be 32 bytes: 64 hex characters or base64')
}
