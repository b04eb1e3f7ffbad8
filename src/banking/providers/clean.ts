// What a provider sends is stored as Rail's: in an instruction's answer, a credit's payer and
// narration, an account's name. A provider's text may carry what PostgreSQL cannot store (NUL, in
// text and jsonb alike) or run past a column's bound; a write that throws on it would fail the step
// that carries a payment's outcome, again at every retry. So every adapter's answers pass through
// here once, at the seam: control characters removed, lengths bounded, and a credit whose id cannot
// be stored read as no credit at all (the caller then asks again, or refuses the webhook).
import type {
  ProviderAccount,
  ProviderAdapter,
  ProviderCredit,
  ProviderResult,
  ProviderWebhook,
  WebhookRequest,
} from './types.ts'

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/g

/** Text made storable: control characters removed, at most `maxChars` characters. */
export function cleanText(value: string, maxChars: number): string {
  return value.replace(CONTROL, ' ').trim().slice(0, maxChars)
}

function cleanOptional(value: string | null, maxChars: number): string | null {
  if (value === null) return null
  const cleaned = cleanText(value, maxChars)
  return cleaned === '' ? null : cleaned
}

/** A result's text bounded as the columns that keep it (response code 16, message 500, provider reference 200). */
export function cleanResult<T>(
  result: ProviderResult<T>,
  cleanValue: (value: T) => T = (value) => value,
): ProviderResult<T> {
  if (result.outcome === 'unknown') return { outcome: 'unknown', error: cleanText(result.error, 500) }
  const answer = {
    responseCode: cleanText(result.responseCode, 16),
    responseMessage: cleanText(result.responseMessage, 500),
  }
  if (result.outcome === 'successful')
    return {
      ...result,
      ...answer,
      providerReference: cleanText(result.providerReference, 200),
      value: cleanValue(result.value),
    }
  return { ...result, ...answer, providerReference: cleanOptional(result.providerReference, 200) }
}

const STORABLE_ID = /^[\u0020-\u007e]{1,64}$/

/** A credit as Rail stores it; undefined when its id or account reference is not one Rail can keep (a credit is applied once per id). */
export function cleanCredit(credit: ProviderCredit): ProviderCredit | undefined {
  if (!STORABLE_ID.test(credit.sessionId)) return undefined
  return {
    ...credit,
    payerName: cleanOptional(credit.payerName, 100),
    payerAccountNumber: cleanOptional(credit.payerAccountNumber, 20),
    payerBankCode: cleanOptional(credit.payerBankCode, 10),
    narration: cleanOptional(credit.narration, 200),
    accountReference:
      credit.accountReference !== null && STORABLE_ID.test(credit.accountReference) ? credit.accountReference : null,
  }
}

function cleanAccount(account: ProviderAccount): ProviderAccount {
  return { ...account, accountName: cleanText(account.accountName, 100) }
}

function cleanCredits(result: ProviderResult<ProviderCredit[]>): ProviderResult<ProviderCredit[]> {
  const cleaned = cleanResult(result)
  if (cleaned.outcome !== 'successful') return cleaned
  const credits = cleaned.value.map(cleanCredit)
  if (credits.some((credit) => credit === undefined))
    return { outcome: 'unknown', error: 'a credit in the answer has an id Rail cannot store' }
  return { ...cleaned, value: credits as ProviderCredit[] }
}

function cleanWebhook(read: ProviderWebhook): ProviderWebhook {
  if (read.kind === 'credit') {
    const credit = cleanCredit(read.credit)
    return credit ? { kind: 'credit', credit } : { kind: 'invalid', message: 'the credit has an id Rail cannot store' }
  }
  if (read.kind === 'ignored') return { kind: 'ignored', event: cleanText(read.event, 100) }
  if (read.kind === 'invalid') return { kind: 'invalid', message: cleanText(read.message, 200) }
  return read
}

/** The adapter with every answer made storable (the registry hands out only such adapters). */
export function cleanAnswers(adapter: ProviderAdapter): ProviderAdapter {
  return {
    traits: adapter.traits,
    createWallet: async (request) => cleanResult(await adapter.createWallet(request), cleanAccount),
    credit: async (request) => cleanResult(await adapter.credit(request)),
    debit: async (request) => cleanResult(await adapter.debit(request)),
    walletTransfer: async (request) => cleanResult(await adapter.walletTransfer(request)),
    sendToBank: async (request) => cleanResult(await adapter.sendToBank(request)),
    nameEnquiry: async (request) =>
      cleanResult(await adapter.nameEnquiry(request), (value) => ({ accountName: cleanText(value.accountName, 100) })),
    payout: async (request) => cleanResult(await adapter.payout(request)),
    requery: async (reference) => cleanResult(await adapter.requery(reference)),
    allocateVirtualAccount: async (request) => cleanResult(await adapter.allocateVirtualAccount(request), cleanAccount),
    archiveVirtualAccount: async (accountNumber) => cleanResult(await adapter.archiveVirtualAccount(accountNumber)),
    listCredits: async (accountNumber, since) => cleanCredits(await adapter.listCredits(accountNumber, since)),
    balance: async () => cleanResult(await adapter.balance()),
    readWebhook: (request: WebhookRequest) => cleanWebhook(adapter.readWebhook(request)),
  }
}
