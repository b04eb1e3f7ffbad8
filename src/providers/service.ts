// Providers: their profiles and approvals, and the check of a bank account given to be paid later.
// Approving a capability (or withdrawing it) is an operator's act, done with `rail provider set`.
import { findBank } from '../nip/banks.ts'
import { namesMatch } from '../nip/name-match.ts'
import { isValidNuban } from '../nip/nuban.ts'
import type { Queryable } from '../platform/db.ts'
import { fieldError, RailError } from '../platform/errors.ts'
import type { Capability, ProviderProfile } from './capabilities.ts'
import type { ProviderRegistry } from './registry.ts'
import * as repo from './repo.ts'

export { CAPABILITIES, isCapability, requireCapability, type Capabilities, type Capability, type ProviderProfile } from './capabilities.ts'
export type { ProviderRegistry } from './registry.ts'
export { NAME_ENQUIRIES_PER_MINUTE_DEFAULT, type NameEnquiryBudget } from './name-enquiries.ts'
export type { ProviderCall } from './repo.ts'

/** The provider a wallet gets when its creator names none. */
export const DEFAULT_PROVIDER = 'sandbox'

/** What Rail asked the bank under a reference (a send, each requery), and what it answered, oldest first. */
export async function providerCallsFor(db: Queryable, reference: string, limit = 100): Promise<repo.ProviderCall[]> {
  return repo.selectCallsFor(db, reference, limit)
}

export async function listProviders(db: Queryable): Promise<ProviderProfile[]> {
  return repo.selectProviders(db)
}

export async function getProvider(db: Queryable, name: string): Promise<ProviderProfile> {
  const provider = await repo.selectProvider(db, name)
  if (!provider) throw new RailError('not_found', `Provider ${name} not found`)
  return provider
}

export async function setCapability(db: Queryable, name: string, capability: Capability, enabled: boolean): Promise<ProviderProfile> {
  const provider = await repo.updateCapability(db, name, capability, enabled)
  if (!provider) throw new RailError('not_found', `Provider ${name} not found`)
  return provider
}

// A bank account someone asks Rail to pay later (a settlement account, an escrow's disbursement
// destination), checked when it is given rather than when it is paid: a bank of Nigeria, a valid
// NUBAN there, and the name the bank's name enquiry gives matching the name given (the payment
// pipeline's own rule, src/nip/name-match.ts). The pipeline checks the name again when it sends.
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
 * provider_unavailable when the bank gives no answer. The enquiry shows the partner the holder's
 * name, so it spends from the partner's name-enquiry budget, the one POST /banks/resolve spends:
 * past it, 429 rate_limited and the bank is not asked.
 */
export async function checkBankAccount(deps: BankAccountCheckDeps, partnerId: string, account: BankAccount, field: string): Promise<CheckedBankAccount> {
  if (!findBank(account.bankCode)) throw fieldError(`${field}.bankCode`, 'is not a bank code of a Nigerian bank')
  if (!isValidNuban(account.bankCode, account.accountNumber)) throw fieldError(`${field}.accountNumber`, 'is not a valid NUBAN at that bank')
  const provider = await getProvider(deps.pool, DEFAULT_PROVIDER)
  if (!provider.capabilities.nameCheck) return { ...account, verifiedAccountName: null }
  deps.providers.nameEnquiries.spend(partnerId)
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
