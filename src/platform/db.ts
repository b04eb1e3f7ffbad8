// PostgreSQL access: one pool per process, and one way to run a transaction.
import { createHash } from 'node:crypto'
import pg from 'pg'

export type Pool = pg.Pool
/** A connection inside a transaction: every write of one business operation goes through it. */
export type Tx = pg.PoolClient
/** Anything that can run a query: the pool (autocommit) or a transaction. */
export type Queryable = pg.Pool | pg.PoolClient

// BIGINT (int8) columns hold kobo. They are parsed to JavaScript numbers: amounts are bounded by
// 2^53 − 1 everywhere (docs/design.md §5), so a number is exact. A value outside that range is a bug and
// must fail loudly rather than silently lose precision.
pg.types.setTypeParser(pg.types.builtins.INT8, (text: string) => {
  const value = Number(text)
  if (!Number.isSafeInteger(value)) throw new Error(`int8 value ${text} exceeds the safe integer range`)
  return value
})

const CONNECTION_TIMEOUT_MS = 5_000
export const STATEMENT_TIMEOUT_MS = 30_000
const IDLE_TIMEOUT_MS = 30_000

/**
 * How a pool reaches PostgreSQL. `direct`: PostgreSQL itself, every connection a session of its own.
 * `pooler`: a pooler in transaction mode (PgBouncer's pool_mode = transaction), which hands each
 * transaction whichever server connection is free — so nothing may outlive one transaction: no
 * named statement (PgBouncer before 1.21 does not carry them), no startup parameter it does not
 * know (PgBouncer refuses statement_timeout; set it on the role instead, docs/operations.md).
 */
export type Route = 'direct' | 'pooler'

/** Where each pool goes, so that a pool opened beside another (the sandbox bank's) goes the same way. */
const routes = new WeakMap<Pool, { databaseUrl: string; route: Route }>()

export function createPool(databaseUrl: string, max: number, applicationName = 'rail', route: Route = 'direct'): Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    ...(route === 'direct' ? { statement_timeout: STATEMENT_TIMEOUT_MS } : {}),
    application_name: applicationName,
  })
  routes.set(pool, { databaseUrl, route })
  // A client that loses its connection emits 'error'; without a listener the process dies. The
  // query in flight fails on its own, and the pool replaces the client.
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    client.on('error', () => {})
    if (route === 'direct') prepareParameterizedStatements(client)
  })
  return pool
}

/** A second pool to where `pool` (made by createPool) goes, the same way: direct or through the pooler. */
export function createSiblingPool(pool: Pool, max: number, applicationName: string): Pool {
  const made = routes.get(pool)
  const databaseUrl =
    made?.databaseUrl ?? (pool as Pool & { options: { connectionString?: string } }).options.connectionString ?? ''
  return createPool(databaseUrl, max, applicationName, made?.route ?? 'direct')
}

/**
 * Every statement with parameters is prepared once per connection and reused. node-postgres sends
 * unnamed statements by default, so PostgreSQL parses and plans every call; on Rail's hot paths
 * (CTEs with sub-selects) planning costs as much as running, and preparing halved PostgreSQL CPU
 * per callback delivery (docs/performance.md). The name is derived from the text, so one text is
 * one statement; Rail's SQL texts are fixed (values are always parameters), so their number is
 * bounded. Statements without parameters (BEGIN, DDL, several statements in one text) go as they are.
 * Not through a transaction-mode pooler: a statement prepared on one server connection would be
 * looked for on another.
 */
function prepareParameterizedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (config: unknown, values?: unknown, callback?: unknown) => unknown
  const prepared = ((config: unknown, values?: unknown, callback?: unknown) => {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
      return query({ name: statementName(config), text: config, values }, callback)
    }
    return query(config, values, callback)
  }) as typeof client.query
  client.query = prepared
}

const statementNames = new Map<string, string>()

function statementName(text: string): string {
  let name = statementNames.get(text)
  if (name === undefined) {
    name = `rail_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`
    statementNames.set(text, name)
  }
  return name
}

/** Attempts of one transaction that keeps losing lock conflicts, before the error surfaces. */
const TRANSACTION_ATTEMPTS_MAX = 5
const LOCK_CONFLICT_SQLSTATES = new Set(['40001', '40P01']) // serialization_failure, deadlock_detected

