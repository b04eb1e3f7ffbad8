// Account-name matching for name enquiry (NIP code 08): the rule in src/banking/nip/name-match.ts, line by line.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { COURTESY_TITLES, NAME_WORDS_MAX, nameWords, namesMatch } from '../../src/banking/nip/name-match.ts'

// One line per case: the name the caller gave, the holder's name the bank answered, the expected
// answer, and why.
const CASES: readonly (readonly [given: string, holder: string, expected: boolean, why: string])[] = [
  ['Ada Obi', 'ADA OBI', true, 'exact match'],
  ['  ada   obi ', 'ADA OBI', true, 'case and spacing'],
  ['Obi-Eze, Ada', 'ADA OBI EZE', true, 'punctuation and hyphen'],
  ["Ada O'Neil", 'ADA O NEIL', true, 'an apostrophe is a word break'],
  ['Okoro Adaeze', 'ADAEZE OKORO', true, 'word order'],
  ['Adaeze Okoro', 'OKORO ADAEZE CHIOMA', true, 'middle name omitted'],
  ['A. Okoro', 'ADAEZE OKORO', true, 'initial on the given side'],
  ['Adaeze O', 'ADAEZE OKORO', true, 'initial of the surname'],
  ['Adaeze Okoro', 'A OKORO', true, 'initial on the holder side'],
  ['A. C. Okoro', 'ADAEZE CHIOMA OKORO', true, 'two initials and a whole word'],
  ['A Ada', 'ADA AMAKA', true, 'the initial takes the other word, so the whole word can pair'],
  ['A Ada Amaka', 'ADA AMAKA AZU', true, 'the initial takes the word no whole word needs'],
  ['A O', 'ADAEZE OKORO', false, 'only initials'],
  ['A. O.', 'ADAEZE OKORO', false, 'only initials, with dots'],
  ['B Okoro', 'ADAEZE OKORO', false, 'initial of no holder word'],
  ['Okoro', 'ADAEZE OKORO', false, 'lone surname of a two-word holder'],
  ['Okoro', 'ADAEZE CHIOMA OKORO', false, 'lone surname of a three-word holder'],
  ['Dangote', 'DANGOTE', true, 'single-word holder'],
  ['D', 'DANGOTE', false, 'single-word holder, initial only'],
  ['Ada Obi', 'ADAEZE OKORO', false, 'different person'],
  ['Test Payee', 'AMINA EZE', false, 'different person, placeholder name'],
  ['Ada Oko', 'ADA OKORO', false, 'a shortened word is not an initial'],
  ['Ada Okoro Bello', 'ADA OKORO', false, 'extra word not in holder'],
  ['Ada Ada', 'ADA OKORO', false, 'a holder word used twice'],
  ['Ada Ada', 'ADA ADA OKORO', true, 'a repeated word the holder also repeats'],
  ['Adébáyọ̀ Olúwaṣeun', 'ADEBAYO OLUWASEUN', true, 'diacritics'],
  ['ADEBAYO OLUWASEUN', 'Adébáyọ̀ Olúwaṣeun', true, 'diacritics on the holder side'],
  ['Mrs. Ada Okoro', 'ADA OKORO', true, 'title on the given side'],
  ['Ada Okoro', 'CHIEF (MRS) ADA OKORO', true, 'titles on the holder side'],
  ['Dr Okoro', 'ADA OKORO', false, 'a title does not count as a word'],
  ['Chief', 'CHIEF', false, 'nothing left after titles'],
  ['Sirius Okoro', 'SIRIUS OKORO', true, 'a title inside a word is kept'],
  ['', 'ADA OKORO', false, 'empty given name'],
  ['   ', 'ADA OKORO', false, 'whitespace given name'],
  ['Ada Okoro', '', false, 'empty holder name'],
  ['Ada Okoro', ' - ', false, 'punctuation-only holder name'],
  ['', '', false, 'both empty'],
  ['Ventures 2020 Ltd', 'VENTURES 2020 LTD', true, 'digits in business names'],
  ['Ventures 2021 Ltd', 'VENTURES 2020 LTD', false, 'different digits'],
]

