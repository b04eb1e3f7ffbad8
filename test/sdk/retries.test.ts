// Retries: a call whose answer was lost is sent again as the same request — the same reference
// or Idempotency-Key, signed anew — and Rail answers the first result: nothing happens twice.
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { RailConnectionError, RailRateLimitError, type Rail } from '../../packages/sdk/src/index.ts'
import { waitFor } from '../support/wait.ts'
import { startLossyProxy, startSdkHarness, type LossyProxy, type SdkHarness } from './support.ts'

let harness: SdkHarness
let proxy: LossyProxy

beforeAll(async () => {
  harness = await startSdkHarness()
  proxy = await startLossyProxy(harness.app.baseUrl)
})

afterAll(async () => {
  await proxy?.close()
  await harness?.close()
})

const accountNumber = nuban('058', '123456789')
const payout = {
  beneficiaryAccountNumber: accountNumber,
  beneficiaryBankCode: '058',
  beneficiaryAccountName: syntheticAccountName('058', accountNumber),
  amountKobo: 700_000,
  currency: 'NGN' as const,
}

async function countRows(sql: string, values: unknown[]): Promise<number> {
  const { rows } = await harness.app.db.pool.query<{ count: string }>(sql, values)
  return Number(rows[0]!.count)
}

describe('a lost answer', () => {
  it('createOutboundTransfer: the retry carries the generated reference again; one transfer, the float held once', async () => {
    const { credentials, rail } = await harness.newPartner({ baseUrl: proxy.baseUrl })
    await rail.fundSandboxFloat({ body: { amountKobo: 1_000_000 } })

    proxy.loseAnswers = 1
    const response = await rail.withResponse.createOutboundTransfer({ body: payout })
    expect(proxy.lost).toBe(1)
    expect(response.attempts).toBe(2)
    expect(response.replayed).toBe(true)
    expect(response.status).toBe(202)
    expect(response.reference).toMatch(/^sdk_/)
    expect(response.data.clientReference).toBe(response.reference)

    expect(
      await countRows('SELECT count(*) FROM outbound_transfers WHERE partner_id = $1', [credentials.partnerId]),
    ).toBe(1)
    expect((await rail.getFloat()).availableBalanceKobo).toBe(300_000)
  })

  it('simulateInboundCredit (no reference): the retry carries the same Idempotency-Key, signed anew with a later timestamp; it pays in once', async () => {
    // A first retry waits at least a second (1.4 s ± 25 %), so that its timestamp is another second's.
    const { rail } = await harness.newPartner({ baseUrl: proxy.baseUrl, retryBaseDelayMs: 1_400 })
    const intent = await rail.createPaymentIntent({ body: { amountKobo: 400_000, currency: 'NGN' } })

    proxy.loseAnswers = 1
    const lostBefore = proxy.lost
    const sentBefore = proxy.requests.length
    const response = await rail.withResponse.simulateInboundCredit({
      body: { virtualAccount: intent.virtualAccount, amountKobo: 400_000 },
    })
    expect(proxy.lost).toBe(lostBefore + 1)
    expect(response.attempts).toBeGreaterThanOrEqual(2)
    expect(response.replayed).toBe(true)
    const attempts = proxy.requests
      .slice(sentBefore)
      .filter((request) => request.requestLine.startsWith('POST /api/v1/rail/sandbox/simulate-inbound-credit '))
    expect(attempts).toHaveLength(response.attempts)
    expect(response.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)
    expect(new Set(attempts.map((attempt) => attempt.headers['idempotency-key']))).toEqual(
      new Set([response.idempotencyKey]),
    )
    const timestampsS = attempts.map((attempt) => Number(attempt.headers['x-rail-timestamp']))
    expect(timestampsS[1]).toBeGreaterThan(timestampsS[0]!)
    expect(attempts[1]!.headers['x-rail-signature']).not.toBe(attempts[0]!.headers['x-rail-signature'])

    await waitFor(
      async () => (await rail.getPaymentIntent({ path: { id: intent.id } })).status === 'paid',
      45_000,
      'intent paid',
    )
    expect(
      await countRows(
        `SELECT count(*) FROM sandbox_bank.transfers WHERE kind = 'inbound' AND credit_account_number = $1`,
        [intent.virtualAccount],
      ),
    ).toBe(1)
  })

  it('createEscrow (X-API-Key): the retry carries the same reference; one escrow', async () => {
    const { credentials, rail } = await harness.newPartner({ baseUrl: proxy.baseUrl })
    proxy.loseAnswers = 1
    const response = await rail.withResponse.createEscrow({
      body: {
        type: 'goods',
        amount: 50_000,
        currency: 'NGN',
        payerEmail: 'payer@example.com',
        recipientEmail: 'recipient@example.com',
        description: 'A bicycle',
      },
    })
    expect(response.attempts).toBe(2)
    expect(response.replayed).toBe(true)
    expect(response.reference).toMatch(/^sdk_/)
    expect(await countRows('SELECT count(*) FROM escrows WHERE partner_id = $1', [credentials.partnerId])).toBe(1)
  })

  it('no answer at all: RailConnectionError after the retries, carrying the reference; the same reference later makes the object once', async () => {
    const closedPort = await unusedPort()
    const { rail: offline } = await harness.newPartner({ baseUrl: `http://127.0.0.1:${closedPort}`, maxRetries: 2 })
    const error = await offline.createPaymentIntent({ body: { amountKobo: 250_000, currency: 'NGN' } }).then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(RailConnectionError)
    const { reference, operationId } = error as RailConnectionError
    expect(operationId).toBe('createPaymentIntent')
    expect(reference).toMatch(/^sdk_/)

    const { rail } = await harness.newPartner()
    const created = await rail.withResponse.createPaymentIntent({
      body: { amountKobo: 250_000, currency: 'NGN', reference },
    })
    const again = await rail.withResponse.createPaymentIntent({
      body: { amountKobo: 250_000, currency: 'NGN', reference },
    })
    expect(created.replayed).toBe(false)
    expect(again.replayed).toBe(true)
    expect(again.data.id).toBe(created.data.id)
  })

  it('the caller abort ends the call without a retry', async () => {
    const { rail } = await harness.newPartner()
    const controller = new AbortController()
    controller.abort(new Error('changed my mind'))
    await expect(rail.getSettings(undefined, { signal: controller.signal })).rejects.toThrow('changed my mind')
  })
})

