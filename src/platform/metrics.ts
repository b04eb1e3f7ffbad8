// Prometheus metrics at /metrics: request count and latency by route and status. Each app
// instance has its own registry (tests run several apps in one process).
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client'
import type { HttpServer } from './http.ts'

const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export function installMetrics(app: HttpServer): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
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
  app.addHook('onResponse', async (request, reply) => {
    // The route template, never the raw URL: label values must stay few.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) }
    requests.inc(labels)
    latency.observe(labels, reply.elapsedTime / 1000)
  })
  app.get('/metrics', { config: { auth: 'none', admission: false, rateLimited: false }, schema: { hide: true } }, async (_request, reply) => {
    void reply.header('Content-Type', registry.contentType)
    return registry.metrics()
  })
  return registry
}
