// verifyLedger() finds each kind of damage it looks for. The database refuses most of it, so each
// case first switches off the guard that would (this is a throw-away database), damages the
// ledger, checks that verify names the damage, and puts everything back.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTransfers } from '../../src/ledger/service.ts'
import { verifyLedger } from '../../src/ledger/verify.ts'
import { withTransaction } from '../../src/platform/db.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { expectLedgerVerified, forgeBalancedTotals, fund, newAccount } from '../support/ledger.ts'

let db: TestDatabase
const acc = { source: '', wallet: '', other: '' }
beforeAll(async () => {
  db = await createTestDatabase()
  acc.source = await newAccount(db.pool)
  acc.wallet = await newAccount(db.pool, { kind: 'wallet', debitsMustNotExceedCredits: true })
  acc.other = await newAccount(db.pool)
  await fund(db.pool, acc.source, acc.wallet, 1_000)
})
afterAll(async () => db?.drop())

async function problems(): Promise<string[]> {
  const verification = await verifyLedger(db.pool)
  expect(verification.ok).toBe(verification.problems.length === 0)
  return verification.problems
}

it('an account past its balance flag', async () => {
  const overdraw = (amountKobo: number) => ({ debitAccountId: acc.wallet, creditAccountId: acc.other, amountKobo })
  await withTransaction(db.pool, async (tx) => {
    await tx.query('ALTER TABLE ledger_accounts DROP CONSTRAINT ledger_accounts_debits_within_credits')
    await forgeBalancedTotals(tx, overdraw(5_000))
  })
  const found = await problems()
  expect(found).toContain(`account ${acc.wallet} breaks its balance flag`)
  expect(found.some((problem) => problem.startsWith(`account ${acc.wallet}: stored totals`))).toBe(true)
  await withTransaction(db.pool, async (tx) => {
    await forgeBalancedTotals(tx, overdraw(-5_000))
    await tx.query(`ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_debits_within_credits
                      CHECK (NOT debits_must_not_exceed_credits OR debits_pending + debits_posted <= credits_posted)`)
  })
  await expectLedgerVerified(db.pool)
})

it('a transfer in a currency its accounts do not hold', async () => {
  const id = randomUUID()
  await db.pool.query(
    `INSERT INTO ledger_transfers (id, debit_account_id, credit_account_id, amount_kobo, currency, phase, code,
                                   debit_booked_after, debit_available_after, credit_booked_after, credit_available_after)
     VALUES ($1, $2, $3, 7, 'USD', 'single', 'forged', 0, 0, 0, 0)`,
    [id, acc.source, acc.other],
  )
  const found = await problems()
  expect(found).toContain(`transfer ${id} moves a currency its accounts do not hold`)
  await withTransaction(db.pool, async (tx) => {
    await tx.query('ALTER TABLE ledger_transfers DISABLE TRIGGER ledger_transfers_append_only')
    await tx.query('DELETE FROM ledger_transfers WHERE id = $1', [id])
    await tx.query('ALTER TABLE ledger_transfers ENABLE TRIGGER ledger_transfers_append_only')
  })
  await expectLedgerVerified(db.pool)
})

it('a reservation marked resolved with no resolution behind it', async () => {
  const reservation = randomUUID()
  const [outcome] = await createTransfers(db.pool, [
    {
      id: reservation,
      debitAccountId: acc.wallet,
      creditAccountId: acc.other,
      amountKobo: 10,
      currency: 'NGN',
      code: 'test_hold',
      phase: 'pending',
    },
  ])
  expect(outcome!.result).toBe('ok')
  await db.pool.query(
    `UPDATE ledger_pending_transfers SET status = 'voided', resolved_by = transfer_id, resolved_at = now() WHERE transfer_id = $1`,
    [reservation],
  )
  const found = await problems()
  expect(found).toContain(`pending transfer ${reservation} is voided but its resolution says otherwise`)
  await db.pool.query(
    `UPDATE ledger_pending_transfers SET status = 'pending', resolved_by = NULL, resolved_at = NULL WHERE transfer_id = $1`,
    [reservation],
  )
  await expectLedgerVerified(db.pool)
})
