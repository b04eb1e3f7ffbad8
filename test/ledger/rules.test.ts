// One line per rule: transfers in → result codes out. Together the lines cover every result code.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LedgerBatcher } from '../../bench/ledger-batcher.ts'
import {
  applyTransfers,
  createTransfers,
  getBalance,
  setAccountStatus,
  TRANSFER_RESULTS,
  type TransferInput,
  type TransferResultCode,
} from '../../src/ledger/service.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { expectLedgerVerified, forgeBalancedTotals, fund, newAccount } from '../support/ledger.ts'

let db: TestDatabase
// source: no limits (the outside world); wallet: may not be overdrawn, holds 1,000,000 kobo;
// capped: may not take more than it gave; usd: another currency; frozen, closed: not open.
const acc = { source: '', wallet: '', plain: '', capped: '', usd: '', frozen: '', closed: '' }
const covered = new Set<TransferResultCode>()

beforeAll(async () => {
  db = await createTestDatabase()
  acc.source = await newAccount(db.pool)
  acc.wallet = await newAccount(db.pool, { kind: 'wallet', debitsMustNotExceedCredits: true })
  acc.plain = await newAccount(db.pool)
  acc.capped = await newAccount(db.pool, { kind: 'payable', creditsMustNotExceedDebits: true })
  acc.usd = await newAccount(db.pool, { currency: 'USD' })
  acc.frozen = await newAccount(db.pool)
  acc.closed = await newAccount(db.pool)
  await fund(db.pool, acc.source, acc.wallet, 1_000_000)
  await setAccountStatus(db.pool, acc.frozen, 'frozen')
  await setAccountStatus(db.pool, acc.closed, 'closed')
})
afterAll(async () => {
  await expectLedgerVerified(db.pool)
  // Every result code of the closed list is produced by at least one line below.
  expect([...TRANSFER_RESULTS].filter((code) => !covered.has(code))).toEqual([])
  await db.drop()
})

const single = (over: Partial<TransferInput> = {}): TransferInput => ({
  id: randomUUID(),
  debitAccountId: acc.wallet,
  creditAccountId: acc.plain,
  amountKobo: 100,
  currency: 'NGN',
  code: 'test_move',
  ...over,
})

async function pending(over: Partial<TransferInput> = {}): Promise<string> {
  const transfer = single({ phase: 'pending', ...over })
  const [outcome] = await createTransfers(db.pool, [transfer])
  expect(outcome!.result).toBe('ok')
  return transfer.id
}

/** Rows and totals that a refused transfer must leave as they were. */
async function ledgerState(): Promise<{ transfers: number; pendingStates: string; totals: string }> {
  const { rows } = await db.pool.query(
    `SELECT (SELECT count(*)::int FROM ledger_transfers) AS transfers,
            (SELECT string_agg(transfer_id || ':' || status, ',' ORDER BY transfer_id) FROM ledger_pending_transfers) AS "pendingStates",
            (SELECT string_agg(id || ':' || debits_pending || ':' || debits_posted || ':' || credits_pending || ':' || credits_posted, ',' ORDER BY id)
               FROM ledger_accounts) AS totals`,
  )
  return rows[0]
}

async function expectResults(
  transfers: TransferInput[],
  expected: TransferResultCode[],
  linked = false,
): Promise<void> {
  const before = await ledgerState()
  const results = await createTransfers(db.pool, transfers, { linked })
  expect(results.map((r) => r.result)).toEqual(expected)
  for (const code of expected) covered.add(code)
  const after = await ledgerState()
  const written = expected.filter((code) => code === 'ok').length
  expect(after.transfers - before.transfers).toBe(written)
  // Nothing moved: no reservation changed state and no account total changed.
  if (written === 0) expect(after).toEqual(before)
}

