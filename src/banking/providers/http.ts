// One HTTP call to a provider, the way every adapter makes it: undici with explicit timeouts and no
// redirects, an answer read up to a size, and a record in provider_calls of what was asked and what
// came back (never a header, a body or a secret) committed before the answer is acted on. A call
// made for a request is its bank_call stage (src/platform/observability/stages.ts).
import { randomUUID } from 'node:crypto'
import { request as httpRequest } from 'undici'
import type { Coalescer } from '../../platform/coalescer.ts'
import type { Pool } from '../../platform/db.ts'
import { timeStage } from '../../platform/observability/stages.ts'
import { cleanText } from './clean.ts'
import { insertCalls, type NewProviderCall } from './repo.ts'
import type { ProviderOutcome } from './types.ts'

/** How long Rail waits for a provider's headers and body; past that the answer is unknown. */
export const PROVIDER_TIMEOUT_MS_DEFAULT = 10_000
/** A provider's answer bigger than this is not an answer Rail reads. */
const RESPONSE_BYTES_MAX = 256 * 1024
const ERROR_CHARS_MAX = 500

/**
 * What came back: a readable JSON body with its status (any status under 500), or nothing Rail can
 * read — no answer, a reset, a 5xx, a body that is not JSON — which is never a provider's decision.
 */
export type HttpAnswer =
  | { ok: true; httpStatus: number; body: Record<string, unknown> }
  | { ok: false; httpStatus: number | null; error: string }

export interface ProviderHttpOptions {
  /** The provider profile's name, recorded with each call. */
  provider: string
  pool: Pool
  /** Coalesces concurrent call records into shared transactions (the registry's); without it, one INSERT each. */
  recorder?: Coalescer<NewProviderCall, null>
  timeoutMs?: number
  /** Rail's request id, sent as X-Request-Id where the provider accepts it and recorded with each call. */
  requestId?: string
}

export interface ProviderCallSpec {
  /** What Rail asked, e.g. `payout`, `requery`: recorded. */
  operation: string
  /** The reference the call is about (Rail's), recorded so that a payment's calls can be listed. */
  reference: string
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  url: string
  headers: Record<string, string>
  body?: string
  /** How the answer reads as an outcome, and the provider's own code of it: what the record says. */
  classify: (answer: HttpAnswer) => { outcome: ProviderOutcome; responseCode: string | null }
}

export class ProviderHttp {
  readonly #options: ProviderHttpOptions

  constructor(options: ProviderHttpOptions) {
    this.#options = options
  }

  get requestId(): string | undefined {
    return this.#options.requestId
  }

  async call(spec: ProviderCallSpec): Promise<HttpAnswer> {
    const timeoutMs = this.#options.timeoutMs ?? PROVIDER_TIMEOUT_MS_DEFAULT
    const started = performance.now()
    const answer = await timeStage('bank_call', () => ask(spec, timeoutMs))
    const latencyMs = Math.round(performance.now() - started)
    const { outcome, responseCode } = spec.classify(answer)
    await this.#record({
      id: randomUUID(),
      provider: this.#options.provider,
      operation: spec.operation,
      reference: spec.reference.slice(0, 128),
      requestId: this.#options.requestId ?? null,
      outcome,
      httpStatus: answer.httpStatus,
      responseCode: responseCode === null ? null : cleanText(responseCode, 16) || null,
      error: answer.ok ? null : cleanText(answer.error, ERROR_CHARS_MAX),
      latencyMs,
    })
    return answer
  }

  async #record(call: NewProviderCall): Promise<void> {
    if (this.#options.recorder) await this.#options.recorder.run(call)
    else await insertCalls(this.#options.pool, [call])
  }
}

/** The call itself: the provider's answer, or why there is none. */
async function ask(spec: ProviderCallSpec, timeoutMs: number): Promise<HttpAnswer> {
  try {
    const response = await httpRequest(spec.url, {
      method: spec.method,
      headers: spec.headers,
      body: spec.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs, // undici's request follows no redirect
    })
    return await readAnswer(response.statusCode, response.body)
  } catch (error) {
    return { ok: false, httpStatus: null, error: describeError(error) }
  }
}

async function readAnswer(httpStatus: number, body: AsyncIterable<Buffer>): Promise<HttpAnswer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.length
    if (size > RESPONSE_BYTES_MAX) return { ok: false, httpStatus, error: `answer over ${RESPONSE_BYTES_MAX} bytes` }
    chunks.push(chunk)
  }
  if (httpStatus >= 500) return { ok: false, httpStatus, error: `provider answered ${httpStatus}` }
  try {
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return { ok: false, httpStatus, error: 'answer is not an object' }
    return { ok: true, httpStatus, body: parsed as Record<string, unknown> }
  } catch {
    return { ok: false, httpStatus, error: 'answer is not JSON' }
  }
}

function describeError(error: unknown): string {
  const code = (error as { code?: string }).code
  const message = error instanceof Error ? error.message : String(error)
  return code ? `${code}: ${message}` : message
}
