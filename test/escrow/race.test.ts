// Release, cancel and expiry racing on one escrow at its expiry instant, 1,000 times: release and
// cancel over HTTP, expiry as the job runs it, all at once. Exactly one wins each trial, the
// escrow ends in the winner's status, one terminal event is recorded, the money moves once, and
// the ledger verifies. Then credits racing cancel and expiry through the collections seam.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { expireEscrow } from '../../src/escrow/service.ts'
import { ensurePartnerAccount, getBalance } from '../../src/ledger/service.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import {
  creditEscrow,
  createRequest,
  escrowClient,
  escrowIdOf,
  expiryDeps,
  type EscrowClient,
} from '../support/escrow.ts'
import { expectLedgerVerified } from '../support/ledger.ts'

const TRIALS = 1_000
const CONCURRENT_TRIALS = 25
const AMOUNT_KOBO = 20_000

let app: TestApp

beforeAll(async () => {
  // The trials' credits and expiries run on the test's side of the app's pool, as a worker's jobs
  // would on a pool of their own: 25 trials at once need room beside the API's requests, or a busy
  // machine turns the race into a wait for a connection (the pool's 5 s connect timeout).
  app = await startTestApp({ poolMax: 40 })
})
afterAll(async () => {
  await app?.close()
})

type Winner = 'released' | 'cancelled' | 'expired'

/** Trial i: unfunded, partly funded, or funded in full (half of them), so every pair of rivals meets. */
function fundingOf(trial: number): number {
  return [0, 5_000, AMOUNT_KOBO, AMOUNT_KOBO][trial % 4]!
}

/** Starts after a random few milliseconds, so that every order of the rivals happens. Expiry is one
 * statement where the others are HTTP requests, so it is given a wider window. */
async function late<T>(start: () => Promise<T>, upToMs = 8, atLeastMs = 0): Promise<T> {
  await new Promise((resolve) => setTimeout(resolve, atLeastMs + Math.random() * upToMs))
  return start()
}

async function trial(
  api: EscrowClient,
  partnerId: string,
  index: number,
): Promise<{ ref: string; winner: Winner; fundedKobo: number }> {
  const created = await api.create<{ ref: string; expiresAt: string }>(
    createRequest({ amount: AMOUNT_KOBO, ttlHours: 1 }),
  )
  expect(created.status).toBe(201)
  const { ref, expiresAt } = created.body
  const fundedKobo = fundingOf(index)
  if (fundedKobo > 0)
    expect(await creditEscrow(app.db.pool, { partnerId, ref, amountKobo: fundedKobo })).toBe('applied')
  const id = await escrowIdOf(app.db.pool, ref)
  const atExpiry = { now: () => new Date(Date.parse(expiresAt)) }
  const [release, cancel, expired] = await Promise.all([
    late(() => api.release<{ error?: string }>(ref, { reason: 'race' })),
    late(() => api.cancel<{ error?: string }>(ref, { reason: 'race' })),
    late(() => expireEscrow(expiryDeps(app, atExpiry), id), 20),
  ])
  const winners: Winner[] = []
  if (release.status === 200) winners.push('released')
  else expect([release.status, release.body.error]).toEqual([400, 'invalid_escrow_status'])
  if (cancel.status === 200) winners.push('cancelled')
  else expect([cancel.status, cancel.body.error]).toEqual([400, 'invalid_escrow_status'])
  if (expired) winners.push('expired')
  expect(winners, `trial ${index} ${ref}`).toHaveLength(1)
  return { ref, winner: winners[0]!, fundedKobo }
}

