// Account holders' names for name enquiry on accounts at other banks: the sandbox has no books for
// them, so each valid NUBAN gets a name derived from its digits — the same name every time.
import { createHash } from 'node:crypto'

const FIRST_NAMES = [
  'ADAEZE',
  'CHUKWUEMEKA',
  'FOLAKE',
  'IBRAHIM',
  'NGOZI',
  'OLUWASEUN',
  'AMINA',
  'TUNDE',
  'CHIOMA',
  'MUSA',
  'BLESSING',
  'EMEKA',
]
const SURNAMES = [
  'OKAFOR',
  'ADEYEMI',
  'BELLO',
  'EZE',
  'OKONKWO',
  'ABUBAKAR',
  'OGUNLEYE',
  'NWOSU',
  'BALOGUN',
  'USMAN',
  'OKORO',
  'ADEBAYO',
]

export function syntheticAccountName(bankCode: string, accountNumber: string): string {
  const digest = createHash('sha256').update(`${bankCode}:${accountNumber}`).digest()
  return `${FIRST_NAMES[digest[0]! % FIRST_NAMES.length]} ${SURNAMES[digest[1]! % SURNAMES.length]}`
}
