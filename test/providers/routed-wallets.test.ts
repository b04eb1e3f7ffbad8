// Wallets (docs/contracts/wallets.md) for partners routed through the real adapters, over real HTTP to the sandbox's
// dialects. Through Monnify: a wallet opened at the provider, funded by a transfer into its account
// number (wallet.funded), paid out to a bank by a disbursement from the wallet's account, and the
// moves Monnify cannot do (merchant credit, debit, wallet transfer) refused 403 capability_disabled
// with nothing recorded. Paystack has no wallets: routing wallets to it is refused, and a wallet
// asked of it by name fails closed (403 capability_disabled) without a call.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { setPartnerRoutes } from '../../src/banking/providers/service.ts'
import { PAYEE } from '../support/payments.ts'
import { waitFor } from '../support/wait.ts'
import { eventsOf, startRouted, type RoutedHarness } from './routed-support.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const SECRET = 'routed-wallets-secret'
const PAYER = { payerName: 'Chinedu Okafor', payerAccountNumber: nuban('044', '000765432'), payerBankCode: '044' }
let harness: RoutedHarness

beforeAll(async () => {
  harness = await startRouted(SECRET, { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 } })
})
afterAll(async () => {
  await harness?.close()
})

type WalletJson = Schemas['Wallet']

async function balanceOf(client: RailClient, walletId: string): Promise<number> {
  return (await client.get<{ availableBalanceKobo: number }>(`/wallet/customer?customerId=${walletId}`)).body
    .availableBalanceKobo
}

async function countOf(sql: string, params: unknown[]): Promise<number> {
  return Number((await harness.app.db.pool.query<{ n: string }>(sql, params)).rows[0]!.n)
}

