// A settlement cycle pays at most the configured maximum of one instruction (RAIL_MAX_AMOUNT_KOBO,
// here 50,000 kobo), on the API's sandbox cycle and on the worker's: the credits that would take
// it past the maximum wait, in order, for the next cycle.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { BANK_SECRET, payIn, waitForCallback } from '../collections/support.ts'
import { advanceSandboxClock } from '../support/clock.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'
import { lagosCutoffIn } from './support.ts'
import type { Schemas } from '../../packages/sdk/src/index.ts'

const MAX_AMOUNT_KOBO = 50_000
const PAYMENTS = { sandbox: { firstDelayMs: 200, deadlineMs: 5_000 } }
const SETTLEMENT_ACCOUNT = { accountNumber: nuban('057', '000246810'), bankCode: '057' }
const BANK_ACCOUNT = {
  ...SETTLEMENT_ACCOUNT,
  accountName: syntheticAccountName(SETTLEMENT_ACCOUNT.bankCode, SETTLEMENT_ACCOUNT.accountNumber),
}

let app: Rail
let hook: Receiver

// The workers take the app's payment settings and maximum amount.
beforeAll(async () => {
  app = await startRail({
    sandboxBankSecret: BANK_SECRET,
    payments: PAYMENTS,
    maxAmountKobo: MAX_AMOUNT_KOBO,
    workers: { events: { retryDelaysMs: [200] } },
    receiver: true,
  })
  hook = app.receiver
})
// Closing verifies the ledger before the database is dropped.
afterAll(() => app?.close())

type SettlementJson = Schemas['Settlement']

async function bankPartner() {
  const { client, credentials } = await app.newPartner({ callbackUrl: hook.url })
  const put = await client.request('PUT', '/api/v1/rail/settlement', {
    mode: 'bank',
    bankAccount: BANK_ACCOUNT,
    cutoffTime: lagosCutoffIn(2),
  })
  expect(put.status, JSON.stringify(put.body)).toBe(200)
  return { client, secret: credentials.callbackSigningSecret }
}

/** Pays the credits in, one after another (so they are collected in this order), and waits until each is confirmed. */
async function collect(client: RailClient, secret: string, amountsKobo: number[]): Promise<void> {
  const account = (
    await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
      reference: randomUUID(),
    })
  ).body
  for (const [index, amountKobo] of amountsKobo.entries()) {
    await payIn(client, account.virtualAccount, amountKobo)
    await waitForCallback(
      hook,
      secret,
      (body) => body.event === 'credit.confirmed' && body.data.trackingId === account.trackingId,
      index + 1,
    )
  }
}

async function settlementsOf(client: RailClient): Promise<SettlementJson[]> {
  return (await client.get<{ data: SettlementJson[] }>('/api/v1/rail/settlements')).body.data
}

/** The sandbox cycle now, signed `secondsAgo` back so that each call is a request (and a cycle) of its own. */
async function runNow(client: RailClient, secondsAgo: number): Promise<SettlementJson | null> {
  const answer = await client.post<{ settlement: SettlementJson | null }>(
    '/api/v1/rail/sandbox/run-settlement',
    undefined,
    { timestampS: Math.floor(Date.now() / 1000) - secondsAgo },
  )
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  return answer.body.settlement
}

describe('a settlement cycle under a configured maximum of 50,000 kobo', () => {
  it('the API cycle pays at most the maximum; the rest waits for the next cycle', async () => {
    const { client, secret } = await bankPartner()
    await collect(client, secret, [30_000, 20_000, 40_000, 45_000])
    expect(await runNow(client, 3)).toMatchObject({ amountKobo: 50_000, creditCount: 2, creditsTotalKobo: 50_000 })
    expect(await runNow(client, 2)).toMatchObject({ amountKobo: 40_000, creditCount: 1, creditsTotalKobo: 40_000 })
    expect(await runNow(client, 1)).toMatchObject({ amountKobo: 45_000, creditCount: 1, creditsTotalKobo: 45_000 })
    expect(await runNow(client, 0)).toBeNull()
    // A list shows a row once the transactions begun before it have ended (the horizon, docs/scaling.md).
    await waitFor(
      async () => (await client.get<{ data: unknown[] }>('/api/v1/rail/outbound?limit=100')).body.data.length === 3,
      20_000,
      'the three payouts listed',
    )
    const payouts = (await client.get<{ data: { amountKobo: number }[] }>('/api/v1/rail/outbound?origin=settlement'))
      .body.data
    expect(payouts.map((payout) => payout.amountKobo).sort()).toEqual([40_000, 45_000, 50_000])
  })

  it("the worker's cycle pays at most the maximum too", async () => {
    const { client, secret } = await bankPartner()
    await collect(client, secret, [35_000, 30_000])
    // The partner's sandbox clock moves past its cut-off; the advance queues the worker's task at once.
    await advanceSandboxClock(client, 3 * 3_600)
    await waitFor(async () => (await settlementsOf(client)).length === 1, 15_000, 'settlement by the worker')
    expect((await settlementsOf(client))[0]).toMatchObject({
      amountKobo: 35_000,
      creditCount: 1,
      creditsTotalKobo: 35_000,
    })
  })
})
