// Rail's references in Paystack's transfer reference format, both ways. Paystack takes 16 to 50
// characters of lowercase letters, digits, '-' and '_', and refuses a reference it has seen: the
// mapping must be deterministic (a resend is the same reference, so a duplicate and never a second
// transfer) and invertible (a webhook names Paystack's reference and Rail acts on its own).
//
// Rail's references are lowercase UUIDs, which fit: they are sent as they are, so the sandbox's
// settlement simulator, which registers outcomes by Rail's reference, finds them. A reference that
// does not fit is escaped behind a prefix no identity can carry ('r_'; a fitting reference that
// starts with it is escaped too, so that the two forms never meet):
//   a-z 0-9 -   themselves
//   _           __
//   A-Z         _ and the letter in lower case
//   (too short) _0 then 0s up to 16 characters: the end of the reference
// Anything else (another character, or an escaped form over 50 characters) cannot be mapped.

export const PAYSTACK_REFERENCE_LENGTH_MIN = 16
export const PAYSTACK_REFERENCE_LENGTH_MAX = 50
const PAYSTACK_REFERENCE = /^[a-z0-9_-]{16,50}$/
const ESCAPED_PREFIX = 'r_'
/** What ends an escaped reference padded to the minimum length. */
const PADDING_MARK = '_0'

/** Whether Paystack accepts a reference as it is. */
export function fitsPaystackReference(reference: string): boolean {
  return PAYSTACK_REFERENCE.test(reference)
}

/** The reference Paystack is sent for Rail's; throws when Rail's cannot be mapped. */
export function paystackReference(railReference: string): string {
  if (railReference === '') throw new Error('an empty reference cannot be sent to Paystack')
  if (fitsPaystackReference(railReference) && !railReference.startsWith(ESCAPED_PREFIX)) return railReference
  return escape(railReference)
}

/** Rail's reference of one Paystack was sent (a webhook's); throws when no Rail reference maps to it. */
export function railReferenceOf(reference: string): string {
  if (!fitsPaystackReference(reference))
    throw new Error(`${JSON.stringify(reference.slice(0, 60))} is not a Paystack reference Rail sends`)
  if (!reference.startsWith(ESCAPED_PREFIX)) return reference
  const railReference = unescape(reference)
  // Only the one escaped form of a reference is Rail's: any other spelling was not made here.
  if (escape(railReference) !== reference) throw new Error(`${reference} is not an escaped reference Rail sends`)
  return railReference
}

function escape(railReference: string): string {
  let escaped = ESCAPED_PREFIX
  for (const character of railReference) {
    if (/^[a-z0-9-]$/.test(character)) escaped += character
    else if (character === '_') escaped += '__'
    else if (/^[A-Z]$/.test(character)) escaped += `_${character.toLowerCase()}`
    else throw new Error(`a reference with ${JSON.stringify(character)} cannot be sent to Paystack`)
  }
  if (escaped.length < PAYSTACK_REFERENCE_LENGTH_MIN)
    escaped = `${escaped}${PADDING_MARK}`.padEnd(PAYSTACK_REFERENCE_LENGTH_MIN, '0')
  if (escaped.length > PAYSTACK_REFERENCE_LENGTH_MAX)
    throw new Error(`reference too long for Paystack once escaped (${escaped.length} characters)`)
  return escaped
}

function unescape(reference: string): string {
  let railReference = ''
  for (let index = ESCAPED_PREFIX.length; index < reference.length; index += 1) {
    const character = reference[index]!
    if (character !== '_') {
      railReference += character
      continue
    }
    const next = reference[index + 1]
    if (next === '0') return railReference // the padding: escape() checks what follows
    if (next === '_') railReference += '_'
    else if (next !== undefined && /^[a-z]$/.test(next)) railReference += next.toUpperCase()
    else throw new Error(`${reference} is not an escaped reference Rail sends`)
    index += 1
  }
  return railReference
}
