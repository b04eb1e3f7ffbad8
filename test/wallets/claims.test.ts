// Coalesced claims: many callers' moves claimed in one transaction, each caller with its own
// outcome — one caller's too-little-money, unknown wallet or reused reference fails no other; and a
// batch of N claims what N batches of one claim (below).
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import type { PartnerCredentials } from '../../src/partners/service.ts'
import { workCreated } from '../../src/money-out/pipeline/service.ts'
import { withTransaction } from '../../src/platform/db.ts'
import { requestHash } from '../../src/platform/idempotency.ts'
import { claimMoves, type Claim, type ClaimOutcome, type MoveRequest } from '../../src/wallets/claims.ts'
import type { MoveType } from '../../src/wallets/states.ts'
import { startTestApp, type TestApp } from '../support/app.ts'
import { expectLedgerVerified } from '../support/ledger.ts'

let app: TestApp
let client: RailClient
let credentials: PartnerCredentials

beforeAll(async () => {
  app = await startTestApp({ sandboxBankSecret: 'claims-test-secret' })
  ;({ client, credentials } = await app.newPartner())
})
afterAll(async () => {
  await expectLedgerVerified(app.db.pool)
  await app.close()
})

async function fundedWallet(amountKobo: number): Promise<{ walletId: string; accountNumber: string }> {
  const wallet = (
    await client.post<{ walletId: string; accountNumber: string }>('/wallet', {
      customerReference: randomUUID(),
      name: 'Claimer',
    })
  ).body
  if (amountKobo > 0)
    expect(
      (
        await client.post('/wallet/credit', {
          walletId: wallet.walletId,
          reference: randomUUID(),
          amountKobo,
          currency: 'NGN',
        })
      ).status,
    ).toBe(200)
  return wallet
}

const balance = async (walletId: string) =>
  (
    await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
      `/wallet/customer?customerId=${walletId}`,
    )
  ).body
const bankBalance = async (accountNumber: string) =>
  (await app.db.pool.query(`SELECT balance_kobo FROM sandbox_bank.accounts WHERE account_number = $1`, [accountNumber]))
    .rows[0].balance_kobo as number

describe('one batch, each caller its own outcome', () => {
  it('claimed, too little money, no such wallet, a reference used twice in the batch: decided one by one, and the claimed moves complete', async () => {
    const rich = await fundedWallet(5_000)
    const poor = await fundedWallet(1_000)
    const to = await fundedWallet(0)
    const partner = { id: credentials.partnerId, environment: 'sandbox' as const }
    const claim = (request: Omit<MoveRequest, 'currency'>): Claim => {
      const full = { ...request, currency: 'NGN' }
      return {
        partner,
        type: 'wallet_transfer',
        request: full,
        hash: requestHash({ type: 'wallet_transfer', ...full }),
      }
    }
    const twice = randomUUID()
    const claims = [
      claim({ walletId: rich.walletId, destinationWalletId: to.walletId, reference: randomUUID(), amountKobo: 2_000 }),
      claim({ walletId: poor.walletId, destinationWalletId: to.walletId, reference: randomUUID(), amountKobo: 1_001 }), // too little
      claim({ walletId: randomUUID(), destinationWalletId: to.walletId, reference: randomUUID(), amountKobo: 1 }), // no such wallet
      claim({ walletId: rich.walletId, destinationWalletId: to.walletId, reference: twice, amountKobo: 1_000 }),
      claim({ walletId: rich.walletId, destinationWalletId: to.walletId, reference: twice, amountKobo: 1_000 }), // same reference, same batch
      claim({ walletId: poor.walletId, destinationWalletId: to.walletId, reference: randomUUID(), amountKobo: 1_000 }), // all it has
    ]
    const payments = app.payments()
    const outcomes = await withTransaction(app.db.pool, (tx) => claimMoves(app.db.pool, payments, tx, claims))

    expect(outcomes.map((outcome) => outcome.kind)).toEqual([
      'claimed',
      'refused',
      'refused',
      'claimed',
      'taken',
      'claimed',
    ])
    expect(outcomes[1]!.kind === 'refused' && outcomes[1]!.error.code).toBe('insufficient_funds')
    expect(outcomes[2]!.kind === 'refused' && outcomes[2]!.error.code).toBe('not_found')
    // The refused claims recorded nothing; their references stay free.
    const recorded = await app.db.pool.query(`SELECT reference FROM wallet_moves WHERE reference = ANY ($1::text[])`, [
      claims.map((entry) => entry.request.reference),
    ])
    expect(recorded.rows.map((row) => row.reference).sort()).toEqual(
      [claims[0]!.request.reference, twice, claims[5]!.request.reference].sort(),
    )
    expect(await balance(poor.walletId)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 0, bookedBalanceKobo: 1_000 }),
    )

    // Each claimed move is sent by its own caller, and ends.
    for (const outcome of outcomes) if (outcome.kind === 'claimed') await workCreated(payments, outcome.instruction)
    const statuses = await app.db.pool.query(`SELECT status FROM wallet_moves WHERE reference = ANY ($1::text[])`, [
      claims.map((entry) => entry.request.reference),
    ])
    expect(statuses.rows.map((row) => row.status)).toEqual(['successful', 'successful', 'successful'])
    expect(await balance(rich.walletId)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 2_000, bookedBalanceKobo: 2_000 }),
    )
    expect(await balance(to.walletId)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 4_000, bookedBalanceKobo: 4_000 }),
    )
    expect([
      await bankBalance(rich.accountNumber),
      await bankBalance(poor.accountNumber),
      await bankBalance(to.accountNumber),
    ]).toEqual([2_000, 0, 4_000])
  })
})

