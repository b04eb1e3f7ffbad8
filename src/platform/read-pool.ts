// Reads from a streaming replica (DATABASE_READ_URL), never staler than the caller may notice.
//
// Before a read, the primary's WAL position is taken (pg_current_wal_lsn(): no table is read), and
// the read goes to the replica only once the replica has replayed that far; otherwise, after a
// bounded wait, to the primary. Every commit acknowledged before the read began — the caller's own
// write on any API process included — is then visible to it: read-your-writes holds across
// processes without sticky sessions or a per-process memory of who wrote. A replica that is down,
// lagging or failing never fails a read: the read runs on the primary, and the metric
// rail_read_replica_reads_total says why (docs/decisions/0015-read-replica.md).
//
// Lists also need the horizon (platform/pagination.ts): it is the oldest transaction open on the
// primary, so it is read there, in the same statement as the WAL position and before it — every
// row below the horizon was committed before the position was read, so a replica that has
// replayed that far sees it.
//
// Only reads go through here: nothing that writes, locks or claims may, as the replica refuses
// writes and its rows may be a moment old.
import { Counter, type Registry } from 'prom-client'
import type { ReadReplicaConfig } from './config.ts'
import { createPool, readSnapshot, snapshotOn, type Pool, type Queryable, type Tx } from './db.ts'
import { RailError } from './errors.ts'
import { watchPool } from './observability/pools.ts'
import { HORIZON_SQL, listClockMargin, pageBefore, pageBelow, uuidv7Floor } from './pagination.ts'

/** Between checks of the replica's replay position while waiting. */
const REPLAY_POLL_MS = 2
/** A replica that does not answer a connection this soon is taken as away, and a read that waits this long for one of the pool's goes to the primary (the primary's pool waits longer). */
const REPLICA_CONNECT_TIMEOUT_MS = 1_000
/** After the replica could not be reached, reads go to the primary this long before it is tried again. */
const REPLICA_RETRY_AFTER_MS = 1_000

/**
 * Why a read was served where it was: `caught_up` on the replica; on the primary, what kept it off
 * the replica — behind after the wait, no connection, every replica connection busy for the whole
 * connection timeout, the read failed there, or the server is not a standby at all (promoted, or
 * the primary named by mistake).
 */
type ReadReason = 'caught_up' | 'lagging' | 'unavailable' | 'busy' | 'failed' | 'not_standby'

export interface ReadReplicaOptions {
  /** RAIL_READ_REPLICA_MAX_WAIT_MS: 0 reads on the replica only when it has already caught up. */
  maxWaitMs: number
  /** Counts each read by where it was served and why (rail_read_replica_reads_total). */
  reads?: Counter<'served_by' | 'reason'>
}

interface ReadReplica extends ReadReplicaOptions {
  pool: Pool
  position: PrimaryPosition
  /** Until when (performance.now()) the replica is left alone after it could not be reached. */
  awayUntilMs: number
}

/** The replica of each primary pool: reads start from the pool they would otherwise use. */
const replicas = new WeakMap<Queryable, ReadReplica>()

/**
 * An API process's replica pool (DATABASE_READ_URL), attached to its primary pool, with its
 * counter and its pool's gauges on `registry`; `close` ends the pool. No connection is made here:
 * a replica that is down at start is only a replica reads do not use until it is back.
 */
export function openReadReplica(
  primary: Pool,
  settings: ReadReplicaConfig,
  registry: Registry,
): { close(): Promise<void> } {
  const replica = createPool(settings.url, settings.poolMax, 'rail-read')
  replica.options.connectionTimeoutMillis = REPLICA_CONNECT_TIMEOUT_MS
  const reads = new Counter({
    name: 'rail_read_replica_reads_total',
    help: 'Reads that could use the read replica (lists, statements, balances, events), by where they were served and why: caught_up (replica); lagging, unavailable, busy, failed or not_standby (primary)',
    labelNames: ['served_by', 'reason'],
    registers: [registry],
  })
  watchPool(registry, 'rail-read', replica)
  attachReadReplica(primary, replica, { maxWaitMs: settings.maxWaitMs, reads })
  return { close: () => replica.end() }
}

/** From now on, reads started on `primary` (readPage, withReadConnection) may be served by `replica`. */
export function attachReadReplica(primary: Pool, replica: Pool, options: ReadReplicaOptions): void {
  replicas.set(primary, { ...options, pool: replica, position: new PrimaryPosition(primary), awayUntilMs: 0 })
}

