// Wallet creation and balance over signed HTTP, on the sandbox providers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { isValidNuban } from '../../src/banking/nip/nuban.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

let app: TestApp
let client: RailClient
let other: RailClient

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: 'wallet-test-secret' })
  client = (await app.newPartner()).client
  other = (await app.newPartner()).client
})
afterAll(async () => {
  await expectLedgerVerified(app.db.pool)
  await app.close()
})

type WalletJson = Schemas['Wallet']

describe('POST /wallet', () => {
  it('opens a wallet at the default provider, backed by a real NUBAN at the sandbox bank', async () => {
    const created = await client.post<WalletJson>('/wallet', { customerReference: 'cust-001', name: 'Ada Obi' })
    expect(created.status).toBe(201)
    expect(created.headers.get('idempotent-replayed')).toBeNull()
    expect(created.body).toMatchObject({
      customerReference: 'cust-001',
      name: 'Ada Obi',
      provider: 'sandbox',
      currency: 'NGN',
      bankCode: '101',
      bankName: 'Providus Bank',
    })
    expect(isValidNuban('101', created.body.accountNumber)).toBe(true)
    const atBank = await app.db.pool.query(`SELECT account_name FROM sandbox_bank.accounts WHERE account_number = $1`, [
      created.body.accountNumber,
    ])
    expect(atBank.rows[0].account_name).toBe('Ada Obi')
  })

  it('at a named provider', async () => {
    const created = await client.post<WalletJson>('/wallet', {
      customerReference: 'cust-restricted',
      name: 'Bola',
      provider: 'sandbox-restricted',
    })
    expect(created.status).toBe(201)
    expect(created.body.provider).toBe('sandbox-restricted')
  })

  it('replays the same request with Idempotent-Replayed, and refuses a different one with 409', async () => {
    const first = await client.post<WalletJson>('/wallet', { customerReference: 'cust-002', name: 'Chidi' })
    const again = await client.post<WalletJson>('/wallet', { name: 'Chidi', customerReference: 'cust-002' })
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(first.body)
    const conflict = await client.post<{ error: string }>('/wallet', {
      customerReference: 'cust-002',
      name: 'Someone Else',
    })
    expect(conflict.status).toBe(409)
    expect(conflict.body.error).toBe('idempotency_conflict')
  })

  it('two concurrent requests with one customerReference make one wallet, and both get it', async () => {
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        client.post<WalletJson>('/wallet', { customerReference: 'cust-race', name: 'Race' }),
      ),
    )
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201])
    expect(new Set(answers.map((a) => a.body.walletId)).size).toBe(1)
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(4)
    const atBank = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM sandbox_bank.accounts WHERE account_name = 'Race'`,
    )
    expect(atBank.rows[0].n).toBe(1)
  })

  it('customer references are per partner', async () => {
    const mine = await client.post<WalletJson>('/wallet', { customerReference: 'shared-ref', name: 'Mine' })
    const theirs = await other.post<WalletJson>('/wallet', { customerReference: 'shared-ref', name: 'Theirs' })
    expect([mine.status, theirs.status]).toEqual([201, 201])
    expect(mine.body.walletId).not.toBe(theirs.body.walletId)
  })

  it.each<[string, unknown, number, string]>([
    ['missing name', { customerReference: 'x1' }, 422, 'name'],
    ['missing customerReference', { name: 'X' }, 422, 'customerReference'],
    ['wrong type', { customerReference: 5, name: 'X' }, 422, 'customerReference'],
    ['empty name', { customerReference: 'x2', name: '' }, 422, 'name'],
    ['oversize name', { customerReference: 'x3', name: 'N'.repeat(101) }, 422, 'name'],
    ['unknown field', { customerReference: 'x4', name: 'X', balance: 100 }, 422, 'balance'],
    ['unknown provider', { customerReference: 'x5', name: 'X', provider: 'acme-bank' }, 422, 'provider'],
  ])('%s → %i naming %s, nothing created', async (_case, body, status, field) => {
    const before = await app.db.pool.query('SELECT count(*)::int AS n FROM wallets')
    const answer = await client.post<{ error: string; details: { fields: { field: string }[] } }>('/wallet', body)
    expect(answer.status).toBe(status)
    expect(answer.body.details.fields.map((f) => f.field)).toContain(field)
    const after = await app.db.pool.query('SELECT count(*)::int AS n FROM wallets')
    expect(after.rows[0].n).toBe(before.rows[0].n)
  })

  it('is refused without a valid signature', async () => {
    const unsigned = await fetch(`${app.baseUrl}/wallet`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"customerReference":"u","name":"U"}',
    })
    expect(unsigned.status).toBe(401)
  })
})

describe('GET /wallet/customer', () => {
  it('returns available and booked balance in kobo', async () => {
    const created = await client.post<WalletJson>('/wallet', { customerReference: 'cust-balance', name: 'Dayo' })
    const balance = await client.get(`/wallet/customer?customerId=${created.body.walletId}`)
    expect(balance.status).toBe(200)
    expect(balance.body).toEqual({
      walletId: created.body.walletId,
      availableBalanceKobo: 0,
      bookedBalanceKobo: 0,
      currency: 'NGN',
    })
  })

  it.each([
    [
      'another partner’s wallet',
      async () => (await other.post<WalletJson>('/wallet', { customerReference: 'theirs-1', name: 'T' })).body.walletId,
    ],
    ['an unknown id', async () => '01a20000-0000-7000-8000-000000000000'],
    ['a malformed id', async () => 'not-a-wallet'],
  ])('%s → 404', async (_case, walletId) => {
    const answer = await client.get<{ error: string }>(
      `/wallet/customer?customerId=${encodeURIComponent(await walletId())}`,
    )
    expect(answer.status).toBe(404)
    expect(answer.body.error).toBe('not_found')
  })

  it.each([['/wallet/customer'], ['/wallet/customer?customerId='], ['/wallet/customer?customerId=a&extra=1']])(
    '%s → 422',
    async (path) => {
      expect((await client.get(path)).status).toBe(422)
    },
  )
})

describe('when the provider gives no answer', () => {
  it('nothing is created (502 provider_unavailable) and a retry with the same reference works', async () => {
    await app.db.pool.query(
      `ALTER TABLE sandbox_bank.accounts ADD CONSTRAINT refuse_for_test CHECK (account_name <> 'Refused')`,
    )
    try {
      const failed = await client.post<{ error: string }>('/wallet', { customerReference: 'cust-502', name: 'Refused' })
      expect(failed.status).toBe(502)
      expect(failed.body.error).toBe('provider_unavailable')
      expect(
        (await app.db.pool.query(`SELECT count(*)::int AS n FROM wallets WHERE customer_reference = 'cust-502'`))
          .rows[0].n,
      ).toBe(0)
    } finally {
      await app.db.pool.query(`ALTER TABLE sandbox_bank.accounts DROP CONSTRAINT refuse_for_test`)
    }
    const retried = await client.post<WalletJson>('/wallet', { customerReference: 'cust-502', name: 'Refused' })
    expect(retried.status).toBe(201)
    expect(retried.headers.get('idempotent-replayed')).toBeNull()
  })
})
