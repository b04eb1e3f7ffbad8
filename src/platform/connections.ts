// The connections a process opens, stated before it opens them, so that N API and M worker
// processes can be planned against PostgreSQL's max_connections (docs/operations.md).
import type { Pool } from './db.ts'

/** The mounted sandbox bank's own pool: it must never wait behind Rail's requests, which wait on it. */
export const SANDBOX_BANK_POOL_MAX = 8
/**
 * A worker process's pool holds one connection per concurrent job, plus graphile-worker's own:
 * its LISTEN connection, and one for fetching and completing jobs. So a job never waits for a
 * connection held by another job.
 */
export const WORKER_POOL_OVERHEAD = 2

export interface ConnectionBudget {
  /** The API's pool (DATABASE_POOL_MAX); its credential listener is one of them. */
  api: number
  sandboxBank: number
  /** WORKER_CONCURRENCY + WORKER_POOL_OVERHEAD. */
  workers: number
  total: number
}

export function connectionBudget(roles: { api: boolean; worker: boolean; sandboxBank: boolean }, sizes: { databasePoolMax: number; workerConcurrency: number }): ConnectionBudget {
  const api = roles.api ? sizes.databasePoolMax : 0
  const sandboxBank = roles.api && roles.sandboxBank ? SANDBOX_BANK_POOL_MAX : 0
  const workers = roles.worker ? workerPoolMax(sizes.workerConcurrency) : 0
  return { api, sandboxBank, workers, total: api + sandboxBank + workers }
}

export function workerPoolMax(workerConcurrency: number): number {
  return workerConcurrency + WORKER_POOL_OVERHEAD
}

export class ConnectionBudgetError extends Error {}

/**
 * Refuses to start a process that could not have all its connections even on an idle server; a
 * process that fits now but not beside the others already connected only gets a warning back.
 */
export async function checkConnectionBudget(pool: Pool, budget: ConnectionBudget): Promise<{ maxConnections: number; inUse: number; warning?: string }> {
  const { rows } = await pool.query<{ max_connections: number; reserved: number; in_use: number }>(
    `SELECT current_setting('max_connections')::int AS max_connections,
            current_setting('superuser_reserved_connections')::int AS reserved,
            (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'client backend') AS in_use`,
  )
  const { max_connections: maxConnections, reserved, in_use: inUse } = rows[0]!
  const usable = maxConnections - reserved
  const describe = `${budget.total} connections (API ${budget.api}, sandbox bank ${budget.sandboxBank}, workers ${budget.workers})`
  if (budget.total > usable) {
    throw new ConnectionBudgetError(`this process needs ${describe} but the server allows ${usable} (max_connections ${maxConnections} less ${reserved} reserved); lower DATABASE_POOL_MAX or WORKER_CONCURRENCY, or raise max_connections`)
  }
  const free = usable - inUse
  return { maxConnections, inUse, warning: budget.total > free ? `this process may open ${describe}; ${free} are free now` : undefined }
}
