// A known path asked with a method it does not have answers 405 method_not_allowed with `Allow`
// (as HTTP requires of a 405), not 404: the caller learns that the path is right and which methods it
// takes, in the one error body (docs/errors.md).
import type { FastifyInstance, RouteOptions } from 'fastify'
import { RailError } from './errors.ts'

interface KnownPath {
  pattern: RegExp
  methods: Set<string>
}

const knownPaths = new WeakMap<object, Map<string, KnownPath>>()

/** Remembers every route's path and methods; call before any route is registered. */
export function trackRouteMethods(app: FastifyInstance): void {
  const paths = new Map<string, KnownPath>()
  knownPaths.set(app, paths)
  app.addHook('onRoute', (route: RouteOptions) => {
    const known = paths.get(route.url) ?? { pattern: patternOf(route.url), methods: new Set<string>() }
    for (const method of [route.method].flat()) known.methods.add(method.toUpperCase())
    // Fastify answers HEAD on every GET route (exposeHeadRoutes).
    if (known.methods.has('GET') && route.exposeHeadRoute !== false) known.methods.add('HEAD')
    paths.set(route.url, known)
  })
}

/** The methods a concrete path is served with (empty when no route has the path). */
export function methodsOf(app: FastifyInstance, path: string): string[] {
  const methods = new Set<string>()
  for (const known of knownPaths.get(app)?.values() ?? []) {
    if (known.pattern.test(path)) for (const method of known.methods) methods.add(method)
  }
  return [...methods].sort()
}

/** The refusal of a method the path does not have; `allowed` goes in the Allow header too. */
export function methodNotAllowed(method: string, path: string, allowed: readonly string[]): RailError {
  return new RailError('method_not_allowed', `${method} is not allowed on ${path}; it takes ${allowed.join(', ')}`, {
    allowedMethods: allowed,
  })
}

/** A route path (`/a/:id/b`, `/static/*`) as a regular expression over concrete paths. */
function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) =>
      segment === '*' ? '.*' : segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/')
  return new RegExp(`^${source}$`)
}
