// What a cluster test checks once its mixed load is over (test/cluster/load.ts): every payment
// ended and every event delivered, every acknowledged request stored once, every bank instruction
// at the bank once per reference, every event's delivery recorded and received. Shared by the
// failover and PgBouncer tests; each reads through the test's own pool, straight to PostgreSQL.
import { expect } from 'vitest'
import type { Pool } from '../../src/platform/db.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'
import { acknowledged, type LoadParty, type LoadResult } from './load.ts'

/**
 * Outbound transfers are settled through the simulator once at the bank; then waits until every
 * payment ended, every acknowledged credit is recorded and every event delivered. `eachSecond`
 * runs at most once a second while waiting (a test that killed processes moves their leases on).
 */
export async function settleEverything(
  pool: Pool,
  party: LoadParty,
  load: LoadResult,
  options: { timeoutMs?: number; eachSecond?: () => Promise<void> } = {},
): Promise<void> {
  const outbound = load.acknowledged.filter((done) => done.kind === 'outbound submit').map((done) => done.id!)
  const credits = load.acknowledged.filter((done) => done.kind === 'inbound credit').map((done) => done.reference)
  const registered = new Set<string>()
  let lastRunAt = 0
  await waitFor(
    async () => {
      if (options.eachSecond && Date.now() - lastRunAt >= 1_000) {
        await options.eachSecond()
        lastRunAt = Date.now()
      }
      const sent = await pool.query<{ id: string }>(
        `SELECT id FROM bank_instructions WHERE id = ANY($1) AND state = 'sent'`,
        [outbound],
      )
      for (const { id } of sent.rows.filter((row) => !registered.has(row.id))) {
        await acknowledged(
          () =>
            party.client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
              transferId: id,
              outcome: 'confirmed',
            }),
          [200],
        )
        registered.add(id)
      }
      const open = await pool.query(`SELECT 1 FROM bank_instructions WHERE state NOT IN ('succeeded', 'failed')`)
      const recorded = await pool.query(`SELECT 1 FROM inbound_credits WHERE session_id = ANY($1)`, [credits])
      const undelivered = await pool.query(`SELECT 1 FROM event_deliveries WHERE status = 'pending'`)
      return open.rowCount === 0 && recorded.rowCount === credits.length && undelivered.rowCount === 0
    },
    options.timeoutMs ?? 60_000,
    'every payment ended, every acknowledged credit recorded, every event delivered',
  )
}

/** Every acknowledged request is stored once, every instruction ended and reached the bank once; figures for the test's summary. */
export async function checkStoredOnce(pool: Pool, party: LoadParty, load: LoadResult) {
  const partnerId = party.credentials.partnerId
  const of = (kind: string) => load.acknowledged.filter((done) => done.kind === kind).map((done) => done.reference)
  const moves = await pool.query<{ id: string; reference: string }>(
    `SELECT id, reference FROM wallet_moves WHERE partner_id = $1 AND reference = ANY($2)`,
    [partnerId, [...of('wallet debit'), ...of('wallet external send')]],
  )
  expect(moves.rows.map((row) => row.reference).sort()).toEqual(
    [...of('wallet debit'), ...of('wallet external send')].sort(),
  )
  const outbound = await pool.query<{ id: string }>(
    `SELECT id FROM outbound_transfers WHERE partner_id = $1 AND client_reference = ANY($2)`,
    [partnerId, of('outbound submit')],
  )
  expect(outbound.rows.map((row) => row.id).sort()).toEqual(
    load.acknowledged
      .filter((done) => done.kind === 'outbound submit')
      .map((done) => done.id)
      .sort(),
  )
  const credits = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM inbound_credits WHERE session_id = ANY($1) GROUP BY session_id`,
    [of('inbound credit')],
  )
  expect(credits.rows.map((row) => row.n)).toEqual(Array(of('inbound credit').length).fill(1))
  // Every instruction ended, and reached the bank once under its reference.
  const instructions = await pool.query<{
    id: string
    owner_type: string
    operation: string
    state: string
    at_bank: number
    paid: number
  }>(
    `SELECT i.id, i.owner_type, i.operation, i.state, count(t.reference)::int AS at_bank,
            count(t.reference) FILTER (WHERE COALESCE(t.final_code, t.response_code) = '00')::int AS paid
       FROM bank_instructions i LEFT JOIN sandbox_bank.transfers t ON t.reference = i.id::text GROUP BY i.id`,
  )
  expect(instructions.rows.filter((row) => row.state !== 'succeeded' || row.at_bank !== 1 || row.paid !== 1)).toEqual(
    [],
  )
  // Each acknowledged wallet move and payout has its instruction. Any other comes from the set-up (the wallet's funding
  // credit) or Rail's own work; named in the figures.
  const expected = new Set([...moves.rows.map((row) => row.id), ...outbound.rows.map((row) => row.id)])
  expect([...expected].filter((id) => !instructions.rows.some((row) => row.id === id))).toEqual([])
  const others = instructions.rows.filter((row) => !expected.has(row.id))
  const calls = await pool.query<{ operation: string; n: number; most: number }>(
    `SELECT operation, sum(n)::int AS n, max(n)::int AS most FROM (SELECT operation, reference, count(*) AS n FROM provider_calls WHERE reference IS NOT NULL GROUP BY 1, 2) per GROUP BY operation ORDER BY operation`,
  )
  const kinds = ['wallet debit', 'wallet external send', 'outbound submit', 'inbound credit'].map(
    (kind) => `${of(kind).length} ${kind}`,
  )
  return {
    byKind: kinds.join(', '),
    instructions: `${instructions.rows.length}${others.length ? ` (${others.length} outside the load: ${others.map((row) => `${row.owner_type} ${row.operation} ${row.id}`).join(', ')})` : ''}`,
    bankRows: instructions.rows.reduce((sum, row) => sum + row.at_bank, 0),
    providerCalls: calls.rows.map((row) => `${row.operation} ${row.n} (at most ${row.most} per reference)`).join(', '),
  }
}

/** Every event of the partner was delivered, its attempts recorded, and the receiver got it. */
export async function checkEventsDelivered(pool: Pool, party: LoadParty, hook: Receiver) {
  const events = await pool.query<{ id: string; delivery_status: string; attempts: number; ok: number }>(
    `SELECT e.id, e.delivery_status, count(a.*)::int AS attempts, count(a.*) FILTER (WHERE a.status_code BETWEEN 200 AND 299)::int AS ok
       FROM events e JOIN event_deliveries d ON d.event_id = e.id LEFT JOIN event_delivery_attempts a ON a.delivery_id = d.id
      WHERE e.partner_id = $1 GROUP BY e.id, e.delivery_status`,
    [party.credentials.partnerId],
  )
  expect(events.rows.length).toBeGreaterThan(0)
  expect(events.rows.filter((row) => row.delivery_status !== 'delivered' || row.ok < 1)).toEqual([])
  const received = new Map<string, number>()
  for (const request of hook.requests) {
    const id = (JSON.parse(request.rawBody) as { id: string }).id
    received.set(id, (received.get(id) ?? 0) + 1)
  }
  expect(events.rows.filter((row) => !received.has(row.id)).map((row) => row.id)).toEqual([])
  return {
    events: events.rows.length,
    attempts: events.rows.reduce((sum, row) => sum + row.attempts, 0),
    received: hook.requests.length,
    redelivered: [...received.values()].filter((n) => n > 1).length,
  }
}
