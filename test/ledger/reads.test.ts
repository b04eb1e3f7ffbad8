// Reads: balances, statements with running balances and cursor pagination, partner accounts.
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  committedPartnerAccount,
  createAccount,
  createTransfers,
  ensurePartnerAccount,
  getBalance,
  getStatement,
} from '../../src/ledger/service.ts'
import { createPartner } from '../../src/partners/service.ts'
import { createTestDatabase, type TestDatabase } from '../support/database.ts'
import { expectLedgerVerified, fund, newAccount } from '../support/ledger.ts'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase()
})
afterAll(async () => {
  await expectLedgerVerified(db.pool)
  await db.drop()
})

describe('statements', () => {
  it('list an account’s transfers oldest first with its balances after each, page by page', async () => {
    const source = await newAccount(db.pool)
    const wallet = await newAccount(db.pool, { kind: 'wallet', debitsMustNotExceedCredits: true })
    const other = await newAccount(db.pool)
    await fund(db.pool, source, wallet, 1_000)
    const hold = randomUUID()
    const results = await createTransfers(db.pool, [
      {
        id: randomUUID(),
        debitAccountId: wallet,
        creditAccountId: other,
        amountKobo: 100,
        currency: 'NGN',
        code: 'spend',
        sourceType: 'test',
        sourceId: 'a',
      },
      {
        id: hold,
        phase: 'pending',
        debitAccountId: wallet,
        creditAccountId: other,
        amountKobo: 300,
        currency: 'NGN',
        code: 'hold',
      },
      { id: randomUUID(), phase: 'post', pendingId: hold, amountKobo: 200, code: 'settle' },
    ])
    expect(results.map((r) => r.result)).toEqual(['ok', 'ok', 'ok'])

    const first = await getStatement(db.pool, wallet, { limit: 2 })
    expect(first.entries.map((e) => [e.code, e.amountKobo, e.bookedAfterKobo, e.availableAfterKobo])).toEqual([
      ['test_funding', 1_000, 1_000, 1_000],
      ['spend', -100, 900, 900],
    ])
    expect(first.entries[1]).toMatchObject({
      counterpartyAccountId: other,
      sourceType: 'test',
      sourceId: 'a',
      phase: 'single',
    })
    expect(first.nextCursor).not.toBeNull()
    const second = await getStatement(db.pool, wallet, { limit: 2, cursor: first.nextCursor })
    expect(second.entries.map((e) => [e.code, e.phase, e.amountKobo, e.bookedAfterKobo, e.availableAfterKobo])).toEqual(
      [
        ['hold', 'pending', -300, 900, 600],
        ['settle', 'post', -200, 700, 700],
      ],
    )
    expect(second.nextCursor).toBeNull()
    expect(await getBalance(db.pool, wallet)).toMatchObject({ bookedKobo: 700, availableKobo: 700 })
    // The counterparty sees the same transfers from the other side.
    const theirs = await getStatement(db.pool, other)
    expect(theirs.entries.map((e) => e.amountKobo)).toEqual([100, 300, 200])
  })

  it('refuses a cursor it did not issue', async () => {
    const account = await newAccount(db.pool)
    await expect(getStatement(db.pool, account, { cursor: 'bm90LWEtY3Vyc29y' })).rejects.toMatchObject({
      code: 'validation_error',
    })
  })
})

describe('partner accounts', () => {
  it('one float per partner and currency, made on first use, never overdrawn', async () => {
    const partner = await createPartner(db.pool, randomBytes(32), {
      name: 'P',
      customerClass: 'fintech',
      environment: 'sandbox',
    })
    const [a, b] = await Promise.all([
      ensurePartnerAccount(db.pool, partner.partnerId, 'NGN', 'float'),
      ensurePartnerAccount(db.pool, partner.partnerId, 'NGN', 'float'),
    ])
    expect(a).toBe(b)
    expect(await ensurePartnerAccount(db.pool, partner.partnerId, 'USD', 'float')).not.toBe(a)
    const settlement = await ensurePartnerAccount(db.pool, partner.partnerId, 'NGN', 'provider_settlement')
    const [overdraft] = await createTransfers(db.pool, [
      {
        id: randomUUID(),
        debitAccountId: a,
        creditAccountId: settlement,
        amountKobo: 1,
        currency: 'NGN',
        code: 'payout',
      },
    ])
    expect(overdraft!.result).toBe('exceeds_credits')
    await expect(
      createAccount(db.pool, { partnerId: partner.partnerId, currency: 'NGN', kind: 'float' }),
    ).rejects.toThrow(/ensurePartnerAccount/)
    await expect(ensurePartnerAccount(db.pool, partner.partnerId, 'NGN', 'wallet')).rejects.toThrow(/not a per-partner/)
    await expect(ensurePartnerAccount(db.pool, partner.partnerId, 'naira', 'float')).rejects.toThrow(/ISO 4217/)
  })

  it('a committed account id is remembered: the same account, and no look-up once known', async () => {
    const partner = await createPartner(db.pool, randomBytes(32), {
      name: 'Q',
      customerClass: 'fintech',
      environment: 'sandbox',
    })
    const first = await committedPartnerAccount(db.pool, partner.partnerId, 'NGN', 'collections')
    expect(first).toBe(await ensurePartnerAccount(db.pool, partner.partnerId, 'NGN', 'collections'))
    const queries = vi.spyOn(db.pool, 'query')
    expect(await committedPartnerAccount(db.pool, partner.partnerId, 'NGN', 'collections')).toBe(first)
    expect(queries).not.toHaveBeenCalled()
    queries.mockRestore()
    await expect(committedPartnerAccount(db.pool, partner.partnerId, 'NGN', 'wallet')).rejects.toThrow(
      /not a per-partner/,
    )
  })
})