describe('malformed transfers are refused before any query', () => {
  it.each<[string, Partial<TransferInput>, TransferResultCode]>([
    ['id not a uuid', { id: 'tx-1' }, 'id_must_be_uuid'],
    ['account id not a uuid', { debitAccountId: 'wallet' }, 'id_must_be_uuid'],
    ['zero amount', { amountKobo: 0 }, 'amount_must_be_positive_safe_integer'],
    ['negative amount', { amountKobo: -5 }, 'amount_must_be_positive_safe_integer'],
    ['fractional amount', { amountKobo: 1.5 }, 'amount_must_be_positive_safe_integer'],
    ['unsafe integer amount', { amountKobo: 2 ** 53 }, 'amount_must_be_positive_safe_integer'],
    ['amount as a string', { amountKobo: '100' as unknown as number }, 'amount_must_be_positive_safe_integer'],
    ['currency not ISO 4217', { currency: 'naira' }, 'currency_must_be_iso_4217'],
    ['code not snake_case', { code: 'Wallet Credit' }, 'code_must_be_snake_case'],
    ['unknown phase', { phase: 'reserve' as never }, 'phase_invalid'],
    ['no credit account', { creditAccountId: undefined }, 'accounts_required'],
    ['pending id on a single transfer', { pendingId: randomUUID() }, 'pending_id_not_allowed'],
    ['post without pending id', { phase: 'post' }, 'pending_id_required'],
    ['timeout on a single transfer', { timeoutS: 10 }, 'timeout_only_for_pending'],
    ['negative timeout', { phase: 'pending', timeoutS: -1 }, 'timeout_invalid'],
    ['zero timeout', { phase: 'pending', timeoutS: 0 }, 'timeout_invalid'],
    ['fractional timeout', { phase: 'pending', timeoutS: 1.5 }, 'timeout_invalid'],
    ['timeout beyond 30 days', { phase: 'pending', timeoutS: 30 * 24 * 60 * 60 + 1 }, 'timeout_invalid'],
  ])('%s', async (_rule, over, code) => {
    await expectResults([single(over)], [code])
  })
})

describe('rules checked by the ledger function', () => {
  it.each<[string, () => Partial<TransferInput>, TransferResultCode]>([
    ['a transfer within the balance', () => ({}), 'ok'],
    ['same debit and credit account', () => ({ creditAccountId: acc.wallet }), 'accounts_must_be_different'],
    ['unknown debit account', () => ({ debitAccountId: randomUUID() }), 'debit_account_not_found'],
    ['unknown credit account', () => ({ creditAccountId: randomUUID() }), 'credit_account_not_found'],
    [
      'transfer currency differs from the accounts',
      () => ({ currency: 'USD' }),
      'accounts_must_have_the_transfer_currency',
    ],
    [
      'accounts in different currencies',
      () => ({ creditAccountId: acc.usd }),
      'accounts_must_have_the_transfer_currency',
    ],
    [
      'frozen debit account',
      () => ({ debitAccountId: acc.frozen, creditAccountId: acc.plain }),
      'debit_account_not_open',
    ],
    ['closed credit account', () => ({ creditAccountId: acc.closed }), 'credit_account_not_open'],
    [
      'closed debit account',
      () => ({ debitAccountId: acc.closed, creditAccountId: acc.plain }),
      'debit_account_not_open',
    ],
    ['frozen credit account', () => ({ creditAccountId: acc.frozen }), 'credit_account_not_open'],
    ['overdraft of a no-overdraft account', () => ({ amountKobo: 1_000_000_000_000 }), 'exceeds_credits'],
    [
      'credit beyond a capped account',
      () => ({ debitAccountId: acc.source, creditAccountId: acc.capped }),
      'exceeds_debits',
    ],
  ])('%s', async (_rule, over, code) => {
    await expectResults([single(over())], [code])
  })

  it('a pending transfer reserves: the reserved amount cannot be spent twice', async () => {
    const wallet = await newAccount(db.pool, { kind: 'wallet', debitsMustNotExceedCredits: true })
    await fund(db.pool, acc.source, wallet, 500)
    await expectResults([single({ phase: 'pending', debitAccountId: wallet, amountKobo: 400 })], ['ok'])
    expect(await getBalance(db.pool, wallet)).toMatchObject({
      bookedKobo: 500,
      availableKobo: 100,
      debitsPendingKobo: 400,
    })
    await expectResults([single({ debitAccountId: wallet, amountKobo: 101 })], ['exceeds_credits'])
    await expectResults([single({ debitAccountId: wallet, amountKobo: 100 })], ['ok'])
  })
})

