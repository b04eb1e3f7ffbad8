// OpenTelemetry traces, exported only when OTEL_EXPORTER_OTLP_ENDPOINT is set. Off, nothing of
// the SDK is even loaded (it is imported on start, from otel.ts), and a traced piece of work is
// simply called. On, each background job and each HTTP request is a span, the request's stages
// (stages.ts) its child spans.
import type { HttpServer } from '../http.ts'
import type { ActiveTracing, SpanAttributes, TraceSpan } from './spans.ts'

export type { SpanAttributes, TraceSpan }

let active: ActiveTracing | undefined

export interface TracingSettings {
  /** service.name of the exported spans (OTEL_SERVICE_NAME, default `rail`). */
  serviceName: string
}

/**
 * Starts the OpenTelemetry SDK for this process (once): spans go to the OTLP/HTTP endpoint the
 * standard OTEL_EXPORTER_OTLP_* variables name. Answers the function that flushes and stops it.
 */
export async function startTracing(settings: TracingSettings): Promise<() => Promise<void>> {
  if (!active) {
    const { startOpenTelemetry } = await import('./otel.ts')
    active = startOpenTelemetry(settings.serviceName)
  }
  return async () => {
    const stopping = active
    active = undefined
    await stopping?.shutdown()
  }
}

/** Whether traces are exported (startTracing has run in this process). */
export function tracingOn(): boolean {
  return active !== undefined
}

/** Runs `work` in a span when tracing is on; otherwise just runs it. */
export function withSpan<T>(
  name: string,
  attributes: SpanAttributes,
  work: (span: TraceSpan | undefined) => Promise<T>,
): Promise<T> {
  return active ? active.inSpan(name, attributes, work) : work(undefined)
}

/** A span per request, named by method and route template; installs nothing when tracing is off. */
export function installRequestTracing(app: HttpServer): void {
  const tracing = active
  if (!tracing) return
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched'
    request.stages?.finish(reply.elapsedTime)
    // One clock for the request and its stages: the SDK's own (the time origin and performance.now()).
    const epochMs = (performanceMs: number) => performance.timeOrigin + performanceMs
    tracing.recordRequestSpan({
      name: `${request.method} ${route}`,
      headers: request.headers,
      startTimeMs: epochMs(performance.now() - reply.elapsedTime),
      stages: (request.stages?.intervals ?? []).map(({ stage, startMs, endMs }) => ({
        name: stage,
        startTimeMs: epochMs(startMs),
        endTimeMs: epochMs(endMs),
      })),
      statusCode: reply.statusCode,
      attributes: {
        'http.request.method': request.method,
        'http.route': route,
        'http.response.status_code': reply.statusCode,
        'rail.request_id': request.id,
      },
    })
  })
}
