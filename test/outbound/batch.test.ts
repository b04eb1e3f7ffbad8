// Concurrent submits are coalesced into shared transactions: many at once, with replays, a
// conflicting body and more than the float can hold, each caller still gets exactly its own
// answer, the float holds exactly what was accepted, and the ledger verifies. And the batch is the
// one write path: a batch of N records what N batches of one record (below).
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTransfer, ensurePartnerAccount } from '../../src/ledger/service.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import {
  recordSubmissions,
  type OutboundTransfer,
  type PayoutSource,
  type Submission,
  type SubmitRequest,
} from '../../src/money-out/outbound/service.ts'
import { getPartner, type Partner } from '../../src/partners/service.ts'
import { withTransaction } from '../../src/platform/db.ts'
import { requestHash } from '../../src/platform/idempotency.ts'
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
  const answers = await Promise.all(
    [...distinct, ...replayed, ...conflicting].map((body) =>
      client.post<{
        id: string
        clientReference: string
        state: string
        failureReason: { code: string } | null
        error?: string
      }>('/api/v1/rail/outbound', body),
    ),
  )

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
  const float = (await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>('/api/v1/rail/float'))
    .body
  expect(float.bookedBalanceKobo).toBe(500_000)
  expect(float.availableBalanceKobo).toBe(0)
  const heldOrFailed = await app.db.pool.query<{ held: number }>(
    `SELECT count(*)::int AS held FROM outbound_transfers WHERE partner_id = $1 AND hold_transfer_id IS NOT NULL`,
    [credentials.partnerId],
  )
  expect(heldOrFailed.rows[0]!.held).toBe(total - failed!.n)
  expect(total - failed!.n).toBeLessThanOrEqual(50)
  // Coalesced: the 70 rows were written by fewer transactions than 70.
  const transactions = await app.db.pool.query<{ n: number }>(
    `SELECT count(DISTINCT xmin::text)::int AS n FROM outbound_transfers WHERE partner_id = $1 AND state = 'pending'`,
    [credentials.partnerId],
  )
  expect(transactions.rows[0]!.n).toBeLessThan(70)
})

// The one write path of a submit (recordSubmissions): a batch of N records what N batches of one
// record — random sequences of the partner's own submits and Rail's own payouts (held on the
// collections account), some more than their source holds, some under a clientReference taken
// before (the same request, or another), are recorded in one transaction for one partner and one
// by one for another, from the same balances. Both come to the same answers, transfers, bank
// instructions and their jobs, ledger transfers and balances, events and counterparties, once
// every identifier is replaced by what it names.

const RUNS = Number(process.env.SUBMIT_BATCH_RUNS ?? 8)
const FLOAT_KOBO = 12_000
const COLLECTIONS_KOBO = 7_000

interface SubmitCommand {
  amountKobo: number
  /** Rail's own payout (a settlement's), held on the partner's collections account instead of its float. */
  railsOwn: boolean
  /** Sent under an earlier submit's clientReference (`of` modulo its position): the same request (a replay) or another (409). */
  repeat: { of: number; sameBody: boolean } | null
}

const submitCommand: fc.Arbitrary<SubmitCommand> = fc.record({
  amountKobo: fc.constantFrom(1_000, 2_500, 4_000, 6_000),
  railsOwn: fc.boolean(),
  repeat: fc.option(fc.record({ of: fc.nat(), sameBody: fc.boolean() }), { freq: 4 }),
})

/** Every case at least once: too little float, too little collections, a replay, a conflict, one beneficiary paid twice. */
const EVERY_CASE: SubmitCommand[] = [
  { amountKobo: 6_000, railsOwn: false, repeat: null },
  { amountKobo: 6_000, railsOwn: true, repeat: null },
  { amountKobo: 4_000, railsOwn: false, repeat: { of: 0, sameBody: true } },
  { amountKobo: 4_000, railsOwn: true, repeat: { of: 1, sameBody: false } },
  { amountKobo: 4_000, railsOwn: false, repeat: null },
  { amountKobo: 2_500, railsOwn: false, repeat: null },
  { amountKobo: 2_500, railsOwn: true, repeat: null },
  { amountKobo: 1_000, railsOwn: false, repeat: null },
]

/** One partner with a funded float and collections account, and its identifiers by what they name. */
interface World {
  partner: Partner
  float: string
  collections: string
  settlement: string
  labels: Map<string, string>
}

async function buildWorld(): Promise<World> {
  const { client, credentials } = await app.newPartner()
  expect((await fundFloat(client, FLOAT_KOBO)).status).toBe(200)
  const partner = (await getPartner(app.db.pool, credentials.partnerId))!
  const account = (kind: 'float' | 'collections' | 'provider_settlement') =>
    ensurePartnerAccount(app.db.pool, partner.id, 'NGN', kind)
  const [float, collections, settlement] = [
    await account('float'),
    await account('collections'),
    await account('provider_settlement'),
  ]
  const fundingId = randomUUID()
  await createTransfer(app.db.pool, {
    id: fundingId,
    debitAccountId: settlement,
    creditAccountId: collections,
    amountKobo: COLLECTIONS_KOBO,
    currency: 'NGN',
    code: 'inbound_credit',
    sourceType: 'test_credit',
    sourceId: fundingId,
  })
  const labels = new Map([
    [partner.id, 'partner'],
    [float, 'float'],
    [collections, 'collections'],
    [settlement, 'provider_settlement'],
  ])
  return { partner, float, collections, settlement, labels }
}

