// A real provider's webhook at /providers/{profile}/webhooks, over real HTTP: a payout's news is a
// hint that makes Rail ask the provider (a requery) at once, never an answer by itself; a forged
// one is refused and changes nothing; a verified event Rail does not act on is acknowledged; the
// profile's address allowlist is enforced.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { hmacSha512Hex } from '../../src/platform/crypto.ts'
import { changeProvider, getProvider } from '../../src/banking/providers/service.ts'
import { sandboxPaystackSecretKey } from '../../src/sandbox/public.ts'
import type { TestApp } from '../support/app.ts'
import { waitFor } from '../support/wait.ts'
import { outboundState, payOut, routedPartner, startRouted, type RoutedHarness } from './routed-support.ts'

const SECRET = 'provider-webhooks-secret'
// Polls far apart: a payout confirmed within seconds was asked about because of its webhook.
const SCHEDULE = { sandbox: { firstDelayMs: 120_000, deadlineMs: 600_000 } }
const WEBHOOKS = '/providers/sandbox-paystack/webhooks'
let harness: RoutedHarness
let app: TestApp
let client: RailClient

beforeAll(async () => {
  harness = await startRouted(SECRET, SCHEDULE)
  app = harness.app
  ;({ client } = await routedPartner(app, harness.hook, { payouts: ['sandbox-paystack'] }, 10_000_000))
})
afterAll(async () => harness?.close())

function postPaystack(body: unknown, key = sandboxPaystackSecretKey(SECRET)): Promise<Response> {
  const raw = JSON.stringify(body)
  return fetch(`${app.baseUrl}${WEBHOOKS}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'x-paystack-signature': hmacSha512Hex(key, raw) },
    body: raw,
  })
}

async function submittedPayout(): Promise<string> {
  const id = await payOut(client, 120_000)
  await waitFor(async () => (await outboundState(client, id)) === 'submitted', 30_000, 'submitted')
  return id
}

const state = (id: string) => outboundState(client, id)

describe('a Paystack webhook', () => {
  it("of a payout's success makes Rail ask Paystack now: the payout is confirmed long before its next scheduled poll", async () => {
    const id = await submittedPayout()
    // The bank settles it and Rail is not told by the simulator: only the dialect's transfer.success webhook says so.
    const controls = app.payments().providers.sandboxControlsFor(await getProvider(app.db.pool, 'sandbox-paystack'))
    expect((await controls.registerPayoutOutcome(id, 'confirmed')).outcome).toBe('successful')
    await waitFor(
      async () => (await state(id)) === 'confirmed',
      30_000,
      'confirmed by the requery its webhook asked for',
    )
  })

  it('forged (a wrong key) is refused 401 and changes nothing; even a genuine one only asks', async () => {
    const id = await submittedPayout()
    const forged = await postPaystack(
      { event: 'transfer.success', data: { reference: id, status: 'success' } },
      'sk_test_not_the_key',
    )
    expect(forged.status).toBe(401)
    // Genuine, but the bank has not paid: the requery finds it in progress, and it stays submitted.
    const genuine = await postPaystack({
      event: 'transfer.success',
      data: { reference: id, status: 'success', amount: 120_000 },
    })
    expect(genuine.status).toBe(200)
    expect(await genuine.json()).toMatchObject({ received: true, requeried: true })
    await waitFor(
      async () =>
        (await app.db.pool.query(`SELECT 1 FROM provider_calls WHERE reference = $1 AND operation = 'requery'`, [id]))
          .rowCount! > 0,
      20_000,
      'the requery',
    )
    expect(await state(id)).toBe('submitted')
  })

  it('naming no payout of this provider asks nothing; an event Rail does not act on is acknowledged', async () => {
    const unknown = await postPaystack({
      event: 'transfer.failed',
      data: { reference: randomUUID(), status: 'failed' },
    })
    expect(unknown.status).toBe(200)
    expect(await unknown.json()).toMatchObject({ received: true, requeried: false })
    const other = await postPaystack({ event: 'subscription.create', data: { id: 1 } })
    expect(other.status).toBe(200)
    expect(await other.json()).toMatchObject({ received: true, ignored: 'subscription.create' })
  })

  it("of a credit whose payer's name and narration carry NUL is stored, their text made storable, and answered 200", async () => {
    const reference = `T${Date.now()}nul`
    const credit = {
      event: 'charge.success',
      data: {
        reference,
        amount: 150_000,
        currency: 'NGN',
        channel: 'dedicated_nuban',
        status: 'success',
        paid_at: new Date().toISOString(),
        authorization: {
          receiver_bank_account_number: '0000019998',
          sender_name: 'ADA\u0000OBI',
          narration: 'fees\u0000',
        },
        customer: { email: 'someone@example.ng' },
      },
    }
    const answer = await postPaystack(credit)
    expect(answer.status).toBe(200)
    const stored = await app.db.pool.query<{ payer_name: string; narration: string | null }>(
      `SELECT payer_name, narration FROM inbound_credits WHERE session_id = $1`,
      [reference],
    )
    expect(stored.rows[0]).toEqual({ payer_name: 'ADA OBI', narration: 'fees' })
  })

  it("from an address outside the profile's allowlist is refused 401", async () => {
    await changeProvider(app.db.pool, undefined, 'sandbox-paystack', { webhookSourceAddresses: ['203.0.113.7'] })
    try {
      const refused = await postPaystack({ event: 'subscription.create', data: { id: 1 } })
      expect(refused.status).toBe(401)
    } finally {
      await changeProvider(app.db.pool, undefined, 'sandbox-paystack', { webhookSourceAddresses: null })
    }
    expect((await postPaystack({ event: 'subscription.create', data: { id: 1 } })).status).toBe(200)
  })
})
