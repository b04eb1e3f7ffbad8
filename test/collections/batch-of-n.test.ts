// A batch of N credits equals N batches of one: credits have one write path
// (src/collections/credits/batch.ts), and a batch must not change what it writes. Random sequences of
// credits — to a persistent account, intents of a fixed and of any amount (partial and
// over-payments), an expired intent, an archived account, an FBO account, an invoice (an owner:
// overpaid, then closed), a cancelled invoice, an escrow (an owner that moves the money on, then
// closes), a wallet's account number, unknown numbers with and without a partner, foreign
// currencies and repeated session ids — are applied each as a batch of one for one partner, and
// all in one batch (one apply job) for another, in one database, from the same starting point.
// Both partners end with the same credit statuses, amounts per target, ledger balances, intents,
// owners, triage items and events, once every identifier is replaced by what it names.
import { randomBytes, randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { collectionsDeps } from '../../src/app.ts'
import {
  applyCreditAlone,
  applyCreditBatch,
  recordCredit,
  type InboundDeps,
} from '../../src/collections/credits/service.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { outboundDeps } from '../../src/money-out/outbound/service.ts'
import { expireIntents } from '../../src/collections/intents/service.ts'
import { systemClock } from '../../src/platform/clock.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { createRequest, escrowClient } from '../support/escrow.ts'
import { BANK_SECRET } from './support.ts'

/** Enough to meet every rule several times over in a few seconds; each run builds two partners' worth of accounts. */
const RUNS = Number(process.env.BATCH_OF_N_RUNS ?? 6)

let app: TestApp
let deps: InboundDeps

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: BANK_SECRET })
  deps = collectionsDeps(outboundDeps({ pool: app.db.pool, allowLoopbackCallbacks: true, payments: app.payments() }))
})
afterAll(async () => {
  if (app) await expectLedgerVerified(app.db.pool)
  await app?.close()
})

const TARGETS = [
  'persistent',
  'intent_fixed',
  'intent_any',
  'intent_expired',
  'archived',
  'fbo',
  'invoice',
  'invoice_cancelled',
  'escrow',
  'wallet',
  'unknown',
  'unknown_of_partner',
] as const
type Target = (typeof TARGETS)[number]

interface CreditCommand {
  target: number
  amountKobo: number
  currency: string
  /** Sent again under the session id of an earlier credit of the sequence (index modulo its position). */
  repeatOf: number | null
}

const creditCommand: fc.Arbitrary<CreditCommand> = fc.record({
  target: fc.integer({ min: 0, max: TARGETS.length - 1 }),
  amountKobo: fc.oneof(fc.constantFrom(5_000, 10_000, 15_000, 30_000), fc.integer({ min: 1, max: 60_000 })),
  currency: fc.constantFrom('NGN', 'NGN', 'NGN', 'NGN', 'NGN', 'NGN', 'USD'),
  repeatOf: fc.option(fc.nat(), { freq: 6 }),
})

/** One partner's accounts of every kind, and every identifier of them with the label it stands for. */
interface World {
  partnerId: string
  /** Events its accounts' creation recorded: not the credits' doing. */
  setupEventIds: string[]
  accountNumbers: Record<Target, string>
  accountReferences: Partial<Record<Target, string>>
  labels: Map<string, string>
}