/** A deadlock or serialization failure: the transaction was rolled back and may simply run again. */
export function isLockConflict(error: unknown): boolean {
  return LOCK_CONFLICT_SQLSTATES.has((error as { code?: string } | undefined)?.code ?? '')
}

/**
 * Runs `work` in one transaction: commit if it returns, roll back if it throws. A lock conflict
 * runs it again (a bounded number of times), so `work` must touch only the database.
 */
export async function withTransaction<T>(pool: Pool, work: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transactionOnce(pool, work)
    } catch (error) {
      if (!isLockConflict(error) || attempt >= TRANSACTION_ATTEMPTS_MAX) throw error
    }
  }
}

/** Runs `work` in one transaction, once: commit if it returns, roll back if it throws — a lock conflict included. */
export async function transactionOnce<T>(pool: Pool, work: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  try {
    return await transactionOn(client, 'BEGIN', work)
  } finally {
    client.release()
  }
}

/** `work` in a transaction begun by `begin` on a connection that is in none: committed if it returns, rolled back if it throws. */
async function transactionOn<T>(client: Tx, begin: string, work: (tx: Tx) => Promise<T>): Promise<T> {
  await client.query(begin)
  try {
    const result = await work(client)
    await client.query('COMMIT')
    return result
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  }
}

/**
 * A select list (for SELECT or RETURNING) naming each snake_case column of `columns` by its
 * camelCase field (`partner_id AS "partnerId"`), each qualified by `table` when given: a repo's
 * rows then come as its type, and its mapping is written once, in its list of columns.
 */
export function camelColumns(columns: string, table?: string): string {
  return columns
    .split(',')
    .map((column) => {
      const name = column.trim()
      const field = name.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase())
      const qualified = table === undefined ? name : `${table}.${name}`
      return field === name ? qualified : `${qualified} AS "${field}"`
    })
    .join(', ')
}

/**
 * A repo's readers of its rows, each mapped by `map` (the repo's snake_case → camelCase):
 * `one`, the first row a statement returns, undefined when none (absent, or a guard refused the
 * change); `all`, every row in the statement's order.
 */
export function rowReaders<R extends pg.QueryResultRow, T>(map: (row: R) => T) {
  return {
    one: async (db: Queryable, sql: string, params: unknown[] = []): Promise<T | undefined> => {
      const { rows } = await db.query<R>(sql, params)
      return rows[0] && map(rows[0])
    },
    all: async (db: Queryable, sql: string, params: unknown[] = []): Promise<T[]> =>
      (await db.query<R>(sql, params)).rows.map(map),
  }
}

/**
 * Runs reads that must agree with each other in one snapshot, as one statement's would: on a pool,
 * in a read-only REPEATABLE READ transaction of their own; on a connection, as they are (its
 * owner's transaction decides; read-pool.ts withReadSnapshot opens one on a replica connection).
 */
export async function readSnapshot<T>(db: Queryable, read: (reader: Queryable) => Promise<T>): Promise<T> {
  if (!(db instanceof pg.Pool)) return read(db)
  const client = await db.connect()
  try {
    return await snapshotOn(client, read)
  } finally {
    client.release()
  }
}

/** `read` in a read-only REPEATABLE READ transaction on a connection that is in no transaction. */
export function snapshotOn<T>(client: Tx, read: (reader: Queryable) => Promise<T>): Promise<T> {
  return transactionOn(client, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', read)
}

/**
 * SQLSTATEs of a database that is there but cannot serve now: too many connections, starting up
 * or shutting down, a statement cancelled by its timeout, the server crashed or restarting.
 */
const UNAVAILABLE_SQLSTATES = new Set(['53300', '57P01', '57P02', '57P03', '57014', '08000', '08003', '08006'])
const UNAVAILABLE_NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/**
 * True when the error is the database being busy or away, not a bug or a rule: the pool's wait for
 * a connection ran out, a connection broke, the server refused or cancelled. Such an error is
 * answered 503 with Retry-After, never 500 and never as a validation error.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const code = (error as { code?: string }).code ?? ''
  if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_NETWORK_CODES.has(code)) return true
  // node-postgres' own messages carry no code.
  return /timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|Cannot use a pool after calling end/i.test(
    error.message,
  )
}

/** A one-line reason for a connection failure, for start-up messages. */
export function describeConnectionError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code
    return code ? `${error.message} (${code})` : error.message || error.constructor.name
  }
  return String(error)
}