/**
 * Runs a read on the replica when it is current enough, else on `db` itself. `db` is the pool the
 * read would use without a replica; a transaction, or a pool without one, runs the read as it is.
 * `read` may run twice (the replica failed midway): it must only read.
 */
export async function withReadConnection<T>(db: Queryable, read: (reader: Queryable) => Promise<T>): Promise<T> {
  const replica = replicas.get(db)
  if (replica === undefined) return read(db)
  if (replicaAway(replica)) return servedByPrimary(replica, 'unavailable', () => read(db))
  const position = await replica.position.take()
  return readCurrent(replica, db, position.lsn, read)
}

/**
 * withReadConnection for reads that must agree in one snapshot (readSnapshot): a replica
 * connection, which this module holds in no transaction, reads in a read-only REPEATABLE READ
 * transaction; `db` reads as readSnapshot has it.
 */
export async function withReadSnapshot<T>(db: Queryable, read: (reader: Queryable) => Promise<T>): Promise<T> {
  return withReadConnection(db, (reader) => (reader === db ? readSnapshot(db, read) : snapshotOn(reader as Tx, read)))
}

/**
 * A list page's read: `read` gets where to read from and the id its rows must be below (the cursor,
 * or the horizon when that is lower — pagination.ts). On the replica when it is current enough.
 */
export async function readPage<T>(
  db: Queryable,
  cursor: string | undefined,
  read: (reader: Queryable, beforeId: string) => Promise<T>,
): Promise<T> {
  const replica = replicas.get(db)
  if (replica === undefined || replicaAway(replica)) {
    const beforeId = await pageBefore(db, cursor)
    return replica === undefined
      ? read(db, beforeId)
      : servedByPrimary(replica, 'unavailable', () => read(db, beforeId))
  }
  const position = await replica.position.take()
  const beforeId = pageBelow(cursor, position.horizonId)
  return readCurrent(replica, db, position.lsn, (reader) => read(reader, beforeId))
}

function replicaAway(replica: ReadReplica): boolean {
  return performance.now() < replica.awayUntilMs
}

async function servedByPrimary<T>(
  replica: ReadReplica,
  reason: Exclude<ReadReason, 'caught_up'>,
  read: () => Promise<T>,
): Promise<T> {
  replica.reads?.inc({ served_by: 'primary', reason })
  return read()
}

/** Reads on the replica once it has replayed up to `lsn`; on the primary when it does not within the wait, or fails. */
async function readCurrent<T>(
  replica: ReadReplica,
  primary: Queryable,
  lsn: string,
  read: (reader: Queryable) => Promise<T>,
): Promise<T> {
  // Every replica connection in use: a wait that runs out is the pool's size, not the replica away.
  const poolFull = replica.pool.totalCount >= (replica.pool.options.max ?? 0) && replica.pool.idleCount === 0
  let client
  try {
    client = await replica.pool.connect()
  } catch {
    if (!poolFull) replica.awayUntilMs = performance.now() + REPLICA_RETRY_AFTER_MS
    return servedByPrimary(replica, poolFull ? 'busy' : 'unavailable', () => read(primary))
  }
  const outcome = await readOnReplica(client, lsn, replica.maxWaitMs, read)
  // A connection that failed is closed rather than handed to the next read.
  client.release(outcome.servedBy === 'primary' && outcome.reason === 'failed')
  if (outcome.servedBy === 'primary') return servedByPrimary(replica, outcome.reason, () => read(primary))
  replica.reads?.inc({ served_by: 'replica', reason: 'caught_up' })
  if ('error' in outcome) throw outcome.error
  return outcome.value
}

type ReplicaOutcome<T> =
  | { servedBy: 'replica'; value: T }
  | { servedBy: 'replica'; error: RailError }
  | { servedBy: 'primary'; reason: 'lagging' | 'failed' | 'not_standby' }

