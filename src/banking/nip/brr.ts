// BRR (docs/design.md §10): "BRR" + 17 digits, the last a Luhn check digit over the 16 before it.
import { randomInt } from 'node:crypto'

export const BRR_PATTERN = /^BRR[0-9]{17}$/

export function luhnCheckDigit(digits: string): number {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i])
    if (i % 2 === 0) digit *= 2 // every second digit from the right, starting with the rightmost (the check digit comes after it)
    sum += digit > 9 ? digit - 9 : digit
  }
  return (10 - (sum % 10)) % 10
}

export function generateBrr(): string {
  let body = ''
  for (let i = 0; i < 16; i++) body += String(randomInt(10))
  return `BRR${body}${luhnCheckDigit(body)}`
}

export function isValidBrr(brr: string): boolean {
  return BRR_PATTERN.test(brr) && luhnCheckDigit(brr.slice(3, 19)) === Number(brr[19])
}
