// Amounts typed into dashboard forms: naira as people write them ("12500", "12,500.50", "₦500"),
// read exactly into integer kobo on the digits (no binary fractions anywhere near money).
const NAIRA_TEXT = /^(\d{1,3}(,\d{3})+|\d+)(\.\d{1,2})?$/

/** The kobo a naira amount stands for, as a bigint (zero and any size included: the caller bounds it); undefined when it is not one. */
export function parseNaira(text: unknown): bigint | undefined {
  if (typeof text !== 'string') return undefined
  const trimmed = text.trim().replace(/^₦\s*/, '')
  if (!NAIRA_TEXT.test(trimmed)) return undefined
  const [whole, fraction = ''] = trimmed.replaceAll(',', '').split('.')
  return BigInt(whole!) * 100n + BigInt(fraction.padEnd(2, '0'))
}

/** Integer kobo for a positive naira amount that fits a safe integer; undefined for anything else. */
export function koboOfNaira(text: unknown): number | undefined {
  const kobo = parseNaira(text)
  return kobo !== undefined && kobo > 0n && kobo <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(kobo) : undefined
}
