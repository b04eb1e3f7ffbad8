// Banking for every feature: the banks Rail pays to, the one check of a bank account it is given
// (a Nigerian bank's code, a well-formed NUBAN there), and the one name enquiry (who holds an
// account, asked of the partner's payout provider, from the partner's name-enquiry budget), so that
// every route that takes an account refuses bad input the same way and maps the bank's answer the
// same way. An account is checked in full before the bank is asked, because every enquiry costs
// money at a real bank.
import { BANKS, findBank } from '../nip/banks.ts'
import { namesMatch } from '../nip/name-match.ts'
import { isValidNuban } from '../nip/nuban.ts'
import type { Queryable } from '../../platform/db.ts'
import { fieldError, RailError } from '../../platform/errors.ts'
import { providerFor, requireCapability, type ProviderProfile, type ProviderRegistry } from '../providers/service.ts'
import type { ProviderAdapter, ProviderResult } from '../providers/types.ts'

export interface BankView {
  /** 3-digit CBN bank code: the `bankCode` of every route. */
  code: string
  name: string
  /** 6-digit NIP institution code (the 2020 NUBAN revision): "000" and the CBN code for a bank. */
  nipInstitutionCode: string
}

/** Every bank Rail can pay to and enquire at, by name. */
export function listBanks(): BankView[] {
  const views = BANKS.map((bank) => ({ code: bank.code, name: bank.name, nipInstitutionCode: `000${bank.code}` }))
  return views.sort((a, b) => a.name.localeCompare(b.name))
}

export interface AccountAtBank {
  bankCode: string
  accountNumber: string
}

/** A request's names of an account's fields, named by its errors (`beneficiaryBankCode`, `bankAccount.bankCode`). */
export interface AccountFieldNames {
  bankCode: string
  accountNumber: string
}

const ACCOUNT_FIELDS: AccountFieldNames = { bankCode: 'bankCode', accountNumber: 'accountNumber' }

/** The field names of an account given as an object under `field` (`bankAccount` → `bankAccount.bankCode`). */
function fieldsUnder(field: string): AccountFieldNames {
  return { bankCode: `${field}.bankCode`, accountNumber: `${field}.accountNumber` }
}

/**
 * The check every bank account given to Rail passes before anything is asked or written: 422
 * validation_error naming the bank code's field for a code that is no Nigerian bank's, or the
 * account number's for a number that is not a NUBAN there (a wrong check digit names a typo).
 */
export function checkBankAccount(account: AccountAtBank, fieldNames: AccountFieldNames = ACCOUNT_FIELDS): void {
  if (!findBank(account.bankCode)) {
    throw fieldError(fieldNames.bankCode, 'is not the code of a Nigerian bank (GET /api/v1/rail/banks lists them)')
  }
  if (!isValidNuban(account.bankCode, account.accountNumber)) {
    throw fieldError(fieldNames.accountNumber, 'is not a valid NUBAN at that bank (10 digits, the last a check digit)')
  }
}

export interface BankDeps {
  pool: Queryable
  providers: ProviderRegistry
}

/**
 * The one call of a provider's name enquiry: who holds the account, as the provider answers it
 * (successful with the holder's name, failed with the bank's NIP code, unknown when no answer
 * came). Every enquiry Rail makes goes through here: a request's (enquireAccountName, which spends
 * the partner's budget first and maps the answer to 422 or 502) and the payment pipeline's before
 * an instruction's first send (which decides the answer like any other: a refusal or a holder the
 * given name does not name fails the instruction before anything is sent, no answer is asked again).
 */
export function askAccountName(
  adapter: ProviderAdapter,
  account: AccountAtBank,
): Promise<ProviderResult<{ accountName: string }>> {
  return adapter.nameEnquiry({ bankCode: account.bankCode, accountNumber: account.accountNumber })
}

/**
 * The one name enquiry a request makes: the holder's name as the bank gives it, asked of `provider`
 * after one is spent from the partner's budget (429 rate_limited past it, the bank not asked). A
 * refusal (no such account, a dormant one) is 422 naming the account number's field, with the
 * bank's NIP code and message in details; no answer (a timeout, a 5xx, in progress) is 502
 * provider_unavailable, safe to retry: an enquiry changes nothing.
 */
