// Banks for partners: the banks Rail pays to, and who holds an account at one (the provider's name
// enquiry), so that a partner can show its customer the holder's name before paying. A request is
// checked in full before the bank is asked — a Nigerian bank's code, a well-formed NUBAN there, a
// provider approved for name checks — because every enquiry costs money at a real bank.
import { BANKS, findBank } from '../nip/banks.ts'
import { isValidNuban } from '../nip/nuban.ts'
import type { Queryable } from '../platform/db.ts'
import { fieldError, RailError } from '../platform/errors.ts'
import { providerFor, requireCapability, type ProviderProfile, type ProviderRegistry } from '../providers/service.ts'

export interface BankView {
  /** 3-digit CBN bank code: the `bankCode` of every route. */
  code: string
  name: string
  /** 6-digit NIP institution code (the 2020 NUBAN revision): "000" and the CBN code for a bank. */
  nipInstitutionCode: string
}

/** Every bank Rail can pay to and enquire at, by name. */
export function listBanks(): BankView[] {
  return BANKS.map((bank) => ({ code: bank.code, name: bank.name, nipInstitutionCode: `000${bank.code}` })).sort((a, b) => a.name.localeCompare(b.name))
}

export interface AccountToResolve {
  bankCode: string
  accountNumber: string
}

export interface BankDeps {
  pool: Queryable
  providers: ProviderRegistry
}

/**
 * The checks that need no bank, in order: 422 for a code that is no Nigerian bank's or a number
 * that is not a NUBAN there (its check digit names a typo), 403 capability_disabled when the
 * provider does no name checks. Answers the provider to ask.
 */
export async function checkResolvable(deps: BankDeps, partnerId: string, account: AccountToResolve): Promise<ProviderProfile> {
  if (!findBank(account.bankCode)) throw fieldError('bankCode', 'is not the code of a Nigerian bank (GET /api/v1/rail/banks lists them)')
  if (!isValidNuban(account.bankCode, account.accountNumber)) throw fieldError('accountNumber', 'is not a valid NUBAN at that bank (its check digit does not match)')
  // Asked of the provider the partner's payouts go through: the one that will pay the account.
  const provider = await providerFor(deps.pool, partnerId, 'payouts', deps.providers)
  requireCapability(provider, 'nameCheck')
  return provider
}

/**
 * The holder's name as the bank gives it. A refusal (no such account, a dormant one) is 422 naming
 * accountNumber with the bank's NIP code; no answer (a timeout, a 5xx, in progress) is 502
 * provider_unavailable, safe to retry: an enquiry changes nothing.
 */
export async function resolveAccountName(deps: BankDeps, provider: ProviderProfile, account: AccountToResolve, requestId?: string): Promise<{ accountName: string }> {
  const enquiry = await (await deps.providers.adapterFor(provider, requestId)).nameEnquiry({ bankCode: account.bankCode, accountNumber: account.accountNumber })
  if (enquiry.outcome === 'successful') return { accountName: enquiry.value.accountName }
  if (enquiry.outcome === 'failed') {
    const message = `the bank refused the name enquiry: ${enquiry.responseMessage}`
    throw new RailError('validation_error', `accountNumber: ${message}`, {
      fields: [{ field: 'accountNumber', message }],
      responseCode: enquiry.responseCode,
      responseMessage: enquiry.responseMessage,
    })
  }
  throw new RailError('provider_unavailable', "The bank's name enquiry gave no answer; nothing changed, try again")
}
