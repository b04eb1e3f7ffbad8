// Triage refunds made before refunds had rows (a payout of origin 'refund' naming the unmatched
// credit itself, and no refund) are backfilled by migration 0032. The migrations run once, into an
// empty template, so this test makes such rows the old way — a triage refund whose refund row is
// taken away and whose payout names the credit again — and runs the migration's own backfill
// statement, read from the migration file, over them. Then each payout still in flight ends its
// refund and its triage item: confirmed → refunded; failed → unmatched again, its money back in
// suspense, and refunded on another try.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { payIn, startCollections, type CollectionsHarness } from '../collections/support.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import { confirmedCredit, newPartner, PAYER, refund, settleRefund, type Partner, type RefundJson } from './support.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

let harness: CollectionsHarness

beforeAll(async () => {
  harness = await startCollections()
})
afterEach(async () => {
  await expectLedgerVerified(harness.app.db.pool)
})
afterAll(async () => {
  await harness?.close()
  await harness?.app.close()
})

/** A backfill statement exactly as its migration runs it (between its begin and end markers). */
function migrationStatement(file: string, marker: string): string {
  const migration = readFileSync(new URL(`../../db/migrations/${file}`, import.meta.url), 'utf8')
  const found = new RegExp(`-- ${marker}: begin\\n([\\s\\S]*?)-- ${marker}: end`).exec(migration)
  if (!found) throw new Error(`the ${marker} markers are missing from ${file}`)
  return found[1]!
}

function backfillStatement(): string {
  return migrationStatement('0032_refunds.sql', 'backfill triage refunds')
}

type TriageItem = Schemas['UnmatchedCredit']

async function triageItem(partner: Partner, creditId: string): Promise<TriageItem> {
  return (await partner.client.get<TriageItem>(`/api/v1/rail/unmatched/${creditId}`)).body
}

async function waitForStatus(partner: Partner, creditId: string, status: string): Promise<TriageItem> {
  let item: TriageItem | undefined
  await waitFor(
    async () => (item = await triageItem(partner, creditId)).status === status,
    15_000,
    `triage item ${status}`,
  )
  return item!
}

/**
 * Signing for another try at a credit's refund: a request the same as the first, signed in the same
 * second, would be the first one replayed (the resolve route is keyed on its signature).
 */
const anotherTry = () => ({ timestampS: Math.floor(Date.now() / 1000) + 1 })

/** An unmatched credit (paid into an archived account), refunded by triage: its refund's id. */
async function triageRefund(
  partner: Partner,
  amountKobo: number,
): Promise<{ creditId: string; refundId: string; payoutId: string }> {
  const account = (
    await partner.client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
      reference: randomUUID(),
    })
  ).body
  expect((await partner.client.post(`/api/v1/rail/virtual-account/${account.trackingId}/archive`)).status).toBe(200)
  const { sessionId } = await payIn(partner.client, account.virtualAccount, amountKobo, PAYER)
  let creditId = ''
  await waitFor(
    async () => {
      const found = await harness.app.db.pool.query<{ id: string }>(
        `SELECT id FROM inbound_credits WHERE session_id = $1 AND status = 'unmatched'`,
        [sessionId],
      )
      creditId = found.rows[0]?.id ?? ''
      return creditId !== ''
    },
    15_000,
    'credit unmatched',
  )
  const resolved = await partner.client.post<{
    status: string
    resolution: { refundId: string; outboundTransferId: string }
  }>(`/api/v1/rail/unmatched/${creditId}/resolve`, { action: 'refund' })
  expect(resolved.body.status).toBe('refund_pending')
  const payoutId = resolved.body.resolution.outboundTransferId
  await waitFor(
    async () =>
      (await partner.client.get<{ state: string }>(`/api/v1/rail/outbound/${payoutId}`)).body.state === 'submitted',
    15_000,
    'payout submitted',
  )
  return { creditId, refundId: resolved.body.resolution.refundId, payoutId }
}

