// A sandbox partner routed through the sandbox's Paystack and Monnify dialects runs the README's
// flows through Rail's real adapters, over real HTTP: a payout confirmed by the settlement
// simulator (`transfer.confirmed`), one through a faulty provider that still ends once, a payment
// intent paid by an inbound credit (`credit.confirmed`, announced by the provider's own signed
// webhook), and the ledger verified. Every instruction stays with the provider it was given to,
// and no secret reaches provider_calls.
import { randomUUID } from 'node:crypto'
import type { Runner } from 'graphile-worker'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBackgroundWorkers } from '../../src/app.ts'
import type { RailClient } from '../../src/client/index.ts'
import { setPartnerRoutes } from '../../src/providers/service.ts'
import { sandboxMonnifyCredentials, sandboxPaystackSecretKey } from '../../src/sandbox-bank/public.ts'
import { writeFaults } from '../../src/sandbox-bank/faults.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { fundFloat } from '../support/float.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { PAYEE } from '../support/payments.ts'
import { startReceiver, type Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'

const SECRET = 'routed-partners-secret'
const SCHEDULE = { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 } }
let app: TestApp
let runner: Runner
let hook: Receiver

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: SECRET, payments: SCHEDULE })
  hook = await startReceiver()
  runner = await startBackgroundWorkers({
    pool: app.db.pool,
    masterKey: app.masterKey,
    concurrency: 8,
    providers: { sandboxBankUrl: () => app.baseUrl, sandboxBankSecret: SECRET },
    events: { allowLoopbackCallbacks: true, retryDelaysMs: [200] },
    payments: SCHEDULE,
  })
})
afterAll(async () => {
  await runner?.stop()
  await hook?.close()
  await app?.close()
})

function eventsOf(type: string, objectId: string) {
  return hook.requests.filter((request) => {
    const body = JSON.parse(request.rawBody) as { event?: string; data?: { id?: string; transferId?: string; objectId?: string } }
    return body.event === type && JSON.stringify(body).includes(objectId)
  })
}

async function transferState(client: RailClient, id: string): Promise<string> {
  return (await client.get<{ state: string }>(`/api/v1/rail/outbound/${id}`)).body.state
}

describe.each(['sandbox-paystack', 'sandbox-monnify'])('a partner routed through %s', (provider) => {
  let client: RailClient
  let partnerId: string

  beforeAll(async () => {
    const partner = await app.newPartner({ callbackUrl: `${hook.url}/hooks` })
    client = partner.client
    partnerId = partner.credentials.partnerId
    await setPartnerRoutes(app.db.pool, partnerId, { payouts: [provider], collections: [provider] })
    expect((await fundFloat(client, 50_000_000)).status).toBe(200)
  })

  async function payOut(amountKobo: number): Promise<string> {
    const answer = await client.post<{ id: string }>('/api/v1/rail/outbound', {
      clientReference: randomUUID(),
      amountKobo,
      beneficiaryAccountNumber: PAYEE.accountNumber,
      beneficiaryBankCode: PAYEE.bankCode,
      beneficiaryAccountName: PAYEE.accountName,
      currency: 'NGN',
    })
    expect(answer.status, JSON.stringify(answer.body)).toBe(202)
    return answer.body.id
  }

  async function confirm(id: string): Promise<void> {
    await waitFor(async () => (await transferState(client, id)) === 'submitted', 30_000, `transfer ${id} submitted through ${provider}`)
    const settled = await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', { transferId: id, outcome: 'confirmed' })
    expect(settled.status, JSON.stringify(settled.body)).toBe(200)
    await waitFor(async () => (await transferState(client, id)) === 'confirmed', 30_000, `transfer ${id} confirmed`)
  }

  it('pays out through the real adapter: the instruction is the provider\'s, confirmed once, transfer.confirmed delivered', async () => {
    const id = await payOut(250_000)
    await confirm(id)
    const instruction = await app.db.pool.query<{ provider: string; state: string }>(`SELECT provider, state FROM bank_instructions WHERE id = $1`, [id])
    expect(instruction.rows[0]).toEqual({ provider, state: 'succeeded' })
    const operations = (await app.db.pool.query<{ provider: string }>(`SELECT DISTINCT provider FROM provider_calls WHERE reference = $1`, [id])).rows.map((row) => row.provider)
    expect(operations).toEqual([provider]) // never sent to another provider
    await waitFor(() => eventsOf('transfer.confirmed', id).length === 1, 20_000, 'transfer.confirmed')
    const view = await client.get<{ rail: { provider?: string } | null }>(`/api/v1/rail/outbound/${id}`)
    expect(view.body.rail?.provider).toBe(provider)
  })

  it('through a provider answering 500 to every call, the payout waits and ends once the provider answers again', async () => {
    await writeFaults(app.db.pool, { noAnswerRate: 0, errorRate: 1, lostResponseRate: 0, delayMs: 0 })
    let id = ''
    try {
      const since = new Date()
      id = await payOut(260_000)
      // Its name enquiry or its send: a call of this provider, made for it, that got no answer.
      const unanswered = `SELECT 1 FROM provider_calls WHERE provider = $1 AND outcome = 'unknown' AND created_at >= $2`
      await waitFor(async () => (await app.db.pool.query(unanswered, [provider, since])).rowCount! > 0, 30_000, 'an unanswered call')
      expect(['pending', 'submitted']).toContain(await transferState(client, id))
    } finally {
      await writeFaults(app.db.pool, { noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 })
    }
    await confirm(id)
    const atBank = await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])
    expect(atBank.rowCount).toBe(1) // sent again under its reference: one payment at the bank
  })

  it('collects: an intent\'s account is the provider\'s, and a payer\'s credit announced by its signed webhook confirms it', async () => {
    const intent = await client.post<{ id: string; virtualAccount: string }>('/api/v1/rail/payment/intent', { reference: randomUUID(), amountKobo: 150_000 })
    expect(intent.status, JSON.stringify(intent.body)).toBe(200)
    const account = await app.db.pool.query<{ provider: string }>(`SELECT provider FROM virtual_accounts WHERE account_number = $1`, [intent.body.virtualAccount])
    expect(account.rows[0]!.provider).toBe(provider)
    const paid = await client.post('/api/v1/rail/sandbox/simulate-inbound-credit', { virtualAccount: intent.body.virtualAccount, amountKobo: 150_000, payerName: 'ADA OBI' })
    expect(paid.status, JSON.stringify(paid.body)).toBe(200)
    await waitFor(
      async () => (await app.db.pool.query(`SELECT 1 FROM inbound_credits WHERE provider = $1 AND account_number = $2 AND status = 'applied'`, [provider, intent.body.virtualAccount])).rowCount === 1,
      30_000,
      'the credit applied',
    )
    await waitFor(() => eventsOf('credit.confirmed', intent.body.virtualAccount).length >= 1, 20_000, 'credit.confirmed')
  })

  it('keeps the books balanced and no secret in what it recorded', async () => {
    await expectLedgerVerified(app.db.pool)
    const secrets = provider === 'sandbox-paystack' ? [sandboxPaystackSecretKey(SECRET)] : Object.values(sandboxMonnifyCredentials(SECRET)).filter((value) => value.length > 12)
    const recorded = await app.db.pool.query<{ row: string }>(`SELECT row_to_json(c)::text AS row FROM provider_calls c WHERE provider = $1`, [provider])
    expect(recorded.rowCount).toBeGreaterThan(0)
    for (const { row } of recorded.rows) for (const secret of secrets) expect(row).not.toContain(secret)
  })
})
