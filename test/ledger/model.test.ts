// Model-based property test: random sequences of single, pending, post, void, linked and retried
// transfers run against the ledger and against a small in-memory model of the same rules; after
// every command the results and every balance agree.
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTransfers, getBalances, type TransferInput, type TransferResultCode } from '../../src/ledger/service.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { expectLedgerVerified, fund, newAccount } from '../support/ledger.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase(4)
})
afterAll(async () => {
  await expectLedgerVerified(db.pool)
  await db.drop()
})

interface ModelAccount {
  dp: number
  dP: number
  cp: number
  cP: number
  debitsLimited: boolean
  creditsLimited: boolean
}

interface ModelPending {
  debit: number
  credit: number
  amount: number
  status: 'pending' | 'posted' | 'voided'
}

type Command =
  | { kind: 'single' | 'pending'; debit: number; credit: number; amount: number }
  | { kind: 'post'; pending: number; amount: number | null }
  | { kind: 'void'; pending: number }
  | { kind: 'linked'; legs: { debit: number; credit: number; amount: number }[] }
  | { kind: 'retry'; which: number }

const ACCOUNT_COUNT = 4 // 0: unlimited, 1 and 2: wallets (no overdraft), 3: capped (credits ≤ debits)
const account = fc.integer({ min: 0, max: ACCOUNT_COUNT - 1 })
const amount = fc.integer({ min: 1, max: 600 })
const leg = fc.record({ debit: account, credit: account, amount })
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constantFrom('single' as const, 'pending' as const), debit: account, credit: account, amount }),
  fc.record({ kind: fc.constant('post' as const), pending: fc.nat(20), amount: fc.option(amount, { nil: null }) }),
  fc.record({ kind: fc.constant('void' as const), pending: fc.nat(20) }),
  fc.record({ kind: fc.constant('linked' as const), legs: fc.array(leg, { minLength: 2, maxLength: 3 }) }),
  fc.record({ kind: fc.constant('retry' as const), which: fc.nat(50) }),
)

/** The model's verdict on a new transfer, in the order the ledger checks. */
function checkNew(accounts: ModelAccount[], debit: number, credit: number, value: number): TransferResultCode {
  if (debit === credit) return 'accounts_must_be_different'
  const d = accounts[debit]!
  const c = accounts[credit]!
  if (d.debitsLimited && d.dp + d.dP + value > d.cP) return 'exceeds_credits'
  if (c.creditsLimited && c.cp + c.cP + value > c.dP) return 'exceeds_debits'
  return 'ok'
}

it('the ledger behaves like its model', { timeout: 120_000 }, async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 25 }), async (commands) => {
      const source = await newAccount(db.pool)
      const ids = [
        await newAccount(db.pool),
        await newAccount(db.pool, { kind: 'wallet', debitsMustNotExceedCredits: true }),
        await newAccount(db.pool, { kind: 'wallet', debitsMustNotExceedCredits: true }),
        await newAccount(db.pool, { kind: 'payable', creditsMustNotExceedDebits: true }),
      ]
      await fund(db.pool, source, ids[1]!, 1_000)
      const model: ModelAccount[] = ids.map((_id, index) => ({ dp: 0, dP: 0, cp: 0, cP: index === 1 ? 1_000 : 0, debitsLimited: index === 1 || index === 2, creditsLimited: index === 3 }))
      const pendings: (ModelPending & { id: string })[] = []
      const done: TransferInput[] = []

      for (const cmd of commands) {
        let transfers: TransferInput[]
        let expected: TransferResultCode[]
        let linked = false
        if (cmd.kind === 'single' || cmd.kind === 'pending') {
          const transfer: TransferInput = { id: randomUUID(), phase: cmd.kind, debitAccountId: ids[cmd.debit], creditAccountId: ids[cmd.credit], amountKobo: cmd.amount, currency: 'NGN', code: 'model' }
          const verdict = checkNew(model, cmd.debit, cmd.credit, cmd.amount)
          if (verdict === 'ok') {
            const d = model[cmd.debit]!
            const c = model[cmd.credit]!
            if (cmd.kind === 'single') {
              d.dP += cmd.amount
              c.cP += cmd.amount
            } else {
              d.dp += cmd.amount
              c.cp += cmd.amount
              pendings.push({ id: transfer.id, debit: cmd.debit, credit: cmd.credit, amount: cmd.amount, status: 'pending' })
            }
            done.push(transfer)
          }
          transfers = [transfer]
          expected = [verdict]
        } else if (cmd.kind === 'post' || cmd.kind === 'void') {
          if (pendings.length === 0) continue
          const pending = pendings[cmd.pending % pendings.length]!
          const value = cmd.kind === 'post' ? cmd.amount : null
          const transfer: TransferInput = { id: randomUUID(), phase: cmd.kind, pendingId: pending.id, code: 'model', ...(value === null ? {} : { amountKobo: value }) }
          let verdict: TransferResultCode
          if (pending.status === 'posted') verdict = 'pending_transfer_already_posted'
          else if (pending.status === 'voided') verdict = 'pending_transfer_already_voided'
          else if (value !== null && value > pending.amount) verdict = 'exceeds_pending_transfer_amount'
          else {
            verdict = 'ok'
            const d = model[pending.debit]!
            const c = model[pending.credit]!
            d.dp -= pending.amount
            c.cp -= pending.amount
            if (cmd.kind === 'post') {
              d.dP += value ?? pending.amount
              c.cP += value ?? pending.amount
            }
            pending.status = cmd.kind === 'post' ? 'posted' : 'voided'
            done.push(transfer)
          }
          transfers = [transfer]
          expected = [verdict]
        } else if (cmd.kind === 'linked') {
          linked = true
          transfers = cmd.legs.map((l) => ({ id: randomUUID(), debitAccountId: ids[l.debit], creditAccountId: ids[l.credit], amountKobo: l.amount, currency: 'NGN', code: 'model' }))
          const trial = model.map((a) => ({ ...a }))
          expected = cmd.legs.map(() => 'linked_event_failed' as TransferResultCode)
          let failedAt = -1
          for (const [index, l] of cmd.legs.entries()) {
            const verdict = checkNew(trial, l.debit, l.credit, l.amount)
            if (verdict !== 'ok') {
              failedAt = index
              expected[index] = verdict
              break
            }
            trial[l.debit]!.dP += l.amount
            trial[l.credit]!.cP += l.amount
          }
          if (failedAt === -1) {
            expected = cmd.legs.map(() => 'ok')
            trial.forEach((a, index) => Object.assign(model[index]!, a))
            done.push(...transfers)
          }
        } else {
          if (done.length === 0) continue
          transfers = [done[(cmd as { which: number }).which % done.length]!]
          expected = ['exists']
        }
        const results = await createTransfers(db.pool, transfers, { linked })
        expect(results.map((r) => r.result)).toEqual(expected)
        const balances = await getBalances(db.pool, ids)
        for (const [index, id] of ids.entries()) {
          const actual = balances.find((b) => b.accountId === id)!
          const m = model[index]!
          expect([actual.debitsPendingKobo, actual.debitsPostedKobo, actual.creditsPendingKobo, actual.creditsPostedKobo]).toEqual([m.dp, m.dP, m.cp, m.cP])
        }
      }
    }),
    { numRuns: 40 },
  )
})
