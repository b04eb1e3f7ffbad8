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
  { $id: 'ErrorBody', description: 'The one error body of every endpoint' },
)

/** Error responses every authenticated route may give. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorBodySchema> {
  return Object.fromEntries([400, 401, 422, ...statuses].map((status) => [status, ErrorBodySchema]))
}

/** An absolute http(s) URL for callbacks; further checks (https in live, SSRF) are the caller's. */
export const CallbackUrlSchema = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 })
