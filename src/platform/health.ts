// Liveness and readiness. /healthz: the process answers. /readyz: the database answers and every
// migration on disk has been applied, so a load balancer only routes to a usable instance.
import type { Pool } from './db.ts'
import { errorBody, RailError } from './errors.ts'
import type { HttpServer } from './http.ts'
import { migrationIdsOnDisk, migrationsAreCurrent } from './migrate.ts'

export function registerHealthRoutes(app: HttpServer, pool: Pool): void {
  const idsOnDisk = migrationIdsOnDisk()
  app.get(
    '/healthz',
    { config: { auth: 'none', admission: false, rateLimited: false }, schema: { hide: true } },
    async () => ({ status: 'ok' }),
  )
  app.get(
    '/readyz',
    { config: { auth: 'none', admission: false, rateLimited: false }, schema: { hide: true } },
    async (_request, reply) => {
      let reason: string
      try {
        if (await migrationsAreCurrent(pool, idsOnDisk)) return { status: 'ready' }
        reason = 'migrations pending'
      } catch {
        reason = 'database unreachable'
      }
      return reply.code(503).send(errorBody(new RailError('service_unavailable', `Not ready: ${reason}`)))
    },
  )
}
