// A payout reversed at the bank after it was confirmed, for a partner routed through each real
// adapter (issue 32; decision 0016), over real HTTP: the sandbox bank's simulator reverses the
// payout, the provider's dialect announces it by its own signed webhook (Paystack's
// transfer.reversed, Monnify's REVERSED_DISBURSEMENT), Rail checks it by a requery through the real
// adapter, and the transfer becomes `reversed` with its amount back on the float and one
// `transfer.reversed` event, exactly once however often the bank is asked again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { canonicalRequest, computeSignature } from '../../src/client/signing.ts'
import { checkReversal } from '../../src/money-out/pipeline/reversals.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import {
  eventsOf,
  expectOnceThrough,
  outboundState,
  payOut,
  ROUTED_PROVIDERS,
  routedPartner,
  settlePayout,
  startRouted,
  type RoutedHarness,
} from './routed-support.ts'

const SECRET = 'routed-reversal-secret'
const FLOAT_KOBO = 5_000_000
const AMOUNT_KOBO = 321_000
let harness: RoutedHarness

beforeAll(async () => {
  harness = await startRouted(SECRET, { sandbox: { firstDelayMs: 200, deadlineMs: 600_000 } })
})
afterAll(async () => harness?.close())

/** The sandbox bank's simulator reverses a settled payout: its control, signed with the bank's secret. */
async function reverseAtBank(reference: string): Promise<number> {
  const path = `/sandbox-bank/v1/transfers/${reference}/reversal`
  const timestampS = Math.floor(Date.now() / 1000)
  const headers = {
    'X-Sandbox-Timestamp': String(timestampS),
    'X-Sandbox-Signature': computeSignature(SECRET, canonicalRequest(timestampS, 'POST', path, '')),
  }
  const response = await fetch(`${harness.app.baseUrl}${path}`, { method: 'POST', headers })
  await response.body?.cancel()
  return response.status
}

async function float(client: RailClient): Promise<{ availableBalanceKobo: number; bookedBalanceKobo: number }> {
  return (await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>('/api/v1/rail/float')).body
}

/** What Rail recorded of the reversal: the ledger's reversal transfers and the events, for the transfer. */
async function recorded(id: string): Promise<{ reversals: string[]; events: string[] }> {
  const { pool } = harness.app.db
  const ledger = await pool.query<{ amount_kobo: string }>(
    `SELECT amount_kobo::text FROM ledger_transfers WHERE source_type = 'outbound_transfer' AND source_id = $1 AND code = 'outbound_transfer_reversal'`,
    [id],
  )
  const events = await pool.query<{ delivery_status: string }>(
    `SELECT delivery_status FROM events WHERE object_id = $1 AND type = 'transfer.reversed'`,
    [id],
  )
  return { reversals: ledger.rows.map((row) => row.amount_kobo), events: events.rows.map((row) => row.delivery_status) }
}

/** Jobs still queued or running that concern the payout: the dialects' webhooks and Rail's reversal check. */
async function jobsFor(id: string): Promise<number> {
  const { rows } = await harness.app.db.pool.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM graphile_worker._private_jobs WHERE payload->>'reference' = $1 OR key = $2`,
    [id, `payment-reversal:${id}`],
  )
  return rows[0]!.count
}

describe.each(ROUTED_PROVIDERS)('a payout through %s reversed at the bank', (provider) => {
  let client: RailClient

  beforeAll(async () => {
    ;({ client } = await routedPartner(
      harness.app,
      harness.hook,
      { payouts: [provider], collections: [provider] },
      FLOAT_KOBO,
    ))
  })

  it(
    'becomes reversed in Rail, once: the float restored and transfer.reversed delivered',
    { timeout: 120_000 },
    async () => {
      const id = await payOut(client, AMOUNT_KOBO)
      await settlePayout(client, id)
      await expectOnceThrough(harness.app, id, provider, 'succeeded')
      expect(await float(client)).toMatchObject({
        availableBalanceKobo: FLOAT_KOBO - AMOUNT_KOBO,
        bookedBalanceKobo: FLOAT_KOBO - AMOUNT_KOBO,
      })

      // The provider's own webhook tells Rail; Rail's requery through the adapter confirms it.
      expect(await reverseAtBank(id)).toBe(200)
      await waitFor(async () => (await outboundState(client, id)) === 'reversed', 30_000, `payout ${id} reversed`)
      expect(await float(client)).toMatchObject({ availableBalanceKobo: FLOAT_KOBO, bookedBalanceKobo: FLOAT_KOBO })
      await waitFor(
        () => eventsOf(harness.hook, 'transfer.reversed', id).length > 0,
        20_000,
        'transfer.reversed delivered',
      )
      expect(eventsOf(harness.hook, 'transfer.reversed', id)[0]).toMatchObject({
        event: 'transfer.reversed',
        data: { id, state: 'reversed' },
      })

      // Asked again: the bank has nothing more to reverse, and once every job about it has run, one of each.
      expect(await reverseAtBank(id)).toBe(409)
      await waitFor(async () => (await jobsFor(id)) === 0, 30_000, `every job about ${id} done`)
      await waitFor(
        async () => (await recorded(id)).events.every((status) => status === 'delivered'),
        20_000,
        'transfer.reversed marked delivered',
      )
      expect(await checkReversal(harness.app.payments(), id)).toBe('already_reversed')
      expect(await recorded(id)).toEqual({ reversals: [String(AMOUNT_KOBO)], events: ['delivered'] })
      expect(eventsOf(harness.hook, 'transfer.reversed', id)).toHaveLength(1)
      expect(await float(client)).toMatchObject({ availableBalanceKobo: FLOAT_KOBO, bookedBalanceKobo: FLOAT_KOBO })
      const timeline = await harness.app.db.pool.query<{ state: string }>(
        `SELECT state FROM outbound_transfer_states WHERE transfer_id = $1 ORDER BY seq`,
        [id],
      )
      expect(timeline.rows.map((row) => row.state)).toEqual(['pending', 'submitted', 'confirmed', 'reversed'])
      await expectLedgerVerified(harness.app.db.pool)
    },
  )
})