it(
  `${TRIALS} trials of release, cancel and expiry at the expiry instant: one outcome each, money moved once`,
  { timeout: 600_000 },
  async () => {
    const { credentials } = await app.newPartner()
    const api = escrowClient(app.baseUrl, credentials.escrowApiKey)
    const partnerId = credentials.partnerId
    const results: { ref: string; winner: Winner; fundedKobo: number }[] = []
    for (let start = 0; start < TRIALS; start += CONCURRENT_TRIALS) {
      const batch = Array.from({ length: Math.min(CONCURRENT_TRIALS, TRIALS - start) }, (_unused, offset) =>
        trial(api, partnerId, start + offset),
      )
      results.push(...(await Promise.all(batch)))
    }
    expect(results).toHaveLength(TRIALS)

    // Each rival wins somewhere: the race is real. Release only ever wins funded escrows, expiry only unfunded ones.
    const wins = (winner: Winner) => results.filter((r) => r.winner === winner)
    expect(wins('released').length).toBeGreaterThan(0)
    expect(wins('cancelled').length).toBeGreaterThan(0)
    expect(wins('expired').length).toBeGreaterThan(0)
    expect(wins('released').every((r) => r.fundedKobo === AMOUNT_KOBO)).toBe(true)
    expect(wins('expired').every((r) => r.fundedKobo < AMOUNT_KOBO)).toBe(true)
    // On unfunded escrows both cancel and expiry win some races; on funded ones both release and cancel.
    expect(wins('cancelled').some((r) => r.fundedKobo < AMOUNT_KOBO)).toBe(true)
    expect(wins('cancelled').some((r) => r.fundedKobo === AMOUNT_KOBO)).toBe(true)

    // Stored status, terminal events and money, per escrow.
    const { rows } = await app.db.pool.query<{
      ref: string
      status: string
      events: string[]
      recipient: number
      refund: number
      moves: number
    }>(
      `SELECT e.ref, e.status,
            (SELECT array_agg(v.type ORDER BY v.id) FROM events v WHERE v.object_type = 'escrow' AND v.object_id = e.ref AND v.type <> 'escrow.funded') AS events,
            (SELECT coalesce(sum(t.amount_kobo), 0) FROM ledger_transfers t WHERE t.source_type = 'escrow' AND t.source_id = e.id::text AND t.code = 'escrow_disbursement')::bigint AS recipient,
            (SELECT coalesce(sum(r.amount_kobo), 0) FROM refunds r WHERE r.origin_type = 'escrow' AND r.origin_id = e.id)::bigint AS refund,
            ((SELECT count(*) FROM ledger_transfers t WHERE t.source_type = 'escrow' AND t.source_id = e.id::text AND t.code <> 'escrow_funding')
              + (SELECT count(*) FROM outbound_transfers o WHERE o.origin_type = 'refund' AND o.origin_id IN (SELECT r.id FROM refunds r WHERE r.origin_type = 'escrow' AND r.origin_id = e.id)))::int AS moves
       FROM escrows e
      WHERE e.partner_id = $1`,
      [partnerId],
    )
    const byRef = new Map(rows.map((row) => [row.ref, row]))
    for (const result of results) {
      const row = byRef.get(result.ref)!
      expect(row.status).toBe(result.winner)
      // A release without a destination credits the float at once: released, then disbursed.
      expect(row.events).toEqual(
        result.winner === 'released' ? ['escrow.released', 'escrow.disbursed'] : [`escrow.${result.winner}`],
      )
      if (result.winner === 'released') {
        expect([row.recipient, row.refund, row.moves]).toEqual([AMOUNT_KOBO, 0, 1])
      } else {
        // One refund payout of the one funding credit, held on escrow holding.
        expect([row.recipient, row.refund, row.moves]).toEqual([0, result.fundedKobo, result.fundedKobo > 0 ? 1 : 0])
      }
    }
    // Every escrow is settled, so nothing is held for escrows any more: what is left on the holding
    // account is held for the refund payouts (no bank answers in this test), exactly the refunds.
    const refundsKobo = results.filter((r) => r.winner !== 'released').reduce((sum, r) => sum + r.fundedKobo, 0)
    const holding = await getBalance(
      app.db.pool,
      await ensurePartnerAccount(app.db.pool, partnerId, 'NGN', 'escrow_holding'),
    )
    expect(holding).toEqual(expect.objectContaining({ bookedKobo: refundsKobo, availableKobo: 0 }))
    await expectLedgerVerified(app.db.pool)
  },
)