async function buildWorld(): Promise<World> {
  const { client, credentials } = await app.newPartner({ customerClass: 'government' })
  const partnerId = credentials.partnerId
  const labels = new Map<string, string>([[partnerId, 'partner']])
  const accountNumbers = {} as Record<Target, string>
  const remember = (target: Target, body: Record<string, unknown>) => {
    labelIdentifiers(body, target, labels)
    accountNumbers[target] = String(body.virtualAccount ?? body.accountNumber)
  }
  const post = async (path: string, body?: Record<string, unknown>) => {
    const answer = await client.post<Record<string, unknown>>(path, body)
    expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300)
    return answer.body
  }
  remember('persistent', await post('/api/v1/rail/virtual-account', { reference: randomUUID() }))
  remember('intent_fixed', await post('/api/v1/rail/payment/intent', { reference: randomUUID(), amountKobo: 30_000 }))
  remember('intent_any', await post('/api/v1/rail/payment/intent', { reference: randomUUID() }))
  const expiring = await post('/api/v1/rail/payment/intent', { reference: randomUUID(), amountKobo: 10_000 })
  remember('intent_expired', expiring)
  const archived = await post('/api/v1/rail/virtual-account', { reference: randomUUID() })
  remember('archived', archived)
  await post(`/api/v1/rail/virtual-account/${String(archived.trackingId)}/archive`)
  remember('fbo', await post('/api/v1/rail/fbo/provision', { holderRef: `holder-${randomUUID()}` }))
  remember(
    'invoice',
    await post('/api/v1/rail/invoice', {
      reference: randomUUID(),
      title: 'Dues',
      amountKobo: 10_000,
      publishOnCreate: true,
    }),
  )
  const cancelled = await post('/api/v1/rail/invoice', {
    reference: randomUUID(),
    title: 'Cancelled dues',
    amountKobo: 10_000,
    publishOnCreate: true,
  })
  remember('invoice_cancelled', cancelled)
  await post(`/api/v1/rail/invoice/${encodeURIComponent(String(cancelled.reference))}/cancel`)
  const escrow = await escrowClient(app.baseUrl, credentials.escrowApiKey).create<{
    ref: string
    funding: { virtualAccount: string }
  }>(createRequest({ amount: 20_000 }))
  expect(escrow.status, JSON.stringify(escrow.body)).toBe(201)
  labelIdentifiers(escrow.body, 'escrow', labels)
  accountNumbers.escrow = escrow.body.funding.virtualAccount
  remember('wallet', await post('/wallet', { customerReference: randomUUID(), name: 'Ada Obi' }))
  await expireIntent(String(expiring.id))
  for (const target of ['unknown', 'unknown_of_partner'] as const) {
    accountNumbers[target] = nuban('101', String(100_000_000 + (randomBytes(4).readUInt32BE() % 800_000_000)))
    labels.set(accountNumbers[target], target)
  }
  // An allocation whose request failed: the provider's reference names the partner, Rail has no account.
  const accountReferences = { unknown_of_partner: `${partnerId}.${randomBytes(14).toString('hex').slice(0, 27)}` }
  labels.set(accountReferences.unknown_of_partner, 'allocation_reference')
  await labelRows(partnerId, labels)
  const setupEvents = await app.db.pool.query<{ id: string }>(`SELECT id FROM events WHERE partner_id = $1`, [
    partnerId,
  ])
  return { partnerId, setupEventIds: setupEvents.rows.map((row) => row.id), accountNumbers, accountReferences, labels }
}

/** The fields of an answer that name an object of this world (not its state): their values stand for `target`. */
const IDENTIFIER_KEYS = new Set([
  'id',
  'ref',
  'trackingId',
  'virtualAccount',
  'accountNumber',
  'reference',
  'walletId',
  'customerReference',
  'holderRef',
  'brr',
])

function labelIdentifiers(value: unknown, target: string, labels: Map<string, string>): void {
  if (value === null || typeof value !== 'object') return
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string' && IDENTIFIER_KEYS.has(key)) labels.set(item, `${target}.${key}`)
    else labelIdentifiers(item, target, labels)
  }
}

/** The expiry sweep, with the intent's expiry moved into the past. */
async function expireIntent(intentId: string): Promise<void> {
  await app.db.pool.query(`UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE id = $1`, [
    intentId,
  ])
  expect(await expireIntents(app.db.pool, systemClock)).toBeGreaterThanOrEqual(1)
}

/** Row ids the routes' answers do not show (virtual accounts', ledger accounts'), by the label of what they belong to. */
async function labelRows(partnerId: string, labels: Map<string, string>): Promise<void> {
  const accounts = await app.db.pool.query<{ id: string; account_number: string }>(
    `SELECT id, account_number FROM virtual_accounts WHERE partner_id = $1`,
    [partnerId],
  )
  for (const row of accounts.rows)
    labels.set(row.id, `account ${labels.get(row.account_number) ?? 'unlabelled_number'}`)
  const intents = await app.db.pool.query<{ id: string; reference: string; virtual_account_id: string }>(
    `SELECT id, reference, virtual_account_id FROM payment_intents WHERE partner_id = $1`,
    [partnerId],
  )
  for (const row of intents.rows) {
    labels.set(row.id, `intent of ${labels.get(row.virtual_account_id) ?? 'unlabelled_account'}`)
    labels.set(row.reference, `intent reference of ${labels.get(row.virtual_account_id) ?? 'unlabelled_account'}`)
  }
  const invoices = await app.db.pool.query<{ id: string; reference: string }>(
    `SELECT id, reference FROM invoices WHERE partner_id = $1`,
    [partnerId],
  )
  for (const row of invoices.rows) labels.set(row.id, `invoice ${labels.get(row.reference) ?? 'unlabelled_reference'}`)
  const escrows = await app.db.pool.query<{ id: string; ref: string }>(
    `SELECT id, ref FROM escrows WHERE partner_id = $1`,
    [partnerId],
  )
  for (const row of escrows.rows) labels.set(row.id, `escrow ${labels.get(row.ref) ?? 'unlabelled_ref'}`)
}