describe('namesMatch', () => {
  it.each(CASES.map(([given, holder, expected, why]) => ({ given, holder, expected, why })))(
    '$why: $given names $holder → $expected',
    ({ given, holder, expected }) => {
      expect(namesMatch(given, holder)).toBe(expected)
    },
  )

  it(`compares only the first ${NAME_WORDS_MAX} words of a name`, () => {
    const words = Array.from({ length: NAME_WORDS_MAX }, (_unused, i) => `WORD${i}`)
    expect(namesMatch(`${words.join(' ')} INTRUDER`, words.join(' '))).toBe(true)
    expect(namesMatch(`INTRUDER ${words.join(' ')}`, words.join(' '))).toBe(false)
  })

  it('gives the same answer for every order of the words on either side', () => {
    const permutations = <T>(items: readonly T[]): T[][] =>
      items.length === 0
        ? [[]]
        : items.flatMap((item, i) => permutations(items.filter((_other, j) => j !== i)).map((rest) => [item, ...rest]))
    const pairs: readonly [given: string[], holder: string[], expected: boolean][] = [
      [['A.', 'Okoro', 'Chioma'], ['ADAEZE', 'CHIOMA', 'OKORO'], true],
      [['A', 'Ada'], ['ADA', 'AMAKA', 'OBI'], true],
      [['A', 'Ada', 'Amaka'], ['ADA', 'AMAKA', 'AZU'], true],
      [['A', 'O', 'C'], ['ADAEZE', 'OKORO', 'CHIOMA'], false],
      [['Ada', 'Ada'], ['ADA', 'OKORO', 'OBI'], false],
    ]
    for (const [given, holder, expected] of pairs) {
      for (const givenOrder of permutations(given)) {
        for (const holderOrder of permutations(holder)) {
          expect(
            namesMatch(givenOrder.join(' '), holderOrder.join(' ')),
            `${givenOrder.join(' ')} / ${holderOrder.join(' ')}`,
          ).toBe(expected)
        }
      }
    }
  })

  it('never depends on word order (random names)', () => {
    // Few words, many shared first letters and initials: the cases where a greedy pairing goes wrong.
    const word = fc.constantFrom('A', 'O', 'C', 'ADA', 'ADAEZE', 'AMAKA', 'OKORO', 'OBI', 'CHIOMA')
    const shuffled = (words: string[]) =>
      fc.shuffledSubarray(words, { minLength: words.length, maxLength: words.length })
    const name = (maxLength: number) =>
      fc.array(word, { maxLength }).chain((words) => fc.tuple(fc.constant(words), shuffled(words)))
    fc.assert(
      fc.property(name(4), name(5), ([given, givenShuffled], [holder, holderShuffled]) => {
        expect(namesMatch(givenShuffled.join(' '), holderShuffled.join(' '))).toBe(
          namesMatch(given.join(' '), holder.join(' ')),
        )
      }),
    )
  })

  it('matches any name with a whole word against itself, with its words in any order', () => {
    const word = fc.constantFrom('ADA', 'OKORO', 'CHIOMA', 'BELLO', 'A', 'O')
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 6 }).filter((words) => words.some((w) => w.length > 1)),
        fc.nat(),
        (words, rotation) => {
          const turned = [...words.slice(rotation % words.length), ...words.slice(0, rotation % words.length)]
          expect(namesMatch(turned.join(' '), words.join(' '))).toBe(true)
        },
      ),
    )
  })
})

describe('nameWords', () => {
  it.each<[string, string[]]>([
    ["O'Neil", ['O', 'NEIL']],
    ['Obi-Eze', ['OBI', 'EZE']],
    ['A.', ['A']],
    ['  ada   obi ', ['ADA', 'OBI']],
    ['Adébáyọ̀', ['ADEBAYO']],
    ['Mrs. Ada Okoro', ['ADA', 'OKORO']],
    ['Ventures 2020 Ltd', ['VENTURES', '2020', 'LTD']],
    ['', []],
  ])('%j → %j', (name, words) => {
    expect(nameWords(name)).toEqual(words)
  })

  it('drops every courtesy title, whatever its case and punctuation', () => {
    for (const title of COURTESY_TITLES) {
      expect(nameWords(`${title.toLowerCase()}. Ada`), title).toEqual(['ADA'])
    }
  })

  it(`keeps at most ${NAME_WORDS_MAX} words`, () => {
    expect(nameWords(Array.from({ length: 20 }, (_unused, i) => `W${i}`).join(' '))).toHaveLength(NAME_WORDS_MAX)
  })
})
