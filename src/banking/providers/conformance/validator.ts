// Checks HTTP exchanges against an OpenAPI 3 document (a parsed object): a request's method and
// path against the operations, its path, query and header parameters, its credentials and its
// JSON body; an answer's status against the operation's responses (exact, then its class such as
// 4XX, then `default`) and its JSON body against that response's schema. Everything that does not
// conform is a violation, named by side, operation, where and a JSON pointer.
import {
  OperationIndex,
  openApiVersion,
  resolveObject,
  type MatchedOperation,
  type Operation,
  type Parameter,
} from './openapi.ts'
import { isObject, type MessageSide } from './schema.ts'
import { DocumentSchemas } from './schemas.ts'
import {
  headerValue,
  type ExchangeRequest,
  type ExchangeResponse,
  type Headers,
  type Violation,
  type ViolationLocation,
} from './exchange.ts'
import { checkCredentials } from './security.ts'

type Json = Record<string, unknown>

function mediaTypeOf(headers: Headers): string | undefined {
  return headerValue(headers, 'content-type')?.split(';')[0]?.trim().toLowerCase()
}

function isJsonMediaType(mediaType: string): boolean {
  return mediaType === 'application/json' || /^[a-z]+\/[^;]*\+json$/.test(mediaType)
}

/** The content entry a media type falls under: exact, then `type/*`, then `*\/*`. */
function contentFor(content: Json, mediaType: string): { key: string; value: Json } | undefined {
  const keys = Object.keys(content)
  const wanted = [mediaType, `${mediaType.split('/')[0]}/*`, '*/*']
  for (const candidate of wanted) {
    const key = keys.find((name) => name.split(';')[0]!.trim().toLowerCase() === candidate)
    if (key !== undefined && isObject(content[key])) return { key, value: content[key] }
  }
  return undefined
}

export class OpenApiValidator {
  readonly document: Json
  readonly #index: OperationIndex
  readonly #schemas: DocumentSchemas

  constructor(document: Json) {
    this.document = document
    this.#schemas = new DocumentSchemas(document, openApiVersion(document))
    this.#index = new OperationIndex(document)
  }

  get operations(): Operation[] {
    return this.#index.operations
  }

  match(method: string, path: string): MatchedOperation | undefined {
    return this.#index.match(method, path)
  }

  /** Why a request matches no operation, in words. */
  whyUnmatched(method: string, path: string): string {
    const templates = this.#index.templatesMatching(path)
    if (templates.length === 0) return 'no path of the description matches'
    return `${templates.join(', ')} ${templates.length === 1 ? 'has' : 'have'} no ${method.toUpperCase()} operation`
  }

