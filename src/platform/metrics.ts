// Prometheus metrics at /metrics: request count and latency by route and status, and the time of
// each stage of a request by route (observability/stages.ts). Each process
// (and each app a test builds) has its own registry, shared by everything the process runs: in
// `rail serve` the API's /metrics also carries the workers' metrics.
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client'
import type { HttpServer } from './http.ts'
import { stageMetrics } from './observability/stages.ts'

const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** A registry with Node's process metrics (CPU, memory, event loop lag, handles). */
export function createMetricsRegistry(): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return registry
}

export function installMetrics(app: HttpServer, registry: Registry = createMetricsRegistry()): Registry {
  const requests = new Counter({
    name: 'rail_http_requests_total',
    help: 'HTTP requests by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'],
    registers: [registry],
  })
  const latency = new Histogram({
    name: 'rail_http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'],
    buckets: LATENCY_BUCKETS_S,
    registers: [registry],
  })
  const observeStages = stageMetrics(registry)
  app.addHook('onResponse', async (request, reply) => {
    // The route template, never the raw URL: label values must stay few.
    const route = request.routeOptions.url ?? 'unmatched'
    const labels = { method: request.method, route, status_code: String(reply.statusCode) }
    const durationMs = reply.elapsedTime
    requests.inc(labels)
    latency.observe(labels, durationMs / 1000)
    const stages = request.stages
    if (stages) {
      stages.finish(durationMs)
      observeStages(route, stages)
    }
  })
  registerMetricsRoute(app, registry)
  return registry
}

/** GET /metrics in Prometheus' text format: no credentials, never admitted or rate-limited, not in the API reference. */
export function registerMetricsRoute(app: HttpServer, registry: Registry): void {
  app.get(
    '/metrics',
    { config: { auth: 'none', admission: false, rateLimited: false }, schema: { hide: true } },
    async (_request, reply) => {
      void reply.header('Content-Type', registry.contentType)
      return registry.metrics()
    },
  )
}