describe('post and void resolve a pending transfer exactly once', () => {
  it.each<[string, (pendingId: string) => Partial<TransferInput>[], TransferResultCode[]]>([
    ['post in full', (id) => [{ phase: 'post', pendingId: id }], ['ok']],
    ['post part of it', (id) => [{ phase: 'post', pendingId: id, amountKobo: 40 }], ['ok']],
    ['void', (id) => [{ phase: 'void', pendingId: id }], ['ok']],
    [
      'post twice',
      (id) => [
        { phase: 'post', pendingId: id },
        { phase: 'post', pendingId: id },
      ],
      ['ok', 'pending_transfer_already_posted'],
    ],
    [
      'void twice',
      (id) => [
        { phase: 'void', pendingId: id },
        { phase: 'void', pendingId: id },
      ],
      ['ok', 'pending_transfer_already_voided'],
    ],
    [
      'void after post',
      (id) => [
        { phase: 'post', pendingId: id },
        { phase: 'void', pendingId: id },
      ],
      ['ok', 'pending_transfer_already_posted'],
    ],
    [
      'post more than reserved',
      (id) => [{ phase: 'post', pendingId: id, amountKobo: 101 }],
      ['exceeds_pending_transfer_amount'],
    ],
    [
      'void a different amount',
      (id) => [{ phase: 'void', pendingId: id, amountKobo: 99 }],
      ['pending_transfer_has_different_amount'],
    ],
    [
      'post naming other accounts',
      (id) => [{ phase: 'post', pendingId: id, creditAccountId: acc.source }],
      ['pending_transfer_has_different_accounts'],
    ],
    [
      'post in another currency',
      (id) => [{ phase: 'post', pendingId: id, currency: 'USD' }],
      ['pending_transfer_has_different_currency'],
    ],
  ])('%s', async (_rule, make, expected) => {
    const pendingId = await pending()
    const resolutions = make(pendingId).map(
      (over) => ({ id: randomUUID(), code: 'test_resolve', ...over }) as TransferInput,
    )
    await expectResults(resolutions, expected)
  })

  it('resolving what is not a pending transfer', async () => {
    const singleTransfer = single()
    await createTransfers(db.pool, [singleTransfer])
    await expectResults(
      [{ id: randomUUID(), phase: 'post', pendingId: randomUUID(), code: 'test_resolve' }],
      ['pending_transfer_not_found'],
    )
    await expectResults(
      [{ id: randomUUID(), phase: 'post', pendingId: singleTransfer.id, code: 'test_resolve' }],
      ['pending_transfer_not_pending'],
    )
  })

  it('a reservation past its timeout can no longer be posted, and the sweep voids it', async () => {
    const pendingId = await pending({ timeoutS: 1 })
    await db.pool.query(
      `UPDATE ledger_pending_transfers SET timeout_at = now() - interval '1 second' WHERE transfer_id = $1`,
      [pendingId],
    )
    await expectResults(
      [{ id: randomUUID(), phase: 'post', pendingId, code: 'test_resolve' }],
      ['pending_transfer_expired'],
    )
    const { voidTimedOutPendingTransfers } = await import('../../src/ledger/service.ts')
    expect(await voidTimedOutPendingTransfers(db.pool)).toBeGreaterThanOrEqual(1)
    expect(await voidTimedOutPendingTransfers(db.pool)).toBe(0)
    const state = await db.pool.query(`SELECT status FROM ledger_pending_transfers WHERE transfer_id = $1`, [pendingId])
    expect(state.rows[0].status).toBe('expired')
    await expectResults(
      [{ id: randomUUID(), phase: 'void', pendingId, code: 'test_resolve' }],
      ['pending_transfer_expired'],
    )
  })

  it('a frozen account still lets its reservations post', async () => {
    const wallet = await newAccount(db.pool, { kind: 'wallet', debitsMustNotExceedCredits: true })
    await fund(db.pool, acc.source, wallet, 300)
    const pendingId = await pending({ debitAccountId: wallet, amountKobo: 300 })
    await setAccountStatus(db.pool, wallet, 'frozen')
    await expectResults([{ id: randomUUID(), phase: 'post', pendingId, code: 'test_resolve' }], ['ok'])
    expect(await getBalance(db.pool, wallet)).toMatchObject({ bookedKobo: 0, availableKobo: 0 })
  })
})

