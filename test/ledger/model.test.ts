// Model-based property test: random sequences of single, pending (with or without a timeout),
// post, void, linked chains (mixing new transfers with posts and voids), timeouts passing, the
// expiry sweep, and retries (the same transfer, or one field changed) run against the ledger and
// against a small in-memory model of the same rules. After every command the results, every
// balance, every reservation's state and the number of transfers agree.
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  createTransfers,
  getBalances,
  voidTimedOutPendingTransfers,
  type TransferInput,
  type TransferResultCode,
} from '../../src/ledger/service.ts'
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

type PendingStatus = 'pending' | 'posted' | 'voided' | 'expired'

interface ModelPending {
  id: string
  debit: number
  credit: number
  amount: number
  status: PendingStatus
  timedOut: boolean
}

interface Model {
  accounts: ModelAccount[]
  pendings: ModelPending[]
  /** Transfers the ledger holds for this run's accounts. */
  transferCount: number
}

type NewLeg = { kind: 'single' | 'pending'; debit: number; credit: number; amount: number; timeoutS: number | null }
type Resolution = { kind: 'post'; pending: number; amount: number | null } | { kind: 'void'; pending: number }
type Leg = NewLeg | Resolution
const isResolution = (leg: Leg): leg is Resolution => leg.kind === 'post' || leg.kind === 'void'
type Command =
  | Leg
  | { kind: 'linked'; legs: Leg[] }
  | { kind: 'retry'; which: number; change: 'none' | 'amount' | 'code' | 'source' | 'timeout' }
  | { kind: 'time_passes'; pending: number }
  | { kind: 'sweep' }