/** Stores the sequence's credits for this world, as the provider's notices would: answers each one's credit id and whether it was a repeat. */
async function recordSequence(
  world: World,
  commands: readonly CreditCommand[],
  runTag: string,
): Promise<{ creditId: string; duplicate: boolean }[]> {
  const sessionIds: string[] = []
  const recorded: { creditId: string; duplicate: boolean }[] = []
  for (const [index, command] of commands.entries()) {
    const target = TARGETS[command.target]!
    const sessionId =
      command.repeatOf !== null && index > 0
        ? sessionIds[command.repeatOf % index]!
        : `${runTag}${String(index).padStart(4, '0')}`
    sessionIds.push(sessionId)
    world.labels.set(sessionId, `session:${sessionIds.indexOf(sessionId)}`)
    recorded.push(
      await recordCredit(app.db.pool, 'sandbox', {
        sessionId,
        accountNumber: world.accountNumbers[target],
        amountKobo: command.amountKobo,
        currency: command.currency,
        payerName: 'Property Payer',
        payerAccountNumber: null,
        payerBankCode: null,
        narration: null,
        creditedAt: new Date('2026-01-01T00:00:00Z'),
        accountReference: world.accountReferences[target] ?? null,
      }),
    )
  }
  return recorded
}

/** N batches of one: each credit alone, in the order recorded (as a job whose batch failed applies its own). */
async function applyEachAlone(recorded: readonly { creditId: string; duplicate: boolean }[]): Promise<void> {
  for (const { creditId, duplicate } of recorded) if (!duplicate) await applyCreditAlone(deps, creditId)
}

/**
 * One batch of N: the first credit's apply job takes every waiting credit. It is checked to have
 * applied them all in that batch (none is still waiting once it returns, and no credit failed a
 * batch), so that the comparison cannot pass by the batch failing and each credit being applied
 * alone; the other jobs then find their credits applied.
 */
async function applyAsOneBatch(recorded: readonly { creditId: string; duplicate: boolean }[]): Promise<void> {
  const ids = recorded.map((entry) => entry.creditId)
  await applyCreditBatch(deps, ids[0]!)
  const left = await app.db.pool.query(
    `SELECT count(*)::int AS n FROM inbound_credits WHERE id = ANY ($1::uuid[]) AND (status = 'received' OR apply_failures > 0)`,
    [ids],
  )
  expect(left.rows[0].n).toBe(0)
  const jobs = await app.db.pool.query(
    `SELECT count(*)::int AS n FROM graphile_worker.jobs WHERE task_identifier = 'inbound_credit_apply' AND key = ANY ($1::text[])`,
    [ids.filter((id) => id !== ids[0]).map((id) => `inbound_credit:${id}`)],
  )
  expect(jobs.rows[0].n).toBe(0) // the batch dropped the other credits' jobs
  for (const { creditId, duplicate } of recorded.slice(1)) if (!duplicate) await applyCreditBatch(deps, creditId)
}

interface CreditRow {
  id: string
  session_id: string
  status: string
  unmatched_reason: string | null
  amount_kobo: number
  currency: string
  virtual_account_id: string | null
  wallet_id: string | null
  brr: string | null
  excess_of: string | null
}