describe('idempotency on the caller-chosen id', () => {
  it.each<[string, (first: TransferInput) => TransferInput, TransferResultCode]>([
    ['the same transfer again', (first) => ({ ...first }), 'exists'],
    ['another amount', (first) => ({ ...first, amountKobo: 101 }), 'exists_with_different_amount'],
    [
      'another debit account',
      (first) => ({ ...first, debitAccountId: acc.source }),
      'exists_with_different_debit_account_id',
    ],
    [
      'another credit account',
      (first) => ({ ...first, creditAccountId: acc.source }),
      'exists_with_different_credit_account_id',
    ],
    ['another currency', (first) => ({ ...first, currency: 'USD' }), 'exists_with_different_currency'],
    ['another code', (first) => ({ ...first, code: 'other_code' }), 'exists_with_different_code'],
    ['another phase', (first) => ({ ...first, phase: 'pending' }), 'exists_with_different_phase'],
    ['another source type', (first) => ({ ...first, sourceType: 'other_thing' }), 'exists_with_different_source_type'],
    ['another source id', (first) => ({ ...first, sourceId: 'other-1' }), 'exists_with_different_source_id'],
    ['no source id', (first) => ({ ...first, sourceId: undefined }), 'exists_with_different_source_id'],
  ])('%s', async (_rule, retry, code) => {
    const first = single({ sourceType: 'test_thing', sourceId: 'thing-1' })
    await expectResults([first], ['ok'])
    await expectResults([retry(first)], [code])
  })

  it.each<[string, number | undefined, number | undefined, TransferResultCode]>([
    ['a reservation retried with its timeout', 60, 60, 'exists'],
    ['a reservation retried with another timeout', 60, 61, 'exists_with_different_timeout'],
    ['a reservation retried without its timeout', 60, undefined, 'exists_with_different_timeout'],
    ['a reservation without a timeout retried with one', undefined, 60, 'exists_with_different_timeout'],
  ])('%s', async (_rule, timeoutS, retryTimeoutS, code) => {
    const first = single({ phase: 'pending', timeoutS })
    await expectResults([first], ['ok'])
    await expectResults([{ ...first, timeoutS: retryTimeoutS }], [code])
  })

  it('a post without an amount posts it all: a retry of a partial post without one is another transfer', async () => {
    const partial: TransferInput = {
      id: randomUUID(),
      phase: 'post',
      pendingId: await pending(),
      amountKobo: 40,
      code: 'test_resolve',
    }
    await expectResults([partial], ['ok'])
    await expectResults([{ ...partial, amountKobo: undefined }], ['exists_with_different_amount'])
    const full: TransferInput = { id: randomUUID(), phase: 'post', pendingId: await pending(), code: 'test_resolve' }
    await expectResults([full], ['ok'])
    await expectResults([full], ['exists'])
    await expectResults([{ ...full, amountKobo: 100 }], ['exists'])
    await expectResults([{ ...full, amountKobo: 99 }], ['exists_with_different_amount'])
  })

  it('an id twice in one batch: the second is a retry of the first', async () => {
    const first = single({ sourceType: 'test_thing', sourceId: 'thing-2' })
    await expectResults([first, { ...first }], ['ok', 'exists'])
    const second = single({ sourceType: 'test_thing', sourceId: 'thing-3' })
    await expectResults([second, { ...second, sourceId: 'thing-4' }], ['ok', 'exists_with_different_source_id'])
    const reserved = single({ phase: 'pending', timeoutS: 30 })
    await expectResults([reserved, { ...reserved, timeoutS: 31 }], ['ok', 'exists_with_different_timeout'])
  })

  it('a post retried with another pending id', async () => {
    const a = await pending()
    const b = await pending()
    const post: TransferInput = { id: randomUUID(), phase: 'post', pendingId: a, code: 'test_resolve' }
    await expectResults([post], ['ok'])
    await expectResults([{ ...post, pendingId: b }], ['exists_with_different_pending_id'])
    await expectResults([post], ['exists'])
  })
})

