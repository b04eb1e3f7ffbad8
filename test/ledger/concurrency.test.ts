// The concurrent bank: 100 accounts holding a fixed total, 64 clients moving money at random —
// A→B and B→A at once, overdraft attempts, linked pairs — through both write paths (the batcher
// and plain transactions). Money is conserved, no account breaks its flag, no deadlock reaches a
// caller, and verifyLedger() agrees.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { LedgerBatcher } from '../../src/ledger/batcher.ts'
import { createTransfers, getBalances, type TransferInput, type TransferResult } from '../../src/ledger/service.ts'
import { withTransaction } from '../../src/platform/db.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { expectLedgerVerified, fund, newAccount } from '../support/ledger.ts'

const ACCOUNTS = 100
const OPENING_KOBO = 1_000_000
const CLIENTS = 64
const TRANSFERS_TOTAL = 100_000
const TRANSFERS_PER_REQUEST = 25

let db: TestDatabase
const accounts: string[] = []

beforeAll(async () => {
  db = await createTestDatabase(40)
  const source = await newAccount(db.pool)
  for (let i = 0; i < ACCOUNTS; i++) {
    const id = await newAccount(db.pool, { kind: 'wallet', debitsMustNotExceedCredits: true })
    await fund(db.pool, source, id, OPENING_KOBO)
    accounts.push(id)
  }
})
afterAll(async () => db?.drop())

function pick(): string {
  return accounts[Math.floor(Math.random() * ACCOUNTS)]!
}

/** A request: random moves, mirrored pairs (A→B and B→A), and overdraft attempts. */
function randomRequest(): { transfers: TransferInput[]; linked: boolean } {
  const transfers: TransferInput[] = []
  const move = (debit: string, credit: string, amountKobo: number): TransferInput => ({ id: randomUUID(), debitAccountId: debit, creditAccountId: credit, amountKobo, currency: 'NGN', code: 'bank_move' })
  while (transfers.length < TRANSFERS_PER_REQUEST) {
    const a = pick()
    let b = pick()
    while (b === a) b = pick()
    const roll = Math.random()
    if (roll < 0.1) transfers.push(move(a, b, OPENING_KOBO * ACCOUNTS)) // can never succeed
    else if (roll < 0.4) transfers.push(move(a, b, 1 + Math.floor(Math.random() * 5_000)), move(b, a, 1 + Math.floor(Math.random() * 5_000)))
    else transfers.push(move(a, b, 1 + Math.floor(Math.random() * 20_000)))
  }
  // One request in ten is a linked pair: both legs or neither.
  if (Math.random() < 0.1) return { transfers: transfers.slice(0, 2), linked: true }
  return { transfers, linked: false }
}

it(
  'conserves money under 64 concurrent clients and 100,000 transfers, with no deadlock reaching a caller',
  { timeout: 240_000 },
  async () => {
    const batcher = new LedgerBatcher(db.pool, { lanes: 2 })
    let submitted = 0
    let committed = 0
    let rejected = 0
    const errors: unknown[] = []
    const client = async (index: number) => {
      while (submitted < TRANSFERS_TOTAL) {
        const request = randomRequest()
        submitted += request.transfers.length
        try {
          // Even clients go through the batcher, odd ones through their own transactions.
          const results: TransferResult[] =
            index % 2 === 0
              ? await batcher.createTransfers(request.transfers, { linked: request.linked })
              : await withTransaction(db.pool, (tx) => createTransfers(tx, request.transfers, { linked: request.linked }))
          for (const outcome of results) {
            if (outcome.result === 'ok') committed++
            else rejected++
          }
        } catch (error) {
          errors.push(error)
        }
      }
    }
    const started = performance.now()
    await Promise.all(Array.from({ length: CLIENTS }, (_unused, index) => client(index)))
    const seconds = (performance.now() - started) / 1000
    console.log(`concurrent bank: ${submitted} transfers in ${seconds.toFixed(1)} s — ${committed} committed, ${rejected} rejected, ${errors.length} errors`)

    expect(errors).toEqual([])
    expect(submitted).toBeGreaterThanOrEqual(TRANSFERS_TOTAL)
    expect(committed + rejected).toBe(submitted)
    expect(committed).toBeGreaterThan(TRANSFERS_TOTAL / 2)
    expect(rejected).toBeGreaterThan(0)

    const balances = await getBalances(db.pool, accounts)
    expect(balances.reduce((sum, balance) => sum + balance.bookedKobo, 0)).toBe(OPENING_KOBO * ACCOUNTS)
    for (const balance of balances) expect(balance.availableKobo).toBeGreaterThanOrEqual(0)
    const stored = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ledger_transfers WHERE code = 'bank_move'`)
    expect(stored.rows[0]!.n).toBe(committed)
    await expectLedgerVerified(db.pool)
  },
)

it('two requests racing with the same transfer id move the money once', async () => {
  const [a, b] = [accounts[0]!, accounts[1]!]
  const transfer: TransferInput = { id: randomUUID(), debitAccountId: a, creditAccountId: b, amountKobo: 7, currency: 'NGN', code: 'bank_race' }
  const before = await getBalances(db.pool, [a])
  const outcomes = await Promise.all(Array.from({ length: 8 }, () => withTransaction(db.pool, (tx) => createTransfers(tx, [transfer]))))
  const codes = outcomes.map(([outcome]) => outcome!.result).sort()
  expect(codes).toEqual(['exists', 'exists', 'exists', 'exists', 'exists', 'exists', 'exists', 'ok'])
  const after = await getBalances(db.pool, [a])
  expect(after[0]!.bookedKobo).toBe(before[0]!.bookedKobo - 7)
  await expectLedgerVerified(db.pool)
})
