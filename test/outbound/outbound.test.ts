// Outbound transfers end to end over HTTP, with real workers, the sandbox bank over HTTP and a
// real callback receiver: confirmed, failed and unknown paths, the float hold, idempotency, the
// simulator's rules, and bad input.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyRailSignature, type RailClient } from '../../src/client/index.ts'
import { isValidBrr } from '../../src/banking/nip/brr.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { requeryOutbound } from '../../src/money-out/outbound/service.ts'
import { setCapability } from '../../src/banking/providers/service.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { SandboxBank } from '../../src/sandbox/service.ts'
import { runRail } from '../support/cli.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'
import { fundFloat } from '../support/float.ts'
import { advanceSandboxClock } from '../support/clock.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const SECRET = 'outbound-test-secret'
/** Far off: no transfer becomes unknown by waiting (a busy machine once made one); the unknown test moves the partner's sandbox clock past it. */
const DEADLINE_MS = 600_000
const SCHEDULE = { sandbox: { firstDelayMs: 200, deadlineMs: DEADLINE_MS } }
let app: Rail
let hook: Receiver

beforeAll(async () => {
  app = await startRail({
    sandboxBankSecret: SECRET,
    payments: SCHEDULE,
    workers: { concurrency: 8, events: { retryDelaysMs: [200] } },
    receiver: true,
  })
  hook = app.receiver
})
afterAll(async () => {
  if (!app) return
  await app.stopWorkers()
  await expectLedgerVerified(app.db.pool)
  // The bank's record of payouts made equals the set of confirmed transfers.
  const paid = await app.db.pool.query(
    `SELECT reference FROM sandbox_bank.transfers WHERE kind = 'payout' AND response_code = '00' ORDER BY reference`,
  )
  const confirmed = await app.db.pool.query(
    `SELECT id::text AS reference FROM outbound_transfers WHERE state = 'confirmed' ORDER BY id::text`,
  )
  expect(paid.rows).toEqual(confirmed.rows)
  expect(confirmed.rows.length).toBeGreaterThan(0)
  await app.close()
})

type OutboundJson = Schemas['OutboundTransfer']

// The holder's name the sandbox bank answers for this account: a payout must name its holder.
const BENEFICIARY = {
  beneficiaryAccountNumber: nuban('058', '123456789'),
  beneficiaryBankCode: '058',
  beneficiaryAccountName: syntheticAccountName('058', nuban('058', '123456789')),
  currency: 'NGN',
}

async function fundedPartner(floatKobo = 1_000_000, overrides: Record<string, unknown> = {}) {
  const partner = await app.newPartner({ callbackUrl: hook.url, ...overrides })
  expect((await fundFloat(partner.client, floatKobo)).status).toBe(200)
  return partner
}

const float = async (client: RailClient) =>
  (await client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>('/api/v1/rail/float')).body
const read = async (client: RailClient, id: string) =>
  (await client.get<OutboundJson>(`/api/v1/rail/outbound/${id}`)).body

async function submitted(
  client: RailClient,
  amountKobo = 100_000,
  extra: Record<string, unknown> = {},
): Promise<OutboundJson> {
  const response = await client.post<OutboundJson>('/api/v1/rail/outbound', {
    clientReference: randomUUID(),
    amountKobo,
    ...BENEFICIARY,
    ...extra,
  })
  expect(response.status).toBe(202)
  expect(response.body.state).toBe('pending')
  await waitFor(async () => (await read(client, response.body.id)).state === 'submitted', 10_000, 'submitted')
  return read(client, response.body.id)
}

function callbacksFor(id: string) {
  return hook.requests.filter((r) => JSON.parse(r.rawBody).data?.id === id)
}

