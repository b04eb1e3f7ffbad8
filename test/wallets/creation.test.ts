// Wallet creation under concurrency and provider trouble: the provider is called with no
// transaction open, under an opening reference, so a duplicate, a retry or a lost answer never
// opens a second account, and nothing answers 500.
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { RailError } from '../../src/platform/errors.ts'
import { ProviderRegistry } from '../../src/banking/providers/registry.ts'
import { writeFaults, type Faults } from '../../src/sandbox/faults.ts'
import { createWallet, openingReference } from '../../src/wallets/service.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const SECRET = 'wallet-creation-secret'
const NO_FAULTS: Faults = { noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 }

let app: TestApp
let client: RailClient
let partnerId: string

beforeAll(async () => {
  // Every request of the 64 below is admitted at once (none holds a connection for long, so 20 go
  // round): this file checks one account per reference under concurrency, not overload
  // (edge.test.ts and burst.test.ts do), so no answer may depend on how busy the machine is (the
  // default limits queued a third of them for at most 2 s, and answered 503 under load).
  app = await startTestApp({
    sandboxBankSecret: SECRET,
    poolMax: 20,
    edge: { admission: { inFlightMax: 64, queueMax: 64, queueWaitMs: 30_000 } },
  })
  const partner = await app.newPartner()
  client = partner.client
  partnerId = partner.credentials.partnerId
})
afterEach(async () => {
  await writeFaults(app.db.pool, NO_FAULTS)
})
afterAll(async () => {
  await expectLedgerVerified(app.db.pool)
  await app.close()
})

type WalletJson = Schemas['Wallet']

async function accountsAtBank(customerReference: string): Promise<{ account_number: string; account_name: string }[]> {
  const found = await app.db.pool.query(
    `SELECT account_number, account_name FROM sandbox_bank.accounts WHERE opening_reference = $1`,
    [openingReference(partnerId, customerReference)],
  )
  return found.rows
}

describe('64 concurrent creations with the provider answering slowly', () => {
  it('no 5xx; one account per customerReference at the bank; every created wallet readable', async () => {
    await writeFaults(app.db.pool, { ...NO_FAULTS, delayMs: 300 })
    // 24 references asked twice with one body, and 8 asked twice with two names (a conflict).
    const requests = [
      ...Array.from({ length: 24 }, (_, index) => [
        { customerReference: `burst-${index}`, name: `Burst ${index}` },
        { customerReference: `burst-${index}`, name: `Burst ${index}` },
      ]),
      ...Array.from({ length: 8 }, (_, index) => [
        { customerReference: `clash-${index}`, name: `Clash ${index}` },
        { customerReference: `clash-${index}`, name: `Other ${index}` },
      ]),
    ].flat()
    expect(requests).toHaveLength(64)
    const answers = await Promise.all(
      requests.map((body) => client.post<WalletJson & { error?: string }>('/wallet', body)),
    )

    expect(answers.filter((answer) => answer.status >= 500).map((answer) => answer.body)).toEqual([])
    for (const [index, answer] of answers.entries()) {
      const body = requests[index]!
      const atBank = await accountsAtBank(body.customerReference)
      expect(atBank).toHaveLength(1)
      const stored = await app.db.pool.query(
        `SELECT id, name, account_number FROM wallets WHERE partner_id = $1 AND customer_reference = $2`,
        [partnerId, body.customerReference],
      )
      expect(stored.rows).toHaveLength(1)
      expect(stored.rows[0].account_number).toBe(atBank[0]!.account_number)
      if (stored.rows[0].name === body.name) {
        // The request that made the wallet, or one of its duplicates: all get it.
        expect(answer.status).toBe(201)
        expect(answer.body.walletId).toBe(stored.rows[0].id)
      } else {
        expect(answer.status).toBe(409)
        expect(answer.body.error).toBe('idempotency_conflict')
      }
    }
    const created = answers.filter((answer) => answer.status === 201)
    expect(created.length).toBeGreaterThanOrEqual(24 * 2 + 8)
    for (const answer of created) {
      const balance = await client.get<{ walletId: string; availableBalanceKobo: number }>(
        `/wallet/customer?customerId=${answer.body.walletId}`,
      )
      expect(balance.status).toBe(200)
      expect(balance.body.availableBalanceKobo).toBe(0)
    }
  })
})

