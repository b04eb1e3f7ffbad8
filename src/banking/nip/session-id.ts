// NIP session ids: 30 digits — the 6-digit institution code of the sending institution,
// yyMMddHHmmss (UTC here), and a 12-digit sequence (docs/banking.md).

const INSTITUTION_CODE = /^\d{6}$/
const SEQUENCE_MAX = 999_999_999_999
export const SESSION_ID_PATTERN = /^\d{30}$/

export function nipSessionId(institutionCode: string, at: Date, sequence: number): string {
  if (!INSTITUTION_CODE.test(institutionCode)) throw new Error(`institution code ${institutionCode} is not 6 digits`)
  if (!Number.isInteger(sequence) || sequence < 0 || sequence > SEQUENCE_MAX)
    throw new Error(`sequence ${sequence} is not 0..${SEQUENCE_MAX}`)
  const two = (n: number) => String(n).padStart(2, '0')
  const stamp = `${two(at.getUTCFullYear() % 100)}${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}${two(at.getUTCHours())}${two(at.getUTCMinutes())}${two(at.getUTCSeconds())}`
  return `${institutionCode}${stamp}${String(sequence).padStart(12, '0')}`
}
