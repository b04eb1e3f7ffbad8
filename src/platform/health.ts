// Liveness and readiness. /healthz: the process answers. /readyz: the database answers and every
// migration on disk has been applied, so a load balancer only routes to a usable instance.
import type { Pool } from './db.ts'
import { errorBody, RailError } from './errors.ts'
import type { HttpServer } from './http.ts'
import { migrationIdsOnDisk, migrationsAreCurrent } from './migrate.ts'

export function registerHealthRoutes(app: HttpServer, pool: Pool): void {
  const idsOnDisk = migrationIdsOnDisk()
  // Asked by load balancers: no credentials, no place to wait for, no rate limit, not in the document.
  const probe = { config: { auth: 'none', admission: false, rateLimited: false }, schema: { hide: true } } as const
  app.get('/healthz', probe, async () => ({ status: 'ok' }))
  app.get('/readyz', probe, async (_request, reply) => {
    let reason: string
    try {
      if (await migrationsAreCurrent(pool, idsOnDisk)) return { status: 'ready' }
      reason = 'migrations pending'
    } catch {
      reason = 'database unreachable'
    }
    return reply.code(503).send(errorBody(new RailError('service_unavailable', `Not ready: ${reason}`)))
  })
}
