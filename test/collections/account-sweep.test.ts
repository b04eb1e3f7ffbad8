// The sweep of every account for credits whose notice never came (issue 31: money at the bank Rail
// never saw). The sandbox bank's 9404 amounts are received but never announced (docs/sandbox.md);
// with no partner action, one pass of the sweep — a batch of accounts a run, the place kept between
// runs — finds them, into a virtual account and into a wallet's account, and applies each once
// through the intake a notice goes through. A second pass and the notice arriving late add nothing.
import { randomUUID } from 'node:crypto'
import type { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ACCOUNT_SWEEP_TASK } from '../../src/collections/credits/service.ts'
import { addJob } from '../../src/platform/jobs.ts'
import { createMetricsRegistry } from '../../src/platform/metrics.ts'
import { ProviderRegistry } from '../../src/banking/providers/registry.ts'
import { getProvider } from '../../src/banking/providers/service.ts'
import { NOTIFY_TASK } from '../../src/sandbox/service.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'
import { BANK_SECRET, callbacksFor, payIn, type EventBody } from './support.ts'

let app: Rail
let hook: Receiver
let metrics: Registry

beforeAll(async () => {
  metrics = createMetricsRegistry()
  app = await startRail({
    sandboxBankSecret: BANK_SECRET,
    workers: {
      events: { retryDelaysMs: [200] },
      // One account a run: a pass over the accounts takes several runs, each carrying on from the last.
      // No grace: what the bank has is taken at once (the notices of these credits never come).
      creditSweep: { accountsPerRun: 1, noticeGraceMs: 0 },
      observe: { registry: metrics },
    },
    receiver: true,
  })
  hook = app.receiver
})
// Closing verifies the ledger before the database is dropped.
afterAll(() => app?.close())

interface Place {
  after_account_number: string | null
  since: Date | null
}

async function place(): Promise<Place> {
  return (await app.db.pool.query<Place>(`SELECT after_account_number, since FROM inbound_credit_sweep`)).rows[0]!
}

/** Runs the sweep task through the workers, as the crontab does, until one whole pass over every account has ended; how many runs it took. */
async function sweepOnePass(): Promise<number> {
  const before = await place()
  for (let runs = 1; runs <= 20; runs++) {
    const jobKey = `test-sweep-${randomUUID()}`
    await addJob(app.db.pool, ACCOUNT_SWEEP_TASK, {}, { jobKey })
    await waitFor(
      async () =>
        (await app.db.pool.query(`SELECT 1 FROM graphile_worker.jobs WHERE key = $1`, [jobKey])).rowCount === 0,
      15_000,
      'the sweep run',
    )
    const now = await place()
    if (now.after_account_number === null && now.since !== null && now.since.getTime() !== before.since?.getTime())
      return runs
  }
  throw new Error('the sweep did not end a pass in 20 runs')
}

async function foundBySweep(): Promise<number> {
  const metric = await metrics.getSingleMetric('rail_inbound_credits_found_by_sweep_total')!.get()
  return metric.values.reduce((sum, value) => sum + value.value, 0)
}

async function storedCredits(sessionIds: string[]) {
  const found = await app.db.pool.query<{ session_id: string; status: string; found_by: string }>(
    `SELECT session_id, status, found_by FROM inbound_credits WHERE session_id = ANY ($1::text[]) ORDER BY amount_kobo`,
    [sessionIds],
  )
  return found.rows
}