describe('concurrent moves over HTTP', () => {
  it('one wallet overdrawn by many at once: exactly what it holds moves, the rest are 422, others unaffected, nothing 5xx', async () => {
    const shared = await fundedWallet(10_000)
    const others = await Promise.all(Array.from({ length: 4 }, () => fundedWallet(10_000)))
    const to = await fundedWallet(0)
    const fromShared = Array.from({ length: 20 }, () => ({
      walletId: shared.walletId,
      destinationWalletId: to.walletId,
      reference: randomUUID(),
      amountKobo: 1_000,
      currency: 'NGN',
    }))
    const fromOthers = others.flatMap((wallet) =>
      Array.from({ length: 5 }, () => ({
        walletId: wallet.walletId,
        destinationWalletId: to.walletId,
        reference: randomUUID(),
        amountKobo: 500,
        currency: 'NGN',
      })),
    )
    const answers = await Promise.all(
      [...fromShared, ...fromOthers].map((body) =>
        client.post<{ status?: string; error?: string }>('/transfer/wallet', body),
      ),
    )

    expect(answers.filter((answer) => answer.status >= 500)).toEqual([])
    const shares = answers.slice(0, 20)
    expect(shares.filter((answer) => answer.status === 200 && answer.body.status === 'successful')).toHaveLength(10)
    expect(shares.filter((answer) => answer.status === 422 && answer.body.error === 'insufficient_funds')).toHaveLength(
      10,
    )
    expect(answers.slice(20).every((answer) => answer.status === 200 && answer.body.status === 'successful')).toBe(true)
    expect(await balance(shared.walletId)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 0, bookedBalanceKobo: 0 }),
    )
    expect(await balance(to.walletId)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 20_000, bookedBalanceKobo: 20_000 }),
    )
    expect(await bankBalance(shared.accountNumber)).toBe(0)
    expect(await bankBalance(to.accountNumber)).toBe(20_000)
  })
})

