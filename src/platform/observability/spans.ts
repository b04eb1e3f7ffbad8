// What tracing.ts asks of the OpenTelemetry SDK (otel.ts), so that nothing of the SDK is loaded while traces are off.

export type SpanAttributes = Record<string, string | number | boolean>

/** A stage of a request (observability/stages.ts) as a child span: its name and its times in milliseconds since the epoch. */
export interface StageSpan {
  name: string
  startTimeMs: number
  endTimeMs: number
}

/** A span of work in progress: attributes learned along the way, then how it ended. */
export interface TraceSpan {
  setAttributes(attributes: SpanAttributes): void
  fail(error: unknown): void
}

/** What otel.ts provides once the SDK is started. */
export interface ActiveTracing {
  /** Runs `work` inside a new span (a child of the span running now, if any), ended when `work` settles. */
  inSpan<T>(name: string, attributes: SpanAttributes, work: (span: TraceSpan) => Promise<T>): Promise<T>
  /**
   * A server span for one HTTP request once answered, from its start to now, continuing the
   * caller's trace (`traceparent`) when it sent one. Recorded at the end so that a request refused
   * by any hook (admission, credentials) has its span too. Its stages are its child spans.
   */
  recordRequestSpan(request: {
    name: string
    headers: Record<string, string | string[] | undefined>
    startTimeMs: number
    statusCode: number
    attributes: SpanAttributes
    stages: readonly StageSpan[]
  }): void
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>
}
