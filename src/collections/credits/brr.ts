// The status behind a BRR (the bank's reference of a collection): a credit of the caller's, or a
// BRR-bearing account with its latest credits.
import type { Pool } from '../../platform/db.ts'
import { notFound } from '../../platform/errors.ts'
import { selectByBrr as selectAccountByBrr, selectById as selectAccountById } from '../virtual-accounts/service.ts'
import * as repo from './repo.ts'
import { creditLifecycle, toBrrAccount, toCreditJson } from './views.ts'

/** How many of an account's latest credits a BRR lookup shows. */
const ACCOUNT_CREDITS_SHOWN = 20

/**
 * The lifecycle status behind a BRR of the caller's: a collection transaction (a credit), or a
 * BRR-bearing account with its latest transactions. Another partner's or an unknown BRR: 404.
 */
export async function lookupBrr(pool: Pool, partnerId: string, brr: string) {
  const credit = await repo.selectByBrr(pool, partnerId, brr)
  if (credit) {
    const account = credit.virtualAccountId ? await selectAccountById(pool, credit.virtualAccountId) : undefined
    return {
      brr,
      kind: 'transaction' as const,
      status: creditLifecycle(credit.status),
      transaction: toCreditJson(credit),
      account: account ? toBrrAccount(account) : null,
      transactions: [],
    }
  }
  const account = await selectAccountByBrr(pool, partnerId, brr)
  if (!account) throw notFound('BRR')
  const credits = await repo.listByAccount(pool, account.id, ACCOUNT_CREDITS_SHOWN)
  return {
    brr,
    kind: 'account' as const,
    status: account.status,
    transaction: null,
    account: toBrrAccount(account),
    transactions: credits.map(toCreditJson),
  }
}