/** What one partner's world came to, every identifier replaced by its label and every time left out. */
async function outcome(world: World, recorded: readonly { creditId: string; duplicate: boolean }[]) {
  const pool = app.db.pool
  const ids = recorded.map((entry) => entry.creditId)
  const credits = await pool.query<CreditRow>(
    `SELECT id, session_id, status, unmatched_reason, amount_kobo, currency, virtual_account_id, wallet_id, brr, excess_of FROM inbound_credits
      WHERE id = ANY ($1::uuid[]) OR excess_of = ANY ($1::uuid[]) ORDER BY id`,
    [ids],
  )
  for (const [index, creditId] of ids.entries())
    if (!world.labels.has(creditId)) world.labels.set(creditId, `credit:${index}`)
  for (const row of credits.rows) {
    if (row.excess_of) world.labels.set(row.id, `excess:${world.labels.get(row.excess_of)}`)
    if (row.excess_of) world.labels.set(row.session_id, `excess-session:${world.labels.get(row.excess_of)}`)
    if (row.brr) world.labels.set(row.brr, `brr:${world.labels.get(row.id)}`)
  }
  const label = (value: unknown): unknown => normalize(value, world.labels)
  const ledger = await pool.query(
    `SELECT kind, currency, debits_posted::text, credits_posted::text, debits_pending::text, credits_pending::text FROM ledger_accounts
      WHERE partner_id = $1 ORDER BY kind, currency`,
    [world.partnerId],
  )
  const intents = await pool.query(
    `SELECT id, status, amount_received_kobo FROM payment_intents WHERE partner_id = $1`,
    [world.partnerId],
  )
  const invoices = await pool.query(`SELECT reference, status, amount_paid_kobo FROM invoices WHERE partner_id = $1`, [
    world.partnerId,
  ])
  const escrows = await pool.query(`SELECT ref, status, funded_amount_kobo FROM escrows WHERE partner_id = $1`, [
    world.partnerId,
  ])
  const events = await pool.query<{
    type: string
    object_type: string
    object_id: string
    body: string
    callback_url: string | null
  }>(
    `SELECT type, object_type, object_id, body, callback_url FROM events WHERE partner_id = $1 AND id <> ALL ($2::uuid[]) ORDER BY id`,
    [world.partnerId, world.setupEventIds],
  )
  return {
    recorded: recorded.map((entry) => ({ credit: label(entry.creditId), duplicate: entry.duplicate })),
    credits: sortBy(
      credits.rows.map((row) => label({ ...row, brr: row.brr === null ? null : 'brr' })),
      'id',
    ),
    ledger: ledger.rows,
    intents: sortBy(intents.rows.map(label), 'id'),
    invoices: sortBy(invoices.rows.map(label), 'reference'),
    escrows: sortBy(escrows.rows.map(label), 'ref'),
    // Per object, in the order recorded: the batch records its events in the credits' order.
    events: eventsByObject(events.rows.map((row) => label({ ...row, body: JSON.parse(row.body) as unknown }))),
  }
}

function eventsByObject(events: unknown[]): Record<string, unknown[]> {
  const byObject: Record<string, unknown[]> = {}
  for (const event of events as { object_type: string; object_id: string }[])
    (byObject[`${event.object_type}:${event.object_id}`] ??= []).push(event)
  return byObject
}

function sortBy<T>(rows: T[], key: string): T[] {
  return [...rows].sort((a, b) =>
    String((a as Record<string, unknown>)[key]).localeCompare(String((b as Record<string, unknown>)[key])),
  )
}

/** Values each partner's setup made at random (a checkout token, the credential and request that created an object): not the rules' doing. */
const SETUP_KEYS = new Set(['checkoutToken', 'checkoutUrl', 'credentialId', 'requestId'])

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

/** Identifiers become their labels, times and event ids go: what is left is what the rules decided. */
function normalize(value: unknown, labels: Map<string, string>): unknown {
  if (typeof value === 'string') return labels.get(value) ?? (ISO_TIME.test(value) ? '<time>' : value)
  if (value instanceof Date) return '<time>'
  if (Array.isArray(value)) return value.map((item) => normalize(item, labels))
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(
      ([key]) => key !== 'timestamp' && !(key === 'id' && 'eventKind' in value),
    )
    return Object.fromEntries(
      entries.map(([key, item]) => [key, SETUP_KEYS.has(key) ? '<setup>' : normalize(item, labels)]),
    )
  }
  return value
}

let runs = 0

it('a batch of N credits equals N batches of one', async () => {
  await fc.assert(
    // Long sequences (size 'max'), so that several credits meet one target and the order of its events counts.
    fc.asyncProperty(fc.array(creditCommand, { minLength: 1, maxLength: 20, size: 'max' }), async (commands) => {
      runs++
      const runTag = `9${String(Date.now()).slice(-9)}${String(runs).padStart(3, '0')}`
      const single = await buildWorld()
      const batched = await buildWorld()
      // One partner at a time: a batch claims every waiting credit in the database, so the other partner's are all settled first.
      const singleRecorded = await recordSequence(single, commands, `${runTag}1`)
      await applyEachAlone(singleRecorded)
      const batchedRecorded = await recordSequence(batched, commands, `${runTag}2`)
      await applyAsOneBatch(batchedRecorded)
      const waiting = await app.db.pool.query(
        `SELECT count(*)::int AS n FROM inbound_credits WHERE status = 'received'`,
      )
      expect(waiting.rows[0].n).toBe(0)
      expect(await outcome(batched, batchedRecorded)).toEqual(await outcome(single, singleRecorded))
    }),
    { numRuns: RUNS },
  )
}, 120_000)
