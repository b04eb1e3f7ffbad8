// Counterparties (docs/contracts/collections-and-payouts.md §Counterparties, docs/design.md §10): saved beneficiaries. One per partner and account; made
// on the first payout to the account (outbound transfers call recordPayoutsTo) or explicitly, and
// renamed or archived by the partner. Archiving is soft state: it does not block payouts.
import { checkBankAccount } from '../../banking/banks/service.ts'
import { withTransaction, type Pool, type Queryable } from '../../platform/db.ts'
import { notFound } from '../../platform/errors.ts'
import { uuidv7 } from '../../platform/ids.ts'
import { pageQueryLimit, toPage } from '../../platform/pagination.ts'
import { readPage } from '../../platform/read-pool.ts'
import { claimKeyInTransaction, type IdempotencyKey } from '../../platform/idempotency-keys.ts'
import * as repo from './repo.ts'

export type { Counterparty } from './repo.ts'

export interface CounterpartyAccount {
  bankCode: string
  accountNumber: string
  accountName: string
}

/** The payouts' accounts (a batch of submits, in its transaction), each saved as a counterparty on first use or marked used, once. */
export async function recordPayoutsTo(
  tx: Queryable,
  payouts: readonly { partnerId: string; account: CounterpartyAccount }[],
): Promise<void> {
  const unique = new Map(
    payouts.map((payout) => [`${payout.partnerId}:${payout.account.bankCode}:${payout.account.accountNumber}`, payout]),
  )
  await repo.upsertUsedMany(
    tx,
    [...unique.values()].map(({ partnerId, account }) => ({
      id: uuidv7(),
      partnerId,
      ...account,
      name: account.accountName,
    })),
  )
}

/** The bank's name for the account, as a payout's name enquiry found it. */
export async function recordVerifiedName(
  db: Queryable,
  partnerId: string,
  bankCode: string,
  accountNumber: string,
  verifiedAccountName: string,
): Promise<void> {
  await repo.updateVerifiedName(db, partnerId, bankCode, accountNumber, verifiedAccountName)
}

export async function createCounterparty(
  pool: Pool,
  partnerId: string,
  input: CounterpartyAccount & { name?: string },
): Promise<{ counterparty: repo.Counterparty; created: boolean }> {
  checkBankAccount(input)
  const { name, ...account } = input
  return repo.upsertCounterparty(
    pool,
    { id: uuidv7(), partnerId, ...account, name: name ?? account.accountName },
    false,
  )
}

export async function getCounterparty(pool: Pool, partnerId: string, id: string): Promise<repo.Counterparty> {
  const found = await repo.selectCounterparty(pool, partnerId, id)
  if (!found) throw notFound('Counterparty')
  return found
}

export const COUNTERPARTIES_PAGE_MAX = 100

export async function listCounterparties(
  pool: Pool,
  filter: { partnerId: string; archived?: boolean; limit: number; cursor?: string },
) {
  const rows = await readPage(pool, filter.cursor, (reader, before) =>
    repo.selectCounterparties(reader, {
      partnerId: filter.partnerId,
      archived: filter.archived,
      beforeId: before,
      limit: pageQueryLimit(filter.limit),
    }),
  )
  const page = toPage(rows, filter.limit)
  return { counterparties: page.items, nextCursor: page.nextCursor }
}

/**
 * Renames or archives (soft state only); another partner's id is 404. The same request again with
 * its Idempotency-Key changes nothing and answers the counterparty as it is.
 */
export async function updateCounterparty(
  pool: Pool,
  partnerId: string,
  id: string,
  change: { name?: string; archived?: boolean },
  key?: IdempotencyKey,
): Promise<repo.Counterparty> {
  return withTransaction(pool, async (tx) => {
    const replayed = (await claimKeyInTransaction(tx, key)) === 'replayed'
    const counterparty = replayed
      ? await repo.selectCounterparty(tx, partnerId, id)
      : await repo.updateCounterparty(tx, partnerId, id, change)
    if (!counterparty) throw notFound('Counterparty')
    return counterparty
  })
}
