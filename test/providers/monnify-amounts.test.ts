// Monnify's naira amounts and Rail's kobo (src/banking/providers/monnify/amounts.ts): exact both ways, by
// decimal digits, and anything that does not convert back exactly is refused.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonWithAmount, koboFromNaira, nairaFromKobo } from '../../src/banking/providers/monnify/amounts.ts'

// One line per case: kobo → the naira string Rail sends.
const TO_NAIRA: readonly (readonly [kobo: number, naira: string])[] = [
  [0, '0.00'],
  [1, '0.01'],
  [10, '0.10'],
  [99, '0.99'],
  [100, '1.00'],
  [101, '1.01'],
  [123456, '1234.56'],
  [2000000, '20000.00'],
  [Number.MAX_SAFE_INTEGER, '90071992547409.91'],
]

// One line per case: what Monnify sent → the kobo Rail reads (undefined: refused), and why.
const FROM_NAIRA: readonly (readonly [value: unknown, kobo: number | undefined, why: string])[] = [
  [1234.56, 123456, 'a JSON number with two decimals'],
  ['1234.56', 123456, 'the same as a string'],
  [20, 2000, 'a whole number'],
  ['20', 2000, 'a whole number as a string'],
  [100.5, 10050, 'one decimal'],
  ['100.5', 10050, 'one decimal as a string'],
  ['100.50', 10050, 'a trailing zero'],
  [0, 0, 'zero'],
  ['0.01', 1, 'one kobo'],
  [0.1, 10, 'a number whose binary form is inexact still prints as written'],
  [1.005, undefined, 'three decimals'],
  ['1.005', undefined, 'three decimals as a string'],
  ['1.000', undefined, 'three decimals, even zeros'],
  [0.1 + 0.2, undefined, 'a float sum is not an amount'],
  [-1, undefined, 'negative'],
  ['-1.00', undefined, 'negative as a string'],
  [Number.NaN, undefined, 'not a number'],
  [Number.POSITIVE_INFINITY, undefined, 'infinite'],
  [1e21, undefined, 'an exponent form'],
  ['1e3', undefined, 'an exponent form as a string'],
  [1e-7, undefined, 'a tiny exponent form'],
  ['90071992547409.91', Number.MAX_SAFE_INTEGER, 'the most kobo Rail holds exactly'],
  ['90071992547409.92', undefined, 'one kobo over Number.MAX_SAFE_INTEGER'],
  ['100000000000000000000', undefined, 'far over'],
  ['', undefined, 'empty'],
  [' 1.00', undefined, 'a space'],
  ['1.', undefined, 'a dot without decimals'],
  ['.5', undefined, 'decimals without a whole part'],
  ['01.00', undefined, 'a leading zero'],
  ['1,000.00', undefined, 'a thousands separator'],
  ['₦100', undefined, 'a currency sign'],
  [null, undefined, 'null'],
  [undefined, undefined, 'absent'],
  [true, undefined, 'a boolean'],
  [{ amount: 1 }, undefined, 'an object'],
  [10n, undefined, 'a bigint'],
]

describe('nairaFromKobo', () => {
  it.each(TO_NAIRA)('%s kobo is %s naira', (kobo, naira) => {
    expect(nairaFromKobo(kobo)).toBe(naira)
  })

  it.each([-1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1])('refuses %s, which is no amount in kobo', (kobo) => {
    expect(() => nairaFromKobo(kobo)).toThrow(RangeError)
  })
})

describe('koboFromNaira', () => {
  it.each(FROM_NAIRA.map(([value, kobo, why]) => ({ value, kobo, why })))('$why: $kobo', ({ value, kobo }) => {
    expect(koboFromNaira(value)).toBe(kobo)
  })

  it('reads back every amount it writes, as a string', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (kobo) => {
        expect(koboFromNaira(nairaFromKobo(kobo))).toBe(kobo)
      }),
    )
  })

  it('reads back every amount of up to 15 significant digits as a JSON number (what a double holds exactly in decimal)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999_999_999_999_999 }), (kobo) => {
        expect(koboFromNaira(JSON.parse(nairaFromKobo(kobo)) as number)).toBe(kobo)
      }),
    )
  })

  it('refuses any string with more than two decimals', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.stringMatching(/^[0-9]{3,6}$/), (naira, decimals) => {
        expect(koboFromNaira(`${naira}.${decimals}`)).toBeUndefined()
      }),
    )
  })

  it('refuses every negative amount', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (kobo) => {
        expect(koboFromNaira(`-${nairaFromKobo(kobo)}`)).toBeUndefined()
        expect(koboFromNaira(-kobo / 100)).toBeUndefined()
      }),
    )
  })
})

describe('jsonWithAmount', () => {
  it('writes the amount as a JSON number with exactly its digits, even past what a double holds', () => {
    const body = jsonWithAmount({ reference: 'r', currency: 'NGN' }, nairaFromKobo(Number.MAX_SAFE_INTEGER))
    expect(body).toBe('{"reference":"r","currency":"NGN","amount":90071992547409.91}')
  })

  it('keeps the rest of the body as JSON, and the amount given over any in the body', () => {
    const body = jsonWithAmount({ amount: 5, narration: 'say "hi"' }, '1234.56')
    expect(JSON.parse(body)).toEqual({ amount: 1234.56, narration: 'say "hi"' })
  })

  it('refuses an amount that is not naira digits', () => {
    expect(() => jsonWithAmount({}, '1e3')).toThrow(RangeError)
  })
})
