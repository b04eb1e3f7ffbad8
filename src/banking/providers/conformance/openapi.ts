// An OpenAPI 3 document, read for validation: its operations indexed by method and path template
// (a request's path is matched against them, literal segments before templated ones, as OpenAPI
// says), and the objects its operations name by $ref (parameters, request bodies, responses)
// resolved within the document. Schemas are left to ajv (schema.ts).
import { isObject, type OpenApiVersion } from './schema.ts'

type Json = Record<string, unknown>

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

/** How many $ref hops lead to an object before the document is taken to loop. */
const REF_HOPS_MAX = 32

export interface Parameter {
  name: string
  in: 'query' | 'path' | 'header' | 'cookie'
  required: boolean
  /** The parameter's schema as the document writes it (unconverted); undefined when it has none (a `content` parameter). */
  schema: unknown
}

export interface Operation {
  /** The operation's id, or `METHOD /template` when it has none: how a violation names it. */
  name: string
  method: string
  pathTemplate: string
  /** The JSON pointer of the operation object within the document. */
  pointer: string
  parameters: Parameter[]
  /** The operation's request body, resolved; undefined when it declares none. */
  requestBody: Json | undefined
  requestBodyPointer: string | undefined
  /** Its responses by key ('200', '4XX', 'default'), each resolved, with its pointer. */
  responses: Map<string, { response: Json; pointer: string }>
  /** The security requirements that apply (the operation's, else the document's). */
  security: Json[]
}

interface CompiledTemplate {
  template: string
  pattern: RegExp
  parameterNames: string[]
  /** Literal characters: with more, a template is more specific and is tried first. */
  literalLength: number
  /** Each segment literal (1) or templated (0): compared segment by segment, literal first. */
  literalSegments: number[]
}

export function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}

function unescapePointer(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~')
}

export function openApiVersion(document: Json): OpenApiVersion {
  const version = typeof document.openapi === 'string' ? document.openapi : ''
  if (version.startsWith('3.0')) return '3.0'
  if (version.startsWith('3.1') || version.startsWith('3.2')) return '3.1'
  throw new Error(`not an OpenAPI 3 document (openapi: ${JSON.stringify(document.openapi ?? null)})`)
}

/** The value at a local JSON pointer ('#/components/…'), or undefined. */
export function atPointer(document: Json, pointer: string): unknown {
  if (!pointer.startsWith('#')) return undefined
  const path = pointer.slice(1)
  if (path === '') return document
  let node: unknown = document
  for (const token of path.slice(1).split('/')) {
    const key = unescapePointer(decodeURIComponent(token))
    if (Array.isArray(node)) node = node[Number(key)]
    else if (isObject(node)) node = node[key]
    else return undefined
  }
  return node
}

/** An object that may be a $ref, followed to what it names, with the pointer where that is. */
export function resolveObject(
  document: Json,
  value: unknown,
  pointer: string,
): { value: Json; pointer: string } | undefined {
  let current = value
  let at = pointer
  for (let hop = 0; hop < REF_HOPS_MAX; hop += 1) {
    if (!isObject(current)) return undefined
    if (typeof current.$ref !== 'string') return { value: current, pointer: at }
    if (!current.$ref.startsWith('#'))
      throw new Error(`${at}: only references within the document are followed (${current.$ref})`)
    at = current.$ref
    current = atPointer(document, current.$ref)
  }
  throw new Error(`${pointer}: more than ${REF_HOPS_MAX} references in a row`)
}

function compileTemplate(template: string): CompiledTemplate {
  const parameterNames: string[] = []
  const segments = template.split('/').slice(1)
  const source = segments
    .map((segment) =>
      segment
        .split(/(\{[^}]+\})/)
        .map((part) => {
          const name = /^\{([^}]+)\}$/.exec(part)?.[1]
          if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          parameterNames.push(name)
          return '([^/]+)'
        })
        .join(''),
    )
    .join('/')
  return {
    template,
    pattern: new RegExp(`^/${source}/?$`),
    parameterNames,
    literalLength: template.replace(/\{[^}]+\}/g, '').length,
    literalSegments: segments.map((segment) => (segment.includes('{') ? 0 : 1)),
  }
}

/** Literal segments win where two templates match (`/transfer/verify/x` over `/transfer/{code}/x`), then the longer literal text. */
function bySpecificity(a: CompiledTemplate, b: CompiledTemplate): number {
  for (let index = 0; index < Math.min(a.literalSegments.length, b.literalSegments.length); index += 1) {
    const difference = b.literalSegments[index]! - a.literalSegments[index]!
    if (difference !== 0) return difference
  }
  return b.literalLength - a.literalLength
}

