// Connection pool usage, read from node-postgres' own counters when Prometheus scrapes: connections
// open and idle, and callers waiting for one; and how long each checkout waited (a wait that
// lasts is a pool too small for its load). One set per registry, labelled by the pool's name. A
// request's own waits are its pool_wait stage (stages.ts); a coalesced batch's are no request's.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import type pg from 'pg'
import type { Pool } from '../db.ts'
import { currentStages, type RequestStages } from './stages.ts'

const WAIT_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

interface PoolMeters {
  pools: Map<string, Pool>
  wait: Histogram<'pool'>
  failures: Counter<'pool'>
}

const watched = new WeakMap<Registry, PoolMeters>()
/** A pool's checkouts are timed once, whichever registries report it. */
const timed = new WeakSet<Pool>()

/** Reports `pool` under `name` (its application name: rail, rail-worker, rail-sandbox-bank) on `registry`'s /metrics. */
export function watchPool(registry: Registry, name: string, pool: Pool): void {
  let meters = watched.get(registry)
  if (!meters) {
    meters = registerPoolMeters(registry)
    watched.set(registry, meters)
  }
  meters.pools.set(name, pool)
  if (!timed.has(pool)) {
    timed.add(pool)
    timeCheckouts(pool, meters, name)
  }
}

function registerPoolMeters(registry: Registry): PoolMeters {
  const registers = [registry]
  const pools = new Map<string, Pool>()
  const gauge = (metric: string, help: string, read: (pool: Pool) => number) =>
    new Gauge({
      name: metric,
      help,
      labelNames: ['pool'],
      registers,
      collect() {
        this.reset()
        for (const [name, pool] of pools) this.set({ pool: name }, read(pool))
      },
    })
  gauge('rail_db_pool_connections', 'Connections the pool holds open (in use or idle)', (pool) => pool.totalCount)
  gauge('rail_db_pool_idle_connections', 'Connections open and idle', (pool) => pool.idleCount)
  gauge(
    'rail_db_pool_waiting_clients',
    'Callers waiting for a connection because all are in use',
    (pool) => pool.waitingCount,
  )
  gauge('rail_db_pool_max_connections', 'The most connections the pool may open', (pool) => pool.options.max ?? 10)
  return {
    pools,
    wait: new Histogram({
      name: 'rail_db_pool_wait_seconds',
      help: 'How long a checkout waited for its connection (an idle one, a new one, or one given back)',
      labelNames: ['pool'],
      buckets: WAIT_BUCKETS_S,
      registers,
    }),
    failures: new Counter({
      name: 'rail_db_pool_checkout_failures_total',
      help: 'Checkouts that got no connection (the wait timed out, or the server refused)',
      labelNames: ['pool'],
      registers,
    }),
  }
}

type ConnectCallback = (
  error: Error | undefined,
  client: pg.PoolClient | undefined,
  release: (release?: unknown) => void,
) => void

/**
 * Times every checkout of the pool, pool.query's included (node-postgres' pool.query checks out
 * through pool.connect with a callback): the pool's connect, wrapped, as it is called both ways.
 */
function timeCheckouts(pool: Pool, meters: PoolMeters, name: string): void {
  const connect = pool.connect.bind(pool) as (callback?: ConnectCallback) => Promise<pg.PoolClient> | undefined
  const observe = (startedMs: number, failed: boolean, stages: RequestStages | undefined, counted: boolean) => {
    const endedMs = performance.now()
    meters.wait.observe({ pool: name }, (endedMs - startedMs) / 1000)
    if (failed) meters.failures.inc({ pool: name })
    stages?.close('pool_wait', counted, startedMs, endedMs)
  }
  const timedConnect = (callback?: ConnectCallback) => {
    const startedMs = performance.now()
    const stages = currentStages()
    const counted = stages?.open() ?? false
    if (callback) {
      return connect((error, client, release) => {
        observe(startedMs, error !== undefined && error !== null, stages, counted)
        callback(error, client, release)
      })
    }
    return connect()!.then(
      (client) => {
        observe(startedMs, false, stages, counted)
        return client
      },
      (error: unknown) => {
        observe(startedMs, true, stages, counted)
        throw error
      },
    )
  }
  pool.connect = timedConnect as Pool['connect']
}