/** Makes a triage refund look as it did before 0032: no refund row, the payout naming the credit. */
async function makeOldStyle(creditId: string, refundId: string, payoutId: string): Promise<void> {
  const client = await harness.app.db.pool.connect()
  try {
    await client.query('BEGIN')
    await client.query(`UPDATE outbound_transfers SET origin_id = $2, origin_reference = NULL WHERE id = $1`, [
      payoutId,
      creditId,
    ])
    await client.query(`DELETE FROM refunds WHERE id = $1`, [refundId])
    await client.query(`UPDATE inbound_credits SET resolution = resolution - 'refundId' WHERE id = $1`, [creditId])
    await client.query('COMMIT')
  } finally {
    client.release()
  }
}

async function backfill(): Promise<void> {
  await harness.app.db.pool.query(backfillStatement())
}

async function suspenseHeldKobo(partnerId: string): Promise<number> {
  const { rows } = await harness.app.db.pool.query<{ held: string }>(
    `SELECT debits_pending AS held FROM ledger_accounts WHERE partner_id = $1 AND kind = 'suspense'`,
    [partnerId],
  )
  return Number(rows[0]!.held)
}

describe('triage refunds made before 0032', () => {
  it('become refunds of origin triage, named by their payouts; one still in flight ends its triage item when confirmed', async () => {
    const partner = await newPartner(harness)
    const made = await triageRefund(partner, 8_000)
    await makeOldStyle(made.creditId, made.refundId, made.payoutId)
    const { rows: before } = await harness.app.db.pool.query(`SELECT 1 FROM refunds WHERE credit_id = $1`, [
      made.creditId,
    ])
    expect(before).toEqual([])

    await backfill()
    const payout = (
      await partner.client.get<{
        clientReference: string
        origin: { type: string; id: string; reference: string | null }
      }>(`/api/v1/rail/outbound/${made.payoutId}`)
    ).body
    expect(payout.origin).toEqual({ type: 'refund', id: made.payoutId, reference: payout.clientReference })
    const backfilled = (await partner.client.get<RefundJson>(`/api/v1/rail/refunds/${made.payoutId}`)).body
    expect(backfilled).toMatchObject({
      id: made.payoutId,
      reference: payout.clientReference,
      creditId: made.creditId,
      amountKobo: 8_000,
      state: 'pending',
      origin: { type: 'triage', id: null },
      outboundTransferId: made.payoutId,
      completedAt: null,
    })
    const { rows } = await harness.app.db.pool.query<{ kind: string }>(
      `SELECT a.kind FROM refunds r JOIN ledger_accounts a ON a.id = r.source_account_id WHERE r.id = $1`,
      [made.payoutId],
    )
    expect(rows[0]!.kind).toBe('suspense')
    expect((await triageItem(partner, made.creditId)).resolution).toMatchObject({
      refundId: made.payoutId,
      outboundTransferId: made.payoutId,
    })

    // Run again, it finds nothing more to backfill.
    await backfill()
    expect(
      (await harness.app.db.pool.query(`SELECT 1 FROM refunds WHERE credit_id = $1`, [made.creditId])).rows,
    ).toHaveLength(1)

    expect((await settleRefund(partner.client, made.payoutId, 'confirmed')).state).toBe('succeeded')
    await waitForStatus(partner, made.creditId, 'refunded')
    expect(await suspenseHeldKobo(partner.credentials.partnerId)).toBe(0)
  })

  it('one still in flight that fails puts its money back in suspense and its triage item back in triage, refunded on another try', async () => {
    const partner = await newPartner(harness)
    const made = await triageRefund(partner, 6_500)
    await makeOldStyle(made.creditId, made.refundId, made.payoutId)
    await backfill()
    expect(await suspenseHeldKobo(partner.credentials.partnerId)).toBe(6_500)

    const failed = await settleRefund(partner.client, made.payoutId, 'failed')
    expect(failed).toMatchObject({ state: 'failed', origin: { type: 'triage' } })
    expect(failed.failureReason).not.toBeNull()
    expect((await waitForStatus(partner, made.creditId, 'unmatched')).resolution).toMatchObject({
      refundId: made.payoutId,
      outcome: 'failed',
    })
    expect(await suspenseHeldKobo(partner.credentials.partnerId)).toBe(0)

    const retried = await partner.client.post<{ status: string; resolution: { refundId: string } }>(
      `/api/v1/rail/unmatched/${made.creditId}/resolve`,
      { action: 'refund' },
      anotherTry(),
    )
    expect(retried.body.status).toBe('refund_pending')
    expect((await settleRefund(partner.client, retried.body.resolution.refundId, 'confirmed')).state).toBe('succeeded')
    await waitForStatus(partner, made.creditId, 'refunded')
  })

  it('ones that had ended take their payout’s end: confirmed → succeeded, failed → failed, with when it ended', async () => {
    const partner = await newPartner(harness)
    const confirmed = await triageRefund(partner, 3_000)
    const failed = await triageRefund(partner, 4_000)
    await settleRefund(partner.client, confirmed.refundId, 'confirmed')
    await settleRefund(partner.client, failed.refundId, 'failed')
    await waitForStatus(partner, failed.creditId, 'unmatched')
    await makeOldStyle(confirmed.creditId, confirmed.refundId, confirmed.payoutId)
    await makeOldStyle(failed.creditId, failed.refundId, failed.payoutId)

    await backfill()
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md):
    // the backfilled refunds take their payouts' ids.
    await waitFor(
      async () =>
        (await partner.client.get<{ data: RefundJson[] }>('/api/v1/rail/refunds?limit=100')).body.data.length === 2,
      20_000,
      'both refunds listed',
    )
    const { data } = (await partner.client.get<{ data: RefundJson[] }>('/api/v1/rail/refunds')).body
    const byId = new Map(data.map((refund) => [refund.id, refund]))
    expect(byId.get(confirmed.payoutId)).toMatchObject({
      creditId: confirmed.creditId,
      state: 'succeeded',
      failureReason: null,
      amountKobo: 3_000,
    })
    expect(byId.get(failed.payoutId)).toMatchObject({ creditId: failed.creditId, state: 'failed', amountKobo: 4_000 })
    expect(byId.get(failed.payoutId)!.failureReason).not.toBeNull()
    for (const ended of [confirmed, failed]) expect(byId.get(ended.payoutId)!.completedAt).not.toBeNull()
    // The failed one's credit is refundable again: triage refunds it.
    const retried = await partner.client.post<{ status: string }>(
      `/api/v1/rail/unmatched/${failed.creditId}/resolve`,
      { action: 'refund' },
      anotherTry(),
    )
    expect(retried.body.status).toBe('refund_pending')
  })
})

