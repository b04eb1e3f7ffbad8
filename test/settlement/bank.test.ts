// Settlement to a bank account: the partner registers its account (NUBAN-validated, name-checked)
// and a cut-off; credits wait in collections; after the cut-off (the task's clock moved past it)
// one pipeline payout pays the cycle, listed in GET /outbound with origin settlement; settled
// through the sandbox simulator, the settlement is paid with its report and `settlement.paid`
// reaches a real receiver. A failed payout gives the money back to collections and the next
// cycle pays it; a cycle run twice at once pays once; bad settings change nothing.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { buildCrontab } from '../../src/app.ts'
import { RUN_DUE_TASK, runDueSettlements } from '../../src/settlement/service.ts'
import { advanceSandboxClock } from '../support/clock.ts'
import { createRequest, escrowClient } from '../support/escrow.ts'
import { expectLedgerVerified } from '../support/ledger.ts'
import { waitFor } from '../support/wait.ts'
import {
  bookedKobo,
  payIn,
  startCollections,
  waitForCallback,
  type CollectionsHarness,
} from '../collections/support.ts'
import { lagosCutoffIn, movableClock, settlementDeps } from './support.ts'
import type { Schemas, ResponseBody } from '../../packages/sdk/src/index.ts'

let harness: CollectionsHarness
const clock = movableClock()

beforeAll(async () => {
  harness = await startCollections()
})
afterAll(async () => {
  await harness?.close()
  if (harness) await expectLedgerVerified(harness.app.db.pool)
  await harness?.app.close()
})

const SETTLEMENT_ACCOUNT = { accountNumber: nuban('057', '000246810'), bankCode: '057' }
const BANK_ACCOUNT = {
  ...SETTLEMENT_ACCOUNT,
  accountName: syntheticAccountName(SETTLEMENT_ACCOUNT.bankCode, SETTLEMENT_ACCOUNT.accountNumber),
}
const PAYER = { payerName: 'Tunde Bello', payerAccountNumber: nuban('044', '000765432'), payerBankCode: '044' }

type SettingsJson = Schemas['SettlementSettings']

type SettlementJson = Schemas['Settlement'] & Partial<Pick<ResponseBody<'getSettlement'>, 'report'>>

async function bankPartner(cutoffHoursFromNow = 2) {
  const { client, credentials } = await harness.app.newPartner({ callbackUrl: harness.hook.url })
  const put = await client.request<SettingsJson>('PUT', '/api/v1/rail/settlement', {
    mode: 'bank',
    bankAccount: BANK_ACCOUNT,
    cutoffTime: lagosCutoffIn(cutoffHoursFromNow),
  })
  expect(put.status, JSON.stringify(put.body)).toBe(200)
  return { client, credentials }
}

/** Pays credits into a new persistent account and waits until each is confirmed; answers their ids. */
async function collect(client: RailClient, secret: string, amountsKobo: number[]): Promise<string[]> {
  const account = (
    await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
      reference: randomUUID(),
    })
  ).body
  for (const amountKobo of amountsKobo) await payIn(client, account.virtualAccount, amountKobo, PAYER)
  const callbacks = await waitForCallback(
    harness.hook,
    secret,
    (body) => body.event === 'credit.confirmed' && body.data.trackingId === account.trackingId,
    amountsKobo.length,
  )
  return callbacks.map((callback) => callback.data.creditId as string)
}

async function settlementsOf(client: RailClient): Promise<SettlementJson[]> {
  return (await client.get<{ data: SettlementJson[] }>('/api/v1/rail/settlements')).body.data
}

async function settlementPayouts(client: RailClient) {
  return (
    await client.get<{
      data: {
        id: string
        state: string
        amountKobo: number
        beneficiaryAccountNumber: string
        origin: { type: string; id: string }
      }[]
    }>('/api/v1/rail/outbound?origin=settlement')
  ).body.data
}

async function waitForSubmitted(client: RailClient, transferId: string): Promise<void> {
  await waitFor(
    async () => (await client.get<{ state: string }>(`/api/v1/rail/outbound/${transferId}`)).body.state === 'submitted',
    15_000,
    'payout submitted',
  )
}