describe('linked batches succeed or fail together', () => {
  it('all succeed', async () => {
    await expectResults(
      [single({ amountKobo: 10 }), single({ amountKobo: 1, creditAccountId: acc.source })],
      ['ok', 'ok'],
      true,
    )
  })

  it('one failure writes nothing and names the culprit', async () => {
    const before = await getBalance(db.pool, acc.wallet)
    await expectResults(
      [single({ amountKobo: 10 }), single({ amountKobo: 1_000_000_000_000 }), single({ amountKobo: 10 })],
      ['linked_event_failed', 'exceeds_credits', 'linked_event_failed'],
      true,
    )
    expect(await getBalance(db.pool, acc.wallet)).toEqual(before)
  })

  it('a malformed member fails the chain without a query', async () => {
    await expectResults(
      [single(), single({ amountKobo: 0 })],
      ['linked_event_failed', 'amount_must_be_positive_safe_integer'],
      true,
    )
  })

  it('chains in one call fail or succeed on their own, and a failed chain leaves no trace', async () => {
    const before = await getBalance(db.pool, acc.wallet)
    const reserved = single({ phase: 'pending', amountKobo: 30 })
    const transfers = [
      single({ amountKobo: 1 }), // alone: ok
      reserved, // chain A: a reservation, its post, then an overdraft → all undone
      { id: randomUUID(), phase: 'post', pendingId: reserved.id, code: 'test_resolve' } as TransferInput,
      single({ amountKobo: 1_000_000_000_000 }),
      single({ amountKobo: 2 }), // chain B: both fine
      single({ amountKobo: 3, creditAccountId: acc.source }),
      single({ amountKobo: 0 }), // alone, malformed
    ]
    const results = await applyTransfers(db.pool, transfers, [false, true, true, false, true, false, false])
    expect(results.map((r) => r.result)).toEqual([
      'ok',
      'linked_event_failed',
      'linked_event_failed',
      'exceeds_credits',
      'ok',
      'ok',
      'amount_must_be_positive_safe_integer',
    ])
    expect((await getBalance(db.pool, acc.wallet))!.bookedKobo).toBe(before!.bookedKobo - 6)
    expect((await getBalance(db.pool, acc.wallet))!.debitsPendingKobo).toBe(before!.debitsPendingKobo)
    const stored = await db.pool.query('SELECT count(*)::int AS n FROM ledger_transfers WHERE id = ANY ($1::uuid[])', [
      transfers.map((t) => t.id),
    ])
    expect(stored.rows[0].n).toBe(3)
    // The ids of the failed chain are free: the same chain, now affordable, goes through.
    const retry = await applyTransfers(db.pool, [reserved, transfers[2]!], [true, false])
    expect(retry.map((r) => r.result)).toEqual(['ok', 'ok'])
  })

  it('a chain left open is a programming error: nothing is written', async () => {
    const before = await ledgerState()
    await expect(applyTransfers(db.pool, [single(), single()], [true, true])).rejects.toThrow(/linked chain left open/)
    expect(await ledgerState()).toEqual(before)
  })

  it('the batcher serves concurrent callers from one call, each with its own results', async () => {
    const batcher = new LedgerBatcher(db.pool, { lanes: 1 })
    const [alone, failingChain, goodChain] = await Promise.all([
      batcher.createTransfers([single({ amountKobo: 1 })]),
      batcher.createTransfers([single({ amountKobo: 1 }), single({ amountKobo: 1_000_000_000_000 })], { linked: true }),
      batcher.createTransfers([single({ amountKobo: 1 }), single({ amountKobo: 1 })], { linked: true }),
    ])
    expect(alone.map((r) => r.result)).toEqual(['ok'])
    expect(failingChain.map((r) => r.result)).toEqual(['linked_event_failed', 'exceeds_credits'])
    expect(goodChain.map((r) => r.result)).toEqual(['ok', 'ok'])
  })

  it('unlinked, each stands alone', async () => {
    await expectResults(
      [
        single({ amountKobo: 10 }),
        single({ amountKobo: 1_000_000_000_000 }),
        single({ amountKobo: 0 }),
        single({ amountKobo: 10 }),
      ],
      ['ok', 'exceeds_credits', 'amount_must_be_positive_safe_integer', 'ok'],
    )
  })
})

