// Money out of escrow under concurrency, with real workers and the sandbox bank: release to a bank
// account, cancel and expiry at once on one escrow pay out once (one disbursement, or one refund
// per credit, never both); two releases again after a failed disbursement make one payout; two
// retries of a failed refund make one refund. The ledger verifies after each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { expireEscrow } from '../../src/escrow/service.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { startCollections, type CollectionsHarness } from '../collections/support.ts'
import {
  creditEscrow,
  createRequest,
  escrowClient,
  escrowIdOf,
  expiryDeps,
  moneyOf,
  type EscrowClient,
} from '../support/escrow.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

let harness: CollectionsHarness

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  if (harness) await expectLedgerVerified(harness.app.db.pool)
  await harness?.app.close()
})

const RECIPIENT = {
  accountNumber: nuban('058', '777888999'),
  bankCode: '058',
  accountName: syntheticAccountName('058', nuban('058', '777888999')),
}
const OTHER = {
  accountNumber: nuban('058', '222333444'),
  bankCode: '058',
  accountName: syntheticAccountName('058', nuban('058', '222333444')),
}
const AMOUNT_KOBO = 30_000
const TRIALS = 40

type EscrowJson = Schemas['Escrow']

async function escrowPartner() {
  const { client, credentials } = await harness.app.newPartner()
  return { client, partnerId: credentials.partnerId, api: escrowClient(harness.app.baseUrl, credentials.escrowApiKey) }
}

const read = async (api: EscrowClient, ref: string) => (await api.get<{ escrow: EscrowJson }>(ref)).body.escrow

async function settle(client: RailClient, transferId: string, outcome: 'confirmed' | 'failed'): Promise<void> {
  await waitFor(
    async () => (await client.get<{ state: string }>(`/api/v1/rail/outbound/${transferId}`)).body.state === 'submitted',
    15_000,
    'submitted',
  )
  expect((await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', { transferId, outcome })).status).toBe(
    200,
  )
}

async function late<T>(start: () => Promise<T>, upToMs = 10): Promise<T> {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * upToMs))
  return start()
}

