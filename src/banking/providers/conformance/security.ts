// Whether a request carries the credentials its operation asks for: one of the operation's
// security requirements (or the document's) met in full. Only their presence and scheme are
// checked — whether a key is right is the server's business, and its answer (401) is checked
// against the responses like any other.
import type { Operation } from './openapi.ts'
import { isObject } from './schema.ts'
import { headerValue, type ExchangeRequest } from './exchange.ts'

type Json = Record<string, unknown>

/** Whether the request carries what one security scheme asks for. */
function meets(scheme: Json, request: ExchangeRequest): boolean {
  const authorization = headerValue(request.headers, 'authorization') ?? ''
  switch (scheme.type) {
    case 'http': {
      const wanted = typeof scheme.scheme === 'string' ? scheme.scheme.toLowerCase() : ''
      return authorization.toLowerCase().startsWith(`${wanted} `) && authorization.length > wanted.length + 1
    }
    case 'apiKey': {
      const name = typeof scheme.name === 'string' ? scheme.name : ''
      if (scheme.in === 'header') return headerValue(request.headers, name) !== undefined
      if (scheme.in === 'query') return request.query.has(name)
      return true // a cookie: not seen by this check
    }
    case 'oauth2':
    case 'openIdConnect':
      return authorization.toLowerCase().startsWith('bearer ')
    default:
      return true
  }
}

function describe(name: string, scheme: Json): string {
  if (scheme.type === 'http') return `${name} (Authorization: ${String(scheme.scheme)})`
  if (scheme.type === 'apiKey') return `${name} (${String(scheme.in)} ${String(scheme.name)})`
  return name
}

export function checkCredentials(
  document: Json,
  operation: Operation,
  request: ExchangeRequest,
): { pointer: string; message: string }[] {
  if (operation.security.length === 0) return []
  const components = isObject(document.components) ? document.components : {}
  const schemes = isObject(components.securitySchemes) ? components.securitySchemes : {}
  // An empty requirement ({}) makes credentials optional.
  const met = operation.security.some((requirement) =>
    Object.keys(requirement).every((name) => isObject(schemes[name]) && meets(schemes[name], request)),
  )
  if (met) return []
  const wanted = operation.security.map((requirement) =>
    Object.keys(requirement)
      .map((name) =>
        isObject(schemes[name]) ? describe(name, schemes[name]) : `${name} (not defined by the description)`,
      )
      .join(' and '),
  )
  return [{ pointer: '/authorization', message: `no credentials the operation asks for: ${wanted.join(' or ')}` }]
}
