// A small Rail API client: signs each request and returns status, headers and parsed body.
import { signRequest } from './signing.ts'

export { canonicalRequest, computeSignature, signRequest, SIGNATURE_VERSION, TIMESTAMP_TOLERANCE_S } from './signing.ts'
export { railSignature, verifyRailSignature, RAIL_SIGNATURE_PREFIX } from './webhooks.ts'

export interface RailCredentials {
  keyId: string
  signingSecret: string
}

export interface RailResponse<T = unknown> {
  status: number
  headers: Headers
  body: T
}

export interface RequestOptions {
  /** Extra headers; they override the defaults. */
  headers?: Record<string, string>
  /** Send this exact text as the body instead of JSON-encoding `body`. */
  rawBody?: string
  timestampS?: number
  /** Give up on the answer after this long (the client's default when absent; none by default). */
  timeoutMs?: number
}

export interface RailClientOptions {
  /**
   * Every request gives up on its answer after this long unless it says otherwise. A caller needs
   * one: a connection can be accepted by a process that dies before answering, and nothing else
   * ends the wait.
   */
  timeoutMs?: number
}

export class RailClient {
  readonly baseUrl: string
  readonly credentials: RailCredentials
  readonly #timeoutMs: number | undefined

  constructor(baseUrl: string, credentials: RailCredentials, options: RailClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/$/, '')
    this.credentials = credentials
    this.#timeoutMs = options.timeoutMs
  }

  async request<T = unknown>(
    method: string,
    pathWithQuery: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<RailResponse<T>> {
    const text = options.rawBody ?? (body === undefined ? '' : JSON.stringify(body))
    const headers: Record<string, string> = {
      ...signRequest({ ...this.credentials, method, pathWithQuery, body: text, timestampS: options.timestampS }),
      ...(text === '' ? {} : { 'Content-Type': 'application/json' }),
      ...options.headers,
    }
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs
    const signal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs)
    const response = await fetch(`${this.baseUrl}${pathWithQuery}`, {
      method,
      headers,
      body: text === '' ? undefined : text,
      signal,
    })
    const responseText = await response.text()
    return { status: response.status, headers: response.headers, body: parseBody(responseText) as T }
  }

  get<T = unknown>(pathWithQuery: string, options?: RequestOptions): Promise<RailResponse<T>> {
    return this.request<T>('GET', pathWithQuery, undefined, options)
  }

  post<T = unknown>(pathWithQuery: string, body?: unknown, options?: RequestOptions): Promise<RailResponse<T>> {
    return this.request<T>('POST', pathWithQuery, body, options)
  }

  patch<T = unknown>(pathWithQuery: string, body?: unknown, options?: RequestOptions): Promise<RailResponse<T>> {
    return this.request<T>('PATCH', pathWithQuery, body, options)
  }
}

function parseBody(text: string): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
