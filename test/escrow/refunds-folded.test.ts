// Migration 0057 drops escrow_refunds, which only copied the refunds an escrow made (the escrow now
// reads them from refunds). The migrations run once, into an empty template, so this test makes
// the table again as migration 0031 made it, fills it the way escrow did (a copy of each refund,
// with its purpose), and runs the migration's own check, read from the migration file, over it:
// copies pass, and the escrow's read shows what the copies held; a copy that is not its refund's,
// or whose purpose its escrow does not imply, stops the migration.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../support/app.ts'
import { createRequest, creditEscrow, escrowClient, escrowIdOf } from '../support/escrow.ts'

let app: TestApp

beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => app?.close())

/** The check exactly as the migration runs it (between its begin and end markers). */
function copiesCheck(): string {
  const migration = readFileSync(
    new URL('../../db/migrations/0057_escrow_refunds_are_refunds.sql', import.meta.url),
    'utf8',
  )
  const found = /-- check the copies: begin\n([\s\S]*?)-- check the copies: end/.exec(migration)
  if (!found) throw new Error('the check markers are missing from 0057_escrow_refunds_are_refunds.sql')
  return found[1]!
}

/** escrow_refunds as migration 0031 created it. */
const OLD_TABLE = `CREATE TABLE escrow_refunds (
  refund_id uuid PRIMARY KEY,
  escrow_id uuid NOT NULL REFERENCES escrows (id),
  credit_id uuid NOT NULL REFERENCES inbound_credits (id),
  purpose text NOT NULL CHECK (purpose IN ('refund', 'excess_refund')),
  amount_kobo bigint NOT NULL CHECK (amount_kobo > 0 AND amount_kobo <= 9007199254740991),
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed')),
  outbound_transfer_id uuid,
  created_at timestamptz NOT NULL DEFAULT now()
)`

interface EscrowRefundsJson {
  refund: {
    refunds: { id: string; creditId: string; amountKobo: number; state: string; outboundTransferId: string | null }[]
  } | null
}

let escrowId: string
let read: () => Promise<EscrowRefundsJson>

beforeAll(async () => {
  const { credentials } = await app.newPartner()
  const api = escrowClient(app.baseUrl, credentials.escrowApiKey)
  const created = await api.create<{ ref: string }>(createRequest({ amount: 50_000 }))
  expect(created.status).toBe(201)
  const ref = created.body.ref
  for (const amountKobo of [20_000, 10_000])
    expect(await creditEscrow(app.db.pool, { partnerId: credentials.partnerId, ref, amountKobo })).toBe('applied')
  // A partially funded escrow cancelled: one refund of each funding credit.
  expect((await api.cancel(ref, { reason: 'the buyer changed their mind' })).status).toBe(200)
  escrowId = await escrowIdOf(app.db.pool, ref)
  read = async () => (await api.get<{ escrow: EscrowRefundsJson }>(ref)).body.escrow
})

beforeEach(async () => {
  // The table as escrow kept it: a copy of each refund the escrow made.
  await app.db.pool.query(`DROP TABLE IF EXISTS escrow_refunds`)
  await app.db.pool.query(OLD_TABLE)
  await app.db.pool.query(
    `INSERT INTO escrow_refunds (refund_id, escrow_id, credit_id, purpose, amount_kobo, state, outbound_transfer_id, created_at)
     SELECT id, origin_id, credit_id, 'refund', amount_kobo, state, outbound_transfer_id, created_at FROM refunds WHERE origin_type = 'escrow'`,
  )
})

describe('migration 0057: escrow_refunds was a copy of refunds', () => {
  it('passes copies, and the escrow reads from refunds what the copies held', async () => {
    await expect(app.db.pool.query(copiesCheck())).resolves.toBeDefined()
    const { rows } = await app.db.pool.query<{
      id: string
      creditId: string
      amountKobo: number
      state: string
      outboundTransferId: string | null
    }>(
      `SELECT refund_id AS id, credit_id AS "creditId", amount_kobo::int AS "amountKobo", state, outbound_transfer_id AS "outboundTransferId"
         FROM escrow_refunds WHERE escrow_id = $1 ORDER BY created_at, refund_id`,
      [escrowId],
    )
    expect(rows).toHaveLength(2)
    expect((await read()).refund?.refunds).toEqual(rows)
  })

  it('stops at a copy that differs from its refund', async () => {
    await app.db.pool.query(
      `UPDATE escrow_refunds SET amount_kobo = amount_kobo + 1 WHERE escrow_id = $1 AND refund_id = (SELECT min(refund_id::text)::uuid FROM escrow_refunds)`,
      [escrowId],
    )
    await expect(app.db.pool.query(copiesCheck())).rejects.toThrow(/is not a copy of its refund/)
  })

  it('stops at a copy whose purpose its escrow does not imply (a cancelled escrow refunds its funding, not an excess)', async () => {
    await app.db.pool.query(`UPDATE escrow_refunds SET purpose = 'excess_refund' WHERE escrow_id = $1`, [escrowId])
    await expect(app.db.pool.query(copiesCheck())).rejects.toThrow(/is not a copy of its refund/)
  })

  it('stops at a row with no refund', async () => {
    await app.db.pool.query(
      `INSERT INTO escrow_refunds (refund_id, escrow_id, credit_id, purpose, amount_kobo) SELECT $1, escrow_id, credit_id, purpose, amount_kobo FROM escrow_refunds LIMIT 1`,
      [randomUUID()],
    )
    await expect(app.db.pool.query(copiesCheck())).rejects.toThrow(/is not a copy of its refund/)
  })
})
