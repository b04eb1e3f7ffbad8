// rail_request_stage_seconds from real requests, one at a time: a wallet transfer, an outbound
// submit, a payment intent, a request under an Idempotency-Key and a health check. Each request
// adds one observation to each stage its route has (and only those), and its stages add up to no
// more than its duration in rail_http_request_duration_seconds. Structure only, never timings.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RailClient, RailResponse } from '../../src/client/index.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { createMetricsRegistry } from '../../src/platform/metrics.ts'
import { STAGES } from '../../src/platform/observability/stages.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { fundFloat } from '../support/float.ts'
import { startRail, type Rail } from '../support/rail.ts'
import { waitFor } from '../support/wait.ts'
import { scrape, valueOf, type Sample } from './support.ts'

let rail: Rail
let client: RailClient

beforeAll(async () => {
  rail = await startRail({ observe: { metrics: createMetricsRegistry() } })
  ;({ client } = await rail.newPartner())
})
afterAll(() => rail?.close())

/** One request's share of the metrics: the duration it added, and each stage it added to with the count and time added. */
interface RequestShare {
  durationS: number
  stages: Map<string, { count: number; sumS: number }>
}

interface RouteTotals {
  requests: number
  durationS: number
  stages: Map<string, { count: number; sumS: number }>
}

function totalsOf(samples: Sample[], route: string): RouteTotals {
  const stages = new Map<string, { count: number; sumS: number }>()
  for (const stage of STAGES) {
    stages.set(stage, {
      count: valueOf(samples, 'rail_request_stage_seconds_count', { route, stage }),
      sumS: valueOf(samples, 'rail_request_stage_seconds_sum', { route, stage }),
    })
  }
  return {
    requests: valueOf(samples, 'rail_http_request_duration_seconds_count', { route }),
    durationS: valueOf(samples, 'rail_http_request_duration_seconds_sum', { route }),
    stages,
  }
}

/** Sends one request to `route` and answers its share, once /metrics has counted it (its response hook may end after the client has its answer). */
async function observed<T>(
  route: string,
  send: () => Promise<RailResponse<T>>,
): Promise<{ response: RailResponse<T>; share: RequestShare }> {
  const before = totalsOf(await scrape(rail.baseUrl), route)
  const response = await send()
  let after = before
  await waitFor(
    async () => {
      after = totalsOf(await scrape(rail.baseUrl), route)
      return after.requests === before.requests + 1
    },
    10_000,
    `${route} counted`,
  )
  const stages = new Map<string, { count: number; sumS: number }>()
  for (const stage of STAGES) {
    const [was, is] = [before.stages.get(stage)!, after.stages.get(stage)!]
    if (is.count > was.count) stages.set(stage, { count: is.count - was.count, sumS: is.sumS - was.sumS })
  }
  return { response, share: { durationS: after.durationS - before.durationS, stages } }
}

/** What every request's share must be: one observation per stage it has, and no more time than its duration. */
function expectStages(share: RequestShare, expected: { has: string[]; lacks: string[] }): void {
  for (const [stage, added] of share.stages) expect([stage, added.count]).toEqual([stage, 1])
  const stages = [...share.stages.keys()]
  expect(stages).toEqual(expect.arrayContaining(['reply', 'handler_other', ...expected.has]))
  for (const stage of expected.lacks) expect(stages).not.toContain(stage)
  const stagesS = [...share.stages.values()].reduce((sum, added) => sum + added.sumS, 0)
  // Only the rounding of adding floating-point seconds is allowed beyond the duration.
  expect(stagesS).toBeLessThanOrEqual(share.durationS + 1e-9)
}

async function wallet(): Promise<{ walletId: string }> {
  const created = await client.post<{ walletId: string }>('/wallet', {
    customerReference: randomUUID(),
    name: 'Staged',
  })
  expect(created.status).toBe(201)
  return created.body
}

describe('rail_request_stage_seconds, request by request', () => {
  it('a wallet transfer: admitted, authenticated, claimed in a coalesced batch, sent to the bank', async () => {
    const [from, to] = [await wallet(), await wallet()]
    const credit = { walletId: from.walletId, reference: randomUUID(), amountKobo: 5_000, currency: 'NGN' }
    expect((await client.post('/wallet/credit', credit)).status).toBe(200)
    const { response, share } = await observed('/transfer/wallet', () =>
      client.post<{ status: string }>('/transfer/wallet', {
        walletId: from.walletId,
        destinationWalletId: to.walletId,
        reference: randomUUID(),
        amountKobo: 2_000,
        currency: 'NGN',
      }),
    )
    expect([response.status, response.body.status]).toEqual([200, 'successful'])
    expectStages(share, {
      has: ['admission', 'authentication', 'coalescer_wait', 'transaction', 'bank_call'],
      lacks: ['idempotency', 'answer_write'],
    })
  })

  it('an outbound submit: recorded in a coalesced batch, sent to the bank later by a worker', async () => {
    expect((await fundFloat(client, 500_000)).status).toBe(200)
    const accountNumber = nuban('058', '123456789')
    const { response, share } = await observed('/api/v1/rail/outbound', () =>
      client.post('/api/v1/rail/outbound', {
        clientReference: randomUUID(),
        amountKobo: 100_000,
        beneficiaryAccountNumber: accountNumber,
        beneficiaryBankCode: '058',
        beneficiaryAccountName: syntheticAccountName('058', accountNumber),
        currency: 'NGN',
      }),
    )
    expect(response.status).toBe(202)
    expectStages(share, {
      has: ['admission', 'authentication', 'coalescer_wait', 'transaction'],
      lacks: ['bank_call', 'idempotency', 'answer_write'],
    })
  })

  it('a payment intent: its virtual account allocated at the bank during the request', async () => {
    const { response, share } = await observed('/api/v1/rail/payment/intent', () =>
      client.post('/api/v1/rail/payment/intent', { reference: randomUUID(), amountKobo: 150_000 }),
    )
    expect(response.status).toBe(200)
    expectStages(share, { has: ['admission', 'authentication', 'bank_call'], lacks: ['idempotency', 'answer_write'] })
  })

  it("a request under an Idempotency-Key: the key's claim and its answer's write", async () => {
    const account = await client.post<{ trackingId: string }>('/api/v1/rail/virtual-account', {
      reference: randomUUID(),
    })
    expect(account.status).toBe(200)
    const route = '/api/v1/rail/virtual-account/:trackingId/archive'
    const { response, share } = await observed(route, () =>
      client.post(`/api/v1/rail/virtual-account/${account.body.trackingId}/archive`, undefined, {
        headers: { 'Idempotency-Key': randomUUID() },
      }),
    )
    expect(response.status).toBe(200)
    expectStages(share, { has: ['admission', 'authentication', 'idempotency', 'answer_write'], lacks: ['bank_call'] })
  })

  it('a health check: never admitted nor authenticated, only its reply and its own time', async () => {
    const { response, share } = await observed('/healthz', async () => {
      const answer = await fetch(`${rail.baseUrl}/healthz`)
      return { status: answer.status, headers: answer.headers, body: await answer.text() }
    })
    expect(response.status).toBe(200)
    expectStages(share, { has: [], lacks: ['admission', 'authentication', 'pool_wait'] })
    expect([...share.stages.keys()].sort()).toEqual(['handler_other', 'reply'])
  })
})
