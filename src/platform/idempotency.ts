// Idempotency helpers (docs/design.md §5): a request is identified by its reference, and told apart from
// a different request with the same reference by a hash of its body.
import { createHash } from 'node:crypto'

/** SHA-256 of the body with object keys sorted, so that key order does not make a new request. */
export function requestHash(body: unknown): string {
  return createHash('sha256').update(stableJson(body)).digest('hex')
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${stableJson(field)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/** The header a replayed response carries. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed'
