// A requery someone asks for (the settlement simulator, a provider's webhook) while another worker
// holds the instruction is not dropped: that worker may have asked the bank before the news, and
// its next poll may be minutes away. The asked-for job is tried again shortly and then asks.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { claimInstruction, releaseInstruction } from '../../src/money-out/pipeline/repo.ts'
import { waitFor } from '../support/wait.ts'
import { outboundState, payOut, routedPartner, startRouted, type RoutedHarness } from '../providers/routed-support.ts'

// Polls far apart: a payout confirmed within seconds was confirmed by the requery asked for.
const SCHEDULE = { sandbox: { firstDelayMs: 120_000, deadlineMs: 600_000 } }
let harness: RoutedHarness

beforeAll(async () => {
  harness = await startRouted('asked-requery-secret', SCHEDULE)
})
afterAll(async () => harness?.close())

it('a requery asked for while another worker holds the payment is tried again once it lets go, and confirms it', async () => {
  const { client } = await routedPartner(harness.app, harness.hook, {})
  const id = await payOut(client, 110_000)
  await waitFor(async () => (await outboundState(client, id)) === 'submitted', 30_000, 'submitted')
  // Another worker's step holds it (as while it asks the bank, before the outcome below exists).
  const { pool } = harness.app.db
  const token = randomUUID()
  await waitFor(
    async () => (await claimInstruction(pool, id, token, 60_000, ['sent'])) !== undefined,
    10_000,
    'the instruction held',
  )
  const settled = await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
    transferId: id,
    outcome: 'confirmed',
  })
  expect(settled.status).toBe(200)
  // The asked-for job found it held, and is waiting to be tried again (not dropped).
  const waiting = `SELECT 1 FROM graphile_worker._private_jobs WHERE payload->>'id' = $1 AND attempts >= 1 AND last_error LIKE '%another worker holds it%'`
  await waitFor(
    async () => (await pool.query(waiting, [id])).rowCount === 1,
    20_000,
    'the asked-for requery waiting to be tried again',
  )
  expect(await outboundState(client, id)).toBe('submitted')
  await releaseInstruction(pool, id, token)
  await waitFor(
    async () => (await outboundState(client, id)) === 'confirmed',
    30_000,
    'confirmed by the requery asked for',
  )
})
