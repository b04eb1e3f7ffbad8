// The concurrent bank: 100 accounts holding a fixed total, 64 clients moving money at random —
// A→B and B→A at once, overdraft attempts, linked pairs, reservations and their posts and voids
// (clients racing to resolve the same one) — through both write paths (the batcher and plain
// transactions with no retry, so that a deadlock would reach the caller). Money is conserved, no
// account breaks its flag, every reservation is resolved at most once, no deadlock reaches a
// caller, and verifyLedger() agrees.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { LedgerBatcher } from '../../bench/ledger-batcher.ts'
import { createTransfers, getBalances, type TransferInput, type TransferResult } from '../../src/ledger/service.ts'
import { transactionOnce, withTransaction } from '../../src/platform/db.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { expectLedgerVerified, fundedWallets } from '../support/ledger.ts'

const ACCOUNTS = 100
const OPENING_KOBO = 1_000_000
const CLIENTS = 64
const TRANSFERS_TOTAL = 100_000
const TRANSFERS_PER_REQUEST = 25

let db: TestDatabase
const accounts: string[] = []

beforeAll(async () => {
  db = await createTestDatabase(40)
  accounts.push(...(await fundedWallets(db.pool, ACCOUNTS, OPENING_KOBO)))
})
afterAll(async () => db?.drop())

function pick(): string {
  return accounts[Math.floor(Math.random() * ACCOUNTS)]!
}

/** Reservations made and not yet known to be resolved: clients pick them to post or void, sometimes the same one at once. */
const openReservations: { id: string; amountKobo: number }[] = []

/** A request: random moves, mirrored pairs (A→B and B→A), overdraft attempts, reservations, posts and voids. */
function randomRequest(): { transfers: TransferInput[]; linked: boolean } {
  const transfers: TransferInput[] = []
  const move = (
    debit: string,
    credit: string,
    amountKobo: number,
    phase: 'single' | 'pending' = 'single',
  ): TransferInput => ({
    id: randomUUID(),
    debitAccountId: debit,
    creditAccountId: credit,
    amountKobo,
    currency: 'NGN',
    code: 'bank_move',
    phase,
  })
  while (transfers.length < TRANSFERS_PER_REQUEST) {
    const a = pick()
    let b = pick()
    while (b === a) b = pick()
    const roll = Math.random()
    if (roll < 0.1)
      transfers.push(move(a, b, OPENING_KOBO * ACCOUNTS)) // can never succeed
    else if (roll < 0.3)
      transfers.push(
        move(a, b, 1 + Math.floor(Math.random() * 5_000)),
        move(b, a, 1 + Math.floor(Math.random() * 5_000)),
      )
    else if (roll < 0.4) transfers.push(move(a, b, 1 + Math.floor(Math.random() * 10_000), 'pending'))
    else if (roll < 0.5 && openReservations.length > 0) transfers.push(resolution())
    else transfers.push(move(a, b, 1 + Math.floor(Math.random() * 20_000)))
  }
  // One request in ten is a linked pair: both legs or neither.
  if (Math.random() < 0.1) return { transfers: transfers.slice(0, 2), linked: true }
  return { transfers, linked: false }
}

/** A post (in full or in part) or a void of an open reservation; a third of the time the reservation stays listed, so that others race for it. */
function resolution(): TransferInput {
  const index = Math.floor(Math.random() * openReservations.length)
  const reservation = openReservations[index]!
  if (Math.random() < 0.67) openReservations.splice(index, 1)
  const roll = Math.random()
  const base = { id: randomUUID(), pendingId: reservation.id, code: 'bank_move' }
  if (roll < 0.4) return { ...base, phase: 'post' }
  if (roll < 0.7) return { ...base, phase: 'post', amountKobo: 1 + Math.floor(Math.random() * reservation.amountKobo) }
  return { ...base, phase: 'void' }
}

