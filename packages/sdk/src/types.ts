// The SDK's method types, read from the generated OpenAPI types: each operationId becomes a
// method taking `{ path, query, body }` as the document declares them, and answering the
// operation's success body. The idempotency reference of a call that has one is optional:
// the SDK makes one when it is not given.
import type { components, operations, webhooks } from './generated/openapi.ts'
import type { OPERATIONS } from './generated/operations.ts'
import type { ListCall, Page } from './pagination.ts'
import type { RailResponse } from './transport.ts'

export type { components, operations, paths, webhooks } from './generated/openapi.ts'

/** Every named schema of the document: `Schemas['OutboundTransfer']`, `Schemas['Invoice']`, … */
export type Schemas = components['schemas']

export type OperationId = keyof typeof OPERATIONS
type Operation<K extends OperationId> = operations[K]

type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : never

/** The JSON body an operation takes, as the document declares it. */
export type RequestBody<K extends OperationId> = JsonContent<NonNullable<Operation<K>['requestBody']>>

type SuccessStatus = 200 | 201 | 202
/** What an operation answers on success. */
export type ResponseBody<K extends OperationId> = {
  [Status in keyof Operation<K>['responses']]: Status extends SuccessStatus
    ? JsonContent<Operation<K>['responses'][Status]>
    : never
}[keyof Operation<K>['responses']]

/** One element of a cursor list's `data`. */
export type ListItem<K extends OperationId> = ResponseBody<K> extends { data: (infer Item)[] } ? Item : never

type ReferenceField<K extends OperationId> = (typeof OPERATIONS)[K]['reference']
type WithOptionalReference<Body, Field> = Field extends keyof Body
  ? Omit<Body, Field> & Partial<Pick<Body, Field>>
  : Body

type Parameters<K extends OperationId> = Operation<K>['parameters']
type PathPart<K extends OperationId> = Parameters<K> extends { path: infer Path } ? { path: Path } : unknown
type QueryPart<K extends OperationId> =
  Parameters<K> extends { query: infer Query }
    ? { query: Query }
    : [NonNullable<Parameters<K>['query']>] extends [never]
      ? unknown
      : { query?: NonNullable<Parameters<K>['query']> }
type BodyPart<K extends OperationId> = [RequestBody<K>] extends [never]
  ? unknown
  : undefined extends Operation<K>['requestBody']
    ? { body?: WithOptionalReference<RequestBody<K>, ReferenceField<K>> }
    : { body: WithOptionalReference<RequestBody<K>, ReferenceField<K>> }

type Simplify<T> = { [Key in keyof T]: T[Key] } & {}

/** What a method takes: `path` and `query` parameters and the `body`, each only where the operation has them. */
export type Params<K extends OperationId> = Simplify<PathPart<K> & QueryPart<K> & BodyPart<K>>

export interface CallOptions {
  /** Ends the call (and its retries) when aborted. */
  signal?: AbortSignal
  /**
   * The Idempotency-Key of a state-changing call without a reference; default a new UUID per call.
   * Give your own to make the call again later (after a restart, say) as the same call.
   */
  idempotencyKey?: string
}

type Answer<K extends OperationId> = (typeof OPERATIONS)[K]['list'] extends true
  ? ListCall<ListItem<K>, Extract<ResponseBody<K>, Page<ListItem<K>>>>
  : Promise<ResponseBody<K>>

type Method<K extends OperationId, Result> =
  object extends Params<K>
    ? (params?: Params<K>, options?: CallOptions) => Result
    : (params: Params<K>, options?: CallOptions) => Result

/** One method per operationId. Cursor lists answer a ListCall: await it for a page, or iterate every item with `for await`. */
export type RailOperations = { [K in OperationId]: Method<K, Answer<K>> }

/** The same methods, answering the body with the status, headers, `replayed` and the reference. */
export type RailOperationsWithResponse = { [K in OperationId]: Method<K, Promise<RailResponse<ResponseBody<K>>>> }

type WebhookBody<Hook> = Hook extends { post?: infer Post }
  ? Post extends { requestBody?: infer Body }
    ? JsonContent<NonNullable<Body>>
    : never
  : never

/** The payload of each event Rail delivers, by event name (the document's `webhooks`). */
export type RailEventMap = { [Name in keyof webhooks]: WebhookBody<webhooks[Name]> }

/** Any event Rail delivers; narrow it on `event`. */
export type RailWebhookEvent = RailEventMap[keyof RailEventMap]
