// The wait before a delivery's next attempt: the schedule, slowed (never hurried) by a receiver's
// Retry-After, and never beyond the schedule's longest delay. Table-driven over the pure rule.
import { describe, expect, it } from 'vitest'
import { parseRetryAfter, RETRY_DELAYS_MS, retryDelayMs } from '../../src/events/delivery.ts'

const noJitter = () => 0.5 // the middle of ±10 %: exactly the schedule's delay
const S = 1_000
const DAY_MS = 86_400 * S

describe('retryDelayMs', () => {
  it.each([
    // attempt, Retry-After (ms), expected wait (ms)
    [1, undefined, 5 * S, 'no Retry-After: the schedule'],
    [1, 7 * S, 7 * S, 'asks longer than the schedule: as asked'],
    [2, 7 * S, 300 * S, 'asks shorter than the schedule: the schedule (the 63 s case)'],
    [9, 7 * S, DAY_MS, 'the last retry keeps its 24 h'],
    [1, 2 * DAY_MS, DAY_MS, "asks beyond the schedule's longest delay: that delay"],
    [3, 3_600 * S, 3_600 * S, 'an hour where the schedule says 30 min'],
  ] as [number, number | undefined, number, string][])(
    'attempt %i, Retry-After %s ms → %i ms (%s)',
    (attempt, retryAfterMs, expectedMs) => {
      expect(retryDelayMs(RETRY_DELAYS_MS, attempt, retryAfterMs, noJitter)).toBe(expectedMs)
    },
  )

  it('keeps the jitter of the schedule when the receiver asks for less', () => {
    expect(retryDelayMs(RETRY_DELAYS_MS, 2, 1 * S, () => 0)).toBe(270 * S)
    expect(retryDelayMs(RETRY_DELAYS_MS, 2, 1 * S, () => 1)).toBe(330 * S)
  })

  it('ten attempts against a receiver always asking for 7 s take the whole schedule (about three days)', () => {
    const totalMs = RETRY_DELAYS_MS.reduce(
      (sum, _delay, index) => sum + retryDelayMs(RETRY_DELAYS_MS, index + 1, 7 * S, noJitter),
      0,
    )
    // Only the first wait (5 s in the schedule) is longer: 7 s, as asked.
    expect(totalMs).toBe(RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0) + 2 * S)
    expect(totalMs).toBeGreaterThan(2.5 * DAY_MS)
  })
})

describe('parseRetryAfter', () => {
  const nowMs = Date.parse('2026-01-01T00:00:00Z')
  it.each([
    ['7', 7 * S],
    [' 7 ', 7 * S],
    ['0', S],
    ['Thu, 01 Jan 2026 00:00:30 GMT', 30 * S],
    ['Wed, 31 Dec 2025 23:00:00 GMT', S],
    ['999999999', DAY_MS],
    ['soon', undefined],
    ['', undefined],
  ])('%j → %s', (header, expected) => {
    expect(parseRetryAfter(header, nowMs)).toBe(expected)
  })
})