describe('a partner whose wallets are routed through sandbox-monnify', () => {
  let client: RailClient
  let partnerId: string
  let wallet: WalletJson

  beforeAll(async () => {
    const partner = await harness.app.newPartner({ callbackUrl: harness.hook.url })
    client = partner.client
    partnerId = partner.credentials.partnerId
    await setPartnerRoutes(harness.app.db.pool, partnerId, {
      payouts: ['sandbox-monnify'],
      collections: ['sandbox-monnify'],
      wallets: ['sandbox-monnify'],
    })
  })

  it('opens the wallet at the provider', async () => {
    const created = await client.post<WalletJson>('/wallet', { customerReference: randomUUID(), name: 'Amaka Eze' })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    wallet = created.body
    expect(wallet.provider).toBe('sandbox-monnify')
    const stored = await harness.app.db.pool.query<{ provider: string }>(`SELECT provider FROM wallets WHERE id = $1`, [
      wallet.walletId,
    ])
    expect(stored.rows).toEqual([{ provider: 'sandbox-monnify' }])
    expect(
      await countOf(
        `SELECT count(*) AS n FROM provider_calls WHERE provider = 'sandbox-monnify' AND operation ILIKE '%wallet%'`,
        [],
      ),
    ).toBeGreaterThan(0)
  })

  it('is funded by a transfer into its account number: wallet.funded delivered', async () => {
    const paid = await client.post('/api/v1/rail/sandbox/simulate-inbound-credit', {
      virtualAccount: wallet.accountNumber,
      amountKobo: 500_000,
      ...PAYER,
    })
    expect(paid.status, JSON.stringify(paid.body)).toBe(200)
    await waitFor(() => eventsOf(harness.hook, 'wallet.funded', wallet.walletId).length === 1, 30_000, 'wallet.funded')
    expect(await balanceOf(client, wallet.walletId)).toBe(500_000)
    const credits = await harness.app.db.pool.query(
      `SELECT provider, status FROM inbound_credits WHERE account_number = $1`,
      [wallet.accountNumber],
    )
    expect(credits.rows).toEqual([{ provider: 'sandbox-monnify', status: 'applied' }])
  })

  it("pays out to a bank by a disbursement from the wallet's account, once", async () => {
    const reference = randomUUID()
    const sent = await client.post<{ status: string }>('/transfer/bank/customer', {
      walletId: wallet.walletId,
      reference,
      amountKobo: 200_000,
      currency: 'NGN',
      destinationAccountNumber: PAYEE.accountNumber,
      destinationBankCode: PAYEE.bankCode,
      destinationAccountName: PAYEE.accountName,
    })
    expect(sent.status, JSON.stringify(sent.body)).toBe(200)
    const move = (
      await harness.app.db.pool.query<{ id: string }>(
        `SELECT id FROM wallet_moves WHERE partner_id = $1 AND reference = $2`,
        [partnerId, reference],
      )
    ).rows[0]!
    let status = ''
    await waitFor(
      async () => {
        status = (await client.get<{ status: string }>(`/transaction/batch/${reference}`)).body.status
        return status === 'successful' || status === 'failed'
      },
      30_000,
      'the external send ended',
    )
    expect(status).toBe('successful')
    const instruction = await harness.app.db.pool.query(
      `SELECT provider, operation, state, debit_account_number FROM bank_instructions WHERE id = $1`,
      [move.id],
    )
    expect(instruction.rows).toEqual([
      {
        provider: 'sandbox-monnify',
        operation: 'interbank',
        state: 'succeeded',
        debit_account_number: wallet.accountNumber,
      },
    ])
    const calledProviders = await harness.app.db.pool.query<{ provider: string }>(
      `SELECT DISTINCT provider FROM provider_calls WHERE reference = $1`,
      [move.id],
    )
    expect(calledProviders.rows.map((row) => row.provider)).toEqual(['sandbox-monnify'])
    const atBank = await harness.app.db.pool.query(
      `SELECT response_code FROM sandbox_bank.transfers WHERE reference = $1`,
      [move.id],
    )
    expect(atBank.rows).toEqual([{ response_code: '00' }])
    expect(await balanceOf(client, wallet.walletId)).toBe(300_000)
  })

  it('refuses merchant credit, debit and wallet transfer with 403 capability_disabled, recording nothing', async () => {
    const other = (await client.post<WalletJson>('/wallet', { customerReference: randomUUID(), name: 'Bola Ade' })).body
    const movesBefore = await countOf(`SELECT count(*) AS n FROM wallet_moves WHERE partner_id = $1`, [partnerId])
    const callsBefore = await countOf(`SELECT count(*) AS n FROM provider_calls`, [])
    const move = { walletId: wallet.walletId, amountKobo: 1_000, currency: 'NGN' }
    const refusals = [
      ['/wallet/credit', { ...move, reference: randomUUID() }],
      ['/wallet/debit', { ...move, reference: randomUUID() }],
      ['/transfer/wallet', { ...move, reference: randomUUID(), destinationWalletId: other.walletId }],
    ] as const
    for (const [path, body] of refusals) {
      const refused = await client.post<{ error: string }>(path, body)
      expect([path, refused.status, refused.body.error]).toEqual([path, 403, 'capability_disabled'])
    }
    expect(await countOf(`SELECT count(*) AS n FROM wallet_moves WHERE partner_id = $1`, [partnerId])).toBe(movesBefore)
    expect(await countOf(`SELECT count(*) AS n FROM provider_calls`, [])).toBe(callsBefore)
    expect(await balanceOf(client, wallet.walletId)).toBe(300_000)
  })
})

describe('a partner routed through sandbox-paystack, which has no wallets', () => {
  it('cannot route its wallets there, and a wallet asked of it fails closed: 403 capability_disabled, nothing called or recorded', async () => {
    const { client, credentials } = await harness.app.newPartner({ callbackUrl: harness.hook.url })
    await setPartnerRoutes(harness.app.db.pool, credentials.partnerId, {
      payouts: ['sandbox-paystack'],
      collections: ['sandbox-paystack'],
    })
    await expect(
      setPartnerRoutes(harness.app.db.pool, credentials.partnerId, { wallets: ['sandbox-paystack'] }),
    ).rejects.toThrow(/no wallets/)
    const callsBefore = await countOf(
      `SELECT count(*) AS n FROM provider_calls WHERE provider = 'sandbox-paystack'`,
      [],
    )
    const refused = await client.post<{ error: string; details: { provider: string } }>('/wallet', {
      customerReference: randomUUID(),
      name: 'Kemi Ade',
      provider: 'sandbox-paystack',
    })
    expect(refused.status, JSON.stringify(refused.body)).toBe(403)
    expect(refused.body).toMatchObject({ error: 'capability_disabled', details: { provider: 'sandbox-paystack' } })
    expect(await countOf(`SELECT count(*) AS n FROM wallets WHERE partner_id = $1`, [credentials.partnerId])).toBe(0)
    expect(await countOf(`SELECT count(*) AS n FROM provider_calls WHERE provider = 'sandbox-paystack'`, [])).toBe(
      callsBefore,
    )
  })
})