it(
  'conserves money under 64 concurrent clients and 100,000 transfers, with no deadlock reaching a caller',
  { timeout: 240_000 },
  async () => {
    const batcher = new LedgerBatcher(db.pool, { lanes: 2 })
    let submitted = 0
    let committed = 0
    let rejected = 0
    let resolutionsRefused = 0
    const errors: unknown[] = []
    const client = async (index: number) => {
      while (submitted < TRANSFERS_TOTAL) {
        const request = randomRequest()
        submitted += request.transfers.length
        try {
          // Even clients go through the batcher, odd ones through transactions of their own with no
          // retry (transactionOnce, not withTransaction): a deadlock would reach the caller.
          const results: TransferResult[] =
            index % 2 === 0
              ? await batcher.createTransfers(request.transfers, { linked: request.linked })
              : await transactionOnce(db.pool, (tx) =>
                  createTransfers(tx, request.transfers, { linked: request.linked }),
                )
          results.forEach((outcome, position) => {
            const transfer = request.transfers[position]!
            if (outcome.result === 'ok') committed++
            else rejected++
            if (outcome.result === 'ok' && transfer.phase === 'pending')
              openReservations.push({ id: transfer.id, amountKobo: transfer.amountKobo! })
            if (outcome.result.startsWith('pending_transfer_already_')) resolutionsRefused++
          })
        } catch (error) {
          errors.push(error)
        }
      }
    }
    const started = performance.now()
    await Promise.all(Array.from({ length: CLIENTS }, (_unused, index) => client(index)))
    const seconds = (performance.now() - started) / 1000
    console.log(
      `concurrent bank: ${submitted} transfers in ${seconds.toFixed(1)} s — ${committed} committed, ${rejected} rejected ` +
        `(${resolutionsRefused} of them posts or voids of a reservation another client had resolved), ${errors.length} errors`,
    )

    expect(errors).toEqual([])
    expect(submitted).toBeGreaterThanOrEqual(TRANSFERS_TOTAL)
    expect(committed + rejected).toBe(submitted)
    expect(committed).toBeGreaterThan(TRANSFERS_TOTAL / 2)
    expect(rejected).toBeGreaterThan(0)

    const balances = await getBalances(db.pool, accounts)
    expect(balances.reduce((sum, balance) => sum + balance.bookedKobo, 0)).toBe(OPENING_KOBO * ACCOUNTS)
    for (const balance of balances) expect(balance.availableKobo).toBeGreaterThanOrEqual(0)
    const stored = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_transfers WHERE code = 'bank_move'`,
    )
    expect(stored.rows[0]!.n).toBe(committed)
    // Every reservation was resolved at most once, and what is still reserved is what the accounts hold as pending.
    const reservations = await db.pool.query<{
      resolved: number
      resolutions: number
      open_kobo: string
      pending_kobo: string
    }>(
      `SELECT (SELECT count(*)::int FROM ledger_pending_transfers s JOIN ledger_transfers t ON t.id = s.transfer_id
                WHERE t.code = 'bank_move' AND s.status <> 'pending') AS resolved,
              (SELECT count(*)::int FROM ledger_transfers WHERE code = 'bank_move' AND phase IN ('post', 'void')) AS resolutions,
              (SELECT coalesce(sum(t.amount_kobo), 0) FROM ledger_pending_transfers s JOIN ledger_transfers t ON t.id = s.transfer_id
                WHERE t.code = 'bank_move' AND s.status = 'pending') AS open_kobo,
              (SELECT sum(debits_pending) FROM ledger_accounts WHERE id = ANY ($1::uuid[])) AS pending_kobo`,
      [accounts],
    )
    expect(reservations.rows[0]!.resolutions).toBe(reservations.rows[0]!.resolved)
    expect(reservations.rows[0]!.resolved).toBeGreaterThan(0)
    expect(reservations.rows[0]!.open_kobo).toBe(reservations.rows[0]!.pending_kobo)
    await expectLedgerVerified(db.pool)
  },
)

it('two requests racing with the same transfer id move the money once', async () => {
  const [a, b] = [accounts[0]!, accounts[1]!]
  const transfer: TransferInput = {
    id: randomUUID(),
    debitAccountId: a,
    creditAccountId: b,
    amountKobo: 7,
    currency: 'NGN',
    code: 'bank_race',
  }
  const before = await getBalances(db.pool, [a])
  const outcomes = await Promise.all(
    Array.from({ length: 8 }, () => withTransaction(db.pool, (tx) => createTransfers(tx, [transfer]))),
  )
  const codes = outcomes.map(([outcome]) => outcome!.result).sort()
  expect(codes).toEqual(['exists', 'exists', 'exists', 'exists', 'exists', 'exists', 'exists', 'ok'])
  const after = await getBalances(db.pool, [a])
  expect(after[0]!.bookedKobo).toBe(before[0]!.bookedKobo - 7)
  await expectLedgerVerified(db.pool)
})