async function waitForSettlement(client: RailClient, id: string, state: string): Promise<SettlementJson> {
  let settlement: SettlementJson | undefined
  await waitFor(
    async () => {
      settlement = (await client.get<SettlementJson>(`/api/v1/rail/settlements/${id}`)).body
      return settlement.state === state
    },
    15_000,
    `settlement ${state}`,
  )
  return settlement!
}

describe('bank settlement', () => {
  it('registers the account, waits for the cut-off, pays the cycle once, and reports it', async () => {
    const { client, credentials } = await bankPartner()
    const settings = (await client.get<SettingsJson>('/api/v1/rail/settlement')).body
    expect(settings).toMatchObject({
      mode: 'bank',
      timeZone: 'Africa/Lagos',
      bankAccount: { ...BANK_ACCOUNT, verifiedAccountName: BANK_ACCOUNT.accountName },
    })
    expect(settings.nextCutoffAt).not.toBeNull()

    const creditIds = await collect(client, credentials.callbackSigningSecret, [30_000, 20_000])
    // Bank mode: the money waits in collections; the float sees none of it.
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(50_000)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(0)

    // Before the cut-off: nothing is due.
    clock.setAheadHours(0)
    await runDueSettlements(settlementDeps(harness.app, clock))
    expect(await settlementsOf(client)).toEqual([])

    // Past the cut-off, two workers at once: one settlement, one payout.
    clock.setAheadHours(3)
    await Promise.all([
      runDueSettlements(settlementDeps(harness.app, clock)),
      runDueSettlements(settlementDeps(harness.app, clock)),
    ])
    await runDueSettlements(settlementDeps(harness.app, clock)) // a rerun finds the cycle done
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await settlementsOf(client)).length === 1 && (await settlementPayouts(client)).length === 1,
      20_000,
      'the settlement and its payout listed',
    )
    const [settlement, ...others] = await settlementsOf(client)
    expect(others).toEqual([])
    expect(settlement).toMatchObject({ state: 'pending', amountKobo: 50_000, creditCount: 2, creditsTotalKobo: 50_000 })
    const payouts = await settlementPayouts(client)
    expect(payouts).toHaveLength(1)
    expect(payouts[0]).toMatchObject({
      id: settlement!.outboundTransferId,
      amountKobo: 50_000,
      beneficiaryAccountNumber: BANK_ACCOUNT.accountNumber,
      origin: { type: 'settlement', id: settlement!.id, reference: settlement!.id },
    })
    // Held on collections while the bank decides: booked still, not available.
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(50_000)

    await waitForSubmitted(client, settlement!.outboundTransferId!)
    const simulated = await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
      transferId: settlement!.outboundTransferId,
      outcome: 'confirmed',
    })
    expect(simulated.status).toBe(200)
    const paid = await waitForSettlement(client, settlement!.id, 'paid')
    expect(paid.report).toMatchObject({ creditCount: 2, creditsTotalKobo: 50_000, paidKobo: 50_000, adjustmentKobo: 0 })
    expect(paid.report!.credits.map((credit) => credit.creditId).sort()).toEqual([...creditIds].sort())
    const [event] = await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'settlement.paid' && body.data.id === settlement!.id,
    )
    expect(event!.data).toMatchObject({
      id: settlement!.id,
      state: 'paid',
      amountKobo: 50_000,
      outboundTransferId: settlement!.outboundTransferId,
      destination: { accountNumber: BANK_ACCOUNT.accountNumber },
    })
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)

    // Another partner sees none of it.
    const stranger = await harness.app.newPartner()
    expect((await stranger.client.get(`/api/v1/rail/settlements/${settlement!.id}`)).status).toBe(404)
    expect(await settlementsOf(stranger.client)).toEqual([])
  })

  it('the worker task (cron every minute) pays the cycle once its clock is past the cut-off', async () => {
    expect(buildCrontab()).toContain(`* * * * * ${RUN_DUE_TASK}`)
    const { client, credentials } = await bankPartner()
    await collect(client, credentials.callbackSigningSecret, [7_000])
    // The partner's sandbox clock moves past its cut-off (2 h away); the advance queues the task at
    // once, and any worker judges the cycle by the partner's time.
    await advanceSandboxClock(client, 3 * 3_600)
    await waitFor(async () => (await settlementsOf(client)).length === 1, 15_000, 'settlement by the worker')
    expect((await settlementsOf(client))[0]).toMatchObject({ amountKobo: 7_000, creditCount: 1 })
    // The settings show the next cut-off by the partner's time: tomorrow's, not the one 2 h from real now.
    const { nextCutoffAt } = (await client.get<SettingsJson>('/api/v1/rail/settlement')).body
    expect(new Date(nextCutoffAt!).getTime()).toBeGreaterThan(Date.now() + 3 * 3_600_000)
  })

  it('a failed payout gives the money back to collections, and the next cycle pays it', async () => {
    const { client, credentials } = await bankPartner()
    await collect(client, credentials.callbackSigningSecret, [40_000])
    clock.setAheadHours(3)
    await runDueSettlements(settlementDeps(harness.app, clock))
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(async () => (await settlementsOf(client)).length === 1, 20_000, 'the settlement listed')
    const [first] = await settlementsOf(client)
    await waitForSubmitted(client, first!.outboundTransferId!)
    expect(
      (
        await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: first!.outboundTransferId,
          outcome: 'failed',
        })
      ).status,
    ).toBe(200)
    const failed = await waitForSettlement(client, first!.id, 'failed')
    expect(failed.failureReason).not.toBeNull()
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'settlement.failed' && body.data.id === first!.id,
    )
    // The hold was voided: the money is available in collections again.
    const balance = await harness.app.db.pool.query<{ available: string }>(
      `SELECT credits_posted - debits_posted - debits_pending AS available FROM ledger_accounts WHERE partner_id = $1 AND kind = 'collections'`,
      [credentials.partnerId],
    )
    expect(Number(balance.rows[0]!.available)).toBe(40_000)

    // The same cycle again pays nothing; the next day's cycle pays the credit.
    await runDueSettlements(settlementDeps(harness.app, clock))
    expect(await settlementsOf(client)).toHaveLength(1)
    clock.setAheadHours(27)
    await runDueSettlements(settlementDeps(harness.app, clock))
    await waitFor(async () => (await settlementsOf(client)).length === 2, 20_000, 'the second settlement listed')
    const [second] = await settlementsOf(client)
    expect(second!.id).not.toBe(first!.id)
    expect(second).toMatchObject({ state: 'pending', amountKobo: 40_000, creditCount: 1 })
    await waitForSubmitted(client, second!.outboundTransferId!)
    expect(
      (
        await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: second!.outboundTransferId,
          outcome: 'confirmed',
        })
      ).status,
    ).toBe(200)
    await waitForSettlement(client, second!.id, 'paid')
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    await waitFor(async () => (await settlementPayouts(client)).length === 2, 20_000, 'both payouts listed')
    expect(await settlementPayouts(client)).toHaveLength(2)
  })

  it('respects a refund held on collections: the cycle pays what is available, the report shows the adjustment', async () => {
    const { client, credentials } = await bankPartner()
    const [creditId] = await collect(client, credentials.callbackSigningSecret, [30_000, 25_000])
    const refund = await client.post<{ refunds: { outboundTransferId: string }[] }>('/api/v1/rail/refunds', {
      reference: randomUUID(),
      creditId,
      amountKobo: 10_000,
    })
    expect(refund.status, JSON.stringify(refund.body)).toBe(201)
    const refundPayoutId = refund.body.refunds[0]!.outboundTransferId
    clock.setAheadHours(3)
    await runDueSettlements(settlementDeps(harness.app, clock))
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(async () => (await settlementsOf(client)).length === 1, 20_000, 'the settlement listed')
    const [settlement] = await settlementsOf(client)
    expect(settlement).toMatchObject({ state: 'pending', amountKobo: 45_000, creditCount: 2, creditsTotalKobo: 55_000 })
    const report = (await client.get<SettlementJson>(`/api/v1/rail/settlements/${settlement!.id}`)).body.report!
    expect(report).toMatchObject({ paidKobo: 45_000, creditsTotalKobo: 55_000, adjustmentKobo: -10_000 })
    // Both payouts settle; collections ends empty.
    for (const transferId of [refundPayoutId, settlement!.outboundTransferId!]) {
      await waitForSubmitted(client, transferId)
      expect(
        (await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', { transferId, outcome: 'confirmed' }))
          .status,
      ).toBe(200)
    }
    await waitForSettlement(client, settlement!.id, 'paid')
    await waitFor(
      async () => (await bookedKobo(harness.app, credentials.partnerId, 'collections')) === 0,
      15_000,
      'collections emptied',
    )
  })

  it('queues invoice payments for the cycle and leaves escrow funding in the escrow', async () => {
    const { client, credentials } = await bankPartner()
    const invoice = (
      await client.post<{ id: string; virtualAccount: string }>('/api/v1/rail/invoice', {
        reference: randomUUID(),
        title: 'Dues',
        amountKobo: 20_000,
        publishOnCreate: true,
      })
    ).body
    await payIn(client, invoice.virtualAccount, 20_000, PAYER)
    await waitForCallback(
      harness.hook,
      credentials.callbackSigningSecret,
      (body) => body.event === 'invoice.paid' && body.data.id === invoice.id,
    )
    const api = escrowClient(harness.app.baseUrl, credentials.escrowApiKey)
    const escrow = await api.create<{ ref: string; funding: { virtualAccount: string } }>(
      createRequest({ amount: 10_000 }),
    )
    await payIn(client, escrow.body.funding.virtualAccount, 10_000, PAYER)
    await waitFor(
      async () => (await api.get<{ escrow: { status: string } }>(escrow.body.ref)).body.escrow.status === 'funded',
      15_000,
      'escrow funded',
    )
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(20_000)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'escrow_holding')).toBe(10_000)
    const run = await client.post<{ settlement: SettlementJson | null }>('/api/v1/rail/sandbox/run-settlement')
    expect(run.body.settlement).toMatchObject({ amountKobo: 20_000, creditCount: 1, creditsTotalKobo: 20_000 })
    expect(await bookedKobo(harness.app, credentials.partnerId, 'escrow_holding')).toBe(10_000)
  })

  it('runs a cycle now in the sandbox; the same request again with its Idempotency-Key pays nothing twice', async () => {
    const { client, credentials } = await bankPartner()
    await collect(client, credentials.callbackSigningSecret, [15_000])
    const key = { headers: { 'Idempotency-Key': randomUUID() } }
    const run = await client.post<{ mode: string; settlement: SettlementJson | null }>(
      '/api/v1/rail/sandbox/run-settlement',
      undefined,
      key,
    )
    expect(run.status).toBe(200)
    expect(run.body.settlement).toMatchObject({ state: 'pending', amountKobo: 15_000, creditCount: 1 })
    // The same request again with its key (a retry, a replay): the same settlement, nothing paid twice.
    const replayed = await client.post<{ settlement: SettlementJson | null }>(
      '/api/v1/rail/sandbox/run-settlement',
      undefined,
      key,
    )
    expect([replayed.headers.get('idempotent-replayed'), replayed.body.settlement!.id]).toEqual([
      'true',
      run.body.settlement!.id,
    ])
    // A new request (no key): nothing is left to settle.
    const again = await client.post<{ settlement: SettlementJson | null }>('/api/v1/rail/sandbox/run-settlement')
    expect(again.body.settlement).toBeNull()
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(async () => (await settlementPayouts(client)).length === 1, 20_000, 'the payout listed')
    expect(await settlementPayouts(client)).toHaveLength(1)
  })
})