it(
  '300 trials of two half credits, cancel and expiry at once: funded amount = applied credits, refunds = funded amount, unmatched credits stay in collections',
  { timeout: 300_000 },
  async () => {
    const { credentials } = await app.newPartner()
    const api = escrowClient(app.baseUrl, credentials.escrowApiKey)
    const partnerId = credentials.partnerId
    const half = AMOUNT_KOBO / 2
    let unmatchedKobo = 0
    const outcomes = new Set<string>()
    // Most trials start the rivals at once with jitter (every order happens, in proportions that
    // depend on the machine's speed); every fourth gives one kind of rival — credits, cancel, expiry
    // in turn — a head start of HEAD_START_MS, so that every kind of winner is met whatever the load.
    const HEAD_START_MS = 150
    const atOnce = { credits: 0, cancel: 0, expiry: 0 }
    const headStarts = [
      { credits: 0, cancel: HEAD_START_MS, expiry: HEAD_START_MS },
      { credits: HEAD_START_MS, cancel: 0, expiry: 2 * HEAD_START_MS },
      { credits: HEAD_START_MS, cancel: 2 * HEAD_START_MS, expiry: 0 },
    ]
    async function fundingTrial(index: number): Promise<void> {
      const created = await api.create<{ ref: string; expiresAt: string }>(
        createRequest({ amount: AMOUNT_KOBO, ttlHours: 1 }),
      )
      const { ref, expiresAt } = created.body
      const id = await escrowIdOf(app.db.pool, ref)
      const headStart = index % 4 === 0 ? headStarts[(index / 4) % headStarts.length]! : atOnce
      const [first, second, cancel, expired] = await Promise.all([
        late(() => creditEscrow(app.db.pool, { partnerId, ref, amountKobo: half }), 8, headStart.credits),
        late(() => creditEscrow(app.db.pool, { partnerId, ref, amountKobo: half }), 8, headStart.credits),
        late(() => api.cancel(ref, { reason: 'race' }), 40, headStart.cancel), // as late as expiry: credits, cancel and expiry each win some trials
        late(
          () => expireEscrow(expiryDeps(app, { now: () => new Date(Date.parse(expiresAt)) }), id),
          40,
          headStart.expiry,
        ),
      ])
      const applied = [first, second].filter((result) => result === 'applied').length
      unmatchedKobo += (2 - applied) * half
      expect([200, 400]).toContain(cancel.status)
      const { rows } = await app.db.pool.query(
        `SELECT e.status, e.funded_amount_kobo AS funded, (SELECT coalesce(sum(r.amount_kobo), 0) FROM refunds r WHERE r.origin_type = 'escrow' AND r.origin_id = e.id)::bigint AS refunded,
              (SELECT count(*) FROM ledger_transfers t WHERE t.source_type = 'escrow' AND t.source_id = e.id::text AND t.code = 'escrow_funding')::int AS fundings,
              (SELECT array_agg(v.type ORDER BY v.id) FROM events v WHERE v.object_type = 'escrow' AND v.object_id = e.ref) AS events
         FROM escrows e WHERE e.ref = $1`,
        [ref],
      )
      const row = rows[0]
      outcomes.add(`${row.status}:${applied}`)
      expect(row.funded).toBe(applied * half)
      expect(row.fundings).toBe(applied)
      // Cancel and expiry cannot both win; a terminal escrow was refunded everything it had taken.
      expect(cancel.status === 200 && expired !== undefined).toBe(false)
      if (row.status === 'funded') expect([applied, cancel.status, expired]).toEqual([2, 400, undefined])
      else expect(row.refunded).toBe(row.funded)
      const expectedEvents = [
        ...(applied === 2 ? ['escrow.funded'] : []),
        ...(row.status === 'funded' ? [] : [`escrow.${row.status}`]),
      ]
      expect(row.events ?? []).toEqual(expectedEvents)
    }
    for (let start = 0; start < 300; start += CONCURRENT_TRIALS)
      await Promise.all(Array.from({ length: CONCURRENT_TRIALS }, (_unused, offset) => fundingTrial(start + offset)))
    console.log(`outcomes: ${[...outcomes].sort().join(' ')}`)
    expect(outcomes.size).toBeGreaterThanOrEqual(3) // several interleavings happened (status : credits applied)
    const collections = await getBalance(
      app.db.pool,
      await ensurePartnerAccount(app.db.pool, partnerId, 'NGN', 'collections'),
    )
    expect(collections?.bookedKobo).toBe(unmatchedKobo)
    await expectLedgerVerified(app.db.pool)
  },
)
