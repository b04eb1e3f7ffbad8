// The HTTP platform: Fastify with strict validation, one error body, request ids, raw bodies
// kept for signature checks. No business words here.
import { randomUUID } from 'node:crypto'
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
import { errorBody, RailError } from './errors.ts'

/** Bodies above this many bytes are refused with 413 before they are read in full. */
export const BODY_LIMIT_BYTES = 1024 * 1024
/** A caller-supplied X-Request-Id is kept only if it looks like an id. */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/
/** Each field of a validation failure is named; more than this many is noise. */
const VALIDATION_ISSUES_MAX = 50

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received (null when there was none): signatures cover these bytes. */
    rawBody: Buffer | null
    /** Set when the body was not valid JSON; reported after authentication. */
    jsonParseError: Error | undefined
  }
}

export type HttpServer = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>

export function createHttpServer(logger: FastifyServerOptions['logger']): HttpServer {
  const app = Fastify({
    logger,
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (request) => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID()
    },
    // Route paths are matched exactly as written; a trailing slash is another path.
    routerOptions: { ignoreTrailingSlash: false },
  }).withTypeProvider<TypeBoxTypeProvider>()

  installValidators(app)
  installJsonParser(app)

  app.decorateRequest('rawBody', null)
  app.decorateRequest('jsonParseError', undefined)
  app.addHook('onSend', async (request, reply) => {
    reply.header('X-Request-Id', request.id)
  })
  app.setErrorHandler((error: FastifyError, request, reply) => sendError(error, request, reply))
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send(errorBody(new RailError('not_found', `Route ${request.method} ${request.url.split('?')[0]} not found`)))
  })
  return app as unknown as HttpServer
}

/**
 * Two validators: bodies are validated as sent (no type coercion: "100" is not an amount), while
 * query strings and path parameters, which are always text on the wire, are coerced to the
 * declared types. allErrors makes a 422 name every offending field, not only the first.
 */
function installValidators(app: FastifyInstance): void {
  const strict = addFormats.default(new Ajv({ allErrors: true, coerceTypes: false, useDefaults: true, removeAdditional: false, strict: false }))
  const coercing = addFormats.default(new Ajv({ allErrors: true, coerceTypes: 'array', useDefaults: true, removeAdditional: false, strict: false }))
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing
    return ajv.compile(schema) as ReturnType<Parameters<FastifyInstance['setValidatorCompiler']>[0]>
  })
}

/**
 * JSON bodies are kept raw for the signature check and parsed here; a parse failure is remembered
 * rather than thrown, so that an unauthenticated caller gets 401 before any detail of its body.
 */
function installJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body
    if (body.length === 0) {
      done(null, undefined)
      return
    }
    try {
      done(null, JSON.parse(body.toString('utf8')))
    } catch (error) {
      request.jsonParseError = error as Error
      done(null, undefined)
    }
  })
  // Any other media type is refused; the raw bytes are still read so that the signature check
  // sees what was sent, then the request fails with 415.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body
    done(new RailError('unsupported_media_type', 'Request bodies must be application/json'), undefined)
  })
}

/** Throws invalid_json when the body could not be parsed. Runs after authentication. */
export function assertJsonParsed(request: FastifyRequest): void {
  if (request.jsonParseError) {
    throw new RailError('invalid_json', `Malformed JSON body: ${request.jsonParseError.message}`)
  }
}

function sendError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const railError = toRailError(error, request)
  if (railError.code === 'internal_error') {
    request.log.error({ err: error }, 'unhandled error')
  }
  if (railError.retryAfterS !== undefined) void reply.header('Retry-After', String(Math.max(1, Math.ceil(railError.retryAfterS))))
  void reply.code(railError.statusCode).send(errorBody(railError))
}

function toRailError(error: FastifyError, request: FastifyRequest): RailError {
  if (error instanceof RailError) return error
  if (error.validation) return validationError(error.validation as ErrorObject[], error.validationContext ?? 'body')
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new RailError('payload_too_large', `The body exceeds ${BODY_LIMIT_BYTES} bytes`, { limitBytes: BODY_LIMIT_BYTES })
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
  return new RailError('internal_error', `Internal error; quote request id ${request.id}`, { requestId: request.id })
}

export interface FieldIssue {
  field: string
  message: string
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
