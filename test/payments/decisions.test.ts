// The pipeline's pure decisions (src/money-out/pipeline/decisions.ts), without a database: what "no record"
// (25) of a payment the bank never acknowledged means, and when an unknown one is asked again.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  nextUnknownPoll,
  onNoRecord,
  sendsExpired,
  unknownPollHorizonMs,
  type NoRecordFacts,
} from '../../src/money-out/pipeline/decisions.ts'
import { UNKNOWN_POLLS_DEFAULT } from '../../src/money-out/pipeline/settings.ts'

const WINDOW_MS = 300_000
const SKEW_MS = 60_000
/** A requery on the pipeline's schedule, before the deadline, sends left, asked just inside the window. */
const BASE: NoRecordFacts = {
  sinceLastSendMs: 10_000,
  requeryFirstDelayMs: 5_000,
  sendAttempts: 1,
  sendAttemptsMax: 3,
  beforeDeadline: true,
  mayResend: true,
  deduplicatesReferences: true,
  askedAfterSignedMs: 10_000,
  requestValidityWindowMs: WINDOW_MS,
  clockSkewMs: SKEW_MS,
}
const EXPIRED = WINDOW_MS + SKEW_MS + 1

const CASES: readonly (readonly [
  why: string,
  facts: Partial<NoRecordFacts>,
  expected: ReturnType<typeof onNoRecord>,
])[] = [
  ['sends left, on the schedule, before the deadline: the same reference again', {}, 'resend'],
  ['right after a send: that send may be on its way', { sinceLastSendMs: 4_999 }, 'wait'],
  ['right after a send, even past the window', { sinceLastSendMs: 4_999, askedAfterSignedMs: EXPIRED }, 'wait'],
  ['sends spent, inside the window: a stalled send may still be acted on', { sendAttempts: 3 }, 'wait'],
  [
    'sends spent, at the window plus the skew margin exactly: still inside',
    { sendAttempts: 3, askedAfterSignedMs: WINDOW_MS + SKEW_MS },
    'wait',
  ],
  [
    'sends spent, asked after the window and the margin: never received',
    { sendAttempts: 3, askedAfterSignedMs: EXPIRED },
    'fail',
  ],
  [
    'sends spent, the provider promises no window: never failed on 25',
    { sendAttempts: 3, askedAfterSignedMs: 30 * 86_400_000, requestValidityWindowMs: null },
    'wait',
  ],
  [
    'sends spent, the time its send was signed with is not known',
    { sendAttempts: 3, askedAfterSignedMs: null },
    'wait',
  ],
  ['a look (a GET, an operator) never sends: inside the window it waits', { mayResend: false }, 'wait'],
  ['a look after the window: never received', { mayResend: false, askedAfterSignedMs: EXPIRED }, 'fail'],
  ['past the deadline nothing is sent: inside the window it waits', { beforeDeadline: false }, 'wait'],
  [
    'past the deadline, after the window: never received',
    { beforeDeadline: false, askedAfterSignedMs: EXPIRED },
    'fail',
  ],
  [
    'a provider that does not de-duplicate references is never sent the same one again',
    { deduplicatesReferences: false },
    'wait',
  ],
  [
    'sends left but the window has passed: sent again rather than failed (before the deadline)',
    { askedAfterSignedMs: EXPIRED },
    'resend',
  ],
]

describe('onNoRecord', () => {
  it.each(CASES)('%s', (_why, facts, expected) => {
    expect(onNoRecord({ ...BASE, ...facts })).toBe(expected)
  })

  it('never fails while any send may still be acted on, whatever the other facts', () => {
    const facts = fc.record({
      sinceLastSendMs: fc.nat(),
      requeryFirstDelayMs: fc.nat({ max: 60_000 }),
      sendAttempts: fc.nat({ max: 10 }),
      sendAttemptsMax: fc.integer({ min: 1, max: 10 }),
      beforeDeadline: fc.boolean(),
      mayResend: fc.boolean(),
      deduplicatesReferences: fc.boolean(),
      askedAfterSignedMs: fc.option(fc.integer({ min: -1_000, max: 10_000_000 })),
      requestValidityWindowMs: fc.option(fc.nat({ max: 1_000_000 })),
      clockSkewMs: fc.nat({ max: 120_000 }),
    })
    fc.assert(
      fc.property(facts, (drawn) => {
        const decision = onNoRecord(drawn)
        if (decision === 'fail') expect(sendsExpired(drawn)).toBe(true)
        if (decision === 'resend')
          expect(
            drawn.mayResend &&
              drawn.beforeDeadline &&
              drawn.deduplicatesReferences &&
              drawn.sendAttempts < drawn.sendAttemptsMax,
          ).toBe(true)
        if (drawn.requestValidityWindowMs === null || drawn.askedAfterSignedMs === null)
          expect(decision).not.toBe('fail')
      }),
    )
  })
})

describe('nextUnknownPoll', () => {
  const deadline = new Date('2026-11-01T00:00:00Z')
  const at = (pastDeadlineMs: number) => new Date(deadline.getTime() + pastDeadlineMs)
  const HOUR = 3_600_000
  const DAY = 24 * HOUR

  it('asks hourly for a week after the deadline, then daily to thirty days, then no more', () => {
    expect(nextUnknownPoll(UNKNOWN_POLLS_DEFAULT, deadline, at(0))).toEqual(at(HOUR))
    expect(nextUnknownPoll(UNKNOWN_POLLS_DEFAULT, deadline, at(7 * DAY - 1))).toEqual(at(8 * DAY - 1 - DAY + HOUR))
    expect(nextUnknownPoll(UNKNOWN_POLLS_DEFAULT, deadline, at(7 * DAY))).toEqual(at(8 * DAY))
    expect(nextUnknownPoll(UNKNOWN_POLLS_DEFAULT, deadline, at(30 * DAY - 1))).toEqual(at(31 * DAY - 1))
    expect(nextUnknownPoll(UNKNOWN_POLLS_DEFAULT, deadline, at(30 * DAY))).toBeNull()
    expect(unknownPollHorizonMs(UNKNOWN_POLLS_DEFAULT)).toBe(30 * DAY)
  })

  it('counts from the deadline even when asked before it (an operator made it unknown early)', () => {
    expect(nextUnknownPoll(UNKNOWN_POLLS_DEFAULT, deadline, at(-HOUR))).toEqual(at(0))
  })
})
