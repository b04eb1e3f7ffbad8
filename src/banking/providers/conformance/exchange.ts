// What the conformance check reads of an HTTP exchange, and what it reports of one that does not conform.

export type Headers = Record<string, string | string[] | undefined>

export type ViolationSide = 'request' | 'response' | 'webhook'
export type ViolationLocation = 'path' | 'query' | 'header' | 'body' | 'status'

export interface Violation {
  side: ViolationSide
  /** The operation's id (or `METHOD /template`), or the webhook's name. */
  operation: string
  method: string
  /** The path as sent, without its query. */
  path: string
  /** The answer's status, for a response's violation. */
  status?: number
  location: ViolationLocation
  /** A JSON pointer within the location: into the body, or the parameter's name. */
  pointer: string
  message: string
}

export interface ExchangeRequest {
  method: string
  /** The path relative to the API's root (the description's server), without the query. */
  path: string
  query: URLSearchParams
  headers: Headers
  body: string
}

export interface ExchangeResponse {
  status: number
  headers: Headers
  body: string
}

export function headerValue(headers: Headers, name: string): string | undefined {
  const value = headers[name.toLowerCase()]
  return Array.isArray(value) ? value[0] : value
}
