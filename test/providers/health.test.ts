// A provider's health as routing judges it (src/banking/providers/health.ts), without a database: the share
// of its recent calls that got no readable answer, judged only from 10 calls on, unhealthy at half;
// and the choice of a route's first healthy provider, or its first when none is.
import { describe, expect, it } from 'vitest'
import {
  chooseProvider,
  HEALTH_MIN_CALLS,
  HEALTH_UNANSWERED_MAX,
  HEALTH_WINDOW_S,
  judgeHealth,
  type ProviderHealthReading,
} from '../../src/banking/providers/health.ts'

describe('judgeHealth', () => {
  it('states the thresholds routing relies on: five minutes, 10 calls, half unanswered', () => {
    expect([HEALTH_WINDOW_S, HEALTH_MIN_CALLS, HEALTH_UNANSWERED_MAX]).toEqual([300, 10, 0.5])
  })

  // One line per case: calls, unanswered, healthy, why.
  const CASES: readonly (readonly [calls: number, unanswered: number, healthy: boolean, why: string])[] = [
    [0, 0, true, 'no calls: nothing is known against it'],
    [9, 9, true, 'nine calls, all unanswered: too few to judge'],
    [10, 4, true, 'ten calls, 40% unanswered: under half'],
    [10, 5, false, 'ten calls, exactly half unanswered: the boundary is unhealthy'],
    [10, 10, false, 'ten calls, none answered'],
    [11, 5, true, '5 of 11: just under half'],
    [11, 6, false, '6 of 11: just over half'],
    [1_000, 499, true, '49.9%'],
    [1_000, 500, false, '50.0%'],
    [1_000, 0, true, 'every call answered'],
  ]

  it.each(CASES)('%i calls, %i unanswered: healthy %s (%s)', (calls, unanswered, healthy) => {
    const reading = judgeHealth('sandbox-paystack', { calls, unanswered })
    expect(reading).toEqual({
      provider: 'sandbox-paystack',
      windowS: 300,
      calls,
      unanswered,
      unansweredRate: calls === 0 ? 0 : unanswered / calls,
      healthy,
    })
  })

  it('reads a provider with no calls in the window as healthy, its rate 0 (never NaN)', () => {
    expect(judgeHealth('sandbox-monnify', undefined)).toEqual({
      provider: 'sandbox-monnify',
      windowS: 300,
      calls: 0,
      unanswered: 0,
      unansweredRate: 0,
      healthy: true,
    })
    expect(judgeHealth('sandbox-monnify', { calls: 0, unanswered: 0 }).unansweredRate).toBe(0)
  })
})

describe('judgeHealth by operation', () => {
  it('is unhealthy when one operation fails, however well the others answer: its sends failing behind answered enquiries and requeries', () => {
    const byOperation = {
      name_enquiry: { calls: 200, unanswered: 0 },
      requery: { calls: 100, unanswered: 0 },
      payout: { calls: 20, unanswered: 10 },
    }
    const reading = judgeHealth('sandbox-paystack', { calls: 320, unanswered: 10, byOperation })
    expect(reading).toMatchObject({ healthy: false, failingOperation: 'payout', calls: 320, unanswered: 10 })
    expect(reading.unansweredRate).toBeCloseTo(10 / 320)
  })

  it('ignores an operation with too few calls to say anything, and is healthy when every operation is', () => {
    expect(
      judgeHealth('sandbox-paystack', {
        calls: 109,
        unanswered: 9,
        byOperation: { payout: { calls: 9, unanswered: 9 }, requery: { calls: 100, unanswered: 0 } },
      }).healthy,
    ).toBe(true)
    expect(
      judgeHealth('sandbox-paystack', {
        calls: 110,
        unanswered: 4,
        byOperation: { payout: { calls: 10, unanswered: 4 }, requery: { calls: 100, unanswered: 0 } },
      }),
    ).toMatchObject({ healthy: true })
    expect(
      judgeHealth('sandbox-paystack', {
        calls: 110,
        unanswered: 4,
        byOperation: { payout: { calls: 10, unanswered: 4 } },
      }).failingOperation,
    ).toBeUndefined()
  })
})

describe('chooseProvider', () => {
  const HEALTHY = { calls: 20, unanswered: 0 }
  const UNHEALTHY = { calls: 20, unanswered: 15 }

  function healthOf(
    counts: Record<string, { calls: number; unanswered: number }>,
  ): (provider: string) => ProviderHealthReading {
    return (provider) => judgeHealth(provider, counts[provider])
  }

  it('takes the first provider of the route while it is healthy, whatever the others are', () => {
    const route = ['sandbox-paystack', 'sandbox-monnify', 'sandbox']
    expect(chooseProvider(route, healthOf({ 'sandbox-paystack': HEALTHY, 'sandbox-monnify': HEALTHY }))).toBe(
      'sandbox-paystack',
    )
    expect(
      chooseProvider(
        route,
        healthOf({ 'sandbox-paystack': HEALTHY, 'sandbox-monnify': UNHEALTHY, sandbox: UNHEALTHY }),
      ),
    ).toBe('sandbox-paystack')
  })

  it("passes over unhealthy providers in the route's order", () => {
    const route = ['sandbox-paystack', 'sandbox-monnify', 'sandbox']
    expect(chooseProvider(route, healthOf({ 'sandbox-paystack': UNHEALTHY }))).toBe('sandbox-monnify')
    expect(chooseProvider(route, healthOf({ 'sandbox-paystack': UNHEALTHY, 'sandbox-monnify': UNHEALTHY }))).toBe(
      'sandbox',
    )
    // The order is the route's, not the providers' health: a healthier later provider is not preferred.
    expect(
      chooseProvider(
        ['sandbox-monnify', 'sandbox-paystack'],
        healthOf({ 'sandbox-monnify': { calls: 10, unanswered: 4 }, 'sandbox-paystack': HEALTHY }),
      ),
    ).toBe('sandbox-monnify')
  })

  it('takes a provider with too few calls to judge as healthy', () => {
    expect(
      chooseProvider(
        ['sandbox-paystack', 'sandbox-monnify'],
        healthOf({ 'sandbox-paystack': { calls: 9, unanswered: 9 } }),
      ),
    ).toBe('sandbox-paystack')
  })

  it('takes the first when none is healthy (a payout must go somewhere), and nothing from an empty route', () => {
    const route = ['sandbox-paystack', 'sandbox-monnify']
    expect(chooseProvider(route, healthOf({ 'sandbox-paystack': UNHEALTHY, 'sandbox-monnify': UNHEALTHY }))).toBe(
      'sandbox-paystack',
    )
    expect(chooseProvider([], healthOf({}))).toBeUndefined()
  })

  it('asks the health of each provider only until one is healthy', () => {
    const asked: string[] = []
    const reading = healthOf({ a: UNHEALTHY, b: HEALTHY, c: HEALTHY })
    chooseProvider(['a', 'b', 'c'], (provider) => {
      asked.push(provider)
      return reading(provider)
    })
    expect(asked).toEqual(['a', 'b'])
  })
})