describe('429 with Retry-After', () => {
  let limited: SdkHarness

  beforeAll(async () => {
    limited = await startSdkHarness({ app: { edge: { rateLimits: { partnerRps: 1, unauthenticatedRps: 0 } } } })
  })

  afterAll(async () => {
    await limited?.close()
  })

  it('is waited out and the call sent again; with retries off it is a RailRateLimitError carrying retryAfterS', async () => {
    const { rail } = await limited.newPartner({ maxRetries: 4 })
    const { rail: impatient } = await limited.newPartner({ maxRetries: 0 })
    // One request a second per partner: of three calls sent at once, some are refused and, waited
    // out, answered (all three would pass at once only if they arrived over three seconds).
    const answers = await Promise.all(Array.from({ length: 3 }, () => rail.withResponse.getSettings()))
    expect(Math.min(...answers.map((answer) => answer.attempts))).toBe(1)
    expect(Math.max(...answers.map((answer) => answer.attempts))).toBeGreaterThanOrEqual(2)

    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => impatient.getSettings()))
    const refused = outcomes.find((outcome) => outcome.status === 'rejected')
    expect(refused).toBeDefined()
    const error = (refused as PromiseRejectedResult).reason as RailRateLimitError
    expect(error).toBeInstanceOf(RailRateLimitError)
    expect(error.status).toBe(429)
    expect(error.error).toBe('rate_limited')
    expect(error.retryAfterS).toBeGreaterThanOrEqual(1)
  })
})

/** A port nothing listens on: bound, read, and released. */
async function unusedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

export type { Rail }
