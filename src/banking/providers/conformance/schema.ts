// OpenAPI Schema Objects as JSON Schema that ajv compiles. An OpenAPI 3.1 document's schemas are
// JSON Schema 2020-12 already; an OpenAPI 3.0 document's are a dialect of draft 4/7 with its own
// words, translated here:
//   nullable: true              the value may also be null (a type list, or anyOf with null)
//   exclusiveMaximum: true      draft 4's boolean form, as draft 7's number
//   $ref with siblings          3.0 ignores the siblings: only the $ref is kept
//   readOnly / writeOnly        a readOnly property is not required in a request, a writeOnly one not in a response
//   example, discriminator, xml annotations only: dropped (discriminator adds no constraint oneOf lacks)
// Internal references ('#/components/…') are rewritten to an absolute address (`documentId`) under
// which the converted components are registered with ajv, so that each operation's schema compiles
// on its own and shares the components' compiled code.

export type OpenApiVersion = '3.0' | '3.1'

/** Which message a schema describes: a readOnly property is not required in a request, a writeOnly one not in a response. */
export type MessageSide = 'request' | 'response'

type Json = Record<string, unknown>

/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = [
  'items',
  'not',
  'additionalProperties',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
] as const
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYWORDS = ['allOf', 'oneOf', 'anyOf', 'prefixItems'] as const
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions'] as const
/** OpenAPI 3.0 words that are annotations only, dropped so that ajv never sees them. */
const ANNOTATIONS_3_0 = ['example', 'discriminator', 'xml', 'externalDocs', 'deprecated']

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The JSON Schema of one OpenAPI schema object, for the given version and message side. */
export function toJsonSchema(
  schema: unknown,
  options: { version: OpenApiVersion; side: MessageSide; documentId: string },
): unknown {
  if (typeof schema === 'boolean') return schema
  if (!isObject(schema)) return {}
  return options.version === '3.0' ? convert30(schema, options) : convert31(schema, options)
}

function absoluteRef(ref: string, documentId: string): string {
  return ref.startsWith('#') ? `${documentId}${ref}` : ref
}

function convert31(schema: Json, options: { side: MessageSide; documentId: string }): Json {
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string') out[key] = absoluteRef(value, options.documentId)
    else if (key === 'example' || key === 'discriminator' || key === 'xml' || key === 'externalDocs') continue
    else out[key] = convertChild(key, value, (child) => convert31(child, options))
  }
  return withoutHiddenRequired(out, options.side)
}

function convert30(schema: Json, options: { side: MessageSide; documentId: string }): Json {
  // 3.0: "any members other than $ref are ignored" — the reference is the whole schema.
  if (typeof schema.$ref === 'string') return { $ref: absoluteRef(schema.$ref, options.documentId) }
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable' || ANNOTATIONS_3_0.includes(key)) continue
    out[key] = convertChild(key, value, (child) => convert30(child, options))
  }
  exclusiveBoundsAsNumbers(out)
  const converted = withoutHiddenRequired(out, options.side)
  return schema.nullable === true ? withNull(converted) : converted
}

function convertChild(key: string, value: unknown, convert: (child: Json) => Json): unknown {
  const one = (child: unknown): unknown => (isObject(child) ? convert(child) : child)
  if ((SCHEMA_KEYWORDS as readonly string[]).includes(key)) return Array.isArray(value) ? value.map(one) : one(value)
  if ((SCHEMA_LIST_KEYWORDS as readonly string[]).includes(key) && Array.isArray(value)) return value.map(one)
  if ((SCHEMA_MAP_KEYWORDS as readonly string[]).includes(key) && isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([name, child]) => [name, one(child)]))
  }
  return value
}

/** Draft 4's `exclusiveMaximum: true` beside `maximum` is draft 7's `exclusiveMaximum: <maximum>`. */
function exclusiveBoundsAsNumbers(schema: Json): void {
  for (const [exclusive, bound] of [
    ['exclusiveMaximum', 'maximum'],
    ['exclusiveMinimum', 'minimum'],
  ] as const) {
    if (typeof schema[exclusive] !== 'boolean') continue
    if (schema[exclusive] === true && typeof schema[bound] === 'number') {
      schema[exclusive] = schema[bound]
      delete schema[bound]
    } else {
      delete schema[exclusive]
    }
  }
}

/**
 * `nullable: true` adds null to what the schema allows. A plain `type` takes it as a type list; any
 * other schema (a composition, an enum) is wrapped, as null must pass its other keywords too.
 */
function withNull(schema: Json): Json {
  const composed = ['allOf', 'oneOf', 'anyOf', 'not', 'enum', 'const'].some((key) => key in schema)
  if (typeof schema.type === 'string' && !composed) return { ...schema, type: [schema.type, 'null'] }
  if (schema.type === undefined && !composed) return schema // no type: null is allowed already
  return { anyOf: [schema, { type: 'null' }] }
}

/** A readOnly property is not required in a request, a writeOnly one not in a response (OpenAPI 3.0 §4.7.25). */
function withoutHiddenRequired(schema: Json, side: MessageSide): Json {
  if (!Array.isArray(schema.required) || !isObject(schema.properties)) return schema
  const hiddenWord = side === 'request' ? 'readOnly' : 'writeOnly'
  const properties = schema.properties
  const required = (schema.required as unknown[]).filter((name) => {
    const property = typeof name === 'string' ? properties[name] : undefined
    return !(isObject(property) && property[hiddenWord] === true)
  })
  return { ...schema, required }
}

/** Every schema of a document's components, converted: registered with ajv under `documentId`. */
export function convertComponentSchemas(
  components: unknown,
  options: { version: OpenApiVersion; side: MessageSide; documentId: string },
): Json {
  const schemas = isObject(components) && isObject(components.schemas) ? components.schemas : {}
  return {
    components: {
      schemas: Object.fromEntries(
        Object.entries(schemas).map(([name, schema]) => [name, toJsonSchema(schema, options)]),
      ),
    },
  }
}