export async function enquireAccountName(
  deps: BankDeps,
  partnerId: string,
  provider: ProviderProfile,
  account: AccountAtBank,
  asked: { accountNumberField: string; requestId?: string },
): Promise<string> {
  // Spent after every check that needs no bank: only an enquiry that reaches the bank costs
  // anything (or shows a name).
  deps.providers.nameEnquiries.spend(partnerId)
  const adapter = await deps.providers.adapterFor(provider, asked.requestId)
  const enquiry = await askAccountName(adapter, account)
  if (enquiry.outcome === 'successful') return enquiry.value.accountName
  if (enquiry.outcome === 'failed') {
    const message = `the bank refused the name enquiry: ${enquiry.responseMessage}`
    throw new RailError('validation_error', `${asked.accountNumberField}: ${message}`, {
      fields: [{ field: asked.accountNumberField, message }],
      responseCode: enquiry.responseCode,
      responseMessage: enquiry.responseMessage,
    })
  }
  throw new RailError('provider_unavailable', "The bank's name enquiry gave no answer; nothing changed, try again")
}

/**
 * Who holds an account (POST /banks/resolve), asked of the provider the partner's payouts go
 * through: the one that would pay it. In order: the account's check (422), 403
 * capability_disabled when that provider does no name checks, then the name enquiry (429, 422, 502).
 */
export async function resolveAccount(
  deps: BankDeps,
  partnerId: string,
  account: AccountAtBank,
  requestId?: string,
): Promise<{ accountName: string }> {
  checkBankAccount(account)
  const provider = await providerFor(deps.pool, partnerId, 'payouts', deps.providers)
  requireCapability(provider, 'nameCheck')
  const asked = { accountNumberField: ACCOUNT_FIELDS.accountNumber, requestId }
  return { accountName: await enquireAccountName(deps, partnerId, provider, account, asked) }
}

// A bank account someone asks Rail to pay later (a settlement account, an escrow's disbursement
// destination), checked when it is given rather than when it is paid: the account's check, and the
// name the bank's name enquiry gives matching the name given (the payment pipeline's own rule,
// src/banking/nip/name-match.ts). The pipeline checks the name again when it sends.
export interface NamedAccount extends AccountAtBank {
  accountName: string
}

export interface CheckedAccountHolder extends NamedAccount {
  /** The holder's name as the bank gave it; null when the provider does no name enquiry. */
  verifiedAccountName: string | null
}

/**
 * Checks an account to pay later before anything is written, so bad input changes nothing. `field`
 * names the account in the request (`bankAccount`, `disbursement`): errors name its fields. The
 * account's check (422); where the partner's payout provider checks names, the name enquiry
 * (429, 422, 502: enquireAccountName), then 422 naming `field`.accountName when the name given does
 * not name the holder (details.bankAccountName is the bank's name).
 */
export async function checkAccountHolder(
  deps: BankDeps,
  partnerId: string,
  account: NamedAccount,
  field: string,
): Promise<CheckedAccountHolder> {
  const fieldNames = fieldsUnder(field)
  checkBankAccount(account, fieldNames)
  const provider = await providerFor(deps.pool, partnerId, 'payouts', deps.providers)
  if (!provider.capabilities.nameCheck) return { ...account, verifiedAccountName: null }
  const asked = { accountNumberField: fieldNames.accountNumber }
  const bankAccountName = await enquireAccountName(deps, partnerId, provider, account, asked)
  if (!namesMatch(account.accountName, bankAccountName)) throw nameMismatch(`${field}.accountName`, bankAccountName)
  return { ...account, verifiedAccountName: bankAccountName }
}

function nameMismatch(field: string, bankAccountName: string): RailError {
  const message = `does not match the name the bank holds for the account (${bankAccountName})`
  return new RailError('validation_error', `${field}: ${message}`, { fields: [{ field, message }], bankAccountName })
}
