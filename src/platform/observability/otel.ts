// The OpenTelemetry SDK, loaded by tracing.ts only when traces are exported: the standard Node SDK
// with the OTLP/HTTP trace exporter (endpoint, headers and protocol from the OTEL_EXPORTER_OTLP_*
// variables). Metrics stay with Prometheus and logs with pino, so the SDK exports neither.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { NodeSDK } from '@opentelemetry/sdk-node'
import type { ActiveTracing, TraceSpan } from './spans.ts'

export function startOpenTelemetry(serviceName: string): ActiveTracing {
  const sdk = new NodeSDK({
    serviceName,
    traceExporter: new OTLPTraceExporter(),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  })
  sdk.start()
  const tracer = trace.getTracer('rail')
  return {
    inSpan: (name, attributes, work) =>
      tracer.startActiveSpan(name, { attributes }, async (span) => {
        try {
          return await work(traceSpan(span))
        } catch (error) {
          traceSpan(span).fail(error)
          throw error
        } finally {
          span.end()
        }
      }),
    recordRequestSpan({ name, headers, startTimeMs, statusCode, attributes, stages }) {
      const parent = propagation.extract(context.active(), headers)
      const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes, startTime: startTimeMs }, parent)
      if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
      const inRequest = trace.setSpan(parent, span)
      for (const stage of stages)
        tracer
          .startSpan(stage.name, { kind: SpanKind.INTERNAL, startTime: stage.startTimeMs }, inRequest)
          .end(stage.endTimeMs)
      span.end()
    },
    shutdown: () => sdk.shutdown(),
  }
}

function traceSpan(span: Span): TraceSpan {
  return {
    setAttributes: (attributes) => void span.setAttributes(attributes),
    fail(error) {
      span.recordException(error instanceof Error ? error : String(error))
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
    },
  }
}