/** The commands as checked submits of this world's partner; Rail's own name the same origins in every world. */
function submissionsOf(world: World, commands: readonly SubmitCommand[], originIds: readonly string[]): Submission[] {
  const submissions: Submission[] = []
  for (const [index, command] of commands.entries()) {
    const earlier = command.repeat && index > 0 ? submissions[command.repeat.of % index]! : undefined
    const request: SubmitRequest = earlier
      ? { ...earlier.request, amountKobo: earlier.request.amountKobo + (command.repeat!.sameBody ? 0 : 1) }
      : {
          clientReference: `submit-${index}`,
          // Three beneficiaries: the counterparties of payouts to one account are saved once.
          beneficiaryAccountNumber: nuban('058', String(100_000_000 + (index % 3))),
          beneficiaryBankCode: '058',
          beneficiaryAccountName: 'Ada Obi',
          amountKobo: command.amountKobo,
          currency: 'NGN',
          narration: `Payout ${index}`,
        }
    const railsOwn = earlier ? earlier.source !== undefined : command.railsOwn
    const source: PayoutSource | undefined = railsOwn
      ? {
          accountId: world.collections,
          originType: 'settlement',
          originId: originIds[index]!,
          originReference: `settlement-${index}`,
        }
      : undefined
    submissions.push({
      caller: { partner: world.partner, credentialId: 'property-test' },
      request,
      hash: requestHash(request),
      hold: { sourceAccountId: source?.accountId ?? world.float, settlementAccountId: world.settlement },
      source,
    })
  }
  return submissions
}

/** What each submit was answered, as its caller tells it after the commit: recorded (its state), or taken (a replay, or 409). */
async function answersOf(
  world: World,
  submissions: readonly Submission[],
  transfers: readonly (OutboundTransfer | undefined)[],
): Promise<string[]> {
  return Promise.all(
    submissions.map(async (submission, index) => {
      const transfer = transfers[index]
      if (transfer) return `recorded ${transfer.state} ${transfer.failureReason?.code ?? ''}`
      const stored = await app.db.pool.query<{ request_hash: string }>(
        `SELECT request_hash FROM outbound_transfers WHERE partner_id = $1 AND client_reference = $2`,
        [world.partner.id, submission.request.clientReference],
      )
      return stored.rows[0]!.request_hash === submission.hash ? 'taken: replayed' : 'taken: idempotency_conflict'
    }),
  )
}

/** What one partner's submits came to, every identifier replaced by its label and every time left out. */
async function recorded(world: World) {
  const query = async (sql: string) =>
    (await app.db.pool.query(sql, [world.partner.id])).rows.map((row) => normalize(row, world.labels))
  const transfers = await app.db.pool.query<{
    id: string
    client_reference: string
    hold_transfer_id: string | null
    brr: string | null
  }>(`SELECT id, client_reference, hold_transfer_id, brr FROM outbound_transfers WHERE partner_id = $1`, [
    world.partner.id,
  ])
  for (const row of transfers.rows) {
    world.labels.set(row.id, `transfer ${row.client_reference}`)
    if (row.hold_transfer_id) world.labels.set(row.hold_transfer_id, `hold of ${row.client_reference}`)
    if (row.brr) world.labels.set(row.brr, `brr of ${row.client_reference}`)
  }
  return {
    transfers: await query(
      `SELECT id, client_reference, request_hash, state, failure_reason, consumer_id, provider, brr, beneficiary_account_number, beneficiary_bank_code,
              beneficiary_account_name, amount_kobo, currency, narration, callback_url, hold_transfer_id, source_account_id, origin_type, origin_id, origin_reference,
              terminal_at IS NOT NULL AS terminal,
              (SELECT array_agg(s.state ORDER BY s.seq) FROM outbound_transfer_states s WHERE s.transfer_id = t.id) AS states
         FROM outbound_transfers t WHERE partner_id = $1 ORDER BY client_reference`,
    ),
    instructions: await query(
      `SELECT i.id, i.owner_type, i.provider, i.operation, i.amount_kobo, i.narration, i.destination_bank_code, i.destination_account_number, i.name_check,
              i.expected_account_name, i.state, i.send_attempts, i.failure_code, i.failure_message, i.lease_token IS NULL AS unleased,
              (SELECT count(*)::int FROM graphile_worker._private_jobs j WHERE j.payload ->> 'id' = i.id::text) AS jobs
         FROM bank_instructions i JOIN outbound_transfers t ON t.id = i.id WHERE t.partner_id = $1 ORDER BY t.client_reference`,
    ),
    ledger: await query(
      `SELECT l.id, l.phase, l.debit_account_id, l.credit_account_id, l.amount_kobo, l.code, l.source_type, l.source_id,
              l.debit_booked_after, l.debit_available_after, l.credit_booked_after, l.credit_available_after, p.status AS pending_status
         FROM ledger_transfers l JOIN outbound_transfers t ON l.source_id = t.id::text LEFT JOIN ledger_pending_transfers p ON p.transfer_id = l.id
        WHERE t.partner_id = $1 ORDER BY l.sequence`,
    ),
    balances: await query(
      `SELECT kind, debits_pending, debits_posted, credits_pending, credits_posted FROM ledger_accounts WHERE partner_id = $1 ORDER BY kind`,
    ),
    // Per transfer, in the order recorded.
    events: (
      await query(
        `SELECT type, object_id, body, callback_url, signing, delivery_status FROM events WHERE partner_id = $1 AND object_type = 'outbound_transfer' ORDER BY id`,
      )
    )
      .map((event) => ({
        ...(event as { object_id: string; body: string }),
        body: normalize(JSON.parse((event as { body: string }).body), world.labels),
      }))
      .sort((a, b) => String(a.object_id).localeCompare(String(b.object_id))),
    counterparties: await query(
      `SELECT bank_code, account_number, account_name, name, verified_account_name, archived, last_used_at IS NOT NULL AS used
         FROM counterparties WHERE partner_id = $1 ORDER BY bank_code, account_number`,
    ),
  }
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

/** Identifiers become their labels; times and event ids go. */
function normalize(value: unknown, labels: Map<string, string>): unknown {
  if (typeof value === 'string') return labels.get(value) ?? (ISO_TIME.test(value) ? '<time>' : value)
  if (value instanceof Date) return '<time>'
  if (Array.isArray(value)) return value.map((item) => normalize(item, labels))
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([key]) => key !== 'timestamp' && !(key === 'id' && 'event' in value))
    return Object.fromEntries(entries.map(([key, item]) => [key, normalize(item, labels)]))
  }
  return value
}

