// NUBAN account numbers (docs/banking.md): 9-digit serial + 1 check digit, computed over the
// institution code followed by the serial. Banks use their 3-digit CBN code (weights
// 3,7,3,3,7,3,3,7,3,3,7,3); the 2020 revision uses a 6-digit institution code ("000" + the bank
// code, or "9" + 5 digits for a microfinance bank) over 15 digits (weights 373373373373373),
// which gives banks the same check digit. In both, a check digit of 10 becomes 0.

const BANK_CODE = /^\d{3}$/
const INSTITUTION_CODE = /^\d{6}$/
const SERIAL = /^\d{9}$/
const ACCOUNT_NUMBER = /^\d{10}$/

/** The check digit of `serial` (9 digits) at an institution (3-digit bank or 6-digit code). */
export function nubanCheckDigit(institutionCode: string, serial: string): number {
  if (!BANK_CODE.test(institutionCode) && !INSTITUTION_CODE.test(institutionCode))
    throw new Error(`institution code ${institutionCode} is not 3 or 6 digits`)
  if (!SERIAL.test(serial)) throw new Error(`serial ${serial} is not 9 digits`)
  const digits = `${institutionCode}${serial}`
  // Weights repeat 3,7,3 from the first digit; a 6-digit code is the 15-digit form.
  let sum = 0
  for (let index = 0; index < digits.length; index++) sum += Number(digits[index]) * (index % 3 === 1 ? 7 : 3)
  const check = 10 - (sum % 10)
  return check === 10 ? 0 : check
}

/** The 10-digit account number of `serial` at the institution. */
export function nuban(institutionCode: string, serial: string): string {
  return `${serial}${nubanCheckDigit(institutionCode, serial)}`
}

/** True when `accountNumber` is a well-formed NUBAN at the institution. */
export function isValidNuban(institutionCode: string, accountNumber: string): boolean {
  if (!ACCOUNT_NUMBER.test(accountNumber)) return false
  if (!BANK_CODE.test(institutionCode) && !INSTITUTION_CODE.test(institutionCode)) return false
  return nubanCheckDigit(institutionCode, accountNumber.slice(0, 9)) === Number(accountNumber[9])
}