describe('when the provider call fails', () => {
  it('no answer at all: 502, nothing recorded, and the retry opens the account once', async () => {
    await writeFaults(app.db.pool, { ...NO_FAULTS, noAnswerRate: 1 })
    const failed = await client.post<{ error: string }>('/wallet', { customerReference: 'silent', name: 'Silent Bank' })
    expect(failed.status).toBe(502)
    expect(failed.body.error).toBe('provider_unavailable')
    await writeFaults(app.db.pool, NO_FAULTS)
    const retried = await client.post<WalletJson>('/wallet', { customerReference: 'silent', name: 'Silent Bank' })
    expect(retried.status).toBe(201)
    expect(await accountsAtBank('silent')).toHaveLength(1)
  })

  it('the account opened but its answer lost: the retry gets that account, not a second one', async () => {
    await writeFaults(app.db.pool, { ...NO_FAULTS, lostResponseRate: 1 })
    const lost = await client.post<{ error: string }>('/wallet', { customerReference: 'lost', name: 'Lost Answer' })
    expect(lost.status).toBe(502)
    const openedBefore = await accountsAtBank('lost')
    expect(openedBefore).toHaveLength(1) // the bank did open it
    await writeFaults(app.db.pool, NO_FAULTS)
    const retried = await client.post<WalletJson>('/wallet', { customerReference: 'lost', name: 'Lost Answer' })
    expect(retried.status).toBe(201)
    expect(retried.headers.get('idempotent-replayed')).toBeNull()
    expect(retried.body.accountNumber).toBe(openedBefore[0]!.account_number)
    expect(await accountsAtBank('lost')).toHaveLength(1)
  })

  it('another name for a reference whose account was opened (its answer lost) is a conflict; the original request still completes', async () => {
    await writeFaults(app.db.pool, { ...NO_FAULTS, lostResponseRate: 1 })
    expect((await client.post('/wallet', { customerReference: 'renamed', name: 'First Name' })).status).toBe(502)
    await writeFaults(app.db.pool, NO_FAULTS)
    const other = await client.post<{ error: string }>('/wallet', { customerReference: 'renamed', name: 'Second Name' })
    expect(other.status).toBe(409)
    expect(other.body.error).toBe('idempotency_conflict')
    const original = await client.post<WalletJson>('/wallet', { customerReference: 'renamed', name: 'First Name' })
    expect(original.status).toBe(201)
    expect(await accountsAtBank('renamed')).toHaveLength(1)
  })
})

describe('an infrastructure failure is not a validation error', () => {
  it('a provider look-up that times out propagates as it is, not as 422 "unknown provider"', async () => {
    // A pool whose statements give up quickly, and the providers table locked by another session.
    const impatient = new pg.Pool({ connectionString: app.db.url, max: 2, statement_timeout: 200 })
    const locker = await app.db.pool.connect()
    try {
      await locker.query('BEGIN')
      await locker.query('LOCK TABLE providers IN ACCESS EXCLUSIVE MODE')
      const deps = {
        pool: impatient,
        providers: new ProviderRegistry(impatient, { sandboxBankUrl: () => app.baseUrl, sandboxBankSecret: SECRET }),
      }
      const outcome = await createWallet(deps, partnerId, {
        customerReference: 'locked-out',
        name: 'Locked Out',
      }).catch((error: unknown) => error)
      expect(outcome).not.toBeInstanceOf(RailError)
      expect((outcome as { code?: string }).code).toBe('57014') // query_canceled: the statement timeout
    } finally {
      await locker.query('ROLLBACK')
      locker.release()
      await impatient.end()
    }
    expect(await accountsAtBank('locked-out')).toHaveLength(0)
  })
})