// The one write path of a move (claimMoves): a batch of N claims what N batches of one claim —
// random sequences of credits, debits, wallet transfers and bank payouts, some from no such wallet
// or to the wallet itself, some beyond what the wallet holds, some under a reference used before
// (the same request, or another), are claimed in one transaction for one partner and one by one
// for another, from the same balances. Both come to the same outcomes, moves, bank instructions
// and their jobs, ledger transfers and balances, once every identifier is replaced by what it names.
describe('a batch of N claims equals N batches of one', () => {
  const RUNS = Number(process.env.CLAIM_BATCH_RUNS ?? 8)
  /** What the three wallets of each world hold before the moves: one with plenty, one with little, one empty. */
  const FUNDED_KOBO = [5_000, 2_000, 0]
  /** `from` this index: a wallet that does not exist. */
  const NO_SUCH_WALLET = FUNDED_KOBO.length

  interface MoveCommand {
    type: MoveType
    from: number
    to: number
    amountKobo: number
    /** Claimed under an earlier move's reference (`of` modulo its position): the same request (a replay) or another (409). */
    repeat: { of: number; sameBody: boolean } | null
  }

  const moveCommand: fc.Arbitrary<MoveCommand> = fc.record({
    type: fc.constantFrom<MoveType>('credit', 'debit', 'wallet_transfer', 'wallet_transfer', 'bank_payout'),
    from: fc.oneof(
      { weight: 6, arbitrary: fc.nat({ max: FUNDED_KOBO.length - 1 }) },
      { weight: 1, arbitrary: fc.constant(NO_SUCH_WALLET) },
    ),
    to: fc.nat({ max: FUNDED_KOBO.length - 1 }),
    amountKobo: fc.constantFrom(500, 1_500, 3_000),
    repeat: fc.option(fc.record({ of: fc.nat(), sameBody: fc.boolean() }), { freq: 4 }),
  })

  /** Every case at least once — and a reference refused for funds then claimed again in the same batch (a refused move records nothing). */
  const EVERY_CASE: MoveCommand[] = [
    { type: 'wallet_transfer', from: 1, to: 2, amountKobo: 3_000, repeat: null }, // too little
    { type: 'wallet_transfer', from: 1, to: 2, amountKobo: 1_500, repeat: { of: 0, sameBody: false } }, // its reference again: claimed
    { type: 'bank_payout', from: 0, to: 0, amountKobo: 3_000, repeat: null },
    { type: 'debit', from: 0, to: 0, amountKobo: 1_500, repeat: { of: 2, sameBody: true } }, // a replay
    { type: 'debit', from: 0, to: 0, amountKobo: 1_500, repeat: { of: 2, sameBody: false } }, // a conflict
    { type: 'credit', from: 2, to: 0, amountKobo: 500, repeat: null },
    { type: 'wallet_transfer', from: 0, to: 0, amountKobo: 500, repeat: null }, // to itself
    { type: 'debit', from: NO_SUCH_WALLET, to: 0, amountKobo: 500, repeat: null },
    { type: 'debit', from: 0, to: 0, amountKobo: 3_000, repeat: null }, // what is left is too little
  ]

  interface World {
    partner: { id: string; environment: 'sandbox' }
    wallets: string[]
    labels: Map<string, string>
  }

  async function buildWorld(): Promise<World> {
    const own = await app.newPartner()
    const partnerId = own.credentials.partnerId
    const wallets: string[] = []
    for (const amountKobo of FUNDED_KOBO) {
      const wallet = (
        await own.client.post<{ walletId: string }>('/wallet', { customerReference: randomUUID(), name: 'Claimer' })
      ).body
      if (amountKobo > 0)
        expect(
          (
            await own.client.post('/wallet/credit', {
              walletId: wallet.walletId,
              reference: randomUUID(),
              amountKobo,
              currency: 'NGN',
            })
          ).status,
        ).toBe(200)
      wallets.push(wallet.walletId)
    }
    const labels = new Map([[partnerId, 'partner']])
    const rows = await app.db.pool.query<{ id: string; account_number: string; ledger_account_id: string }>(
      `SELECT id, account_number, ledger_account_id FROM wallets WHERE partner_id = $1`,
      [partnerId],
    )
    for (const row of rows.rows) {
      const label = `wallet ${wallets.indexOf(row.id)}`
      labels
        .set(row.id, label)
        .set(row.account_number, `${label} account number`)
        .set(row.ledger_account_id, `${label} ledger account`)
    }
    const accounts = await app.db.pool.query<{ id: string; kind: string }>(
      `SELECT id, kind FROM ledger_accounts WHERE partner_id = $1 AND kind <> 'wallet'`,
      [partnerId],
    )
    for (const row of accounts.rows) labels.set(row.id, row.kind)
    return { partner: { id: partnerId, environment: 'sandbox' }, wallets, labels }
  }

  /** The commands as checked claims of this world's partner (the same unknown wallet in every world). */
  function claimsOf(world: World, commands: readonly MoveCommand[], noSuchWallet: string): Claim[] {
    const claims: Claim[] = []
    for (const [index, command] of commands.entries()) {
      const earlier = command.repeat && index > 0 ? claims[command.repeat.of % index]! : undefined
      const type = earlier ? earlier.type : command.type
      const request: MoveRequest = earlier
        ? { ...earlier.request, amountKobo: earlier.request.amountKobo + (command.repeat!.sameBody ? 0 : 500) }
        : {
            walletId: command.from === NO_SUCH_WALLET ? noSuchWallet : world.wallets[command.from]!,
            reference: `move-${index}`,
            amountKobo: command.amountKobo,
            currency: 'NGN',
            narration: `Move ${index}`,
            ...(type === 'wallet_transfer' ? { destinationWalletId: world.wallets[command.to]! } : {}),
            ...(type === 'bank_payout'
              ? {
                  destinationBankCode: '058',
                  destinationAccountNumber: nuban('058', String(200_000_000 + command.to)),
                  destinationAccountName: 'Ada Obi',
                }
              : {}),
          }
      const hash = requestHash({ type, ...request })
      // The hash covers the wallets' ids: what it stands for is the request it was first made of.
      if (!world.labels.has(hash)) world.labels.set(hash, `hash of request ${index}`)
      claims.push({ partner: world.partner, type, request, hash })
    }
    return claims
  }

  /** Each claim's outcome as its caller tells it after the commit: claimed, refused (why), or taken (a replay, a 409, or still in progress). */
  async function outcomesOf(
    world: World,
    claims: readonly Claim[],
    outcomes: readonly ClaimOutcome[],
  ): Promise<string[]> {
    return Promise.all(
      outcomes.map(async (outcome, index) => {
        if (outcome.kind === 'claimed') return `claimed ${outcome.move.status} ${outcome.instruction.state}`
        if (outcome.kind === 'refused') return `refused ${outcome.error.code}`
        const stored = await app.db.pool.query<{ request_hash: string }>(
          `SELECT request_hash FROM wallet_moves WHERE partner_id = $1 AND reference = $2`,
          [world.partner.id, claims[index]!.request.reference],
        )
        if (!stored.rows[0]) return 'taken: request_in_progress'
        return stored.rows[0].request_hash === claims[index]!.hash ? 'taken: replayed' : 'taken: idempotency_conflict'
      }),
    )
  }

  /** What one partner's claims came to, every identifier replaced by its label and every time left out. */
  async function claimed(world: World) {
    const moves = await app.db.pool.query<{ id: string; reference: string; hold_transfer_id: string | null }>(
      `SELECT id, reference, hold_transfer_id FROM wallet_moves WHERE partner_id = $1 AND reference LIKE 'move-%'`,
      [world.partner.id],
    )
    for (const row of moves.rows) {
      world.labels.set(row.id, `move ${row.reference}`)
      if (row.hold_transfer_id) world.labels.set(row.hold_transfer_id, `hold of ${row.reference}`)
    }
    const query = async (sql: string) =>
      (await app.db.pool.query(sql, [world.partner.id])).rows.map((row) => label(row, world.labels))
    return {
      moves: await query(
        `SELECT id, reference, request_hash, type, status, wallet_id, destination_wallet_id, amount_kobo, currency, narration, provider, hold_transfer_id,
                destination_bank_code, destination_account_number, destination_account_name, completed_at IS NOT NULL AS completed
           FROM wallet_moves WHERE partner_id = $1 AND reference LIKE 'move-%' ORDER BY reference`,
      ),
      instructions: await query(
        `SELECT i.id, i.owner_type, i.provider, i.operation, i.amount_kobo, i.narration, i.debit_account_number, i.credit_account_number, i.destination_bank_code,
                i.destination_account_number, i.name_check, i.expected_account_name, i.state, i.send_attempts, i.failure_code, i.lease_token IS NULL AS unleased,
                (SELECT count(*)::int FROM graphile_worker._private_jobs j WHERE j.payload ->> 'id' = i.id::text) AS jobs
           FROM bank_instructions i JOIN wallet_moves m ON m.id = i.id WHERE m.partner_id = $1 AND m.reference LIKE 'move-%' ORDER BY m.reference`,
      ),
      ledger: await query(
        `SELECT l.id, l.phase, l.debit_account_id, l.credit_account_id, l.amount_kobo, l.code, l.source_type, l.source_id,
                l.debit_booked_after, l.debit_available_after, l.credit_booked_after, l.credit_available_after, p.status AS pending_status
           FROM ledger_transfers l JOIN wallet_moves m ON l.source_id = m.id::text LEFT JOIN ledger_pending_transfers p ON p.transfer_id = l.id
          WHERE m.partner_id = $1 AND m.reference LIKE 'move-%' ORDER BY l.sequence`,
      ),
      balances: (
        await query(
          `SELECT id, kind, debits_pending, debits_posted, credits_pending, credits_posted FROM ledger_accounts WHERE partner_id = $1`,
        )
      ).sort((a, b) => String((a as { id: string }).id).localeCompare(String((b as { id: string }).id))),
    }
  }

  function label(row: Record<string, unknown>, labels: Map<string, string>): Record<string, unknown> {
    return Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        key,
        typeof value === 'string' ? (labels.get(value) ?? value) : value,
      ]),
    )
  }

  async function writingTransactions(world: World): Promise<number> {
    const { rows } = await app.db.pool.query<{ n: number }>(
      `SELECT count(DISTINCT xmin::text)::int AS n FROM wallet_moves WHERE partner_id = $1 AND reference LIKE 'move-%'`,
      [world.partner.id],
    )
    return rows[0]!.n
  }

  it('claims, refusals, replays and conflicts: the same outcomes, moves, instructions and ledger in one batch as one by one', async () => {
    const payments = app.payments()
    await fc.assert(
      fc.asyncProperty(fc.array(moveCommand, { minLength: 1, maxLength: 12 }), async (commands) => {
        const noSuchWallet = randomUUID()
        const alone = await buildWorld()
        const batched = await buildWorld()
        const aloneClaims = claimsOf(alone, commands, noSuchWallet)
        const aloneOutcomes: ClaimOutcome[] = []
        for (const claim of aloneClaims)
          aloneOutcomes.push(
            ...(await withTransaction(app.db.pool, (tx) => claimMoves(app.db.pool, payments, tx, [claim]))),
          )
        const batchedClaims = claimsOf(batched, commands, noSuchWallet)
        const batchedOutcomes = await withTransaction(app.db.pool, (tx) =>
          claimMoves(app.db.pool, payments, tx, batchedClaims),
        )

        expect(await outcomesOf(batched, batchedClaims, batchedOutcomes)).toEqual(
          await outcomesOf(alone, aloneClaims, aloneOutcomes),
        )
        expect(await claimed(batched)).toEqual(await claimed(alone))
        // The batch was one transaction indeed, and the claims alone one each.
        expect(await writingTransactions(batched)).toBe(
          Math.min(1, batchedOutcomes.filter((outcome) => outcome.kind === 'claimed').length),
        )
        expect(await writingTransactions(alone)).toBe(
          aloneOutcomes.filter((outcome) => outcome.kind === 'claimed').length,
        )
      }),
      { numRuns: RUNS, examples: [[EVERY_CASE]] },
    )
  }, 180_000)
})
