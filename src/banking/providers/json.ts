// Reading a provider's JSON answer field by field, without trusting its types.

/** A JSON object, or undefined. */
export function objectOf(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

/** A non-empty string field, or null (its length is bounded where it is kept: clean.ts). */
export function textOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null
}
