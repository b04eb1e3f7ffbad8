// What the OpenAPI document states of requests beyond the validation schemas, so that a client
// knows every rule the service enforces that JSON Schema can say (docs/api.md, "The OpenAPI
// document"): the configured maximum amount (RAIL_MAX_AMOUNT_KOBO, checked as 422
// amount_above_limit), the keywords routes state for the document only (schemas.ts documentOnly:
// NGN, "exactly one of", a field a mode requires), and the control characters every string of a
// request refuses (http.ts, the shared input rules). Validation is unchanged: the server checks
// each of these itself, with its own error.
import { AMOUNT_KEYWORD } from './amounts.ts'
import { CONTROL_CHARACTERS, CONTROL_CHARACTERS_BUT_LINES, FREE_TEXT_FIELDS } from './http.ts'
import { DOCUMENT_KEYWORD } from './schemas.ts'

type Json = Record<string, unknown>

export interface DocumentSettings {
  /** The largest amount of one instruction (RAIL_MAX_AMOUNT_KOBO). */
  maxAmountKobo: number
}

/** Keys whose values are data, not schemas. */
const DATA_KEYS = new Set(['example', 'examples', 'enum', 'const', 'default'])

/** Merges each node's document-only keywords (a null removes one) and states the maximum amount, children after their parent. */
export function stateDocumentedRules(node: unknown, settings: DocumentSettings): void {
  if (Array.isArray(node)) return node.forEach((child) => stateDocumentedRules(child, settings))
  if (typeof node !== 'object' || node === null) return
  const object = node as Json
  const keywords = object[DOCUMENT_KEYWORD] as Json | undefined
  if (keywords) {
    delete object[DOCUMENT_KEYWORD]
    // A copy: the keywords may be a route's own schema objects, which its validator uses.
    for (const [key, value] of Object.entries(structuredClone(keywords))) {
      if (value === null) delete object[key]
      else object[key] = value
    }
  }
  if (object[AMOUNT_KEYWORD] === true) object.maximum = settings.maxAmountKobo
  for (const [key, value] of Object.entries(object)) if (!DATA_KEYS.has(key)) stateDocumentedRules(value, settings)
}

/** `^[^…]*$` from a character class of refused characters. */
const refusing = (characters: RegExp) => `^[^${characters.source.slice(1, -1)}]*$`
const NO_CONTROL_CHARACTERS = refusing(CONTROL_CHARACTERS)
const NO_CONTROL_CHARACTERS_BUT_LINES = refusing(CONTROL_CHARACTERS_BUT_LINES)

/** Every string of a request's body, query and path states, as a pattern, the control characters it refuses. */
export function stateRefusedCharacters(operation: {
  parameters?: Json[]
  requestBody?: { content: Record<string, Json> }
}): void {
  for (const parameter of operation.parameters ?? []) refuseIn(parameter.schema, false)
  refuseIn(operation.requestBody?.content['application/json']?.schema, false)
}

/** Walks a schema as http.ts walks a request: free-text fields (and all under them) may hold line breaks. */
function refuseIn(node: unknown, freeText: boolean): void {
  if (typeof node !== 'object' || node === null) return
  const schema = node as Json
  const isString = schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'))
  // A pattern, format or list of values of its own already excludes them.
  if (isString && !('pattern' in schema) && !('format' in schema) && !('enum' in schema) && !('const' in schema)) {
    schema.pattern = freeText ? NO_CONTROL_CHARACTERS_BUT_LINES : NO_CONTROL_CHARACTERS
  }
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, unknown>))
    refuseIn(property, freeText || FREE_TEXT_FIELDS.has(name))
  for (const key of ['items', 'additionalProperties', 'then', 'else']) refuseIn(schema[key], freeText)
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    if (Array.isArray(schema[key])) for (const member of schema[key]) refuseIn(member, freeText)
}