async function eventsOf(type: string, objectId: string): Promise<number> {
  return Number(
    (
      await app.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE type = $1 AND object_id = $2`, [
        type,
        objectId,
      ])
    ).rows[0]!.n,
  )
}

describe('the sweep of every account for credits whose notice never came', () => {
  it(
    'applies a credit into a virtual account and one into a wallet within one pass, with no partner action, once: a second pass and the late notice add nothing',
    { timeout: 120_000 },
    async () => {
      const { client, credentials } = await app.newPartner({ callbackUrl: hook.url })
      const account = (
        await client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
          reference: randomUUID(),
        })
      ).body
      const wallet = (
        await client.post<{ walletId: string; accountNumber: string }>('/wallet', {
          customerReference: randomUUID(),
          name: 'Tolu Bakare',
        })
      ).body
      expect(wallet.accountNumber).toMatch(/^[0-9]{10}$/)

      // The bank takes both and never announces them (the magic amount 9404).
      const intoAccount = await payIn(client, account.virtualAccount, 29_404)
      const intoWallet = await payIn(client, wallet.accountNumber, 39_404)
      expect([intoAccount.notified, intoWallet.notified]).toEqual([false, false])
      const sessions = [intoAccount.sessionId, intoWallet.sessionId]
      expect(await storedCredits(sessions)).toEqual([])

      const runs = await sweepOnePass()
      // Two accounts, one a run: the pass carried on from run to run.
      expect(runs).toBeGreaterThanOrEqual(2)
      await waitFor(
        async () => (await storedCredits(sessions)).filter((credit) => credit.status === 'applied').length === 2,
        15_000,
        'both credits applied',
      )
      expect(await storedCredits(sessions)).toEqual([
        { session_id: intoAccount.sessionId, status: 'applied', found_by: 'sweep' },
        { session_id: intoWallet.sessionId, status: 'applied', found_by: 'sweep' },
      ])
      expect(await foundBySweep()).toBe(2)

      // The partner hears of each as of any credit, told how Rail learned of it.
      const secret = credentials.callbackSigningSecret
      const confirmed = (body: EventBody) =>
        body.event === 'credit.confirmed' && body.data.sessionId === intoAccount.sessionId
      const funded = (body: EventBody) => body.event === 'wallet.funded' && body.data.sessionId === intoWallet.sessionId
      await waitFor(
        () => callbacksFor(hook, secret, confirmed).length > 0 && callbacksFor(hook, secret, funded).length > 0,
        15_000,
        'callbacks',
      )
      expect(callbacksFor(hook, secret, confirmed)[0]!.data).toMatchObject({
        amountKobo: 29_404,
        trackingId: account.trackingId,
        foundBy: 'sweep',
      })
      expect(callbacksFor(hook, secret, funded)[0]!.data).toMatchObject({
        amountKobo: 39_404,
        walletId: wallet.walletId,
        foundBy: 'sweep',
      })
      const balance = await client.get<{ bookedBalanceKobo: number }>(`/wallet/customer?customerId=${wallet.walletId}`)
      expect(balance.body.bookedBalanceKobo).toBe(39_404)

      // A second pass finds nothing new.
      await sweepOnePass()
      expect(await foundBySweep()).toBe(2)

      // The notices arrive after all (the bank sends them now): each is a duplicate of what the sweep recorded.
      for (const sessionId of sessions) await addJob(app.db.pool, NOTIFY_TASK, { sessionId })
      await waitFor(
        async () =>
          (
            await app.db.pool.query(
              `SELECT 1 FROM sandbox_bank.transfers WHERE session_id = ANY ($1::text[]) AND notified_at IS NOT NULL`,
              [sessions],
            )
          ).rowCount === 2,
        15_000,
        'the late notices delivered',
      )
      expect(await storedCredits(sessions)).toHaveLength(2)
      expect(await eventsOf('wallet.funded', wallet.walletId)).toBe(1)
      const accountEvents = await app.db.pool.query(
        `SELECT 1 FROM events WHERE type = 'credit.confirmed' AND (body::jsonb)->'data'->>'sessionId' = $1`,
        [intoAccount.sessionId],
      )
      expect(accountEvents.rowCount).toBe(1)
      expect(
        (await client.get<{ bookedBalanceKobo: number }>(`/wallet/customer?customerId=${wallet.walletId}`)).body
          .bookedBalanceKobo,
      ).toBe(39_404)
    },
  )

  it('a credit its notice brought stays found by notice: the sweep finds nothing more', async () => {
    const { client } = await app.newPartner({ callbackUrl: hook.url })
    const account = (
      await client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', { reference: randomUUID() })
    ).body
    const announced = await payIn(client, account.virtualAccount, 12_000)
    expect(announced.notified).toBe(true)
    await waitFor(async () => (await storedCredits([announced.sessionId])).length === 1, 45_000, 'the notice recorded')
    const before = await foundBySweep()
    await sweepOnePass()
    expect(await foundBySweep()).toBe(before)
    expect((await storedCredits([announced.sessionId]))[0]!.found_by).toBe('notice')
  })

  it("asks the bank for an account's credits since a time: the listing's since leaves out older ones", async () => {
    const { client } = await app.newPartner({ callbackUrl: hook.url })
    const account = (
      await client.post<{ virtualAccount: string }>('/api/v1/rail/virtual-account', { reference: randomUUID() })
    ).body
    const older = await payIn(client, account.virtualAccount, 11_404)
    const between = new Date()
    const newer = await payIn(client, account.virtualAccount, 12_404)
    const adapter = await new ProviderRegistry(app.db.pool, {
      sandboxBankUrl: () => app.baseUrl,
      sandboxBankSecret: BANK_SECRET,
    }).adapterFor(await getProvider(app.db.pool, 'sandbox'))
    const sessionsOf = async (since?: Date) => {
      const listed = await adapter.listCredits(account.virtualAccount, since)
      expect(listed.outcome).toBe('successful')
      return listed.outcome === 'successful' ? listed.value.map((credit) => credit.sessionId) : []
    }
    expect(await sessionsOf()).toEqual([older.sessionId, newer.sessionId])
    expect(await sessionsOf(between)).toEqual([newer.sessionId])
    expect(await sessionsOf(new Date(Date.now() + 60_000))).toEqual([])
  })
})
