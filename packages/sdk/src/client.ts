// The client: one method per operation of the OpenAPI document, each building its request from
// the generated table of operations and sending it through the transport (signing or the
// escrow API key, retries with the same reference or Idempotency-Key).
import { randomUUID } from 'node:crypto'
import { OPERATIONS } from './generated/operations.ts'
import { localBaseUrl } from './local-server.ts'
import { ListCall, type Page } from './pagination.ts'
import { send, type PreparedRequest, type RailResponse, type TransportSettings } from './transport.ts'
import type {
  CallOptions,
  OperationId,
  Params,
  RailOperations,
  RailOperationsWithResponse,
  ResponseBody,
} from './types.ts'

export interface RailOptions {
  /**
   * Where Rail is, e.g. `https://rail.example.com` (no trailing path). Default: RAIL_URL, else the
   * address of the `npm start` running on this machine (recorded in `.rail/runtime.json`, or
   * RAIL_DATA_DIR's); with neither, the constructor throws a TypeError.
   */
  baseUrl?: string
  /** The request-signing key id (`rk_kid_test_…`): partner and wallet APIs. */
  keyId?: string
  /** The request-signing secret issued with the key id. It never leaves this process. */
  signingSecret?: string
  /** The escrow API key (`rk_test_…`): the escrow API (`X-API-Key`). */
  escrowApiKey?: string
  /** Retries of a call that got no answer, 408, 429, 5xx or `request_in_progress`. Default 2; 0 turns retries off. */
  maxRetries?: number
  /** Time for one attempt. Default 30 s. */
  timeoutMs?: number
  /** The first retry waits about this long, each next one twice as long. Default 500 ms. */
  retryBaseDelayMs?: number
  /** A `Retry-After` longer than this is not waited for: the error is thrown. Default 30 s. */
  maxRetryDelayMs?: number
}

const DEFAULTS = { maxRetries: 2, timeoutMs: 30_000, retryBaseDelayMs: 500, maxRetryDelayMs: 30_000 }

type AnyParams = { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: Record<string, unknown> }

class RailClient {
  /** The same methods, each answering `{ data, status, headers, replayed, requestId, reference, idempotencyKey, attempts }`. */
  readonly withResponse: RailOperationsWithResponse
  readonly #transport: TransportSettings

  constructor(options: RailOptions = {}) {
    const baseUrl = options.baseUrl ?? localBaseUrl()
    if (typeof baseUrl !== 'string' || !/^https?:\/\//.test(baseUrl))
      throw new TypeError('new Rail({ baseUrl }) needs an http(s) URL')
    if ((options.keyId === undefined) !== (options.signingSecret === undefined))
      throw new TypeError('keyId and signingSecret go together')
    this.#transport = {
      baseUrl: baseUrl.replace(/\/+$/, ''),
      signingKey:
        options.keyId === undefined || options.signingSecret === undefined
          ? undefined
          : { keyId: options.keyId, signingSecret: options.signingSecret },
      escrowApiKey: options.escrowApiKey,
      maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      retryBaseDelayMs: options.retryBaseDelayMs ?? DEFAULTS.retryBaseDelayMs,
      maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULTS.maxRetryDelayMs,
      userAgent: 'rail-sdk/0.1.0',
    }
    const withResponse: Record<string, unknown> = {}
    for (const operationId of Object.keys(OPERATIONS) as OperationId[]) {
      withResponse[operationId] = (params?: Params<typeof operationId>, callOptions?: CallOptions) =>
        this.request(operationId, params, callOptions)
    }
    this.withResponse = withResponse as RailOperationsWithResponse
  }

  /** Calls an operation by its operationId; the methods are shorthands for this. */
  request<K extends OperationId>(
    operationId: K,
    params?: Params<K>,
    options: CallOptions = {},
  ): Promise<RailResponse<ResponseBody<K>>> {
    // Bad arguments reject the call's promise, as every other failure does.
    try {
      return send<ResponseBody<K>>(this.#transport, prepare(operationId, params as AnyParams | undefined, options))
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /** A cursor list as a ListCall: each page is the same query with the previous page's `nextCursor`. */
  list<K extends OperationId>(
    operationId: K,
    params?: Params<K>,
    options: CallOptions = {},
  ): ListCall<unknown, Page<unknown>> {
    const given = (params ?? {}) as AnyParams
    const fetchPage = async (cursor: string | undefined) => {
      const query = { ...given.query, cursor }
      const response = await this.request(operationId, { ...given, query } as unknown as Params<K>, options)
      return response.data as Page<unknown>
    }
    return new ListCall(fetchPage, given.query?.['cursor'] as string | undefined)
  }
}

// The methods, one per operationId, on the prototype.
for (const [operationId, operation] of Object.entries(OPERATIONS) as [
  OperationId,
  (typeof OPERATIONS)[OperationId],
][]) {
  Object.defineProperty(RailClient.prototype, operationId, {
    configurable: true,
    writable: true,
    value(this: RailClient, params?: Params<typeof operationId>, options?: CallOptions) {
      if (operation.list) return this.list(operationId, params, options)
      return this.request(operationId, params, options).then((response) => response.data)
    },
  })
}

/** The Rail client: `new Rail({ baseUrl, keyId, signingSecret, escrowApiKey })`, one method per operationId. */
export type Rail = RailClient & RailOperations
export const Rail = RailClient as unknown as new (options?: RailOptions) => Rail

function prepare(operationId: OperationId, params: AnyParams | undefined, options: CallOptions): PreparedRequest {
  const operation = OPERATIONS[operationId]
  if (operation === undefined) throw new TypeError(`Unknown operation ${String(operationId)}`)
  const given = params ?? {}
  const body = withReference(given.body, operation.reference)
  return {
    operationId,
    method: operation.method,
    auth: operation.auth,
    pathWithQuery: pathOf(operation.path, given.path) + queryOf(given.query),
    body: body === undefined ? undefined : JSON.stringify(body),
    reference: operation.reference === null ? undefined : (body?.[operation.reference] as string | undefined),
    // One key per call, the same on each of its retries (docs/api.md, "Replays and idempotency").
    idempotencyKey: operation.idempotencyKey ? (options.idempotencyKey ?? randomUUID()) : undefined,
    signal: options.signal,
  }
}

/** The body with its idempotency reference: the one given, or a new one. */
function withReference(
  body: Record<string, unknown> | undefined,
  field: string | null,
): Record<string, unknown> | undefined {
  if (field === null || body === undefined) return body
  if (body[field] !== undefined) return body
  return { ...body, [field]: `sdk_${randomUUID()}` }
}

function pathOf(template: string, values: Record<string, unknown> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name]
    if (value === undefined || value === null || value === '') throw new TypeError(`${template} needs path.${name}`)
    return encodeURIComponent(String(value))
  })
}

function queryOf(values: Record<string, unknown> = {}): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === null) continue
    for (const one of Array.isArray(value) ? value : [value]) search.append(name, String(one))
  }
  const text = search.toString()
  return text === '' ? '' : `?${text}`
}
