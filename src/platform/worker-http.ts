// The worker process's own HTTP endpoints (`rail worker`, WORKER_HTTP_PORT): /healthz (the process
// answers), /readyz (the database answers and every migration is applied; 503 otherwise) and
// /metrics (its jobs, deliveries, pools and the scrape-time database gauges). Nothing else is
// served there: the API runs elsewhere.
import type { Registry } from 'prom-client'
import type { Pool } from './db.ts'
import { registerHealthRoutes } from './health.ts'
import { createHttpServer, type HttpServer } from './http.ts'
import { registerMetricsRoute } from './metrics.ts'
import { registerDatabaseGauges } from './observability/database-gauges.ts'
import { watchPool } from './observability/pools.ts'

/** Connections of a worker process's own pool, which only its endpoints use: a readyz and a scrape at once. */
export const WORKER_HTTP_POOL_MAX = 2

export interface WorkerHttpOptions {
  /** Answers /readyz and the database gauges: the process's own pool, not the jobs' (a scrape never waits behind jobs). */
  pool: Pool
  /** The registry the workers count in. */
  registry: Registry
  host: string
  port: number
  /** The scrape-time queries' bound (tests shorten it). */
  queryTimeoutMs?: number
  /** The background tasks the workers run: each has a job series, at 0 when it has no job. */
  tasks?: readonly string[]
}

export async function startWorkerHttpServer(options: WorkerHttpOptions): Promise<HttpServer> {
  const app = createHttpServer(false)
  registerHealthRoutes(app, options.pool)
  registerDatabaseGauges(options.registry, options.pool, { tasks: options.tasks, timeoutMs: options.queryTimeoutMs })
  watchPool(options.registry, 'rail', options.pool)
  registerMetricsRoute(app, options.registry)
  try {
    await app.listen({ host: options.host, port: options.port })
  } catch (error) {
    await app.close()
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(
        `WORKER_HTTP_PORT ${options.port} on ${options.host} is in use (set WORKER_HTTP_PORT to another port, or 0 to turn the worker's endpoints off)`,
      )
    }
    throw error
  }
  return app
}

/** The address the server listens on, for messages and tests. */
export function workerHttpUrl(app: HttpServer): string {
  const address = app.server.address()
  if (typeof address !== 'object' || !address) return ''
  const host =
    address.family === 'IPv6' ? `[${address.address}]` : address.address === '0.0.0.0' ? '127.0.0.1' : address.address
  return `http://${host}:${address.port}`
}
