// Schema building blocks shared by every feature. Objects are closed (unknown fields are a 422,
// never silently ignored or mass-assigned) and the error body is the one shape of docs/design.md §8.
import { Type, type TObject, type TProperties, type ObjectOptions } from '@sinclair/typebox'

/** An object schema that rejects fields it does not name. */
export function closedObject<T extends TProperties>(properties: T, options: ObjectOptions = {}): TObject<T> {
  return Type.Object(properties, { additionalProperties: false, ...options })
}

export const ErrorBodySchema = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String({ description: 'A stable snake_case code from docs/errors.md' }),
    message: Type.String(),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { $id: 'ErrorBody', title: 'ErrorBody', description: 'The one error body of every endpoint' },
)

/** Error responses every authenticated route may give. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorBodySchema> {
  return Object.fromEntries([400, 401, 422, ...statuses].map((status) => [status, ErrorBodySchema]))
}

/** An absolute http(s) URL for callbacks; further checks (https in live, SSRF) are the caller's. */
export const CallbackUrlSchema = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 })

/** A schema, or null: fields a partner may clear or Rail may not know yet. */
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

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

export const ReferenceSchema = Type.String({ minLength: 1, maxLength: 64, description: "The partner's reference; a retry with the same body answers the same object" })
export const PurposeTagSchema = Type.String({ minLength: 1, maxLength: 64, description: "The partner's label for what the account collects for" })
export const TrackingIdSchema = Type.String({ pattern: '^trk_[a-z0-9]{24}$', description: 'The stable public id of a virtual account' })
