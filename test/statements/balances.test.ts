// GET /api/v1/rail/balances over signed HTTP against the real app, the sandbox bank and the payment
// pipeline: after float funding, payouts confirmed, failed and still in flight, a collection and
// an escrow funding, every figure equals the ledger's, and the collections statement sums to it.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { creditEscrow, createRequest, escrowClient } from '../support/escrow.ts'
import { fundFloat } from '../support/float.ts'
import { startRail, type Rail } from '../support/rail.ts'
import { waitFor } from '../support/wait.ts'
import { signedKobo, statementPage, wholeStatement } from './support.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const SECRET = 'balances-test-secret'
const SCHEDULE = { sandbox: { firstDelayMs: 100, deadlineMs: 10_000 } }
let app: Rail

beforeAll(async () => {
  app = await startRail({
    sandboxBankSecret: SECRET,
    payments: SCHEDULE,
    workers: { concurrency: 8, events: { retryDelaysMs: [200] } },
  })
})
// Closing verifies the ledger before the database is dropped.
afterAll(() => app?.close())

type BalancesJson = Schemas['Balances']

const ZERO: BalancesJson = {
  currency: 'NGN',
  float: { availableKobo: 0, bookedKobo: 0 },
  collections: { awaitingSettlementKobo: 0, bookedKobo: 0 },
  escrow: { heldKobo: 0, bookedKobo: 0 },
  pendingPayouts: { count: 0, amountKobo: 0 },
}

const BENEFICIARY = {
  beneficiaryAccountNumber: nuban('058', '123456789'),
  beneficiaryBankCode: '058',
  beneficiaryAccountName: syntheticAccountName('058', nuban('058', '123456789')),
  currency: 'NGN',
}

async function balances(client: RailClient): Promise<BalancesJson> {
  const response = await client.get<BalancesJson>('/api/v1/rail/balances')
  expect(response.status).toBe(200)
  return response.body
}

const outboundState = async (client: RailClient, id: string) =>
  (await client.get<{ state: string }>(`/api/v1/rail/outbound/${id}`)).body.state

async function submitPayout(client: RailClient, amountKobo: number): Promise<string> {
  const submitted = await client.post<{ id: string }>('/api/v1/rail/outbound', {
    clientReference: randomUUID(),
    amountKobo,
    ...BENEFICIARY,
  })
  expect(submitted.status).toBe(202)
  await waitFor(
    async () => (await outboundState(client, submitted.body.id)) === 'submitted',
    15_000,
    'payout submitted',
  )
  return submitted.body.id
}

