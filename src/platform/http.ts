// The HTTP platform: Fastify with strict validation, one error body, request ids, raw bodies
// kept for signature checks. No business words here.
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { Ajv, type ErrorObject } from 'ajv'
import addFormats from 'ajv-formats'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { isDatabaseUnavailable } from './db.ts'
import { errorBody, fieldError, OVERLOADED_RETRY_AFTER_S, RailError } from './errors.ts'
import { installBodyParsers } from './request-body.ts'
import { methodNotAllowed, methodsOf, trackRouteMethods } from './method-not-allowed.ts'

/** Bodies above this many bytes are refused with 413 before they are read in full. */
export const BODY_LIMIT_BYTES = 1024 * 1024
/**
 * Path parameters up to this length reach the route's schema, which names the parameter in a 422;
 * a longer one is refused by the router (also a 422, naming the path).
 */
const PATH_PARAMETER_MAX_CHARS = 2_048

/** How long a client may take to send its headers, and its whole request, before it is cut off. */
export interface HttpTimeouts {
  headersTimeoutMs: number
  requestTimeoutMs: number
}

/**
 * A slow client (slowloris) must not hold a connection: headers within 10 s, the whole request
 * (a 1 MiB body at a modest 50 KiB/s) within 30 s. Node checks open connections against these
 * every CONNECTIONS_CHECK_MS.
 */
const HTTP_TIMEOUTS_DEFAULT: HttpTimeouts = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 }
const CONNECTIONS_CHECK_MS_MAX = 1_000

/** A caller-supplied X-Request-Id is kept only if it looks like an id. */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/
/** Each field of a validation failure is named; more than this many is noise. */
const VALIDATION_ISSUES_MAX = 50

export type HttpServer = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>

export function createHttpServer(
  logger: FastifyServerOptions['logger'],
  timeouts: HttpTimeouts = HTTP_TIMEOUTS_DEFAULT,
): HttpServer {
  const app = Fastify({
    logger,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (request) => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID()
    },
    // Route paths are matched exactly as written; a trailing slash is another path.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: PATH_PARAMETER_MAX_CHARS },
    requestTimeout: timeouts.requestTimeoutMs,
    http: {
      headersTimeout: timeouts.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(CONNECTIONS_CHECK_MS_MAX, timeouts.headersTimeoutMs),
    },
    // Errors Node finds before there is a request (a slow client, oversized headers, bytes that
    // are not HTTP) get Rail's body too; the connection is then closed, as Node would.
    clientErrorHandler: (error, socket) => answerClientError(error as NodeJS.ErrnoException, socket),
    // The router's own refusals (a malformed URL, an over-long parameter) in Rail's error body.
    frameworkErrors: (error, request, reply) => {
      const railError =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? fieldError('path', `a path parameter exceeds ${PATH_PARAMETER_MAX_CHARS} characters`)
          : new RailError('bad_request', 'The request URL is malformed')
      const page = pageAreaOf(app, request)
      if (page) return void page.notFound((reply as FastifyReply).header('X-Request-Id', request.id))
      void (reply as FastifyReply)
        .header('X-Request-Id', request.id)
        .code(railError.statusCode)
        .send(errorBody(railError))
    },
  }).withTypeProvider<TypeBoxTypeProvider>()

  installValidators(app)
  installBodyParsers(app)
  trackRouteMethods(app)
  markEarlyAnswers(app)
  endUnusedConnectionsOnClose(app)

  app.addHook('onSend', async (request, reply) => {
    reply.header('X-Request-Id', request.id)
  })
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const railError = request.unverifiedBodyAnswer ?? toRailError(error, request)
    // Only what is wrong with the URL itself is a link not found; a limit (429) or an overload
    // (503) is answered as itself, with its Retry-After.
    const page = LINK_REFUSALS.has(railError.statusCode) ? pageAreaOf(app, request) : undefined
    if (page) return void page.notFound(reply)
    sendError(railError, reply)
  })
  app.setNotFoundHandler((request, reply) => {
    const page = pageAreaOf(app, request)
    if (page) return void page.notFound(reply)
    const path = request.url.split('?')[0]!
    const allowed = methodsOf(app, path)
    if (allowed.length > 0)
      return void reply
        .code(405)
        .header('Allow', allowed.join(', '))
        .send(errorBody(methodNotAllowed(request.method, path, allowed)))
    void reply.code(404).send(errorBody(new RailError('not_found', `Route ${request.method} ${path} not found`)))
  })
  return app as unknown as HttpServer
}

