// Concurrent submits are coalesced into shared transactions: many at once, with replays, a
// conflicting body and more than the float can hold, each caller still gets exactly its own
// answer, the float holds exactly what was accepted, and the ledger verifies.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { nuban } from '../../src/nip/nuban.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { fundFloat } from '../support/float.ts'

let app: TestApp

beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => {
  if (app) await expectLedgerVerified(app.db.pool)
  await app?.close()
})

const BENEFICIARY = { beneficiaryBankCode: '058', beneficiaryAccountName: 'Ada Obi', currency: 'NGN' }

it('answers 80 concurrent submits each with its own transfer, in fewer transactions than submits', async () => {
  const { client, credentials } = await app.newPartner()
  expect((await fundFloat(client, 50 * 10_000)).status).toBe(200)
  const distinct = Array.from({ length: 70 }, (_unused, index) => ({
    clientReference: randomUUID(),
    amountKobo: 10_000,
    beneficiaryAccountNumber: nuban('058', String(100_000_000 + index)),
    ...BENEFICIARY,
  }))
  const replayed = distinct.slice(0, 5)
  const conflicting = distinct.slice(5, 10).map((body) => ({ ...body, amountKobo: 20_000 }))
  const answers = await Promise.all([...distinct, ...replayed, ...conflicting].map((body) => client.post<{ id: string; clientReference: string; state: string; failureReason: { code: string } | null; error?: string }>('/api/v1/rail/outbound', body)))

  // The first 70 and the 5 replays: 202 each; a replay answers the same transfer as its original (whichever came first).
  const accepted = answers.slice(0, 75)
  expect(accepted.every((answer) => answer.status === 202)).toBe(true)
  const byReference = new Map<string, string>()
  for (const answer of accepted) {
    const known = byReference.get(answer.body.clientReference)
    if (known) expect(answer.body.id).toBe(known)
    else byReference.set(answer.body.clientReference, answer.body.id)
  }
  expect(byReference.size).toBe(70)
  // The conflicting bodies: 409 each, unless they were recorded first (then their twin is the 409) — either way one transfer per reference.
  const statuses = answers.slice(75).map((answer) => answer.status)
  expect(statuses.every((status) => status === 409 || status === 202)).toBe(true)

  // 50 of the 70 fit the float: the rest failed with insufficient_funds, and nothing of theirs is held.
  const transfers = await app.db.pool.query<{ state: string; failure: string | null; n: number }>(
    `SELECT state, failure_reason ->> 'code' AS failure, count(*)::int AS n FROM outbound_transfers WHERE partner_id = $1 GROUP BY 1, 2 ORDER BY 1`,
    [credentials.partnerId],
  )
  const total = transfers.rows.reduce((sum, row) => sum + row.n, 0)
  expect(total).toBe(70)
  const failed = transfers.rows.find((row) => row.state === 'failed')
  expect(failed).toMatchObject({ failure: 'insufficient_funds' })
  const float = (await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>('/api/v1/rail/float')).body
  expect(float.bookedBalanceKobo).toBe(500_000)
  expect(float.availableBalanceKobo).toBe(0)
  const heldOrFailed = await app.db.pool.query<{ held: number }>(
    `SELECT count(*)::int AS held FROM outbound_transfers WHERE partner_id = $1 AND hold_transfer_id IS NOT NULL`,
    [credentials.partnerId],
  )
  expect(heldOrFailed.rows[0]!.held).toBe(total - failed!.n)
  expect(total - failed!.n).toBeLessThanOrEqual(50)
  // Coalesced: the 70 rows were written by fewer transactions than 70.
  const transactions = await app.db.pool.query<{ n: number }>(`SELECT count(DISTINCT xmin::text)::int AS n FROM outbound_transfers WHERE partner_id = $1 AND state = 'pending'`, [credentials.partnerId])
  expect(transactions.rows[0]!.n).toBeLessThan(70)
})