describe('settlement settings', () => {
  it('refuses bad input with 422 and changes nothing', async () => {
    const { client } = await harness.app.newPartner()
    const put = (body: unknown) =>
      client.request<{ error: string; message: string }>('PUT', '/api/v1/rail/settlement', body)
    const refusals = [
      { mode: 'bank', bankAccount: { ...BANK_ACCOUNT, accountNumber: '0000000001' } }, // not a NUBAN at that bank
      { mode: 'bank', bankAccount: { ...BANK_ACCOUNT, bankCode: '999' } }, // no such bank
      { mode: 'bank', bankAccount: { ...BANK_ACCOUNT, accountName: 'SOMEONE ELSE ENTIRELY' } }, // name mismatch
      { mode: 'bank', bankAccount: BANK_ACCOUNT, cutoffTime: '25:00' },
      { mode: 'bank', bankAccount: BANK_ACCOUNT, cutoffTime: '5pm' },
      { mode: 'bank' }, // no account
      { mode: 'weekly' },
      { mode: 'float', unknown: true },
      { mode: 'bank', bankAccount: { ...BANK_ACCOUNT, sortCode: '1' } },
    ]
    for (const body of refusals) {
      const answer = await put(body)
      expect(answer.status, JSON.stringify(body)).toBe(422)
      expect(answer.body.error).toBe('validation_error')
    }
    expect((await client.get<SettingsJson>('/api/v1/rail/settlement')).body).toMatchObject({
      mode: 'float',
      bankAccount: null,
      cutoffTime: '17:00',
      nextCutoffAt: null,
    })
  })

  it('with an Idempotency-Key, the same change sent again answers the stored settings and changes nothing; another change under the key is 409', async () => {
    const { client } = await harness.app.newPartner()
    const key = { headers: { 'Idempotency-Key': randomUUID() } }
    const body = { mode: 'bank', bankAccount: BANK_ACCOUNT, cutoffTime: '16:30' }
    expect((await client.request('PUT', '/api/v1/rail/settlement', body, key)).status).toBe(200)
    expect((await client.request('PUT', '/api/v1/rail/settlement', { ...body, cutoffTime: '15:00' })).status).toBe(200)
    const again = await client.request<SettingsJson>('PUT', '/api/v1/rail/settlement', body, key)
    expect([again.status, again.headers.get('idempotent-replayed'), again.body.cutoffTime]).toEqual([
      200,
      'true',
      '16:30',
    ])
    const conflict = await client.request<{ error: string }>('PUT', '/api/v1/rail/settlement', { mode: 'float' }, key)
    expect([conflict.status, conflict.body.error]).toEqual([409, 'idempotency_conflict'])
    expect((await client.get<SettingsJson>('/api/v1/rail/settlement')).body).toMatchObject({
      mode: 'bank',
      cutoffTime: '15:00',
    })
  })

  it('switching back to float moves what waited for a bank cycle to the float', async () => {
    const { client, credentials } = await bankPartner()
    await collect(client, credentials.callbackSigningSecret, [8_000, 9_000])
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(17_000)
    const back = await client.request<SettingsJson>(
      'PUT',
      '/api/v1/rail/settlement',
      { mode: 'float' },
      { timestampS: Math.floor(Date.now() / 1000) + 1 },
    )
    expect(back.status).toBe(200)
    expect(back.body).toMatchObject({ mode: 'float', bankAccount: null, cutoffTime: '17:00', nextCutoffAt: null })
    clock.setAheadHours(0)
    await runDueSettlements(settlementDeps(harness.app, clock))
    expect(await bookedKobo(harness.app, credentials.partnerId, 'collections')).toBe(0)
    expect(await bookedKobo(harness.app, credentials.partnerId, 'float')).toBe(17_000)
    const waiting = await harness.app.db.pool.query(
      `SELECT 1 FROM settlement_queue WHERE partner_id = $1 AND settlement_id IS NULL`,
      [credentials.partnerId],
    )
    expect(waiting.rowCount).toBe(0)
    expect(await settlementsOf(client)).toEqual([])
  })
})