/**
 * Paths whose GET requests are pages people open (a payer's link): a request refused before its
 * handler runs — a malformed or over-long URL, control characters, a path no route has — is
 * answered with the area's own not-found page, as an unknown link is, not with the API's error
 * body. `except` names paths under the prefix that answer JSON (a page's status endpoint).
 */
export interface PageArea {
  prefix: string
  except?: RegExp
  notFound(reply: FastifyReply): FastifyReply
}

const pageAreas = new WeakMap<object, PageArea[]>()
/** Refusals of a request's URL (malformed, over-long, bad characters, not found): a page area answers them with its page. */
const LINK_REFUSALS = new Set([400, 404, 414, 422])

export function registerPageArea(app: HttpServer, area: PageArea): void {
  const root = app as unknown as object
  pageAreas.set(root, [...(pageAreas.get(root) ?? []), area])
}

function pageAreaOf(app: FastifyInstance, request: FastifyRequest): PageArea | undefined {
  if (request.method !== 'GET' && request.method !== 'HEAD') return undefined
  const path = (request.raw.url ?? '').split('?')[0]!
  return pageAreas.get(app)?.find((area) => path.startsWith(area.prefix) && !area.except?.test(path))
}

/**
 * Closing waits for every connection Node counts as open. One on which no byte has arrived (a
 * client or load balancer that connects ahead of need, a request aborted before it was written)
 * is not idle to Node, so it would hold a closing server until its peer gives up — about a minute.
 * Once the server stops serving, those are ended; requests in flight finish as before, and idle
 * keep-alive connections are closed by Node itself.
 */
function endUnusedConnectionsOnClose(app: FastifyInstance): void {
  const sockets = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
  })
  app.addHook('preClose', async () => {
    for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy()
  })
}

/** Marks a connection whose current request was answered before its body had all arrived. */
const ANSWERED_BEFORE_BODY_END = Symbol('answered before the body ended')
type MarkedSocket = Duplex & { [ANSWERED_BEFORE_BODY_END]?: boolean }

function markEarlyAnswers(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    delete (request.raw.socket as MarkedSocket)[ANSWERED_BEFORE_BODY_END]
  })
  app.addHook('onSend', async (request) => {
    if (!request.raw.complete) (request.raw.socket as MarkedSocket)[ANSWERED_BEFORE_BODY_END] = true
  })
}

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  // Already answered (a 401 while the body still trickled in, say): a second answer on the same
  // connection would be read as the answer to the next request. Close it without one.
  if ((socket as MarkedSocket)[ANSWERED_BEFORE_BODY_END]) {
    socket.destroy(error)
    return
  }
  const railError =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new RailError('request_timeout', 'The request did not arrive in time')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new RailError('headers_too_large', 'The request headers are too large')
        : new RailError('bad_request', 'The request is not well-formed HTTP')
  const body = JSON.stringify(errorBody(railError))
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${railError.statusCode} ${STATUS_CODES[railError.statusCode]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(error)
}

/**
 * Two validators: bodies are validated as sent (no type coercion: "100" is not an amount), while
 * query strings and path parameters, which are always text on the wire, are coerced to the
 * declared types. allErrors makes a 422 name every offending field, not only the first.
 */
function installValidators(app: FastifyInstance): void {
  const strict = withFormats(
    new Ajv({ allErrors: true, coerceTypes: false, useDefaults: true, removeAdditional: false, strict: false }),
  )
  const coercing = withFormats(
    new Ajv({ allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: false, strict: false }),
  )
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing
    return ajv.compile(schema) as ReturnType<Parameters<FastifyInstance['setValidatorCompiler']>[0]>
  })
}

