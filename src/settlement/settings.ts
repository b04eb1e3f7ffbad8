// A partner's settlement settings (docs/settlement.md "Settings"): float or bank mode, the bank
// account (name-checked before anything is written) and the daily cut-off.
import { checkAccountHolder } from '../banking/banks/service.ts'
import type { OutboundDeps } from '../money-out/outbound/service.ts'
import type { Partner } from '../partners/service.ts'
import type { Clock } from '../platform/clock.ts'
import { withTransaction, type Pool, type Queryable } from '../platform/db.ts'
import { fieldError } from '../platform/errors.ts'
import { claimKeyInTransaction, type IdempotencyKey } from '../platform/idempotency-keys.ts'
import { bankName } from '../collections/virtual-accounts/service.ts'
import { nextCutoff, SETTLEMENT_TIME_ZONE } from './cycles.ts'
import * as repo from './repo.ts'
import type { SettlementSettingsJson } from './schemas.ts'
import type { SettlementMode } from './states.ts'

/** What settings need of the settlement deps: the database, the bank (name enquiry), the time. */
export interface SettingsDeps {
  pool: Pool
  outbound: OutboundDeps
  clock: Clock
}

export interface SettlementSettingsInput {
  mode: SettlementMode
  bankAccount?: { accountNumber: string; bankCode: string; accountName: string }
  cutoffTime?: string
}

export async function getSettlementSettings(pool: Queryable, partnerId: string): Promise<repo.SettlementSettings> {
  return (await repo.selectSettings(pool, partnerId)) ?? repo.defaultSettings(partnerId)
}

export function toSettingsJson(settings: repo.SettlementSettings, now: Date): SettlementSettingsJson {
  const account = settings.bankAccount
  return {
    mode: settings.mode,
    bankAccount: account && {
      accountNumber: account.accountNumber,
      bankCode: account.bankCode,
      bankName: bankName(account.bankCode),
      accountName: account.accountName,
      verifiedAccountName: account.verifiedAccountName,
    },
    cutoffTime: settings.cutoffTime,
    timeZone: SETTLEMENT_TIME_ZONE,
    nextCutoffAt: settings.mode === 'bank' ? nextCutoff(now, settings.cutoffTime).toISOString() : null,
    updatedAt: settings.updatedAt?.toISOString() ?? null,
  }
}

/**
 * Replaces the caller's settlement settings. The bank account is checked before anything is
 * written — a bank of Nigeria, a valid NUBAN there, and the name the bank's name enquiry gives
 * matching the name given — so bad input changes nothing. The same request again with its
 * Idempotency-Key changes nothing and answers the settings as they are. Switching to bank mode
 * starts with the next cut-off; switching to float moves what waits in collections to the float
 * at the next minute's run.
 */
export async function putSettlementSettings(
  deps: SettingsDeps,
  partner: Partner,
  input: SettlementSettingsInput,
  key?: IdempotencyKey,
): Promise<repo.SettlementSettings> {
  if (input.mode === 'bank' && !input.bankAccount) throw fieldError('bankAccount', 'is required when mode is bank')
  const current = await getSettlementSettings(deps.pool, partner.id)
  const bankAccount = input.bankAccount
    ? await checkedBankAccount(deps, partner.id, input.bankAccount, current.bankAccount)
    : null
  return withTransaction(deps.pool, async (tx) => {
    const replayed = (await claimKeyInTransaction(tx, key)) === 'replayed'
    const locked = await repo.lockSettings(tx, partner.id)
    if (replayed) return locked
    const bankSince =
      input.mode === 'bank' ? (locked.mode === 'bank' && locked.bankSince ? locked.bankSince : deps.clock.now()) : null
    return repo.updateSettings(tx, partner.id, {
      mode: input.mode,
      bankAccount,
      cutoffTime: input.cutoffTime ?? repo.DEFAULT_CUTOFF,
      bankSince,
    })
  })
}

async function checkedBankAccount(
  deps: SettingsDeps,
  partnerId: string,
  account: NonNullable<SettlementSettingsInput['bankAccount']>,
  registered: repo.SettlementSettings['bankAccount'],
): Promise<NonNullable<repo.SettlementSettings['bankAccount']>> {
  // The account registered already, with the same name: the bank answered for it before.
  if (
    registered &&
    registered.bankCode === account.bankCode &&
    registered.accountNumber === account.accountNumber &&
    registered.accountName === account.accountName
  ) {
    return registered
  }
  // A new account spends from the partner's name-enquiry budget (429 past it): the answer may name its holder.
  return checkAccountHolder(
    { pool: deps.pool, providers: deps.outbound.payments.providers },
    partnerId,
    account,
    'bankAccount',
  )
}