describe('escrow money out under concurrency', () => {
  it(
    `${TRIALS} trials of release (to a bank account), cancel and expiry at once: one winner, one way out for the money`,
    { timeout: 300_000 },
    async () => {
      const { partnerId, api } = await escrowPartner()
      const winners = new Set<string>()
      for (let trial = 0; trial < TRIALS; trial++) {
        const fundedKobo = trial % 2 === 0 ? AMOUNT_KOBO : 10_000 // funded (release can win) or partly funded (expiry can win)
        const created = await api.create<{ ref: string; expiresAt: string }>(
          createRequest({ amount: AMOUNT_KOBO, ttlHours: 1, disbursement: RECIPIENT }),
        )
        const { ref, expiresAt } = created.body
        expect(await creditEscrow(harness.app.db.pool, { partnerId, ref, amountKobo: fundedKobo })).toBe('applied')
        const id = await escrowIdOf(harness.app.db.pool, ref)
        const [release, cancel, expired] = await Promise.all([
          late(() => api.release(ref)),
          late(() => api.cancel(ref, { reason: 'race' })),
          late(() => expireEscrow(expiryDeps(harness.app, { now: () => new Date(Date.parse(expiresAt)) }), id), 20),
        ])
        const won = [
          release.status === 200 && 'released',
          cancel.status === 200 && 'cancelled',
          expired !== undefined && 'expired',
        ].filter(Boolean)
        expect(won, `trial ${trial}`).toHaveLength(1)
        winners.add(won[0] as string)
        const escrow = await read(api, ref)
        expect(escrow.status).toBe(won[0])
        const { rows } = await harness.app.db.pool.query<{ disbursements: number; refunds: number; refunded: number }>(
          `SELECT (SELECT count(*) FROM outbound_transfers o WHERE o.origin_type = 'escrow' AND o.origin_id = $1)::int AS disbursements,
                (SELECT count(*) FROM refunds r WHERE r.origin_type = 'escrow' AND r.origin_id = $1)::int AS refunds,
                (SELECT coalesce(sum(r.amount_kobo), 0) FROM refunds r WHERE r.origin_type = 'escrow' AND r.origin_id = $1)::int AS refunded`,
          [id],
        )
        if (won[0] === 'released') expect(rows[0]).toEqual({ disbursements: 1, refunds: 0, refunded: 0 })
        else expect(rows[0]).toEqual({ disbursements: 0, refunds: 1, refunded: fundedKobo })
      }
      expect(winners.size).toBeGreaterThanOrEqual(2)
      // Nothing is held for escrows any more: every escrow's money is on its way out.
      expect((await moneyOf(harness.app.db.pool, partnerId)).holdingKobo).toBe(0)
      await expectLedgerVerified(harness.app.db.pool)
    },
  )

  it('two releases again after a failed disbursement: one pays, the other is refused; one new payout', async () => {
    const { client, partnerId, api } = await escrowPartner()
    const ref = (await api.create<{ ref: string }>(createRequest({ amount: AMOUNT_KOBO, disbursement: RECIPIENT })))
      .body.ref
    expect(await creditEscrow(harness.app.db.pool, { partnerId, ref, amountKobo: AMOUNT_KOBO })).toBe('applied')
    expect((await api.release(ref)).status).toBe(200)
    await settle(client, (await read(api, ref)).disbursement!.outboundTransferId!, 'failed')
    await waitFor(async () => (await read(api, ref)).disbursement?.state === 'failed', 20_000, 'failed')

    const answers = await Promise.all([
      api.release(ref, { disbursement: OTHER }),
      api.release(ref, { disbursement: OTHER }),
    ])
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400])
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await client.get<{ data: unknown[] }>('/api/v1/rail/outbound?limit=100')).body.data.length === 2,
      20_000,
      'both payouts listed',
    )
    const payouts = (await client.get<{ data: { state: string }[] }>('/api/v1/rail/outbound?origin=escrow')).body.data
    expect(payouts).toHaveLength(2) // the failed one and one retry
    await settle(client, (await read(api, ref)).disbursement!.outboundTransferId!, 'confirmed')
    await waitFor(async () => (await read(api, ref)).disbursement?.state === 'paid', 20_000, 'paid')
    expect(await moneyOf(harness.app.db.pool, partnerId)).toEqual(
      expect.objectContaining({ holdingKobo: 0, payingOutKobo: 0 }),
    )
    await expectLedgerVerified(harness.app.db.pool)
  })

  it('two retries of a failed refund: one refunds again, the other is refused; never more than the credit', async () => {
    const { client, partnerId, api } = await escrowPartner()
    const ref = (await api.create<{ ref: string }>(createRequest({ amount: AMOUNT_KOBO }))).body.ref
    expect(await creditEscrow(harness.app.db.pool, { partnerId, ref, amountKobo: AMOUNT_KOBO })).toBe('applied')
    expect((await api.cancel(ref, { reason: 'cancelled' })).status).toBe(200)
    await settle(client, (await read(api, ref)).refund!.refunds[0]!.outboundTransferId!, 'failed')
    await waitFor(async () => (await read(api, ref)).refund?.state === 'failed', 20_000, 'refund failed')

    const answers = await Promise.all([api.patch(ref, 'refund'), api.patch(ref, 'refund')])
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400])
    const refund = (await read(api, ref)).refund!
    expect(refund.refunds.map((r) => r.state)).toEqual(['failed', 'pending'])
    await settle(client, refund.refunds[1]!.outboundTransferId!, 'confirmed')
    await waitFor(async () => (await read(api, ref)).refund?.state === 'refunded', 20_000, 'refunded')
    expect(await moneyOf(harness.app.db.pool, partnerId)).toEqual(
      expect.objectContaining({ holdingKobo: 0, payingOutKobo: 0 }),
    )
    await expectLedgerVerified(harness.app.db.pool)
  })
})
