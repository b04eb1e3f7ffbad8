// Nigerian banks by CBN code (docs/banking.md). The sandbox bank issues accounts at these
// banks and payouts may only name them; an unknown code is NIP's response 16.

export interface Bank {
  /** 3-digit CBN bank code, as NUBAN's check digit uses it. */
  code: string
  name: string
}

export const BANKS: readonly Bank[] = [
  { code: '044', name: 'Access Bank' },
  { code: '023', name: 'Citibank Nigeria' },
  { code: '050', name: 'Ecobank Nigeria' },
  { code: '070', name: 'Fidelity Bank' },
  { code: '011', name: 'First Bank of Nigeria' },
  { code: '214', name: 'First City Monument Bank' },
  { code: '058', name: 'Guaranty Trust Bank' },
  { code: '221', name: 'Stanbic IBTC Bank' },
  { code: '068', name: 'Standard Chartered Bank' },
  { code: '232', name: 'Sterling Bank' },
  { code: '033', name: 'United Bank for Africa' },
  { code: '032', name: 'Union Bank of Nigeria' },
  { code: '215', name: 'Unity Bank' },
  { code: '035', name: 'Wema Bank' },
  { code: '057', name: 'Zenith Bank' },
  { code: '301', name: 'Jaiz Bank' },
  { code: '101', name: 'Providus Bank' },
]

const BY_CODE = new Map(BANKS.map((bank) => [bank.code, bank]))

export function findBank(code: string): Bank | undefined {
  return BY_CODE.get(code)
}