describe('the database enforces what TypeScript asserts', () => {
  it('transfers are append-only', async () => {
    await expect(db.pool.query('UPDATE ledger_transfers SET amount_kobo = amount_kobo + 1')).rejects.toThrow(
      /append-only/,
    )
    await expect(db.pool.query('DELETE FROM ledger_transfers')).rejects.toThrow(/append-only/)
  })

  it('an account cannot be pushed past its flag by a direct update', async () => {
    await expect(
      db.pool.query('UPDATE ledger_accounts SET debits_posted = credits_posted + 1 WHERE id = $1', [acc.wallet]),
    ).rejects.toThrow(/ledger_accounts_debits_within_credits/)
  })

  it('a capped account cannot be pushed past its flag by a direct update', async () => {
    await expect(
      db.pool.query('UPDATE ledger_accounts SET credits_posted = debits_posted + 1 WHERE id = $1', [acc.capped]),
    ).rejects.toThrow(/ledger_accounts_credits_within_debits/)
  })

  it('posted and pending sums stay balanced: a one-sided change of totals is refused', async () => {
    const before = await ledgerState()
    await expect(
      db.pool.query('UPDATE ledger_accounts SET credits_posted = credits_posted + 5 WHERE id = $1', [acc.plain]),
    ).rejects.toThrow(/changed the NGN debits and credits by different amounts/)
    await expect(
      db.pool.query(
        'UPDATE ledger_accounts SET debits_pending = debits_pending + 5, credits_posted = credits_posted + 5 WHERE id = ANY ($1::uuid[])',
        [[acc.source, acc.plain]],
      ),
    ).rejects.toThrow(/different amounts/)
    // Balanced in each currency is not enough across currencies.
    await expect(
      forgeBalancedTotals(db.pool, { debitAccountId: acc.source, creditAccountId: acc.usd, amountKobo: 5 }),
    ).rejects.toThrow(/(USD|NGN) debits and credits/)
    expect(await ledgerState()).toEqual(before)
  })

  it("an account's partner, currency, kind and flags never change; closed is for good; accounts are never deleted", async () => {
    const account = await newAccount(db.pool)
    await expect(db.pool.query(`UPDATE ledger_accounts SET currency = 'USD' WHERE id = $1`, [account])).rejects.toThrow(
      /never change/,
    )
    await expect(
      db.pool.query(`UPDATE ledger_accounts SET kind = 'suspense' WHERE id = $1`, [account]),
    ).rejects.toThrow(/never change/)
    await expect(
      db.pool.query(`UPDATE ledger_accounts SET debits_must_not_exceed_credits = true WHERE id = $1`, [account]),
    ).rejects.toThrow(/never change/)
    await expect(db.pool.query(`UPDATE ledger_accounts SET status = 'gone' WHERE id = $1`, [account])).rejects.toThrow(
      /unknown status/,
    )
    await setAccountStatus(db.pool, account, 'frozen')
    await setAccountStatus(db.pool, account, 'open')
    await setAccountStatus(db.pool, account, 'closed')
    await setAccountStatus(db.pool, account, 'closed')
    await expect(setAccountStatus(db.pool, account, 'open')).rejects.toThrow(/closed for good/)
    await expect(db.pool.query(`UPDATE ledger_accounts SET status = 'open' WHERE id = $1`, [account])).rejects.toThrow(
      /closed is for good/,
    )
    await expect(setAccountStatus(db.pool, randomUUID(), 'frozen')).rejects.toThrow(/not found/)
    await expect(db.pool.query(`DELETE FROM ledger_accounts WHERE id = $1`, [account])).rejects.toThrow(/never deleted/)
    expect((await getBalance(db.pool, account))!.status).toBe('closed')
  })

  it('a new account starts at zero and holds valid facts', async () => {
    const insert = `INSERT INTO ledger_accounts (id, currency, kind, credits_posted, debits_must_not_exceed_credits, credits_must_not_exceed_debits)
                    VALUES ($1, $2, $3, $4, $5, $6)`
    await expect(db.pool.query(insert, [randomUUID(), 'NGN', 'wallet', 5, false, false])).rejects.toThrow(
      /starts at zero/,
    )
    await expect(db.pool.query(insert, [randomUUID(), 'naira', 'wallet', 0, false, false])).rejects.toThrow(
      /not an ISO 4217 code/,
    )
    await expect(db.pool.query(insert, [randomUUID(), 'NGN', 'piggy_bank', 0, false, false])).rejects.toThrow(
      /unknown kind/,
    )
    await expect(db.pool.query(insert, [randomUUID(), 'NGN', 'bench', 0, false, false])).rejects.toThrow(/unknown kind/) // benchmarks open wallets
    await expect(db.pool.query(insert, [randomUUID(), 'NGN', 'wallet', 0, true, true])).rejects.toThrow(
      /at most one balance flag/,
    )
  })

  it('a transfer row with equal accounts or a non-positive amount is refused', async () => {
    const insert = `INSERT INTO ledger_transfers (id, debit_account_id, credit_account_id, amount_kobo, currency, phase, code,
                      debit_booked_after, debit_available_after, credit_booked_after, credit_available_after)
                    VALUES ($1, $2, $3, $4, 'NGN', 'single', 'x', 0, 0, 0, 0)`
    await expect(db.pool.query(insert, [randomUUID(), acc.plain, acc.plain, 1])).rejects.toThrow(
      /ledger_transfers_different_accounts/,
    )
    await expect(db.pool.query(insert, [randomUUID(), acc.plain, acc.source, 0])).rejects.toThrow(
      /ledger_transfers_amount_kobo_check/,
    )
  })
})
