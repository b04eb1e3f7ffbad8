// Rail's references in Paystack's transfer reference format and back (src/banking/providers/paystack/reference.ts):
// identity for what fits, an escape for the rest, a refusal for what cannot map, and the inverse
// exact on everything the mapping makes.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  fitsPaystackReference,
  paystackReference,
  railReferenceOf,
} from '../../src/banking/providers/paystack/mapping.ts'

const UUID = '3f2a9c1e-7b4d-4e8a-9f00-1c2d3e4f5a6b'

// One line per case: Rail's reference, the one Paystack is sent, and why.
const MAPPED: readonly (readonly [rail: string, paystack: string, why: string])[] = [
  [UUID, UUID, "Rail's references today: a lowercase UUID fits and is sent as it is"],
  ['abcdefghijklmnop', 'abcdefghijklmnop', '16 characters: the shortest that fits'],
  ['a'.repeat(50), 'a'.repeat(50), '50 characters: the longest that fits'],
  ['pay_out-2024_0001', 'pay_out-2024_0001', "'_' and '-' fit"],
  ['short', 'r_short_00000000', 'too short: escaped, then padded to 16 after the end mark'],
  ['abcdefghijklmno', 'r_abcdefghijklmno', '15 characters: escaped, long enough without padding'],
  ['abcdefghijklm', 'r_abcdefghijklm_0', 'escaped to 15: the end mark makes 17'],
  ['Pay-1', 'r__pay-1_0000000', 'an upper-case letter: _ and the letter'],
  [UUID.toUpperCase().slice(0, 20), 'r_3_f2_a9_c1_e-7_b4_d-4_e8_a-9', 'an upper-case reference under 50 once escaped'],
  ['a_b', 'r_a__b_000000000', "'_' is doubled when escaped"],
  [
    'r_abcdefghijklmnop',
    'r_r__abcdefghijklmnop',
    'fits but starts with the escape prefix: escaped, so the two forms never meet',
  ],
]

// One line per case: a reference Rail cannot send, and why.
const REFUSED: readonly (readonly [rail: string, why: string])[] = [
  ['', 'empty'],
  ['pay.out.2024.0001', "'.' has no escape"],
  ['paiement-été-0001', 'a letter outside a-z'],
  ['pay out 2024 0001', 'a space'],
  ['a'.repeat(51), 'over 50 characters: escaping only makes it longer'],
  [UUID.toUpperCase(), 'an upper-case UUID is over 50 characters once escaped'],
]

describe('paystackReference', () => {
  it.each(MAPPED)('%s → %s (%s)', (rail, paystack) => {
    expect(paystackReference(rail)).toBe(paystack)
    expect(fitsPaystackReference(paystack)).toBe(true)
    expect(railReferenceOf(paystack)).toBe(rail)
  })

  it.each(REFUSED)('refuses %j (%s)', (rail) => {
    expect(() => paystackReference(rail)).toThrow()
  })

  it('sends any UUID as it is', () => {
    fc.assert(
      fc.property(fc.uuid(), (uuid) => {
        expect(paystackReference(uuid)).toBe(uuid)
        expect(railReferenceOf(uuid)).toBe(uuid)
      }),
    )
  })

  it('maps every reference it accepts to one Paystack takes, and back to itself', () => {
    const character = fc.constantFrom(...'abcxyzABCXYZ019-_.'.split(''))
    fc.assert(
      fc.property(fc.array(character, { minLength: 0, maxLength: 60 }), (characters) => {
        const rail = characters.join('')
        let sent: string
        try {
          sent = paystackReference(rail)
        } catch {
          // Refused only when it cannot map: empty, a character with no escape, or too long.
          expect(rail === '' || rail.includes('.') || rail.length > 16).toBe(true)
          return
        }
        expect(fitsPaystackReference(sent)).toBe(true)
        expect(railReferenceOf(sent)).toBe(rail)
      }),
      { numRuns: 2000 },
    )
  })

  it('is one to one: two references never meet at Paystack', () => {
    const character = fc.constantFrom(...'abAB0_-'.split(''))
    const reference = fc.array(character, { minLength: 1, maxLength: 24 }).map((characters) => characters.join(''))
    fc.assert(
      fc.property(reference, reference, (first, second) => {
        fc.pre(first !== second)
        expect(paystackReference(first)).not.toBe(paystackReference(second))
      }),
      { numRuns: 2000 },
    )
  })
})

describe('railReferenceOf', () => {
  // One line per case: a reference a webhook may name that Rail never sent, and why.
  const FOREIGN: readonly (readonly [paystack: string, why: string])[] = [
    ['short', 'too short for Paystack'],
    ['UPPERCASE-REFERENCE-1', 'upper case: not a Paystack reference'],
    ['r_abc_1000000000000', "'_1' is no escape"],
    ['r_abc_0000000000001', 'padding that is not all zeros'],
    ['r_abcdefghijklmno_00', 'padding where none was needed'],
    ['r_abc_', 'a dangling escape'],
    ['r_abcdefghijklmnop_', 'a dangling escape at the end'],
  ]

  it.each(FOREIGN)('refuses %j (%s)', (paystack) => {
    expect(() => railReferenceOf(paystack)).toThrow()
  })
})
