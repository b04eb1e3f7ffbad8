// The validating proxy: put between a client and a server, it forwards every exchange unchanged
// and checks it against an OpenAPI 3 document — the request as the client sent it, the answer as
// the server gave it — recording every violation and every request whose path matches no
// operation. A client's adapter and a server's emulation of the same API are checked in one pass.
import type { Violation } from './exchange.ts'
import { startForwardingProxy, type ForwardedExchange } from './forward.ts'
import { isObject } from './schema.ts'
import { OpenApiValidator } from './validator.ts'

type Json = Record<string, unknown>

export interface UnmatchedRequest {
  method: string
  path: string
  reason: string
}

/** One exchange, summed up: what was asked, which operation it was, what came back, how many violations. */
export interface ExchangeRecord {
  method: string
  path: string
  query: string
  operation: string | null
  /** The answer's status; null when none came. */
  status: number | null
  /** Whether the answer's body was checked (false when the description gives that status no content). */
  responseBodyChecked: boolean
  violations: number
  error?: string
}

export interface ValidatingProxyOptions {
  /** The OpenAPI 3 document, parsed. */
  document: Json
  /** The API's root the proxy forwards to, e.g. http://127.0.0.1:8080/sandbox-paystack. */
  targetBaseUrl: string | (() => string)
  /**
   * The prefix of request paths under which the document's paths are (as clients send them to
   * the proxy): the path of the document's first server unless given (often '').
   */
  basePath?: string
  /**
   * Requests whose path is not under `basePath` are forwarded without a check (a server that
   * serves other APIs beside the described one); by default they are recorded as unmatched.
   */
  forwardOutsideBasePath?: boolean
  /** Sees every exchange, checked or not (e.g. to capture what a server sends elsewhere through the same proxy). */
  observe?: (exchange: ForwardedExchange) => void
  timeoutMs?: number
}

export interface ValidatingProxy {
  /** Where clients are pointed instead of the API's root. */
  url: string
  readonly violations: Violation[]
  readonly unmatched: UnmatchedRequest[]
  readonly exchanges: ExchangeRecord[]
  readonly validator: OpenApiValidator
  close(): Promise<void>
}

/** The path of the document's first server (`https://api.example.com/v1` → `/v1`), '' when none. */
export function serverBasePath(document: Json): string {
  const servers = Array.isArray(document.servers) ? document.servers : []
  const first: unknown = servers[0]
  if (!isObject(first) || typeof first.url !== 'string') return ''
  // A server URL may be relative, and may have {variables}: only its path is wanted here.
  const withDefaults = first.url.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const variable = isObject(first.variables) ? first.variables[name] : undefined
    return isObject(variable) && typeof variable.default === 'string' ? variable.default : name
  })
  return new URL(withDefaults, 'http://server.invalid').pathname.replace(/\/+$/, '')
}

/** A request path relative to the base path ('/v1/items' under '/v1' is '/items'); undefined when it is not under it. */
function underBasePath(path: string, basePath: string): string | undefined {
  if (basePath === '') return path
  if (path === basePath) return '/'
  return path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : undefined
}

export async function startValidatingProxy(options: ValidatingProxyOptions): Promise<ValidatingProxy> {
  const validator = new OpenApiValidator(options.document)
  const basePath = options.basePath ?? serverBasePath(options.document)
  const violations: Violation[] = []
  const unmatched: UnmatchedRequest[] = []
  const exchanges: ExchangeRecord[] = []

  function observe(exchange: ForwardedExchange): void {
    options.observe?.(exchange)
    const { request, response } = exchange
    const method = request.method.toUpperCase()
    const documentPath = underBasePath(request.path, basePath)
    if (documentPath === undefined && options.forwardOutsideBasePath) return
    const record: ExchangeRecord = {
      method,
      path: request.path,
      query: request.query.toString(),
      operation: null,
      status: response?.status ?? null,
      responseBodyChecked: false,
      violations: 0,
    }
    if (exchange.error !== undefined) record.error = exchange.error
    exchanges.push(record)
    const matched = documentPath === undefined ? undefined : validator.match(method, documentPath)
    if (!matched) {
      const reason =
        documentPath === undefined
          ? `the path is not under the server's ${basePath}`
          : validator.whyUnmatched(method, documentPath)
      unmatched.push({ method, path: request.path, reason })
      return
    }
    record.operation = matched.operation.name
    const documentRequest = { ...request, path: documentPath! }
    const found = validator.validateRequest(matched, documentRequest)
    if (response) {
      found.push(...validator.validateResponse(matched.operation, documentRequest, response))
      record.responseBodyChecked = validator.describesBody(matched.operation, response.status)
    }
    // Violations name the path as it was sent.
    for (const violation of found) violations.push({ ...violation, path: request.path })
    record.violations = found.length
  }

  const proxy = await startForwardingProxy({
    targetBaseUrl: options.targetBaseUrl,
    observe,
    timeoutMs: options.timeoutMs,
  })
  return { url: proxy.url, violations, unmatched, exchanges, validator, close: () => proxy.close() }
}

/** A violation on one line: side, operation, status, where, pointer, message. */
export function formatViolation(violation: Violation): string {
  const status = violation.status === undefined ? '' : ` → ${violation.status}`
  const where = `${violation.location}${violation.pointer === '' ? '' : ` ${violation.pointer}`}`
  const exchange = violation.path === '' ? '' : ` (${violation.method} ${violation.path}${status})`
  return `[${violation.side}] ${violation.operation}${exchange} ${where}: ${violation.message}`
}