/**
 * ajv-formats' formats, with one change: a `date-time` must also be a time JavaScript can hold.
 * RFC 3339 allows a leap second (`23:59:60`), which `new Date()` cannot represent: accepted, it
 * would reach the handler as an Invalid Date and PostgreSQL as `NaN-NaN-…` (a 500).
 */
function withFormats(ajv: Ajv): Ajv {
  addFormats.default(ajv)
  const rfc3339 = ajv.formats['date-time'] as { validate: (value: string) => boolean }
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => rfc3339.validate(value) && !Number.isNaN(Date.parse(value)),
  })
  return ajv
}

function sendError(railError: RailError, reply: FastifyReply): void {
  if (railError.retryAfterS !== undefined)
    void reply.header('Retry-After', String(Math.max(1, Math.ceil(railError.retryAfterS))))
  void reply.code(railError.statusCode).send(errorBody(railError))
}

/** Any error as the one error shape (an unexpected one logged, and answered by its request id only). */
export function toRailError(error: FastifyError, request: FastifyRequest): RailError {
  if (error instanceof RailError) return error
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'database unavailable')
    return new RailError('overloaded', 'Rail could not reach its database in time; retry shortly', undefined, {
      retryAfterS: OVERLOADED_RETRY_AFTER_S,
    })
  }
  if (error.validation) return validationError(error.validation as ErrorObject[], error.validationContext ?? 'body')
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new RailError('payload_too_large', `The body exceeds ${BODY_LIMIT_BYTES} bytes`, {
        limitBytes: BODY_LIMIT_BYTES,
      })
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new RailError('unsupported_media_type', 'Request bodies must be application/json')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new RailError('invalid_json', 'Malformed JSON body')
  }
  if (error.statusCode === 413) return new RailError('payload_too_large', `The body exceeds ${BODY_LIMIT_BYTES} bytes`)
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new RailError('bad_request', error.message)
  }
  request.log.error({ err: error }, 'unhandled error')
  return new RailError('internal_error', `Internal error; quote request id ${request.id}`, { requestId: request.id })
}

export interface FieldIssue {
  field: string
  message: string
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** true: a provider's signed webhook, read by its adapter from the raw body (control characters are its to clean). */
    providerWebhook?: boolean
  }
}

/**
 * The checks every request's input passes before any schema or handler sees it; they run after
 * authentication. The body must be JSON, valid UTF-8, nested within JSON_DEPTH_MAX and well-formed
 * (judged as it was read, src/platform/request-body.ts) and, when present, an object (every route
 * takes an object; `null` or `[]` is never a request). No string anywhere — body, query or path —
 * may hold what PostgreSQL cannot store or what has no business in a request (see stringIssue).
 */
export function assertRequestInput(request: FastifyRequest): void {
  if (request.bodyRefusal) throw request.bodyRefusal
  // A provider's signed webhook is the provider's text, not a request Rail can send back: its
  // adapter reads the raw bytes it verified and makes what it keeps storable (src/banking/providers/clean.ts),
  // where refusing it would have the provider resend it for days and the money never booked.
  if (request.routeOptions.config.providerWebhook === true) return
  const body = request.body
  if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
    throw fieldError('body', 'must be a JSON object')
  }
  const issues: FieldIssue[] = []
  collectStringIssues(body, '', issues)
  // Query and path parameters are named bare, as their schemas' errors name them.
  collectQueryEscapeIssues(request.raw.url ?? '', issues)
  collectStringIssues(request.query, '', issues)
  collectStringIssues(request.params, '', issues)
  if (issues.length > 0) {
    throw new RailError('validation_error', issues.map((issue) => `${issue.field}: ${issue.message}`).join('; '), {
      fields: issues,
    })
  }
}