async function readOnReplica<T>(
  client: Queryable,
  lsn: string,
  maxWaitMs: number,
  read: (reader: Queryable) => Promise<T>,
): Promise<ReplicaOutcome<T>> {
  try {
    const replay = await replayed(client, lsn, maxWaitMs)
    if (replay !== 'caught_up') return { servedBy: 'primary', reason: replay }
    return { servedBy: 'replica', value: await read(client) }
  } catch (error) {
    // The read's own answer (not found, a bad cursor) stands. Anything else — a broken
    // connection, a query cancelled by a conflict with recovery, a bug — is read again on the
    // primary, which raises it again if it is the read's own.
    return error instanceof RailError ? { servedBy: 'replica', error } : { servedBy: 'primary', reason: 'failed' }
  }
}

/**
 * The replay position each replica connection last saw. Replay only moves forward on a server, and
 * a connection stays on one server (a restart ends it), so a read whose position is at or below
 * it needs no check: on a quiet primary most reads skip that round trip.
 */
const replayedTo = new WeakMap<Queryable, bigint>()

/**
 * Whether the replica has replayed the WAL up to `lsn`, checking again every few milliseconds for
 * at most `maxWaitMs`. A statement of its own, before the read's: replay only moves forward, so the
 * read's snapshot, taken after, sees at least as much.
 */
async function replayed(
  client: Queryable,
  lsn: string,
  maxWaitMs: number,
): Promise<'caught_up' | 'lagging' | 'not_standby'> {
  const needed = lsnValue(lsn)
  if ((replayedTo.get(client) ?? -1n) >= needed) return 'caught_up'
  const deadlineMs = performance.now() + maxWaitMs
  for (;;) {
    const { rows } = await client.query<{ replay_lsn: string | null }>(
      'SELECT pg_last_wal_replay_lsn()::text AS replay_lsn',
    )
    // NULL: the server is not in recovery (a promoted replica, or the primary named by mistake);
    // its rows are not known to follow the primary's, so it is not read from.
    const replay = rows[0]?.replay_lsn
    if (replay === null || replay === undefined) return 'not_standby'
    replayedTo.set(client, lsnValue(replay))
    if (lsnValue(replay) >= needed) return 'caught_up'
    if (performance.now() + REPLAY_POLL_MS > deadlineMs) return 'lagging'
    await new Promise((resolve) => setTimeout(resolve, REPLAY_POLL_MS))
  }
}

/** A WAL position as PostgreSQL prints it (`16/B374D848`: the high and low 32 bits in hex), as a number. */
function lsnValue(text: string): bigint {
  const [high, low] = text.split('/')
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`)
}

interface Position {
  /** The primary's WAL write position when it was read. */
  lsn: string
  /** The lists' horizon on the primary at that moment. */
  horizonId: string
}

/**
 * The primary's position, read for many concurrent reads at once: one statement per round trip
 * per process, however many reads wait. A read may only use a position read after it began (a
 * statement already in flight may predate the write its caller just saw acknowledged), so a read
 * arriving while one is in flight waits for the next, which is sent when that one answers.
 */
class PrimaryPosition {
  readonly #primary: Pool
  #inFlight: Promise<Position> | undefined
  #next: Promise<Position> | undefined

  constructor(primary: Pool) {
    this.#primary = primary
  }

  take(): Promise<Position> {
    if (this.#inFlight === undefined) {
      const sent = this.#read()
      this.#inFlight = sent
      const done = () => {
        if (this.#inFlight === sent) this.#inFlight = undefined
      }
      sent.then(done, done)
      return sent
    }
    this.#next ??= this.#inFlight.then(
      () => this.#takeNext(),
      () => this.#takeNext(),
    )
    return this.#next
  }

  /**
   * Its waiters began before now, so a statement sent now serves them. Not one already in flight:
   * a read may have joined them after that one was sent.
   */
  #takeNext(): Promise<Position> {
    this.#next = undefined
    return this.take()
  }

  /**
   * The horizon is aggregated in the inner query, the WAL position read after it in the outer: a
   * transaction that commits in between is then below the position, whether or not the horizon
   * counted it as open. pg_current_wal_lsn() is the position written, which covers every commit
   * acknowledged so far (a commit is flushed before it is acknowledged).
   */
  async #read(): Promise<Position> {
    const { rows } = await this.#primary.query<{ horizon_ms: string; lsn: string }>(
      `SELECT horizon.horizon_ms, pg_current_wal_lsn()::text AS lsn FROM (${HORIZON_SQL}) AS horizon`,
      [listClockMargin()],
    )
    return { lsn: rows[0]!.lsn, horizonId: uuidv7Floor(Number(rows[0]!.horizon_ms)) }
  }
}