// Refunds API requests made before 0038 claimed their reference by their refunds alone; the
// migration gives each its refund_requests row, so that the reference still replays and conflicts.
describe('Refunds API requests made before 0038', () => {
  it('replay their refunds and refuse another body under their reference', async () => {
    const partner = await newPartner(harness)
    const creditId = await confirmedCredit(harness, partner, 30_000)
    const reference = randomUUID()
    const first = await refund(partner.client, { reference, creditId, amountKobo: 1_000 })
    expect(first.status, JSON.stringify(first.body)).toBe(201)
    const pool = harness.app.db.pool
    await pool.query(`DELETE FROM refund_requests WHERE partner_id = $1 AND reference = $2`, [
      partner.credentials.partnerId,
      reference,
    ])
    await pool.query(migrationStatement('0038_refund_requests.sql', 'backfill refund requests'))

    const claimed = await pool.query(
      `SELECT count(*)::int AS n FROM refund_requests WHERE partner_id = $1 AND reference = $2`,
      [partner.credentials.partnerId, reference],
    )
    expect(claimed.rows[0].n).toBe(1)
    const again = await refund(partner.client, { reference, creditId, amountKobo: 1_000 })
    expect(again.status).toBe(201)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body.refunds.map((made) => made.id)).toEqual(first.body.refunds.map((made) => made.id))
    const other = await refund(partner.client, { reference, creditId, amountKobo: 2_000 })
    expect(other.status).toBe(409)
    expect(other.body.error).toBe('idempotency_conflict')
    expect(other.body.details).toMatchObject({ reference, id: first.body.refunds[0]!.id })
  })
})
