// A bank account someone asks Rail to pay later (a settlement account, an escrow's disbursement
// destination), checked when it is given rather than when it is paid: a bank of Nigeria, a valid
// NUBAN there, and the name the bank's name enquiry gives matching the name given (the payment
// pipeline's own rule, src/nip/name-match.ts). The pipeline checks the name again when it sends.
import { findBank } from '../nip/banks.ts'
import { namesMatch } from '../nip/name-match.ts'
import { isValidNuban } from '../nip/nuban.ts'
import type { Queryable } from '../platform/db.ts'
import { fieldError, RailError } from '../platform/errors.ts'
import type { ProviderRegistry } from './registry.ts'
import { DEFAULT_PROVIDER, getProvider } from './service.ts'

export interface BankAccount {
  accountNumber: string
  bankCode: string
  accountName: string
}

export interface CheckedBankAccount extends BankAccount {
  /** The holder's name as the bank gave it; null when the provider does no name enquiry. */
  verifiedAccountName: string | null
}

export interface BankAccountCheckDeps {
  pool: Queryable
  providers: ProviderRegistry
}

/**
 * Checks an account before anything is written, so bad input changes nothing. `field` names the
 * account in the request (`bankAccount`, `disbursement`): errors name its fields. 422
 * validation_error for an unknown bank, an invalid NUBAN, an account the bank refuses, or a name
 * that does not name the holder (details.bankAccountName is the bank's name); 502
 * provider_unavailable when the bank gives no answer.
 */
export async function checkBankAccount(deps: BankAccountCheckDeps, account: BankAccount, field: string): Promise<CheckedBankAccount> {
  if (!findBank(account.bankCode)) throw fieldError(`${field}.bankCode`, 'is not a bank code of a Nigerian bank')
  if (!isValidNuban(account.bankCode, account.accountNumber)) throw fieldError(`${field}.accountNumber`, 'is not a valid NUBAN at that bank')
  const provider = await getProvider(deps.pool, DEFAULT_PROVIDER)
  if (!provider.capabilities.nameCheck) return { ...account, verifiedAccountName: null }
  const enquiry = await deps.providers.adapterFor(provider).nameEnquiry({ bankCode: account.bankCode, accountNumber: account.accountNumber })
  if (enquiry.outcome === 'failed') throw fieldError(`${field}.accountNumber`, `the bank's name enquiry refused it: ${enquiry.responseMessage}`)
  if (enquiry.outcome !== 'successful') throw new RailError('provider_unavailable', "The bank's name enquiry gave no answer; nothing changed, try again")
  const bankAccountName = enquiry.value.accountName
  if (!namesMatch(account.accountName, bankAccountName)) throw nameMismatch(`${field}.accountName`, bankAccountName)
  return { ...account, verifiedAccountName: bankAccountName }
}

function nameMismatch(field: string, bankAccountName: string): RailError {
  const message = `does not match the name the bank holds for the account (${bankAccountName})`
  return new RailError('validation_error', `${field}: ${message}`, { fields: [{ field, message }], bankAccountName })
}