function readParameters(document: Json, list: unknown, pointer: string): Parameter[] {
  if (!Array.isArray(list)) return []
  const parameters: Parameter[] = []
  list.forEach((item, index) => {
    const resolved = resolveObject(document, item, `${pointer}/${index}`)
    if (!resolved || typeof resolved.value.name !== 'string') return
    const where = resolved.value.in
    if (where !== 'query' && where !== 'path' && where !== 'header' && where !== 'cookie') return
    parameters.push({
      name: resolved.value.name,
      in: where,
      required: resolved.value.required === true || where === 'path',
      schema: resolved.value.schema,
    })
  })
  return parameters
}

/** Path-level parameters apply unless the operation redefines one (same name and location). */
function mergeParameters(pathLevel: Parameter[], operationLevel: Parameter[]): Parameter[] {
  const key = (parameter: Parameter) =>
    `${parameter.in}:${parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name}`
  const own = new Set(operationLevel.map(key))
  return [...pathLevel.filter((parameter) => !own.has(key(parameter))), ...operationLevel]
}

function readOperation(
  document: Json,
  pathTemplate: string,
  pathItem: Json,
  pathPointer: string,
  method: string,
): Operation | undefined {
  const operation = pathItem[method]
  if (!isObject(operation)) return undefined
  const pointer = `${pathPointer}/${method}`
  const requestBody = resolveObject(document, operation.requestBody, `${pointer}/requestBody`)
  const responses = new Map<string, { response: Json; pointer: string }>()
  if (isObject(operation.responses)) {
    for (const [key, value] of Object.entries(operation.responses)) {
      const resolved = resolveObject(document, value, `${pointer}/responses/${escapePointer(key)}`)
      if (resolved)
        responses.set(key.toUpperCase() === 'DEFAULT' ? 'default' : key.toUpperCase(), {
          response: resolved.value,
          pointer: resolved.pointer,
        })
    }
  }
  const security = Array.isArray(operation.security)
    ? operation.security
    : Array.isArray(document.security)
      ? document.security
      : []
  return {
    name: typeof operation.operationId === 'string' ? operation.operationId : `${method.toUpperCase()} ${pathTemplate}`,
    method: method.toUpperCase(),
    pathTemplate,
    pointer,
    parameters: mergeParameters(
      readParameters(document, pathItem.parameters, `${pathPointer}/parameters`),
      readParameters(document, operation.parameters, `${pointer}/parameters`),
    ),
    requestBody: requestBody?.value,
    requestBodyPointer: requestBody?.pointer,
    responses,
    security: security.filter(isObject),
  }
}

/** A request matched to an operation, with its path parameters as sent (percent-decoded). */
export interface MatchedOperation {
  operation: Operation
  pathParameters: Record<string, string>
}

export class OperationIndex {
  readonly #templates: CompiledTemplate[]
  readonly #operations = new Map<string, Operation>()

  constructor(document: Json) {
    const paths = isObject(document.paths) ? document.paths : {}
    const templates: CompiledTemplate[] = []
    for (const [template, item] of Object.entries(paths)) {
      const pathPointer = `#/paths/${escapePointer(template)}`
      const pathItem = resolveObject(document, item, pathPointer)
      if (!pathItem) continue
      templates.push(compileTemplate(template))
      for (const method of HTTP_METHODS) {
        const operation = readOperation(document, template, pathItem.value, pathItem.pointer, method)
        if (operation) this.#operations.set(`${method.toUpperCase()} ${template}`, operation)
      }
    }
    this.#templates = templates.sort(bySpecificity)
  }

  get operations(): Operation[] {
    return [...this.#operations.values()]
  }

  /** The templates a path matches, whatever their methods (to say why a request matched no operation). */
  templatesMatching(path: string): string[] {
    return this.#templates.filter((template) => template.pattern.test(path)).map((template) => template.template)
  }

  /**
   * The operation a request is for: the most specific template its path matches that has the
   * method. Undefined when no template matches, or none that matches has the method.
   */
  match(method: string, path: string): MatchedOperation | undefined {
    for (const template of this.#templates) {
      const found = template.pattern.exec(path)
      if (!found) continue
      const operation = this.#operations.get(`${method.toUpperCase()} ${template.template}`)
      if (!operation) continue
      const pathParameters: Record<string, string> = {}
      template.parameterNames.forEach((name, index) => {
        pathParameters[name] = safeDecode(found[index + 1]!)
      })
      return { operation, pathParameters }
    }
    return undefined
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
