// Monnify speaks naira with decimals; Rail keeps integer kobo. Both directions go through decimal
// digits, never a floating-point multiplication: 1234.56 naira is read as "1234" and "56", not as
// 1234.56 × 100 (which is 123455.99999999999). An amount that does not convert back exactly is
// not an amount Rail acts on.

/** Naira digits: no sign, no exponent, no leading zero, at most two decimals. */
const NAIRA_DIGITS = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,2}))?$/

const KOBO_MAX = BigInt(Number.MAX_SAFE_INTEGER)

/** The exact naira decimal of a kobo amount, always with two decimals: 123456 → "1234.56". */
export function nairaFromKobo(kobo: number): string {
  if (!Number.isSafeInteger(kobo) || kobo < 0) throw new RangeError(`not an amount in kobo: ${kobo}`)
  const naira = Math.floor(kobo / 100)
  const rest = kobo - naira * 100
  return `${naira}.${String(rest).padStart(2, '0')}`
}

/**
 * The kobo of a naira amount Monnify sent, as a JSON number or a string, read by its decimal
 * digits; undefined when it is not exactly a whole number of kobo (more than two decimals, an
 * exponent), is negative, not finite, or over Number.MAX_SAFE_INTEGER kobo.
 *
 * A JSON number reaches Rail as a double: its shortest decimal form (what String gives) is the
 * digits Monnify wrote whenever they fit a double exactly, and anything else shows more than two
 * decimals or an exponent, and is refused.
 */
export function koboFromNaira(value: unknown): number | undefined {
  let digits: string
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined
    digits = String(value)
  } else if (typeof value === 'string') {
    digits = value
  } else {
    return undefined
  }
  const match = NAIRA_DIGITS.exec(digits)
  if (!match) return undefined
  const kobo = BigInt(match[1]!) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'))
  return kobo <= KOBO_MAX ? Number(kobo) : undefined
}

/**
 * A JSON request body whose `amount` is the naira decimal written as a JSON number with exactly
 * the digits of `amountNaira` (Monnify takes a number; a double could not carry every amount Rail
 * can send exactly).
 */
export function jsonWithAmount(body: Record<string, unknown>, amountNaira: string): string {
  if (!NAIRA_DIGITS.test(amountNaira)) throw new RangeError(`not a naira amount: ${amountNaira}`)
  const marker = '\u0000amount\u0000'
  return JSON.stringify({ ...body, amount: marker }).replace(JSON.stringify(marker), amountNaira)
}