describe('POST /api/v1/rail/outbound', () => {
  it('confirmed: holds the amount, the simulator settles it, the hold posts and a signed callback arrives', async () => {
    const { credentials, client } = await fundedPartner()
    const transfer = await submitted(client)
    expect(transfer.providerSessionId).toMatch(/^\d{30}$/)
    expect(transfer.providerResponseCode).toBe('09')
    expect(transfer.settlementAccountName).toEqual(expect.any(String))
    expect(transfer.creatorMetadata).toEqual(
      expect.objectContaining({ partnerId: credentials.partnerId, credentialId: expect.any(String) }),
    )
    expect(await float(client)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 900_000, bookedBalanceKobo: 1_000_000 }),
    )

    const simulated = await client.post<{
      transferId: string
      registeredOutcome: string
      clientReference: string
      message: string
    }>('/api/v1/rail/sandbox/simulate-outbound-settlement', { transferId: transfer.id, outcome: 'confirmed' })
    expect(simulated.status).toBe(200)
    expect(simulated.body).toEqual(
      expect.objectContaining({
        transferId: transfer.id,
        clientReference: transfer.clientReference,
        registeredOutcome: 'confirmed',
      }),
    )

    await waitFor(async () => callbacksFor(transfer.id).length === 1, 15_000, 'transfer.confirmed callback')
    const [callback] = callbacksFor(transfer.id)
    expect(
      verifyRailSignature(
        callback!.rawBody,
        callback!.headers['x-rail-signature'] as string,
        credentials.callbackSigningSecret,
      ),
    ).toBe(true)
    const body = JSON.parse(callback!.rawBody)
    expect(body.event).toBe('transfer.confirmed')
    expect(body.data).toEqual(
      expect.objectContaining({ id: transfer.id, state: 'confirmed', terminalAt: expect.any(String) }),
    )
    expect((await read(client, transfer.id)).state).toBe('confirmed')
    expect(await float(client)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 900_000, bookedBalanceKobo: 900_000 }),
    )

    // The bank paid it once, from its settlement pool.
    const bank = await app.db.pool.query(
      `SELECT response_code FROM sandbox_bank.transfers WHERE reference = $1 AND kind = 'payout'`,
      [transfer.id],
    )
    expect(bank.rows).toEqual([{ response_code: '00' }])
  })

  it('failed: the hold is voided, the float restored, transfer.failed delivered; a second registration before resolution replaces the first', async () => {
    const { client } = await fundedPartner()
    const transfer = await submitted(client)
    // Replace a registered outcome before the requery settles it: the pipeline is stopped meanwhile.
    await app.stopWorkers()
    expect(
      (
        await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: transfer.id,
          outcome: 'confirmed',
        })
      ).status,
    ).toBe(200)
    expect(
      (
        await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          clientReference: transfer.clientReference,
          outcome: 'failed',
        })
      ).status,
    ).toBe(200)
    await app.startWorkers()
    await waitFor(async () => callbacksFor(transfer.id).length === 1, 15_000, 'transfer.failed callback')
    const final = await read(client, transfer.id)
    expect(final.state).toBe('failed')
    expect(final.failureReason).toEqual({
      code: 'provider_declined',
      message: expect.any(String),
      providerResponseCode: '05',
    })
    expect(JSON.parse(callbacksFor(transfer.id)[0]!.rawBody).event).toBe('transfer.failed')
    expect(await float(client)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 1_000_000, bookedBalanceKobo: 1_000_000 }),
    )
  })

  it('unknown: with nothing registered the schedule runs out, the hold stays, transfer.unknown is delivered', async () => {
    const { client } = await fundedPartner()
    const transfer = await submitted(client)
    await advanceSandboxClock(client, DEADLINE_MS / 1000 + 1)
    await waitFor(async () => (await read(client, transfer.id)).state === 'unknown', 15_000, 'unknown')
    await waitFor(async () => callbacksFor(transfer.id).length === 1, 10_000, 'transfer.unknown callback')
    expect(JSON.parse(callbacksFor(transfer.id)[0]!.rawBody).event).toBe('transfer.unknown')
    expect(await float(client)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 900_000, bookedBalanceKobo: 1_000_000 }),
    )
    // Unknown is not submitted: the simulator refuses it.
    const refused = await client.post<{ error: string; details: { state: string; currentState: string } }>(
      '/api/v1/rail/sandbox/simulate-outbound-settlement',
      { transferId: transfer.id, outcome: 'confirmed' },
    )
    expect(refused.status).toBe(409)
    expect(refused.body.details).toMatchObject({ state: 'unknown', currentState: 'unknown' })

    // Later the bank's answer is final, and an operator's `rail outbound requery` resolves it: the hold posts once.
    expect(await new SandboxBank(app.db.pool).registerOutcome(transfer.id, 'confirmed')).toBe(true)
    const requeried = await runRail(['outbound', 'requery', transfer.id], {
      DATABASE_URL: app.db.url,
      SANDBOX_BANK_URL: app.baseUrl,
      SANDBOX_BANK_SECRET: SECRET,
    })
    expect(requeried.code).toBe(0)
    expect(JSON.parse(requeried.stdout).state).toBe('confirmed')
    expect(await float(client)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 900_000, bookedBalanceKobo: 900_000 }),
    )
    await waitFor(async () => callbacksFor(transfer.id).length === 2, 10_000, 'transfer.confirmed callback')
    expect(JSON.parse(callbacksFor(transfer.id)[1]!.rawBody).event).toBe('transfer.confirmed')
    const again = await runRail(['outbound', 'requery', transfer.id], {
      DATABASE_URL: app.db.url,
      SANDBOX_BANK_URL: app.baseUrl,
      SANDBOX_BANK_SECRET: SECRET,
    })
    expect(JSON.parse(again.stdout).state).toBe('confirmed')
  })

  it('too little float: 202 with state failed and insufficient_funds, nothing held', async () => {
    const { client } = await fundedPartner(50_000)
    const response = await client.post<OutboundJson>('/api/v1/rail/outbound', {
      clientReference: randomUUID(),
      amountKobo: 60_000,
      ...BENEFICIARY,
    })
    expect(response.status).toBe(202)
    expect(response.body.state).toBe('failed')
    expect(response.body.failureReason?.code).toBe('insufficient_funds')
    expect(response.body.terminalAt).toEqual(expect.any(String))
    expect(await float(client)).toEqual(
      expect.objectContaining({ availableBalanceKobo: 50_000, bookedBalanceKobo: 50_000 }),
    )
  })

  it('on a provider without narration, the transfer says none was applied (the bank got none)', async () => {
    const { client } = await fundedPartner()
    await setCapability(app.db.pool, 'sandbox', 'narration', false)
    try {
      const body = { clientReference: randomUUID(), amountKobo: 10_000, narration: 'invoice 42', ...BENEFICIARY }
      const response = await client.post<OutboundJson & { narration: string | null }>('/api/v1/rail/outbound', body)
      expect(response.status).toBe(202)
      expect(response.body.narration).toBeNull()
      const sent = await app.db.pool.query(`SELECT narration FROM bank_instructions WHERE id = $1`, [response.body.id])
      expect(sent.rows).toEqual([{ narration: null }])
      // The same request again is the same transfer (the narration is part of what was asked).
      const again = await client.post<OutboundJson & { narration: string | null }>('/api/v1/rail/outbound', body)
      expect(again.headers.get('idempotent-replayed')).toBe('true')
      expect([again.body.id, again.body.narration]).toEqual([response.body.id, null])
    } finally {
      await setCapability(app.db.pool, 'sandbox', 'narration', true)
    }
  })

  it('30 concurrent submits with one clientReference make one transfer; another body is 409', async () => {
    const { credentials, client } = await fundedPartner()
    const body = { clientReference: randomUUID(), amountKobo: 10_000, ...BENEFICIARY }
    const responses = await Promise.all(
      Array.from({ length: 30 }, () => client.post<OutboundJson>('/api/v1/rail/outbound', body)),
    )
    expect(responses.every((r) => r.status === 202)).toBe(true)
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1)
    expect(responses.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(29)
    const { rows } = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM outbound_transfers WHERE partner_id = $1`,
      [credentials.partnerId],
    )
    expect(rows[0].n).toBe(1)
    const conflict = await client.post<{ error: string }>('/api/v1/rail/outbound', { ...body, amountKobo: 10_001 })
    expect(conflict.status).toBe(409)
    expect(conflict.body.error).toBe('idempotency_conflict')
  })

  it('gives government and corporate partners a BRR, and fintechs none', async () => {
    const government = await fundedPartner(1_000_000, { customerClass: 'government' })
    const response = await government.client.post<OutboundJson>('/api/v1/rail/outbound', {
      clientReference: randomUUID(),
      amountKobo: 1_000,
      ...BENEFICIARY,
    })
    expect(isValidBrr(response.body.brr!)).toBe(true)
    const fintech = await fundedPartner()
    expect(
      (
        await fintech.client.post<OutboundJson>('/api/v1/rail/outbound', {
          clientReference: randomUUID(),
          amountKobo: 1_000,
          ...BENEFICIARY,
        })
      ).body.brr,
    ).toBeNull()
  })

  it.each([
    ['missing clientReference', { amountKobo: 100, ...BENEFICIARY }, 422],
    ['a zero amount', { clientReference: 'r', amountKobo: 0, ...BENEFICIARY }, 422],
    ['a fractional amount', { clientReference: 'r', amountKobo: 10.5, ...BENEFICIARY }, 422],
    ['an amount as a string', { clientReference: 'r', amountKobo: '100', ...BENEFICIARY }, 422],
    ['an unknown field', { clientReference: 'r', amountKobo: 100, ...BENEFICIARY, fee: 1 }, 422],
    [
      'an invalid NUBAN',
      { clientReference: 'r', amountKobo: 100, ...BENEFICIARY, beneficiaryAccountNumber: '1234567890' },
      422,
    ],
    ['an unknown bank', { clientReference: 'r', amountKobo: 100, ...BENEFICIARY, beneficiaryBankCode: '999' }, 422],
    ['another currency', { clientReference: 'r', amountKobo: 100, ...BENEFICIARY, currency: 'USD' }, 422],
    [
      'an oversize narration',
      { clientReference: 'r', amountKobo: 100, ...BENEFICIARY, narration: 'n'.repeat(101) },
      422,
    ],
    [
      'a private callback URL',
      { clientReference: 'r', amountKobo: 100, ...BENEFICIARY, callbackUrl: 'http://10.0.0.1/x' },
      422,
    ],
  ])('refuses %s, and records nothing', async (_what, body, status) => {
    const { credentials, client } = await fundedPartner()
    expect((await client.post('/api/v1/rail/outbound', body)).status).toBe(status)
    const { rows } = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM outbound_transfers WHERE partner_id = $1`,
      [credentials.partnerId],
    )
    expect(rows[0].n).toBe(0)
  })
  it('final answers arriving together are written in shared transactions, each transfer resolved once', async () => {
    const { client } = await fundedPartner(2_000_000)
    const outcome = (index: number) => (index % 3 === 0 ? 'failed' : 'confirmed')
    // Each outcome is registered as soon as its transfer is submitted (the state the simulator
    // needs), not after all twelve are: waiting for the slowest left the first ones to run out
    // their requery schedule on a busy machine, and the simulator refused them (409).
    const transfers = await Promise.all(
      Array.from({ length: 12 }, async (_unused, index) => {
        const transfer = await submitted(client, 100_000 + index)
        expect(
          (
            await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
              transferId: transfer.id,
              outcome: outcome(index),
            })
          ).status,
        ).toBe(200)
        return transfer
      }),
    )
    // Besides the workers' requeries, two more each at once through a pipeline of our own (its own
    // step writer): duplicates of one final answer, in one batch or in racing ones.
    const deps = { pool: app.db.pool, payments: app.payments(SCHEDULE) }
    await Promise.all(
      transfers.flatMap((transfer) => [requeryOutbound(deps, transfer.id), requeryOutbound(deps, transfer.id)]),
    )
    // A requery that finds the instruction leased by a worker leaves it to that worker: wait for the final states.
    const finalStates = async () =>
      Promise.all(transfers.map(async (transfer) => (await read(client, transfer.id)).state))
    await waitFor(
      async () => (await finalStates()).every((state) => state === 'confirmed' || state === 'failed'),
      15_000,
      'every transfer final',
    )
    expect(await finalStates()).toEqual(transfers.map((_transfer, index) => outcome(index)))

    const confirmedKobo = transfers.reduce(
      (sum, transfer, index) => sum + (outcome(index) === 'confirmed' ? transfer.amountKobo : 0),
      0,
    )
    expect(await float(client)).toEqual(
      expect.objectContaining({
        availableBalanceKobo: 2_000_000 - confirmedKobo,
        bookedBalanceKobo: 2_000_000 - confirmedKobo,
      }),
    )
    // One hold and one resolution per transfer, and one callback each.
    const moves = await app.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ledger_transfers WHERE source_type = 'outbound_transfer' AND source_id = ANY ($1::text[])`,
      [transfers.map((transfer) => transfer.id)],
    )
    expect(moves.rows[0]!.n).toBe(24)
    await waitFor(() => transfers.every((transfer) => callbacksFor(transfer.id).length >= 1), 10_000, 'callbacks')
    // Every event of these transfers delivered: no callback is still on its way to be counted.
    const ids = transfers.map((transfer) => transfer.id)
    const undelivered = async () =>
      (
        await app.db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM events WHERE object_id = ANY ($1::text[]) AND delivery_status = 'pending'`,
          [ids],
        )
      ).rows[0]!.n
    await waitFor(async () => (await undelivered()) === 0, 10_000, 'every callback delivered')
    for (const [index, transfer] of transfers.entries()) {
      const bodies = callbacksFor(transfer.id).map((request) => JSON.parse(request.rawBody) as { event: string })
      expect(bodies.map((body) => body.event)).toEqual([`transfer.${outcome(index)}`])
    }
  })
})