/**
 * Control characters are refused in every string: NUL cannot be stored in PostgreSQL text at all,
 * and the others (C0, DEL, C1) have no business in a reference, a name or an account number and
 * break logs, CSV and bank files downstream. Free text written by people (a description, a note)
 * may hold tabs and line breaks. A lone UTF-16 surrogate is not a character: stored, it would
 * become U+FFFD and two different references would collide.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/
// eslint-disable-next-line no-control-regex -- as above, less tab, line feed and carriage return
export const CONTROL_CHARACTERS_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/
/** Fields people write sentences in; everything inside `metadata` (the partner's own notes) too. */
export const FREE_TEXT_FIELDS = new Set(['description', 'note', 'notes', 'memo', 'evidence', 'purpose', 'metadata'])

function stringIssue(value: string, freeText: boolean): string | undefined {
  if (!value.isWellFormed()) return 'must not hold a lone UTF-16 surrogate'
  const forbidden = freeText ? CONTROL_CHARACTERS_BUT_LINES : CONTROL_CHARACTERS
  return forbidden.test(value) ? 'must not hold control characters' : undefined
}

/**
 * A query's percent-escapes must spell UTF-8. The query parser keeps an escape that does not
 * (`%FF`) as written, which is also what `%25FF` decodes to: two values would read as one. (A
 * path parameter's bad escape is refused by the router, and headers are read byte for byte.)
 */
function collectQueryEscapeIssues(url: string, issues: FieldIssue[]): void {
  const start = url.indexOf('?')
  if (start < 0) return
  for (const pair of url.slice(start + 1).split('&')) {
    const equals = pair.indexOf('=')
    const name = equals < 0 ? pair : pair.slice(0, equals)
    if (percentDecoded(name) === undefined)
      issues.push({ field: 'query', message: 'a parameter name must be percent-encoded UTF-8' })
    else if (percentDecoded(pair.slice(name.length + 1)) === undefined)
      issues.push({ field: percentDecoded(name)!, message: 'must be percent-encoded UTF-8' })
  }
}

function percentDecoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '))
  } catch {
    return undefined
  }
}

/** Walks a parsed JSON value (bounded by the body limit and JSON_DEPTH_MAX) and names each bad string by its path. */
function collectStringIssues(value: unknown, path: string, issues: FieldIssue[], freeText = false): void {
  if (issues.length >= VALIDATION_ISSUES_MAX) return
  if (typeof value === 'string') {
    const message = stringIssue(value, freeText)
    if (message) issues.push({ field: path || 'body', message })
    return
  }
  if (value === null || typeof value !== 'object') return
  for (const [name, child] of Object.entries(value)) {
    const childPath = path ? `${path}.${name}` : name
    // A field's name is input too.
    const nameIssue = stringIssue(name, false)
    if (nameIssue) issues.push({ field: path || 'body', message: `a field name ${nameIssue}` })
    collectStringIssues(child, childPath, issues, freeText || (!Array.isArray(value) && FREE_TEXT_FIELDS.has(name)))
  }
}

/** Turns Ajv errors into one 422 that names each field as a JSON pointer and in words. */
export function validationError(errors: ErrorObject[], part: string): RailError {
  const issues: FieldIssue[] = []
  for (const error of errors) {
    if (issues.length >= VALIDATION_ISSUES_MAX) break
    const issue = describeIssue(error, part)
    if (!issues.some((known) => known.field === issue.field && known.message === issue.message)) issues.push(issue)
  }
  const message = issues.map((issue) => `${issue.field}: ${issue.message}`).join('; ')
  return new RailError('validation_error', message || 'Request validation failed', { fields: issues })
}

function describeIssue(error: ErrorObject, part: string): FieldIssue {
  const base = error.instancePath.replace(/^\//, '').replace(/\//g, '.')
  const join = (name: string) => (base ? `${base}.${name}` : name)
  switch (error.keyword) {
    case 'additionalProperties':
      return { field: join(String(error.params.additionalProperty)), message: 'is not an accepted field' }
    case 'required':
      return { field: join(String(error.params.missingProperty)), message: 'is required' }
    default:
      return { field: base || part, message: error.message ?? 'is invalid' }
  }
}