const ACCOUNT_COUNT = 4 // 0: unlimited, 1 and 2: wallets (no overdraft), 3: capped (credits ≤ debits)
const account = fc.integer({ min: 0, max: ACCOUNT_COUNT - 1 })
const amount = fc.integer({ min: 1, max: 600 })
const newLeg: fc.Arbitrary<NewLeg> = fc.record({
  kind: fc.constantFrom('single' as const, 'pending' as const),
  debit: account,
  credit: account,
  amount,
  timeoutS: fc.option(fc.integer({ min: 1, max: 3_600 }), { nil: null }),
})
const resolution: fc.Arbitrary<Resolution> = fc.oneof(
  fc.record({ kind: fc.constant('post' as const), pending: fc.nat(20), amount: fc.option(amount, { nil: null }) }),
  fc.record({ kind: fc.constant('void' as const), pending: fc.nat(20) }),
)
const command: fc.Arbitrary<Command> = fc.oneof(
  newLeg,
  resolution,
  fc.record({
    kind: fc.constant('linked' as const),
    legs: fc.array(fc.oneof(newLeg, newLeg, resolution), { minLength: 2, maxLength: 4 }),
  }),
  fc.record({
    kind: fc.constant('retry' as const),
    which: fc.nat(50),
    change: fc.constantFrom('none' as const, 'amount' as const, 'code' as const, 'source' as const, 'timeout' as const),
  }),
  fc.record({ kind: fc.constant('time_passes' as const), pending: fc.nat(20) }),
  fc.record({ kind: fc.constant('sweep' as const) }),
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

/** The model's verdict on a post or void of `pending`, in the order the ledger checks; applies it when ok. */
function resolve(model: Model, pending: ModelPending, leg: Resolution): TransferResultCode {
  if (pending.status === 'posted') return 'pending_transfer_already_posted'
  if (pending.status === 'voided') return 'pending_transfer_already_voided'
  if (pending.status === 'expired') return 'pending_transfer_expired'
  if (leg.kind === 'post' && pending.timedOut) return 'pending_transfer_expired'
  if (leg.kind === 'post' && leg.amount !== null && leg.amount > pending.amount)
    return 'exceeds_pending_transfer_amount'
  const d = model.accounts[pending.debit]!
  const c = model.accounts[pending.credit]!
  d.dp -= pending.amount
  c.cp -= pending.amount
  if (leg.kind === 'post') {
    d.dP += leg.amount ?? pending.amount
    c.cP += leg.amount ?? pending.amount
  }
  pending.status = leg.kind === 'post' ? 'posted' : pending.timedOut ? 'expired' : 'voided'
  model.transferCount++
  return 'ok'
}

/** Applies one new transfer to the model when it is allowed. */
function create(model: Model, leg: NewLeg, id: string): TransferResultCode {
  const verdict = checkNew(model.accounts, leg.debit, leg.credit, leg.amount)
  if (verdict !== 'ok') return verdict
  const d = model.accounts[leg.debit]!
  const c = model.accounts[leg.credit]!
  if (leg.kind === 'single') {
    d.dP += leg.amount
    c.cP += leg.amount
  } else {
    d.dp += leg.amount
    c.cp += leg.amount
    model.pendings.push({
      id,
      debit: leg.debit,
      credit: leg.credit,
      amount: leg.amount,
      status: 'pending',
      timedOut: false,
    })
  }
  model.transferCount++
  return 'ok'
}

/** Applies one leg to the model when the ledger would: its verdict, and for a post or void the reservation it names. */
function applyLeg(
  model: Model,
  leg: Leg,
  transfer: TransferInput,
): { verdict: TransferResultCode; reserved?: ModelPending } {
  if (!isResolution(leg)) return { verdict: create(model, leg, transfer.id) }
  const reserved = model.pendings.find((p) => p.id === transfer.pendingId)!
  return { verdict: resolve(model, reserved, leg), reserved }
}

function copyModel(model: Model): Model {
  return {
    accounts: model.accounts.map((a) => ({ ...a })),
    pendings: model.pendings.map((p) => ({ ...p })),
    transferCount: model.transferCount,
  }
}

it('the ledger behaves like its model', { timeout: 240_000 }, async () => {
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
      let model: Model = {
        accounts: ids.map((_id, index) => ({
          dp: 0,
          dP: 0,
          cp: 0,
          cP: index === 1 ? 1_000 : 0,
          debitsLimited: index === 1 || index === 2,
          creditsLimited: index === 3,
        })),
        pendings: [],
        transferCount: 1, // the funding
      }
      /** Transfers the ledger made, with the model's reservation for posts and voids (to know what a retry must repeat). */
      const done: { transfer: TransferInput; reserved?: ModelPending }[] = []

      const toTransfer = (leg: Leg, pendings: ModelPending[]): TransferInput => {
        if (!isResolution(leg)) {
          return {
            id: randomUUID(),
            phase: leg.kind,
            debitAccountId: ids[leg.debit],
            creditAccountId: ids[leg.credit],
            amountKobo: leg.amount,
            currency: 'NGN',
            code: 'model',
            sourceType: 'model_step',
            sourceId: randomUUID(),
            ...(leg.kind === 'pending' && leg.timeoutS !== null ? { timeoutS: leg.timeoutS } : {}),
          }
        }
        const pending = pendings[leg.pending % pendings.length]!
        const value = leg.kind === 'post' ? leg.amount : null
        return {
          id: randomUUID(),
          phase: leg.kind,
          pendingId: pending.id,
          code: 'model',
          ...(value === null ? {} : { amountKobo: value }),
        }
      }

      for (const cmd of commands) {
        let transfers: TransferInput[]
        let expected: TransferResultCode[]
        let linked = false
        if (cmd.kind === 'single' || cmd.kind === 'pending' || cmd.kind === 'post' || cmd.kind === 'void') {
          if (isResolution(cmd) && model.pendings.length === 0) continue
          const transfer = toTransfer(cmd, model.pendings)
          const { verdict, reserved } = applyLeg(model, cmd, transfer)
          if (verdict === 'ok') done.push({ transfer, reserved })
          transfers = [transfer]
          expected = [verdict]
        } else if (cmd.kind === 'linked') {
          const legs = cmd.legs.filter((leg) => !isResolution(leg) || model.pendings.length > 0)
          if (legs.length < 2) continue
          linked = true
          const trial = copyModel(model)
          transfers = legs.map((leg) => toTransfer(leg, model.pendings))
          expected = legs.map(() => 'linked_event_failed' as TransferResultCode)
          let failed = false
          const made: { transfer: TransferInput; reserved?: ModelPending }[] = []
          for (const [index, leg] of legs.entries()) {
            const { verdict, reserved } = applyLeg(trial, leg, transfers[index]!)
            if (verdict !== 'ok') {
              expected[index] = verdict
              failed = true
              break
            }
            made.push({ transfer: transfers[index]!, reserved })
          }
          if (!failed) {
            expected = legs.map(() => 'ok')
            model = trial
            done.push(...made)
          }
        } else if (cmd.kind === 'retry') {
          if (done.length === 0) continue
          const { transfer: first, reserved } = done[cmd.which % done.length]!
          // The test makes time pass by moving a reservation's timeout into the past, which changes
          // the timeout it was made with: a retry of it would rightly be another transfer.
          if (model.pendings.some((p) => p.id === first.id && p.timedOut)) continue
          ;[transfers, expected] = retried(first, reserved, cmd.change)
        } else if (cmd.kind === 'time_passes') {
          const open = model.pendings.filter((p) => p.status === 'pending' && !p.timedOut)
          if (open.length === 0) continue
          const pending = open[cmd.pending % open.length]!
          await db.pool.query(
            `UPDATE ledger_pending_transfers SET timeout_at = now() - interval '1 second' WHERE transfer_id = $1`,
            [pending.id],
          )
          pending.timedOut = true
          await expectModel(model)
          continue
        } else {
          // The sweep voids every reservation past its timeout (other runs' too; this run checks its own).
          await voidTimedOutPendingTransfers(db.pool)
          for (const pending of model.pendings.filter((p) => p.status === 'pending' && p.timedOut))
            resolve(model, pending, { kind: 'void', pending: 0 })
          await expectModel(model)
          continue
        }
        const results = await createTransfers(db.pool, transfers, { linked })
        expect(results.map((r) => r.result)).toEqual(expected)
        await expectModel(model)
      }

      async function expectModel(expectedModel: Model): Promise<void> {
        const balances = await getBalances(db.pool, ids)
        for (const [index, id] of ids.entries()) {
          const actual = balances.find((b) => b.accountId === id)!
          const m = expectedModel.accounts[index]!
          expect([
            actual.debitsPendingKobo,
            actual.debitsPostedKobo,
            actual.creditsPendingKobo,
            actual.creditsPostedKobo,
          ]).toEqual([m.dp, m.dP, m.cp, m.cP])
        }
        const { rows } = await db.pool.query<{ id: string; status: PendingStatus }>(
          `SELECT transfer_id AS id, status FROM ledger_pending_transfers WHERE transfer_id = ANY ($1::uuid[])`,
          [expectedModel.pendings.map((p) => p.id)],
        )
        const statuses = Object.fromEntries(rows.map((row) => [row.id, row.status]))
        expect(statuses).toEqual(Object.fromEntries(expectedModel.pendings.map((p) => [p.id, p.status])))
        const count = await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ledger_transfers WHERE debit_account_id = ANY ($1::uuid[]) OR credit_account_id = ANY ($1::uuid[])`,
          [ids],
        )
        expect(count.rows[0]!.n).toBe(expectedModel.transferCount)
      }
    }),
    { numRuns: 100 },
  )
})

/** A retry of a transfer the ledger made: the same again (`exists`), or with one field changed (the named difference). */
function retried(
  first: TransferInput,
  reserved: ModelPending | undefined,
  change: 'none' | 'amount' | 'code' | 'source' | 'timeout',
): [TransferInput[], TransferResultCode[]] {
  if (change === 'code') return [[{ ...first, code: 'model_other' }], ['exists_with_different_code']]
  if (change === 'source') return [[{ ...first, sourceId: randomUUID() }], ['exists_with_different_source_id']]
  if (change === 'amount') {
    // A post's amount, when left out, is the whole reservation: naming it is the same transfer.
    const made = first.amountKobo ?? reserved!.amount
    if (first.phase === 'void') return [[{ ...first, amountKobo: made }], ['exists']]
    return [[{ ...first, amountKobo: made + 1 }], ['exists_with_different_amount']]
  }
  if (change === 'timeout' && first.phase === 'pending')
    return [[{ ...first, timeoutS: (first.timeoutS ?? 0) + 1 }], ['exists_with_different_timeout']]
  return [[{ ...first }], ['exists']]
}