describe('reads and the simulator', () => {
  it("reads by id and by clientReference, lists newest first; another partner's transfer is 404", async () => {
    const { client } = await fundedPartner()
    const first = (
      await client.post<OutboundJson>('/api/v1/rail/outbound', {
        clientReference: 'read-1',
        amountKobo: 1_000,
        ...BENEFICIARY,
      })
    ).body
    const second = (
      await client.post<OutboundJson>('/api/v1/rail/outbound', {
        clientReference: 'read-2',
        amountKobo: 1_000,
        ...BENEFICIARY,
      })
    ).body
    expect((await read(client, first.id)).clientReference).toBe('read-1')
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () =>
        (await client.get<{ data: OutboundJson[] }>('/api/v1/rail/outbound?limit=100')).body.data.length === 2,
      20_000,
      'both transfers listed',
    )
    const byReference = await client.get<{ data: OutboundJson[] }>('/api/v1/rail/outbound?clientReference=read-2')
    expect(byReference.body.data.map((t) => t.id)).toEqual([second.id])
    const list = await client.get<{ data: OutboundJson[]; nextCursor: string | null }>('/api/v1/rail/outbound?limit=1')
    expect(list.body.data.map((t) => t.id)).toEqual([second.id])
    const next = await client.get<{ data: OutboundJson[] }>(
      `/api/v1/rail/outbound?limit=1&cursor=${list.body.nextCursor}`,
    )
    expect(next.body.data.map((t) => t.id)).toEqual([first.id])

    const other = await fundedPartner()
    expect((await other.client.get(`/api/v1/rail/outbound/${first.id}`)).status).toBe(404)
    expect(
      (
        await other.client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: first.id,
          outcome: 'confirmed',
        })
      ).status,
    ).toBe(404)
    expect((await client.get('/api/v1/rail/outbound/not-a-uuid')).status).toBe(422)
    for (const query of ['?colour=red', '?limit=0', '?limit=101', '?state=lost', '?cursor=nope']) {
      expect((await client.get(`/api/v1/rail/outbound${query}`)).status).toBe(422)
    }
  })

  it('the simulator needs exactly one target and a known outcome, and is 404 for live partners', async () => {
    const { client } = await fundedPartner()
    const transfer = await submitted(client, 1_000)
    expect(
      (await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', { outcome: 'confirmed' })).status,
    ).toBe(422)
    expect(
      (
        await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: transfer.id,
          clientReference: transfer.clientReference,
          outcome: 'confirmed',
        })
      ).status,
    ).toBe(422)
    expect(
      (
        await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: transfer.id,
          outcome: 'maybe',
        })
      ).status,
    ).toBe(422)
    const live = await app.newPartner({ environment: 'live' })
    expect(
      (
        await live.client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: transfer.id,
          outcome: 'confirmed',
        })
      ).status,
    ).toBe(404)
  })
})
