// The compiled schemas of one OpenAPI document: ajv set for its version (draft 7 for OpenAPI 3.0
// once translated, 2020-12 for 3.1), the document's component schemas registered once per message
// side, each operation's schema compiled on first use and kept. A schema ajv cannot compile is a
// fault of the document, reported as a violation where it is used rather than thrown.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { convertComponentSchemas, toJsonSchema, type MessageSide, type OpenApiVersion } from './schema.ts'

/** Where the document's converted components live for ajv, per side: internal references are rewritten to it. */
const DOCUMENT_ID_BASE = 'https://conformance.rail.invalid/openapi'

/** OpenAPI's own formats beside JSON Schema's: numbers' sizes checked, the rest annotations. */
const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 }
const OPENAPI_FORMATS: Record<string, { type: 'number' | 'string'; validate: (value: never) => boolean }> = {
  int32: {
    type: 'number',
    validate: (value: number) => Number.isInteger(value) && value >= INT32.min && value <= INT32.max,
  },
  int64: { type: 'number', validate: (value: number) => Number.isInteger(value) },
  float: { type: 'number', validate: (value: number) => Number.isFinite(value) },
  double: { type: 'number', validate: (value: number) => Number.isFinite(value) },
  byte: { type: 'string', validate: (value: string) => /^[A-Za-z0-9+/]*={0,2}$/.test(value) && value.length % 4 === 0 },
  binary: { type: 'string', validate: () => true },
  password: { type: 'string', validate: () => true },
}

export interface SchemaError {
  /** A JSON pointer into the validated value ('' for the whole). */
  pointer: string
  message: string
}

type AnyAjv = Ajv | Ajv2020

function newAjv(version: OpenApiVersion, coerceTypes: boolean): AnyAjv {
  // Not strict: descriptions carry words of their own (x-…, examples) that ajv need not know;
  // unknown formats are accepted rather than failing the whole document.
  const options = {
    strict: false,
    allErrors: true,
    logger: false as const,
    validateFormats: true,
    coerceTypes: coerceTypes ? ('array' as const) : false,
  }
  const ajv: AnyAjv = version === '3.0' ? new Ajv(options) : new Ajv2020(options)
  addFormats.default(ajv as Ajv)
  for (const [name, format] of Object.entries(OPENAPI_FORMATS)) ajv.addFormat(name, format as never)
  return ajv
}

/** What ajv says of one error, in words: the message with the value the schema asked for. */
export function describeSchemaError(error: ErrorObject): SchemaError {
  const params = error.params as Record<string, unknown>
  let message = error.message ?? 'is invalid'
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues))
    message += `: ${params.allowedValues.map((value) => JSON.stringify(value)).join(', ')}`
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string')
    message += `: ${params.additionalProperty}`
  if (error.keyword === 'const') message += `: ${JSON.stringify(params.allowedValue)}`
  return { pointer: error.instancePath, message }
}

export class DocumentSchemas {
  readonly version: OpenApiVersion
  readonly #bodies: AnyAjv
  readonly #parameters: AnyAjv
  readonly #compiled = new Map<string, ValidateFunction | string>()

  constructor(document: Record<string, unknown>, version: OpenApiVersion) {
    this.version = version
    this.#bodies = newAjv(version, false)
    this.#parameters = newAjv(version, true)
    for (const side of ['request', 'response'] as const) {
      const documentId = `${DOCUMENT_ID_BASE}/${side}`
      const converted = {
        $id: documentId,
        ...convertComponentSchemas(document.components, { version, side, documentId }),
      }
      this.#bodies.addSchema(converted)
      if (side === 'request') this.#parameters.addSchema(converted)
    }
  }

  /**
   * Validates a value against a schema of the document (as written there), compiled once per key.
   * Parameters are validated with coercion (a query's "12" is the integer 12), bodies as they are.
   * Returns the errors, or a string when the schema itself does not compile.
   */
  validate(
    key: string,
    schema: unknown,
    value: unknown,
    options: { side: MessageSide; coerce: boolean },
  ): SchemaError[] {
    const validator = this.#validator(key, schema, options)
    if (typeof validator === 'string')
      return [{ pointer: '', message: `the description's schema does not compile: ${validator}` }]
    if (validator(value)) return []
    return (validator.errors ?? []).map(describeSchemaError)
  }

  #validator(key: string, schema: unknown, options: { side: MessageSide; coerce: boolean }): ValidateFunction | string {
    const cacheKey = `${options.side}:${options.coerce}:${key}`
    let validator = this.#compiled.get(cacheKey)
    if (validator === undefined) {
      const documentId = `${DOCUMENT_ID_BASE}/${options.side}`
      const converted = toJsonSchema(schema, { version: this.version, side: options.side, documentId })
      try {
        validator = (options.coerce ? this.#parameters : this.#bodies).compile(converted as object)
      } catch (error) {
        validator = error instanceof Error ? error.message : String(error)
      }
      this.#compiled.set(cacheKey, validator)
    }
    return validator
  }
}
