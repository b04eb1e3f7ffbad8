// Banking facts of docs/banking.md: NUBAN check digits, NIP response codes, session ids.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BANKS, findBank } from '../../src/banking/nip/banks.ts'
import { NIP_CODES, nipMessage, nipOutcome } from '../../src/banking/nip/codes.ts'
import { isValidNuban, nuban, nubanCheckDigit } from '../../src/banking/nip/nuban.ts'
import { nipSessionId, SESSION_ID_PATTERN } from '../../src/banking/nip/session-id.ts'

describe('NUBAN', () => {
  it('matches the worked example: bank 011, serial 000001457 → 0000014579', () => {
    expect(nubanCheckDigit('011', '000001457')).toBe(9)
    expect(nuban('011', '000001457')).toBe('0000014579')
    expect(isValidNuban('011', '0000014579')).toBe(true)
  })

  it('turns a check digit of 10 into 0', () => {
    // Find a serial whose weighted sum ends in 0: 10 − 0 = 10, which must become 0.
    const serial = Array.from({ length: 1000 }, (_unused, i) => String(i).padStart(9, '0')).find((s) => {
      const digits = `058${s}`
      let sum = 0
      for (let k = 0; k < 12; k++) sum += Number(digits[k]) * (k % 3 === 1 ? 7 : 3)
      return sum % 10 === 0
    })!
    expect(nubanCheckDigit('058', serial)).toBe(0)
  })

  it('gives banks the same check digit in the 3-digit and the 2020 6-digit form', () => {
    fc.assert(
      fc.property(fc.constantFrom(...BANKS.map((bank) => bank.code)), fc.stringMatching(/^\d{9}$/), (bank, serial) => {
        expect(nubanCheckDigit(`000${bank}`, serial)).toBe(nubanCheckDigit(bank, serial))
      }),
    )
  })

  it('detects every single-digit error', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...BANKS.map((bank) => bank.code)),
        fc.stringMatching(/^\d{9}$/),
        fc.integer({ min: 0, max: 9 }),
        fc.integer({ min: 1, max: 9 }),
        (bank, serial, position, shift) => {
          const account = nuban(bank, serial)
          const mutated = `${account.slice(0, position)}${(Number(account[position]) + shift) % 10}${account.slice(position + 1)}`
          expect(isValidNuban(bank, account)).toBe(true)
          expect(isValidNuban(bank, mutated)).toBe(false)
        },
      ),
    )
  })

  it.each([
    ['011', '000001457'], // 9 digits
    ['011', '00000145790'], // 11 digits
    ['011', '000001457a'],
    ['11', '0000014579'], // bad institution code
  ])('refuses malformed input %s / %s', (bank, account) => {
    expect(isValidNuban(bank, account)).toBe(false)
  })

  it('microfinance banks use a 6-digit code starting with 9', () => {
    const account = nuban('912345', '123456789')
    expect(isValidNuban('912345', account)).toBe(true)
    expect(() => nubanCheckDigit('9123', '123456789')).toThrow(/3 or 6 digits/)
  })

  it('knows the CBN codes of docs/banking.md', () => {
    expect(findBank('058')?.name).toBe('Guaranty Trust Bank')
    expect(findBank('999')).toBeUndefined()
    expect(BANKS).toHaveLength(17)
  })
})

describe('NIP response codes', () => {
  it.each([
    ['00', 'success'],
    ['01', 'pending'],
    ['02', 'pending'],
    ['09', 'pending'],
    ['25', 'not_found'],
    ['26', 'pending'],
    ['94', 'pending'],
    ['96', 'pending'],
    ['97', 'pending'],
    ['03', 'failed'],
    ['05', 'failed'],
    ['06', 'failed'],
    ['07', 'failed'],
    ['08', 'failed'],
    ['12', 'failed'],
    ['13', 'failed'],
    ['16', 'failed'],
    ['51', 'failed'],
    ['57', 'failed'],
    ['58', 'failed'],
    ['61', 'failed'],
    ['63', 'failed'],
    ['65', 'failed'],
    ['91', 'failed'],
    ['92', 'failed'],
  ])('%s is %s', (code, outcome) => {
    expect(nipOutcome(code)).toBe(outcome)
  })

  it('treats no answer and unknown codes as pending, never failed', () => {
    expect(nipOutcome(undefined)).toBe('pending')
    expect(nipOutcome('XX')).toBe('pending')
    expect(nipMessage('XX')).toMatch(/Unrecognised/)
    expect(new Set(NIP_CODES.map((entry) => entry.code)).size).toBe(NIP_CODES.length)
  })
})

describe('NIP session ids', () => {
  it('are 30 digits: institution, yyMMddHHmmss, 12-digit sequence', () => {
    const id = nipSessionId('999037', new Date('2023-09-13T16:37:57Z'), 5000082268)
    expect(id).toBe('999037230913163757005000082268')
    expect(id).toMatch(SESSION_ID_PATTERN)
  })

  it('refuses a bad institution code or sequence', () => {
    expect(() => nipSessionId('99903', new Date(), 1)).toThrow()
    expect(() => nipSessionId('999037', new Date(), -1)).toThrow()
    expect(() => nipSessionId('999037', new Date(), 1e12)).toThrow()
  })
})