/** How many transactions wrote the partner's transfers. */
async function writingTransactions(world: World): Promise<number> {
  const { rows } = await app.db.pool.query<{ n: number }>(
    `SELECT count(DISTINCT xmin::text)::int AS n FROM outbound_transfers WHERE partner_id = $1`,
    [world.partner.id],
  )
  return rows[0]!.n
}

it('a batch of submits records what the same submits record one by one: answers, transfers, instructions, ledger, events, counterparties', async () => {
  const payments = app.payments()
  await fc.assert(
    fc.asyncProperty(fc.array(submitCommand, { minLength: 1, maxLength: 12 }), async (commands) => {
      const originIds = commands.map(() => randomUUID())
      const alone = await buildWorld()
      const batched = await buildWorld()
      const aloneSubmissions = submissionsOf(alone, commands, originIds)
      const aloneTransfers: (OutboundTransfer | undefined)[] = []
      for (const submission of aloneSubmissions)
        aloneTransfers.push(
          ...(await withTransaction(app.db.pool, (tx) => recordSubmissions(payments, tx, [submission]))),
        )
      const batchedSubmissions = submissionsOf(batched, commands, originIds)
      const batchedTransfers = await withTransaction(app.db.pool, (tx) =>
        recordSubmissions(payments, tx, batchedSubmissions),
      )

      expect(await answersOf(batched, batchedSubmissions, batchedTransfers)).toEqual(
        await answersOf(alone, aloneSubmissions, aloneTransfers),
      )
      expect(await recorded(batched)).toEqual(await recorded(alone))
      // The batch was one transaction indeed, and the submits alone one each.
      expect(await writingTransactions(batched)).toBe(1)
      expect(await writingTransactions(alone)).toBe(aloneTransfers.filter(Boolean).length)
    }),
    { numRuns: RUNS, examples: [[EVERY_CASE]] },
  )
}, 120_000)

it("a payout refused for funds names the account it was to be held on: the partner's float, or Rail's payout's source", async () => {
  const world = await buildWorld()
  const commands: SubmitCommand[] = [
    { amountKobo: FLOAT_KOBO + 1, railsOwn: false, repeat: null },
    { amountKobo: COLLECTIONS_KOBO + 1, railsOwn: true, repeat: null },
  ]
  const submissions = submissionsOf(world, commands, [randomUUID(), randomUUID()])
  const transfers = await withTransaction(app.db.pool, (tx) => recordSubmissions(app.payments(), tx, submissions))
  expect(transfers.map((transfer) => [transfer?.state, transfer?.failureReason])).toEqual([
    [
      'failed',
      {
        code: 'insufficient_funds',
        message: `The float's available balance is less than ${FLOAT_KOBO + 1} kobo; nothing was held`,
      },
    ],
    [
      'failed',
      {
        code: 'insufficient_funds',
        message: `The collections account's available balance is less than ${COLLECTIONS_KOBO + 1} kobo; nothing was held`,
      },
    ],
  ])
})
