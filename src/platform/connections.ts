// The connections a process opens, stated before it opens them, so that N API and M worker
// processes can be planned against PostgreSQL's max_connections (docs/operations.md).
import type { Pool } from './db.ts'
import { WORKER_HTTP_POOL_MAX } from './worker-http.ts'

/** The mounted sandbox bank's own pool: it must never wait behind Rail's requests, which wait on it. */
export const SANDBOX_BANK_POOL_MAX = 8
/**
 * A worker process's pool holds one connection per concurrent job, plus graphile-worker's own:
 * its LISTEN connection, and one for fetching and completing jobs. So a job never waits for a
 * connection held by another job.
 */
export const WORKER_POOL_OVERHEAD = 2
/**
 * The smallest API pool that can run: the credential cache's LISTEN holds one connection for good,
 * and `rail serve`'s first start holds one (a lock) while it writes on another. Below this an API
 * process would wait for a connection that never comes free. Beside a pooler those two go to the
 * session pool (SESSION_POOL_MAX); the same minimum is kept, so one setting means one thing.
 */
export const API_POOL_MIN = 3
/**
 * Beside a pooler in transaction mode (DATABASE_DIRECT_URL), a process's pool straight to
 * PostgreSQL for work that needs a session: the credential cache's LISTEN (held for good), and one
 * for start-up (the budget check; `rail serve`'s migrations and first-start lock). A worker's
 * queue (graphile-worker: its LISTEN, fetching and completing jobs) has WORKER_POOL_OVERHEAD more.
 */
export const SESSION_POOL_MAX = 2

export interface ConnectionBudget {
  /** The API's pool (DATABASE_POOL_MAX); its credential listener is one of them. */
  api: number
  sandboxBank: number
  /** WORKER_CONCURRENCY + WORKER_POOL_OVERHEAD. */
  workers: number
  /** A worker alone: the small pool of its endpoints (readyz, the scrape's gauges) and its start-up checks. */
  workerEndpoints: number
  /**
   * Connections to PostgreSQL itself, which count against its max_connections: every pool above,
   * or beside a pooler only `pooler.direct` (the pooler's own server connections are its pool size,
   * shared by every process, and counted once).
   */
  total: number
  /** Beside a pooler: the pools above go through it (`through` client connections), and `direct` go around it for session work. */
  pooler?: { through: number; direct: number }
}

/** `pooler`: DATABASE_URL is a pooler in transaction mode (DATABASE_DIRECT_URL is set). */
export function connectionBudget(
  roles: { api: boolean; worker: boolean; sandboxBank: boolean },
  sizes: { databasePoolMax: number; workerConcurrency: number },
  pooler = false,
): ConnectionBudget {
  const api = roles.api ? sizes.databasePoolMax : 0
  const sandboxBank = roles.api && roles.sandboxBank ? SANDBOX_BANK_POOL_MAX : 0
  // Beside a pooler the queue's own connections are direct ones, not the jobs' pool.
  const workers = roles.worker ? (pooler ? sizes.workerConcurrency : workerPoolMax(sizes.workerConcurrency)) : 0
  const workerEndpoints = roles.worker && !roles.api ? WORKER_HTTP_POOL_MAX : 0
  const pooled = api + sandboxBank + workers + workerEndpoints
  if (!pooler) return { api, sandboxBank, workers, workerEndpoints, total: pooled }
  const direct = SESSION_POOL_MAX + (roles.worker ? WORKER_POOL_OVERHEAD : 0)
  return { api, sandboxBank, workers, workerEndpoints, total: direct, pooler: { through: pooled, direct } }
}

export function workerPoolMax(workerConcurrency: number): number {
  return workerConcurrency + WORKER_POOL_OVERHEAD
}

export function describeBudget(budget: ConnectionBudget): string {
  const parts = [`API ${budget.api}`, `sandbox bank ${budget.sandboxBank}`, `workers ${budget.workers}`]
  if (budget.workerEndpoints > 0) parts.push(`worker endpoints ${budget.workerEndpoints}`)
  if (budget.pooler)
    return `${budget.pooler.direct} connections to PostgreSQL (session work, a worker's queue) and ${budget.pooler.through} to the pooler (${parts.join(', ')})`
  return `${budget.total} connections to PostgreSQL (${parts.join(', ')})`
}

export class ConnectionBudgetError extends Error {}

/**
 * Refuses, before any connection is opened, pools too small for the work the process must run.
 * A worker's pool is sized from WORKER_CONCURRENCY (workerPoolMax), so its jobs always fit.
 */
export function checkPoolSizes(roles: { api: boolean }, sizes: { databasePoolMax: number }): void {
  if (roles.api && sizes.databasePoolMax < API_POOL_MIN) {
    throw new ConnectionBudgetError(
      `DATABASE_POOL_MAX is ${sizes.databasePoolMax} but an API process needs at least ${API_POOL_MIN} connections (straight to PostgreSQL, the credential cache's LISTEN holds one for good and start-up holds one while writing on another; beside a pooler the same minimum applies)`,
    )
  }
}

/**
 * Refuses to start a process that could not have all its connections even on an idle server; a
 * process that fits now but not beside the others already connected only gets a warning back.
 */
export async function checkConnectionBudget(
  pool: Pool,
  budget: ConnectionBudget,
): Promise<{ maxConnections: number; inUse: number; warning?: string }> {
  const { rows } = await pool.query<{ max_connections: number; reserved: number; in_use: number }>(
    `SELECT current_setting('max_connections')::int AS max_connections,
            current_setting('superuser_reserved_connections')::int AS reserved,
            (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS in_use`,
  )
  const { max_connections: maxConnections, reserved, in_use: inUse } = rows[0]!
  const usable = maxConnections - reserved
  const describe = describeBudget(budget)
  if (budget.total > usable) {
    throw new ConnectionBudgetError(
      `this process needs ${describe} but the server allows ${usable} (max_connections ${maxConnections} less ${reserved} reserved); lower DATABASE_POOL_MAX or WORKER_CONCURRENCY, or raise max_connections`,
    )
  }
  const free = usable - inUse
  return {
    maxConnections,
    inUse,
    warning: budget.total > free ? `this process may open ${describe}; ${free} are free now` : undefined,
  }
}