async function settle(client: RailClient, id: string, outcome: 'confirmed' | 'failed'): Promise<void> {
  expect(
    (await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', { transferId: id, outcome })).status,
  ).toBe(200)
  await waitFor(async () => (await outboundState(client, id)) === outcome, 20_000, `payout ${outcome}`)
}

/** The same figures, straight from the ledger's accounts and the payouts whose hold is still pending. */
async function ledgerFigures(partnerId: string): Promise<BalancesJson> {
  const accounts = await app.db.pool.query<{ kind: string; booked: number; available: number }>(
    `SELECT kind, credits_posted - debits_posted AS booked, credits_posted - debits_posted - debits_pending AS available
       FROM ledger_accounts WHERE partner_id = $1 AND kind IN ('float', 'collections', 'escrow_holding')`,
    [partnerId],
  )
  const of = (kind: string) => accounts.rows.find((row) => row.kind === kind) ?? { booked: 0, available: 0 }
  const payouts = await app.db.pool.query<{ count: number; amount: number }>(
    `SELECT count(*)::int AS count, COALESCE(sum(t.amount_kobo), 0)::bigint AS amount
       FROM outbound_transfers o JOIN ledger_pending_transfers p ON p.transfer_id = o.hold_transfer_id JOIN ledger_transfers t ON t.id = o.hold_transfer_id
      WHERE o.partner_id = $1 AND p.status = 'pending'`,
    [partnerId],
  )
  return {
    currency: 'NGN',
    float: { availableKobo: of('float').available, bookedKobo: of('float').booked },
    collections: { awaitingSettlementKobo: of('collections').available, bookedKobo: of('collections').booked },
    escrow: { heldKobo: of('escrow_holding').available, bookedKobo: of('escrow_holding').booked },
    pendingPayouts: { count: payouts.rows[0]!.count, amountKobo: payouts.rows[0]!.amount },
  }
}

/**
 * The balances once nothing moves: equal to the ledger's figures and to the next read (collected
 * money is settled to the float by a job of its own, which may still be running).
 */
async function settledFigures(client: RailClient, partnerId: string): Promise<BalancesJson> {
  let figures: BalancesJson | undefined
  await waitFor(
    async () => {
      figures = await balances(client)
      const ledger = await ledgerFigures(partnerId)
      return (
        JSON.stringify(figures) === JSON.stringify(ledger) &&
        JSON.stringify(await balances(client)) === JSON.stringify(figures)
      )
    },
    20_000,
    'balances agreeing with the ledger',
  )
  return figures!
}

describe('GET /api/v1/rail/balances', () => {
  it('a partner that never moved money has every figure at 0, and reading creates no account', async () => {
    const { credentials, client } = await app.newPartner()
    expect(await balances(client)).toEqual(ZERO)
    const { rows } = await app.db.pool.query(`SELECT 1 FROM ledger_accounts WHERE partner_id = $1`, [
      credentials.partnerId,
    ])
    expect(rows).toHaveLength(0)
  })

  it('matches the ledger after fundings, payouts (confirmed, failed, in flight), a collection and an escrow funding', async () => {
    const { credentials, client } = await app.newPartner()
    const bystander = await app.newPartner()
    expect((await fundFloat(client, 1_000_000)).status).toBe(200)

    await settle(client, await submitPayout(client, 100_000), 'confirmed')
    await settle(client, await submitPayout(client, 50_000), 'failed')
    const inFlight = [await submitPayout(client, 70_000), await submitPayout(client, 30_000)]

    let figures = await balances(client)
    expect(figures).toEqual(await ledgerFigures(credentials.partnerId))
    expect(figures.pendingPayouts).toEqual({ count: 2, amountKobo: 100_000 })
    expect(figures.float).toEqual({ bookedKobo: 900_000, availableKobo: 800_000 })
    // The payouts in flight are listed as such by the pipeline too.
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await client.get<{ data: unknown[] }>('/api/v1/rail/outbound?limit=100')).body.data.length === 4,
      20_000,
      'the four payouts listed',
    )
    const listed = (
      await client.get<{ data: { state: string; amountKobo: number }[] }>('/api/v1/rail/outbound?limit=100')
    ).body.data.filter((payout) => ['pending', 'submitted', 'unknown'].includes(payout.state))
    expect({ count: listed.length, amountKobo: listed.reduce((sum, payout) => sum + payout.amountKobo, 0) }).toEqual(
      figures.pendingPayouts,
    )

    // A collection through the sandbox bank, applied by the workers.
    const account = (
      await client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', { reference: randomUUID() })
    ).body
    expect(
      (
        await client.post('/api/v1/rail/sandbox/simulate-inbound-credit', {
          virtualAccount: account.virtualAccount,
          amountKobo: 40_000,
        })
      ).status,
    ).toBe(200)
    await waitFor(
      async () =>
        (await statementPage(client, '/api/v1/rail/collections/statement')).data.some(
          (line) => line.cause === 'credit' && line.amountKobo === 40_000,
        ),
      20_000,
      'the collection applied',
    )

    // An escrow funded through the collections seam: collections → escrow holding.
    const escrows = escrowClient(app.baseUrl, credentials.escrowApiKey)
    const escrow = await escrows.create<{ ref: string }>(createRequest({ amount: 25_000 }))
    expect(escrow.status).toBe(201)
    expect(
      await creditEscrow(app.db.pool, { partnerId: credentials.partnerId, ref: escrow.body.ref, amountKobo: 25_000 }),
    ).toBe('applied')

    figures = await settledFigures(client, credentials.partnerId)
    expect(figures.escrow).toEqual({ heldKobo: 25_000, bookedKobo: 25_000 })

    // The collections statement sums to its booked balance; the escrow funding names its cause.
    const collections = await wholeStatement(client, '/api/v1/rail/collections/statement', { limit: 2 })
    expect(collections.openingBalanceKobo).toBe(0)
    expect(collections.closingBalanceKobo).toBe(figures.collections.bookedKobo)
    expect(collections.lines.reduce((sum, line) => sum + signedKobo(line), 0)).toBe(figures.collections.bookedKobo)
    expect(collections.lines).toContainEqual(
      expect.objectContaining({
        cause: 'escrow',
        direction: 'debit',
        amountKobo: 25_000,
        object: { type: 'escrow', id: expect.any(String), reference: expect.stringMatching(/^EPT-/) },
      }),
    )
    expect(collections.lines).toContainEqual(
      expect.objectContaining({
        cause: 'credit',
        direction: 'credit',
        amountKobo: 40_000,
        object: { type: 'inbound_credit', id: expect.any(String), reference: null },
      }),
    )

    // The float statement ends at the float's booked balance: a posted payout is a line, a hold is not.
    const float = await wholeStatement(client, '/api/v1/rail/float/statement')
    expect(float.closingBalanceKobo).toBe(figures.float.bookedKobo)
    expect(float.lines.filter((line) => line.cause === 'payout').map((line) => line.amountKobo)).toEqual([100_000])
    // Collected money is settled to the float (the default): a settlement line on each side.
    expect(collections.lines).toContainEqual(
      expect.objectContaining({ cause: 'settlement', direction: 'debit', amountKobo: 40_000 }),
    )
    expect(float.lines).toContainEqual(
      expect.objectContaining({ cause: 'settlement', direction: 'credit', amountKobo: 40_000 }),
    )

    // The payouts in flight end: one confirmed, one failed; nothing is pending any more.
    await settle(client, inFlight[0]!, 'confirmed')
    await settle(client, inFlight[1]!, 'failed')
    figures = await settledFigures(client, credentials.partnerId)
    expect(figures.pendingPayouts).toEqual({ count: 0, amountKobo: 0 })
    expect(figures.float.availableKobo).toBe(figures.float.bookedKobo)
    expect((await wholeStatement(client, '/api/v1/rail/float/statement')).closingBalanceKobo).toBe(
      figures.float.bookedKobo,
    )

    expect(await balances(bystander.client)).toEqual(ZERO)
  }, 120_000)
})
