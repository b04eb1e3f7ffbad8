// Schema building blocks shared by every feature. Objects are closed (unknown fields are a 422,
// never silently ignored or mass-assigned) and the error body is the one shape of docs/design.md §8.
import { Type, type TObject, type TProperties, type ObjectOptions, type TSchema, type TUnsafe } from '@sinclair/typebox'
import { ERROR_CATALOGUE, type ErrorCode } from './errors.ts'
import { PAGE_LIMIT_DEFAULT } from './pagination.ts'

/** An object schema that rejects fields it does not name. */
export function closedObject<T extends TProperties>(properties: T, options: ObjectOptions = {}): TObject<T> {
  return Type.Object(properties, { additionalProperties: false, ...options })
}

/**
 * An object whose fields the schema leaves open (metadata, a resolution, a bank's failure): the
 * same JSON Schema as `Type.Object({}, { additionalProperties: true })`, typed as a record so that
 * a reader checks each field it reads instead of seeing an empty object.
 */
export function openObject(options: ObjectOptions = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({
    additionalProperties: true,
    ...options,
    type: 'object',
    properties: {},
  })
}

const ERROR_BODY_FIELDS = {
  statusCode: Type.Integer(),
  error: Type.String({ description: 'A stable snake_case code from docs/errors.md' }),
  message: Type.String(),
  details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
}

export const ErrorBodySchema = Type.Object(ERROR_BODY_FIELDS, {
  $id: 'ErrorBody',
  title: 'ErrorBody',
  description: 'The one error body of every endpoint',
})

/**
 * On an error response's schema: the codes the route answers with that status. The OpenAPI
 * document lists them per operation and refers to ErrorBody (openapi-document.ts).
 */
export const ERROR_CODES_KEYWORD = 'x-rail-error-codes'

/** What a route idempotent on a reference may answer: another body with it, or its first request still being recorded (platform/idempotency.ts). */
export const IDEMPOTENT_CODES = ['idempotency_conflict', 'request_in_progress'] as const satisfies readonly ErrorCode[]

/** The codes of one HTTP status in the catalogue. */
export function codesOfStatus(status: number): ErrorCode[] {
  return (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).filter((code) => ERROR_CATALOGUE[code].status === status)
}

/**
 * The error responses of a route: each code of the catalogue its handler (and what it calls) can
 * throw, grouped by status. The refusals the HTTP edge gives every route — credentials, body
 * syntax, size and media type, shared input rules, rate limit, overload, internal error — are
 * added by the document itself (openapi-document.ts), so only the route's own codes are named
 * here. A bare status stands for every code of that status (prefer the codes).
 */
export function errorResponses(...errors: (ErrorCode | number)[]): Record<number, TSchema> {
  const byStatus = new Map<number, Set<ErrorCode>>()
  for (const code of [
    'bad_request',
    'unauthorized',
    'validation_error',
    ...errors.flatMap((entry) => (typeof entry === 'number' ? codesOfStatus(entry) : [entry])),
  ] as ErrorCode[]) {
    const status = ERROR_CATALOGUE[code].status
    byStatus.set(status, (byStatus.get(status) ?? new Set()).add(code))
  }
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
      status,
      Type.Object(ERROR_BODY_FIELDS, { [ERROR_CODES_KEYWORD]: [...codes] }),
    ]),
  )
}

/** An absolute http(s) URL for callbacks; further checks (https in live, SSRF) are the caller's. */
export const CallbackUrlSchema = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 })

/**
 * What the OpenAPI document states of a schema beyond what it validates: a rule the service
 * enforces itself, with its own error (`unsupported_currency`, a 422 naming the missing field), or
 * a shape a generator can use where the validator takes more. Pass it as the schema's options; the
 * document merges the keywords in (a null removes one) and validation never sees them
 * (openapi-statements.ts).
 */
export const DOCUMENT_KEYWORD = 'x-rail-document'

export function documentOnly(keywords: Record<string, unknown>): Record<string, unknown> {
  return { [DOCUMENT_KEYWORD]: keywords }
}

/** On a route's schema: the body the document shows for a route that reads its body itself (a provider's signed notice). */
export const DOCUMENTED_BODY_KEYWORD = 'x-rail-documented-body'

/** A currency code in a request; only NGN is served (another is 422 unsupported_currency, so the document says NGN and validation takes any code). */
export function CurrencySchema(
  description = 'ISO 4217; only NGN is served (another code is 422 `unsupported_currency`)',
) {
  return Type.String({ pattern: '^[A-Z]{3}$', description, ...documentOnly({ enum: ['NGN'] }) })
}

/** A schema, or null: fields a partner may clear or Rail may not know yet. */
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()])

/** The holder of an account as the partner describes it (structure decided in docs/api.md). */
export const AccountHolderSchema = closedObject(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    firstName: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    lastName: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    phone: Type.Optional(Type.String({ pattern: '^\\+?[0-9]{7,15}$' })),
  },
  { description: 'Who the account collects for; its name (or first and last name) names the account at the bank' },
)

/** A 10-digit NUBAN; `description` says whose (the check digit is verified by the route, which knows the bank). */
export function NubanSchema(description = 'A 10-digit NUBAN', examples?: string[]) {
  return Type.String({ pattern: '^[0-9]{10}$', description, ...(examples ? { examples } : {}) })
}

export const ReferenceSchema = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "The partner's reference; a retry with the same body answers the same object",
})
export const PurposeTagSchema = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "The partner's label for what the account collects for",
})
export const TrackingIdSchema = Type.String({
  pattern: '^trk_[a-z0-9]{24}$',
  description: 'The stable public id of a virtual account',
})

/** The path of one object named by its id. */
export const IdParamsSchema = closedObject({ id: Type.String({ format: 'uuid' }) })

/** A list's query: its filters, then `limit` (1 to `limitMax`, 20 unless given) and `cursor` (the last id of the page before). */
export function PageQuerySchema<T extends TProperties>(filters: T, limitMax: number) {
  return closedObject({
    ...filters,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: limitMax, default: PAGE_LIMIT_DEFAULT })),
    cursor: Type.Optional(Type.String({ format: 'uuid' })),
  })
}

/** A page of a list: its items, and the cursor of the next page (null on the last). */
export function PageSchema<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), nextCursor: Nullable(Type.String()) })
}
