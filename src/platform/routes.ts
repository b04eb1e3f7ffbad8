// A route as a declaration: the operation the OpenAPI document shows (its prose a constant beside
// the module's schemas), the route's schemas and its config, handed to Fastify with the handler
// (`app.get(path, declaration, handler)`). Fastify infers the request's params, query and body and
// the reply from the declaration's schemas (TypeBox type provider), as from a route written out.
import type { TSchema } from '@sinclair/typebox'
import type { FastifyContextConfig } from 'fastify'
import { errorResponses, PageSchema } from './schemas.ts'

/** What the OpenAPI document says of one operation. */
export interface OperationText {
  summary: string
  description: string
  /** The operation's tag when it is not its module's (a module's sandbox routes are tagged `sandbox`). */
  tag?: string
}

/** An operation as the route's schema names it. */
export interface Operation {
  operationId: string
  tags: string[]
  summary: string
  description: string
}

/** A module's operations, keyed by operationId, each tagged with the module's tag unless it names another. */
export function operations<K extends string>(tag: string, texts: Record<K, OperationText>): Record<K, Operation> {
  const entries = Object.entries<OperationText>(texts).map(([operationId, text]) => {
    const operation: Operation = {
      operationId,
      tags: [text.tag ?? tag],
      summary: text.summary,
      description: text.description,
    }
    return [operationId, operation] as const
  })
  return Object.fromEntries(entries) as Record<K, Operation>
}

/** A request the partner signs (X-Rail-Key-Id and an HMAC): most routes. */
export const SIGNED = { auth: 'signature' } as const satisfies FastifyContextConfig
/** A signed create, idempotent on the reference in its body (docs/api.md, "Replays and idempotency"). */
export const SIGNED_BY_REFERENCE = {
  auth: 'signature',
  idempotencyKey: 'reference',
} as const satisfies FastifyContextConfig
/** A signed change whose Idempotency-Key is claimed in the change's own transaction. */
export const SIGNED_IN_TRANSACTION = {
  auth: 'signature',
  idempotencyKey: 'in-transaction',
} as const satisfies FastifyContextConfig

/** The schemas a route may have besides its operation. */
interface RouteSchemas {
  params?: TSchema
  querystring?: TSchema
  body?: TSchema
  response: Record<number, TSchema>
}

/** A route's options: its config, and its schema — the operation with the route's own schemas. */
export function route<const S extends RouteSchemas>(config: FastifyContextConfig, operation: Operation, schemas: S) {
  return { config, schema: { ...operation, ...schemas } }
}

/** One object named by the path (`params`): 200 the object, or 404. */
export function getOne<P extends TSchema, T extends TSchema>(operation: Operation, params: P, object: T) {
  return route(SIGNED, operation, { params, response: { 200: object, ...errorResponses('not_found') } })
}

/** A page of a list, newest first: the query's filters, `limit` and `cursor` (PageQuerySchema); 200 `{ data, nextCursor }`. */
export function getPage<Q extends TSchema, T extends TSchema>(operation: Operation, querystring: Q, item: T) {
  return route(SIGNED, operation, { querystring, response: { 200: PageSchema(item), ...errorResponses() } })
}
