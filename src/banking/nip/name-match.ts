// Account-name matching for name enquiry. Before a payout Rail asks the destination bank for the
// account holder's name; when the name the caller gave does not name that holder, the payout fails
// with NIP code 08 (account name mismatch). The rule:
//
// 1. Both names are normalised the same way: Unicode NFKD, diacritics (combining marks) dropped,
//    uppercased, and every run of characters other than A–Z and 0–9 is a word break, so "O'Neil"
//    is O NEIL, "Obi-Eze" is OBI EZE and "A." is A.
// 2. The courtesy titles MR, MRS, MS, MISS, DR, CHIEF, ALHAJI, ALHAJA, PROF, ENGR, PASTOR, BARR
//    and SIR are dropped wherever they stand as whole words, only the first 12 words left are
//    compared (a bound on the work), and a name with no words left never matches.
// 3. Every word of the given name must pair with its own word of the holder's name (no holder
//    word pairs twice): the same word, or an initial (a one-character word) that is the first
//    character of the other word, whichever side the initial is on.
// 4. The given name must pair at least two words, or one when the holder's name is one word, so
//    a lone surname does not name a two-word holder.
// 5. At least one pair must be a whole word, the same word on both sides and not an initial, so
//    initials alone ("A. O.") never match.
// 6. The holder's name may have words the given name leaves out, such as a middle name:
//    "Adaeze Okoro" names OKORO ADAEZE CHIOMA.
// 7. The names match when any pairing of their words meets all of this, so word order on either
//    side never matters, and neither do case, spacing or punctuation.

/**
 * What a partner is told of a payout that failed the name check: that the name given does not name
 * the holder, never whom the bank names. A payout's check runs in a worker, where no request can be
 * refused past the partner's name-enquiry budget, so its answer (the transfer, the wallet move,
 * their callbacks) shows no name; the holder's name is shown only by the routes that spend the
 * budget (docs/banking.md "Bank list and account-name check").
 */
export const NAME_MISMATCH_MESSAGE = "Account name mismatch: the name given does not name the account's holder"

/** The failure code of a payout whose name the bank's holder does not match (NIP 08). */
export const NAME_MISMATCH_CODE = 'name_mismatch'

/** Words compared per name: names have few, and the cap bounds the pairing work on hostile input. */
export const NAME_WORDS_MAX = 12

/** Pairs a given name must make, unless the holder's name has fewer words (then all of them). */
const PAIRS_MIN = 2

/** Characters in an initial: a one-character word stands for any word it begins. */
const INITIAL_LENGTH = 1

/** Courtesy titles: they say nothing about who holds the account, and banks add or omit them. */
export const COURTESY_TITLES: ReadonlySet<string> = new Set([
  'MR',
  'MRS',
  'MS',
  'MISS',
  'DR',
  'CHIEF',
  'ALHAJI',
  'ALHAJA',
  'PROF',
  'ENGR',
  'PASTOR',
  'BARR',
  'SIR',
])

/** Combining marks left by NFKD: the diacritics of "Adébáyọ̀", which banks' records often lack. */
const COMBINING_MARKS = /\p{M}/gu

/** Anything but A–Z and 0–9 separates words: apostrophes, hyphens, dots, commas, spaces. */
const WORD_BREAK = /[^A-Z0-9]+/

/** The words of a name as the rule compares them (exported for docs/tests). */
export function nameWords(name: string): string[] {
  const plain = name.normalize('NFKD').replace(COMBINING_MARKS, '').toUpperCase()
  return plain
    .split(WORD_BREAK)
    .filter((word) => word !== '' && !COURTESY_TITLES.has(word))
    .slice(0, NAME_WORDS_MAX)
}

/** True when `word` is an initial, standing for any word that begins with it. */
function isInitial(word: string): boolean {
  return word.length === INITIAL_LENGTH
}

/** True when two words may pair: the same word, or an initial (on either side) of the other. */
function wordsPair(given: string, holder: string): boolean {
  if (given === holder) return true
  return (isInitial(given) && holder.startsWith(given)) || (isInitial(holder) && given.startsWith(holder))
}

/** True when a pair is a whole word: the same word on both sides, and not an initial. */
function isWholeWordPair(given: string, holder: string): boolean {
  return given === holder && !isInitial(given)
}

/**
 * True when every given word pairs with a distinct holder word: a maximum bipartite matching by
 * augmenting paths (Kuhn), so the answer is the best pairing's, whatever order the words are in.
 */
function pairsEveryWord(given: readonly string[], holder: readonly string[]): boolean {
  // The given word each holder word is paired with so far, by holder index.
  const partnerOf: (number | undefined)[] = holder.map(() => undefined)

  // Pair given word `g`, moving earlier pairs to other holder words when that frees one.
  const pair = (g: number, visited: boolean[]): boolean => {
    for (let h = 0; h < holder.length; h++) {
      if (visited[h] || !wordsPair(given[g]!, holder[h]!)) continue
      visited[h] = true
      const partner = partnerOf[h]
      if (partner === undefined || pair(partner, visited)) {
        partnerOf[h] = g
        return true
      }
    }
    return false
  }

  return given.every((_word, g) =>
    pair(
      g,
      holder.map(() => false),
    ),
  )
}

/** `words` without the one at `index`. */
function without(words: readonly string[], index: number): string[] {
  return words.filter((_word, i) => i !== index)
}

/** True when the name a caller gave names the account's holder, by the rule above. */
export function namesMatch(givenName: string, holderName: string): boolean {
  const given = nameWords(givenName)
  const holder = nameWords(holderName)
  if (given.length === 0 || holder.length === 0) return false
  // Every given word pairs, so the given name's length is the number of pairs.
  if (given.length < Math.min(PAIRS_MIN, holder.length)) return false
  if (given.length > holder.length) return false
  // A whole-word pair is required: try each one, and pair the remaining words around it.
  return given.some((word, g) =>
    holder.some((other, h) => isWholeWordPair(word, other) && pairsEveryWord(without(given, g), without(holder, h))),
  )
}
