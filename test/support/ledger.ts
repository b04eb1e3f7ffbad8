// Ledger helpers for tests: accounts, funding, and the invariant check every money test ends with.
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import { createAccount, createTransfer, type AccountKind } from '../../src/ledger/service.ts'
import { verifyLedger } from '../../src/ledger/verify.ts'
import type { Queryable } from '../../src/platform/db.ts'

export async function newAccount(
  db: Queryable,
  options: {
    kind?: AccountKind
    currency?: string
    debitsMustNotExceedCredits?: boolean
    creditsMustNotExceedDebits?: boolean
    partnerId?: string | null
  } = {},
): Promise<string> {
  return createAccount(db, {
    partnerId: options.partnerId ?? null,
    currency: options.currency ?? 'NGN',
    kind: options.kind ?? 'wallet',
    debitsMustNotExceedCredits: options.debitsMustNotExceedCredits,
    creditsMustNotExceedDebits: options.creditsMustNotExceedDebits,
  })
}

/** Moves `amountKobo` from `source` (an account without limits) into `accountId`. */
export async function fund(
  db: Queryable,
  source: string,
  accountId: string,
  amountKobo: number,
  currency = 'NGN',
): Promise<void> {
  await createTransfer(db, {
    id: randomUUID(),
    debitAccountId: source,
    creditAccountId: accountId,
    amountKobo,
    currency,
    code: 'test_funding',
  })
}

/** `count` wallets (never overdrawn), each funded with `openingKobo` from an account without limits. */
export async function fundedWallets(db: Queryable, count: number, openingKobo: number): Promise<string[]> {
  const source = await newAccount(db)
  const wallets: string[] = []
  for (let i = 0; i < count; i++) {
    const id = await newAccount(db, { kind: 'wallet', debitsMustNotExceedCredits: true })
    await fund(db, source, id, openingKobo)
    wallets.push(id)
  }
  return wallets
}

/**
 * Forges a balanced move: `amountKobo` onto one account's posted debits and another's posted
 * credits with one UPDATE and no transfer behind it — damage that tests expect the database or
 * verifyLedger to catch. A negative amount undoes it.
 */
export async function forgeBalancedTotals(
  db: Queryable,
  move: { debitAccountId: string; creditAccountId: string; amountKobo: number },
): Promise<void> {
  await db.query(
    `UPDATE ledger_accounts SET debits_posted = debits_posted + CASE WHEN id = $1 THEN $3::bigint ELSE 0 END,
                                credits_posted = credits_posted + CASE WHEN id = $2 THEN $3::bigint ELSE 0 END
      WHERE id IN ($1, $2)`,
    [move.debitAccountId, move.creditAccountId, move.amountKobo],
  )
}

export async function expectLedgerVerified(db: Queryable): Promise<void> {
  const verification = await verifyLedger(db)
  expect(verification.problems).toEqual([])
  expect(verification.ok).toBe(true)
}