  /** The violations of a request matched to its operation. */
  validateRequest(matched: MatchedOperation, request: ExchangeRequest): Violation[] {
    const { operation } = matched
    const violation = (location: ViolationLocation, pointer: string, message: string): Violation => ({
      side: 'request',
      operation: operation.name,
      method: request.method.toUpperCase(),
      path: request.path,
      location,
      pointer,
      message,
    })
    const found: Violation[] = []
    for (const problem of this.#parameterProblems(operation, matched.pathParameters, request))
      found.push(violation(problem.location, problem.pointer, problem.message))
    for (const problem of checkCredentials(this.document, operation, request))
      found.push(violation('header', problem.pointer, problem.message))
    for (const problem of this.#requestBodyProblems(operation, request))
      found.push(violation(problem.location, problem.pointer, problem.message))
    return found
  }

  /** The violations of an answer to a request matched to `operation`. */
  validateResponse(operation: Operation, request: ExchangeRequest, response: ExchangeResponse): Violation[] {
    const violation = (location: ViolationLocation, pointer: string, message: string): Violation => ({
      side: 'response',
      operation: operation.name,
      method: request.method.toUpperCase(),
      path: request.path,
      status: response.status,
      location,
      pointer,
      message,
    })
    const described = responseFor(operation, response.status)
    if (!described) {
      const keys = [...operation.responses.keys()].join(', ') || 'none'
      return [
        violation('status', '', `status ${response.status} is not described by the operation (it describes ${keys})`),
      ]
    }
    const content = described.response.response.content
    // No content described: the description says nothing of the body, so there is nothing to check.
    if (!isObject(content) || Object.keys(content).length === 0) return []
    return this.#bodyProblems(
      content,
      `${described.response.pointer}/content`,
      response.headers,
      response.body,
      'response',
      true,
    ).map((problem) => violation(problem.location, problem.pointer, problem.message))
  }

  /** Whether the answer's status is described with content (so that its body was checked). */
  describesBody(operation: Operation, status: number): boolean {
    const content = responseFor(operation, status)?.response.response.content
    return isObject(content) && Object.keys(content).length > 0
  }

  /** The webhooks the document describes (OpenAPI 3.1 `webhooks`, or `x-webhooks`), by name. */
  webhookNames(): string[] {
    return Object.keys(this.#webhooks())
  }

  /** The violations of a webhook's JSON body against the webhook the document describes under `name`. */
  validateWebhook(name: string, body: string, headers: Headers = { 'content-type': 'application/json' }): Violation[] {
    const violation = (location: ViolationLocation, pointer: string, message: string): Violation => ({
      side: 'webhook',
      operation: name,
      method: 'POST',
      path: '',
      location,
      pointer,
      message,
    })
    const item = resolveObject(this.document, this.#webhooks()[name], `#/webhooks/${name}`)
    const operation = item && resolveObject(this.document, item.value.post, `${item.pointer}/post`)
    if (!operation) return [violation('path', '', `the description has no webhook ${name}`)]
    const requestBody = resolveObject(this.document, operation.value.requestBody, `${operation.pointer}/requestBody`)
    if (!requestBody || !isObject(requestBody.value.content)) return []
    return this.#bodyProblems(
      requestBody.value.content,
      `${requestBody.pointer}/content`,
      headers,
      body,
      'request',
      true,
    ).map((problem) => violation(problem.location, problem.pointer, problem.message))
  }

  #webhooks(): Json {
    if (isObject(this.document.webhooks)) return this.document.webhooks
    if (isObject(this.document['x-webhooks'])) return this.document['x-webhooks']
    return {}
  }

  #parameterProblems(
    operation: Operation,
    pathParameters: Record<string, string>,
    request: ExchangeRequest,
  ): Problem[] {
    const problems: Problem[] = []
    const declaredQuery = new Set(
      operation.parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name),
    )
    for (const name of new Set(request.query.keys())) {
      if (!declaredQuery.has(name))
        problems.push({ location: 'query', pointer: `/${name}`, message: 'is not a query parameter of the operation' })
    }
    for (const parameter of operation.parameters) {
      if (parameter.in === 'cookie') continue
      const raw = rawParameter(parameter, pathParameters, request)
      if (raw === undefined) {
        if (parameter.required)
          problems.push({ location: parameter.in, pointer: `/${parameter.name}`, message: 'is required and missing' })
        continue
      }
      if (parameter.schema === undefined) continue
      const value = isArraySchema(this.document, parameter.schema) ? raw : raw[0]
      if (!isArraySchema(this.document, parameter.schema) && raw.length > 1)
        problems.push({
          location: parameter.in,
          pointer: `/${parameter.name}`,
          message: `is given ${raw.length} times, the operation takes one`,
        })
      const key = `${operation.pointer}:${parameter.in}:${parameter.name}`
      const wrapper = { type: 'object', properties: { [parameter.name]: parameter.schema } }
      for (const error of this.#schemas.validate(
        key,
        wrapper,
        { [parameter.name]: value },
        { side: 'request', coerce: true },
      )) {
        problems.push({
          location: parameter.in,
          pointer: error.pointer || `/${parameter.name}`,
          message: error.message,
        })
      }
    }
    return problems
  }

  #requestBodyProblems(operation: Operation, request: ExchangeRequest): Problem[] {
    const { requestBody } = operation
    if (!requestBody)
      return request.body.length > 0
        ? [{ location: 'body', pointer: '', message: 'the operation takes no request body' }]
        : []
    if (request.body.length === 0)
      return requestBody.required === true
        ? [{ location: 'body', pointer: '', message: 'the request body is required' }]
        : []
    const content = isObject(requestBody.content) ? requestBody.content : {}
    return this.#bodyProblems(
      content,
      `${operation.requestBodyPointer}/content`,
      request.headers,
      request.body,
      'request',
      false,
    )
  }

  /** A body against the content map that describes it: its media type, then (for JSON) its schema. */
  #bodyProblems(
    content: Json,
    contentPointer: string,
    headers: Headers,
    body: string,
    side: MessageSide,
    bodyExpected: boolean,
  ): Problem[] {
    const mediaType = mediaTypeOf(headers)
    const described = mediaType === undefined ? undefined : contentFor(content, mediaType)
    if (!described) {
      const allowed = Object.keys(content).join(', ')
      return [
        {
          location: 'header',
          pointer: '/content-type',
          message: `${mediaType ?? 'no content type'} is not a media type described here (${allowed})`,
        },
      ]
    }
    if (!isJsonMediaType(mediaType!)) return [] // a form, a file: not read here
    if (body.length === 0)
      return bodyExpected
        ? [{ location: 'body', pointer: '', message: 'the body is empty, the description gives it content' }]
        : []
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      return [{ location: 'body', pointer: '', message: 'the body is not JSON' }]
    }
    if (described.value.schema === undefined) return []
    const key = `${contentPointer}/${described.key}`
    return this.#schemas
      .validate(key, described.value.schema, parsed, { side, coerce: false })
      .map((error) => ({ location: 'body', pointer: error.pointer, message: error.message }))
  }
}

interface Problem {
  location: ViolationLocation
  pointer: string
  message: string
}

/** The response an answer's status falls under: exact, then its class (4XX), then `default`. */
function responseFor(
  operation: Operation,
  status: number,
): { key: string; response: { response: Json; pointer: string } } | undefined {
  for (const key of [String(status), `${String(status)[0]}XX`, 'default']) {
    const response = operation.responses.get(key)
    if (response) return { key, response }
  }
  return undefined
}

/** A parameter's values as sent (a query parameter may repeat); undefined when absent. */
function rawParameter(
  parameter: Parameter,
  pathParameters: Record<string, string>,
  request: ExchangeRequest,
): string[] | undefined {
  if (parameter.in === 'path')
    return pathParameters[parameter.name] === undefined ? undefined : [pathParameters[parameter.name]!]
  if (parameter.in === 'query') {
    const values = request.query.getAll(parameter.name)
    return values.length === 0 ? undefined : values
  }
  const value = request.headers[parameter.name.toLowerCase()]
  if (value === undefined) return undefined
  return Array.isArray(value) ? value : [value]
}

function isArraySchema(document: Json, schema: unknown): boolean {
  const resolved = resolveObject(document, schema, '')
  const type = resolved?.value.type
  return type === 'array' || (Array.isArray(type) && type.includes('array'))
}
