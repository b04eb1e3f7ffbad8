// The pipeline's step decisions (src/money-out/pipeline/decisions.ts: opening, decide), without a database:
// every instruction state × every way a step is started × every kind of answer the bank gives ×
// the time against the instruction's deadlines and its send's validity window, checked against
// the pipeline's invariants (docs/decisions/0008-payment-pipeline.md); the same for an instruction
// never sent (ready) and its name enquiry's answers; then a few cases by name.
// An exception never reaches decide: the shell gives the instruction back and decides nothing
// (test/payments/faults.test.ts drives that end to end).
import { describe, expect, it } from 'vitest'
import { NIP_CODES, nipOutcome } from '../../src/banking/nip/codes.ts'
import {
  decide,
  firstSend,
  neverSent,
  nextUnknownPoll,
  opening,
  type Answer,
  type Step,
  type StepMode,
  type StepRules,
} from '../../src/money-out/pipeline/decisions.ts'
import type { Instruction } from '../../src/money-out/pipeline/service.ts'
import { UNKNOWN_POLLS_DEFAULT } from '../../src/money-out/pipeline/settings.ts'
import { instructionStates, type InstructionState } from '../../src/money-out/pipeline/states.ts'
import type { ProviderResult } from '../../src/banking/providers/types.ts'

const NOW = new Date('2026-11-01T12:00:00Z')
const MINUTE_MS = 60_000
const HOUR_MS = 60 * MINUTE_MS
const DAY_MS = 24 * HOUR_MS
const FIRST_DELAY_MS = 5_000
const WINDOW_MS = 5 * MINUTE_MS
const SKEW_MS = MINUTE_MS
const SEND_ATTEMPTS_MAX = 3
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs)

function instruction(overrides: Partial<Instruction>): Instruction {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    partnerId: '00000000-0000-4000-8000-000000000002',
    ownerType: 'outbound_transfer',
    provider: 'sandbox',
    operation: 'payout',
    amountKobo: 150_000,
    narration: null,
    debitAccountNumber: null,
    creditAccountNumber: null,
    destinationBankCode: '058',
    destinationAccountNumber: '0123456789',
    nameCheck: true,
    expectedAccountName: 'Adaeze Okoro',
    verifiedAccountName: 'ADAEZE OKORO',
    state: 'sending',
    sendAttempts: 1,
    lastSentAt: at(-10 * MINUTE_MS),
    lastSignedAt: at(-10 * MINUTE_MS),
    requeryAttempts: 2,
    requeryFirstDelayMs: FIRST_DELAY_MS,
    deadlineAt: at(HOUR_MS),
    nextAttemptAt: NOW,
    leaseToken: 'held',
    providerReference: null,
    responseCode: null,
    responseMessage: null,
    failureCode: null,
    failureMessage: null,
    resolution: null,
    acceptedAt: null,
    createdAt: at(-20 * MINUTE_MS),
    terminalAt: null,
    ...overrides,
  }
}

function rules(mode: StepMode, overrides: Partial<StepRules['traits']> = {}): StepRules {
  return {
    mode,
    sendAttemptsMax: SEND_ATTEMPTS_MAX,
    unknownPolls: UNKNOWN_POLLS_DEFAULT,
    providerClockSkewMs: SKEW_MS,
    traits: { deduplicatesReferences: true, requestValidityWindowMs: WINDOW_MS, ...overrides },
  }
}

// ---- the dimensions -----------------------------------------------------------------------------

type Answered = ProviderResult<null>
const answered = (
  outcome: 'successful' | 'failed' | 'pending',
  responseCode: string,
  extra: { reversed?: true } = {},
): Answered =>
  outcome === 'successful'
    ? { outcome, responseCode, responseMessage: `said ${responseCode}`, providerReference: 'P-1', value: null }
    : { outcome, responseCode, responseMessage: `said ${responseCode}`, providerReference: 'P-1', ...extra }

/** Every code of the NIP table as the provider's own word for it, and as the other words too (the code decides, not the word), a code Rail does not know, a reversal, and no answer. */
const ANSWERS: readonly (readonly [label: string, result: Answered])[] = [
  ...NIP_CODES.flatMap(({ code, outcome }) => {
    const word = outcome === 'success' ? 'successful' : outcome === 'failed' ? 'failed' : 'pending'
    const others = (['successful', 'failed', 'pending'] as const).filter((other) => other !== word)
    return [
      [`${code} (${word})`, answered(word, code)] as const,
      ...others.map((other) => [`${code} called ${other}`, answered(other, code)] as const),
    ]
  }),
  ['XX, a code not in the table, called failed', answered('failed', 'XX')],
  ['reversed (paid, then taken back)', answered('failed', '00', { reversed: true })],
  ['no answer (a timeout, a 5xx, an unreadable body)', { outcome: 'unknown', error: 'timeout' }],
]

/** The instruction as the step finds it: states in flight, and unknown with and without the bank ever having said it had it. */
const FOUND: readonly (readonly [label: string, facts: Partial<Instruction>])[] = [
  ['sending', { state: 'sending' }],
  ['sent', { state: 'sent', acceptedAt: at(-9 * MINUTE_MS) }],
  ['unknown, never accepted', { state: 'unknown', acceptedAt: null }],
  ['unknown, accepted once', { state: 'unknown', acceptedAt: at(-9 * MINUTE_MS) }],
]

/** The deadline against now: the slow schedule of an unknown one is spent thirty days after it. */
const DEADLINES: readonly (readonly [label: string, deadlineAt: Date])[] = [
  ['before the deadline', at(HOUR_MS)],
  ['at the deadline', NOW],
  ['after the deadline', at(-HOUR_MS)],
  ['the slow schedule spent', at(-31 * DAY_MS)],
]

/** The latest send: when it was committed (and signed) against the requery, and its provider's window. */
const SENDS: readonly (readonly [label: string, facts: Partial<Instruction>, window: number | null])[] = [
  ['sent just now', { lastSentAt: at(-1_000), lastSignedAt: at(-1_000) }, WINDOW_MS],
  ['inside the window', { lastSentAt: at(-2 * MINUTE_MS), lastSignedAt: at(-2 * MINUTE_MS) }, WINDOW_MS],
  [
    'at the window and the margin exactly',
    { lastSentAt: at(-WINDOW_MS - SKEW_MS), lastSignedAt: at(-WINDOW_MS - SKEW_MS) },
    WINDOW_MS,
  ],
  ['past the window and the margin', { lastSentAt: at(-10 * MINUTE_MS), lastSignedAt: at(-10 * MINUTE_MS) }, WINDOW_MS],
  [
    'past any window, the provider promising none',
    { lastSentAt: at(-10 * MINUTE_MS), lastSignedAt: at(-10 * MINUTE_MS) },
    null,
  ],
  ['signing time not known', { lastSentAt: at(-10 * MINUTE_MS), lastSignedAt: null }, WINDOW_MS],
]

const MODES: readonly StepMode[] = ['work', 'send', 'look']
const SEND_COUNTS = [1, SEND_ATTEMPTS_MAX] as const
const DEDUPLICATES = [true, false] as const

/** An answer to a send or a requery (the name enquiry's has a table of its own, below). */
type BankAnswer = Exclude<Answer, { to: 'name_enquiry' }>

interface Case {
  label: string
  found: Instruction
  answer: BankAnswer
  mode: StepMode
  traits: StepRules['traits']
  step: Step
}

/** The cross product: every case a step in flight can meet, with what decide made of it. */
function everyCase(): Case[] {
  const cases: Case[] = []
  for (const [foundLabel, facts] of FOUND) {
    for (const [deadlineLabel, deadlineAt] of DEADLINES) {
      for (const [sendLabel, sendFacts, window] of SENDS) {
        for (const sendAttempts of SEND_COUNTS) {
          for (const deduplicatesReferences of DEDUPLICATES) {
            for (const mode of MODES) {
              const found = instruction({ ...facts, ...sendFacts, deadlineAt, sendAttempts })
              const opened = opening(found, mode, NOW)
              // An answer to a send comes only to one committed `sending` (its creator's, or the pipeline's own resend: never a look's).
              const to: ('send' | 'requery')[] =
                found.state === 'sending' && mode !== 'look' ? ['send', 'requery'] : ['requery']
              expect(opened).toBe(found.state === 'sending' && mode === 'send' ? 'send' : 'requery')
              for (const [answerLabel, result] of ANSWERS) {
                for (const call of to) {
                  const answer: BankAnswer =
                    call === 'send' ? { to: 'send', result } : { to: 'requery', result, askedAt: NOW }
                  const traits = { deduplicatesReferences, requestValidityWindowMs: window }
                  const step = decide(found, answer, NOW, { ...rules(mode), traits })
                  const label = `${foundLabel}, ${deadlineLabel}, ${sendLabel}, ${sendAttempts} sends, ${deduplicatesReferences ? '' : 'not '}de-duplicating, ${mode}: ${call} answered ${answerLabel}`
                  cases.push({ label, found, answer, mode, traits, step })
                }
              }
            }
          }
        }
      }
    }
  }
  return cases
}

// ---- the invariants -----------------------------------------------------------------------------

/** No send of it can still be acted on: the latest was signed at a known time, longer ago than the provider's window and the margin. */
function sendsExpired({ found, answer, traits }: Case): boolean {
  if (answer.to !== 'requery' || found.lastSignedAt === null || traits.requestValidityWindowMs === null) return false
  return answer.askedAt.getTime() - found.lastSignedAt.getTime() > traits.requestValidityWindowMs + SKEW_MS
}

/** The NIP table's word for an answer (src/banking/nip/codes.ts), read here on its own rather than by the pipeline's reading. */
const reading = (result: Answered) =>
  result.outcome === 'unknown'
    ? 'none'
    : result.outcome === 'failed' && result.reversed
      ? 'reversed'
      : nipOutcome(result.responseCode)
const neverHad = (found: Instruction) =>
  found.state === 'sending' || (found.state === 'unknown' && found.acceptedAt === null)
const noRecord = (answer: BankAnswer) => answer.to === 'requery' && reading(answer.result) === 'not_found'
const pastDeadline = (found: Instruction) => NOW.getTime() >= found.deadlineAt.getTime()
const sinceSentMs = (found: Instruction) => NOW.getTime() - found.lastSentAt!.getTime()

/** What must hold of every case; each answers a broken rule's words, or nothing. */
const INVARIANTS: readonly (readonly [rule: string, holds: (c: Case) => boolean])[] = [
  [
    'a move the state machine allows (or staying put)',
    ({ found, step }) =>
      step.change.next === found.state || instructionStates.next[found.state].includes(step.change.next),
  ],
  [
    'succeeded only on 00, never on no answer nor a reversal',
    ({ answer, step }) => step.change.next !== 'succeeded' || reading(answer.result) === 'success',
  ],
  [
    'never failed by no answer, an in-progress code or a code Rail does not know',
    ({ answer, step }) =>
      step.change.next !== 'failed' || ['failed', 'reversed', 'not_found'].includes(reading(answer.result)),
  ],
  [
    'a bank refusal fails only on a final code or a reversal, as provider_declined',
    ({ answer, step }) =>
      step.change.next !== 'failed' ||
      step.change.fields.failureCode === 'not_received' ||
      (step.change.fields.failureCode === 'provider_declined' &&
        ['failed', 'reversed'].includes(reading(answer.result))),
  ],
  [
    'never received only on no record of one the bank never had, once no send of it can be acted on, nor while a send may be on its way',
    (c) =>
      c.step.change.fields.failureCode !== 'not_received' ||
      (noRecord(c.answer) && neverHad(c.found) && sendsExpired(c) && sinceSentMs(c.found) >= FIRST_DELAY_MS),
  ],
  [
    'never received rather than sent again only when no resend is allowed',
    (c) =>
      c.step.change.fields.failureCode !== 'not_received' ||
      c.mode === 'look' ||
      pastDeadline(c.found) ||
      !c.traits.deduplicatesReferences ||
      c.found.sendAttempts >= SEND_ATTEMPTS_MAX,
  ],
  [
    "sent again only on no record of one the bank never had, on the pipeline's schedule, before the deadline, with sends left, to a de-duplicating provider",
    (c) =>
      !c.step.thenSend ||
      (noRecord(c.answer) &&
        neverHad(c.found) &&
        c.mode !== 'look' &&
        !pastDeadline(c.found) &&
        c.traits.deduplicatesReferences &&
        c.found.sendAttempts < SEND_ATTEMPTS_MAX &&
        sinceSentMs(c.found) >= FIRST_DELAY_MS),
  ],
  [
    'a resend is committed (sending, one more attempt, the lease kept) before it is made',
    ({ found, step }) =>
      step.thenSend === (step.change.release === false) &&
      (!step.thenSend ||
        (step.change.next === 'sending' && step.change.fields.sendAttempts === found.sendAttempts + 1)),
  ],
  [
    'no record of one the bank accepted proves nothing: it is only asked about again',
    ({ found, answer, step }) =>
      neverHad(found) ||
      !noRecord(answer) ||
      (!['succeeded', 'failed', 'sending'].includes(step.change.next) && !step.thenSend),
  ],
  [
    'an unknown one stays unknown but on a final answer (or a resend, or proof it was never received), asked again on the slow schedule',
    ({ found, step }) =>
      found.state !== 'unknown' ||
      step.change.next !== 'unknown' ||
      (step.change.fields.nextAttemptAt?.getTime() ===
        nextUnknownPoll(UNKNOWN_POLLS_DEFAULT, found.deadlineAt, NOW)?.getTime() &&
        step.change.runAt === undefined),
  ],
  [
    'at the deadline, with no final answer, it is unknown (its owner told once)',
    ({ found, step }) =>
      !pastDeadline(found) ||
      found.state === 'unknown' ||
      (['succeeded', 'failed', 'unknown'].includes(step.change.next) &&
        (step.change.next !== 'unknown' || step.change.progress === 'unknown')),
  ],
  [
    'before the deadline, no final answer: a poll after now and no later than the deadline',
    ({ found, step }) =>
      pastDeadline(found) ||
      found.state === 'unknown' ||
      ['succeeded', 'failed'].includes(step.change.next) ||
      step.thenSend ||
      (step.change.runAt !== undefined &&
        step.change.runAt > NOW &&
        step.change.runAt <= found.deadlineAt &&
        step.change.fields.nextAttemptAt === step.change.runAt),
  ],
  [
    'the owner hears every final state, and news only of a change it shows',
    ({ found, step }) => {
      const { next, progress } = step.change
      if (next === 'succeeded' || next === 'failed') return progress === next
      if (progress === 'accepted') return found.state === 'sending' && next === 'sent'
      if (progress === 'no_answer') return found.state === 'sending' && next === 'sending'
      if (progress === 'unknown') return found.state !== 'unknown' && next === 'unknown'
      return progress === undefined
    },
  ],
  [
    'a requery is counted',
    ({ found, answer, step }) =>
      step.change.fields.requeryAttempts === found.requeryAttempts + (answer.to === 'requery' ? 1 : 0),
  ],
  [
    'what the bank said is recorded; accepted only when it said it has the payment',
    ({ answer, step }) =>
      answer.result.outcome === 'unknown'
        ? step.change.fields.responseCode === undefined && !step.change.fields.accepted
        : step.change.fields.responseCode === answer.result.responseCode &&
          Boolean(step.change.fields.accepted) === ['success', 'pending'].includes(reading(answer.result)),
  ],
  [
    'a step never moves the instruction to another provider: it names none',
    ({ step }) => !('provider' in step.change.fields),
  ],
]

describe('decide, every instruction in flight × every answer × the time', () => {
  const cases = everyCase()

  it('covers the cross product', () => {
    const answersToRequeries =
      FOUND.length *
      DEADLINES.length *
      SENDS.length *
      SEND_COUNTS.length *
      DEDUPLICATES.length *
      MODES.length *
      ANSWERS.length
    const answersToSends =
      DEADLINES.length * SENDS.length * SEND_COUNTS.length * DEDUPLICATES.length * 2 * ANSWERS.length
    expect(cases).toHaveLength(answersToRequeries + answersToSends)
    // Every decision the pipeline can take is taken somewhere in it.
    const taken = new Set(
      cases.map(
        ({ step }) =>
          `${step.change.next}${step.thenSend ? '+send' : ''}${step.change.fields.failureCode ? `:${step.change.fields.failureCode}` : ''}`,
      ),
    )
    expect([...taken].sort()).toEqual([
      'failed:not_received',
      'failed:provider_declined',
      'sending',
      'sending+send',
      'sent',
      'succeeded',
      'unknown',
    ])
  })

  it.each(INVARIANTS)('%s', (_rule, holds) => {
    const broken = cases
      .filter((c) => !holds(c))
      .map(
        (c) =>
          `${c.label} → ${c.step.change.next}${c.step.thenSend ? ' and send' : ''} ${c.step.change.fields.failureCode ?? ''}`,
      )
    expect(broken.slice(0, 5)).toEqual([])
  })
})

// ---- an instruction never sent --------------------------------------------------------------------

type Enquiry = ProviderResult<{ accountName: string }>
const named = (accountName: string): Enquiry => ({
  outcome: 'successful',
  responseCode: '00',
  responseMessage: 'ok',
  providerReference: '',
  value: { accountName },
})

/** A ready instruction as a step finds it: its name still to ask (never asked, or asked unanswered), known, or not checked. */
const READY: readonly (readonly [label: string, facts: Partial<Instruction>])[] = [
  ['its name never asked', { nameCheck: true, verifiedAccountName: null, requeryAttempts: 0 }],
  ['its name asked twice, unanswered', { nameCheck: true, verifiedAccountName: null, requeryAttempts: 2 }],
  ['its name known', { nameCheck: true, verifiedAccountName: 'ADAEZE OKORO', requeryAttempts: 0 }],
  ['no name check', { nameCheck: false, verifiedAccountName: null, requeryAttempts: 0 }],
]

/** Every kind of answer to a name enquiry: the given name, another holder, a refusal, in progress, none. */
const ENQUIRIES: readonly (readonly [label: string, result: Enquiry])[] = [
  ['the given name', named('OKORO ADAEZE')],
  ['another holder', named('CHUKWU OBI')],
  ['refused (07)', answered('failed', '07') as Enquiry],
  ['in progress (09)', answered('pending', '09') as Enquiry],
  ['no answer', { outcome: 'unknown', error: 'timeout' }],
]

interface ReadyCase {
  label: string
  found: Instruction
  mode: StepMode
  opened: ReturnType<typeof opening>
  /** The enquiry's answer, when the step asked one. */
  enquiry: Enquiry | undefined
  /** What the step wrote; undefined when it gave the instruction back. */
  step: Step | undefined
}

/** Every step that can hold a ready instruction: its opening, then what it decides (one case per answer where it asks a name). */
function everyReadyCase(): ReadyCase[] {
  const cases: ReadyCase[] = []
  for (const [readyLabel, facts] of READY) {
    for (const [deadlineLabel, deadlineAt] of DEADLINES) {
      for (const mode of MODES) {
        const found = instruction({
          state: 'ready',
          sendAttempts: 0,
          lastSentAt: null,
          lastSignedAt: null,
          ...facts,
          deadlineAt,
        })
        const opened = opening(found, mode, NOW)
        const label = `ready, ${readyLabel}, ${deadlineLabel}, ${mode}`
        if (opened !== 'name_enquiry') {
          const step =
            opened === 'never_sent' ? neverSent(found) : opened === 'first_send' ? firstSend(found) : undefined
          cases.push({ label: `${label}: ${opened}`, found, mode, opened, enquiry: undefined, step })
          continue
        }
        for (const [enquiryLabel, enquiry] of ENQUIRIES) {
          const step = decide(found, { to: 'name_enquiry', result: enquiry }, NOW, rules(mode))
          cases.push({ label: `${label}: enquiry answered ${enquiryLabel}`, found, mode, opened, enquiry, step })
        }
      }
    }
  }
  return cases
}

const READY_INVARIANTS: readonly (readonly [rule: string, holds: (c: ReadyCase) => boolean])[] = [
  [
    'a move the state machine allows (or staying put)',
    ({ step }) => step === undefined || ['ready', ...instructionStates.next.ready].includes(step.change.next),
  ],
  [
    'a look has nothing to ask: it gives the instruction back',
    ({ mode, opened }) => (mode === 'look') === (opened === 'give_back'),
  ],
  [
    'after the deadline nothing is sent at all, nor a name asked: it fails as never sent, its owner told',
    ({ found, mode, opened, step }) =>
      mode === 'look' ||
      !pastDeadline(found) ||
      (opened === 'never_sent' &&
        step!.change.next === 'failed' &&
        step!.change.progress === 'failed' &&
        !step!.thenSend &&
        ['not_sent', 'provider_unavailable'].includes(step!.change.fields.failureCode!)),
  ],
  [
    'never sent as not_sent only when no name enquiry was made; provider_unavailable only when they went unanswered',
    ({ found, step }) =>
      step === undefined ||
      ((step.change.fields.failureCode !== 'not_sent' || found.requeryAttempts === 0) &&
        (step.change.fields.failureCode !== 'provider_unavailable' || found.requeryAttempts > 0)),
  ],
  [
    'sent only before the deadline, committed first, and only to the holder the given name names (or where no name is checked)',
    ({ found, enquiry, step }) =>
      step === undefined ||
      !step.thenSend ||
      (!pastDeadline(found) &&
        step.change.next === 'sending' &&
        step.change.fields.sendAttempts === 1 &&
        (!found.nameCheck ||
          found.verifiedAccountName !== null ||
          (enquiry?.outcome === 'successful' && enquiry.value.accountName === 'OKORO ADAEZE'))),
  ],
  [
    'before the deadline, an unanswered enquiry is asked again later, no later than the deadline',
    ({ found, enquiry, step }) =>
      pastDeadline(found) ||
      enquiry === undefined ||
      enquiry.outcome === 'successful' ||
      enquiry.outcome === 'failed' ||
      (step!.change.next === 'ready' && step!.change.runAt! > NOW && step!.change.runAt! <= found.deadlineAt),
  ],
]

describe('a ready instruction, every way it is found × every way a step is started × every name-enquiry answer × the time', () => {
  const cases = everyReadyCase()

  it('covers the cross product, and every opening and decision is taken somewhere in it', () => {
    const asked = READY.filter(([, facts]) => facts.nameCheck && facts.verifiedAccountName === null).length
    const beforeDeadline = DEADLINES.filter(([, deadlineAt]) => !pastDeadline(instruction({ deadlineAt }))).length
    const enquiring = asked * beforeDeadline * (MODES.length - 1)
    expect(cases).toHaveLength(
      READY.length * DEADLINES.length * MODES.length - enquiring + enquiring * ENQUIRIES.length,
    )
    const taken = new Set(
      cases.map(
        ({ opened, step }) =>
          `${opened} → ${step ? `${step.change.next}${step.thenSend ? '+send' : ''}${step.change.fields.failureCode ? `:${step.change.fields.failureCode}` : ''}` : 'given back'}`,
      ),
    )
    expect([...taken].sort()).toEqual([
      'first_send → sending+send',
      'give_back → given back',
      'name_enquiry → failed:name_enquiry_failed',
      'name_enquiry → failed:name_mismatch',
      'name_enquiry → ready',
      'name_enquiry → sending+send',
      'never_sent → failed:not_sent',
      'never_sent → failed:provider_unavailable',
    ])
  })

  it.each(READY_INVARIANTS)('%s', (_rule, holds) => {
    const broken = cases
      .filter((c) => !holds(c))
      .map(
        (c) =>
          `${c.label} → ${c.step ? `${c.step.change.next} ${c.step.change.fields.failureCode ?? ''}` : 'given back'}`,
      )
    expect(broken.slice(0, 5)).toEqual([])
  })
})

describe('decide, by name', () => {
  const requery = (result: Answered): Answer => ({ to: 'requery', result, askedAt: NOW })
  const noAnswer: Answered = { outcome: 'unknown', error: 'timeout' }

  it('a send answered 09: the bank has it, its owner hears accepted, asked again after the first delay doubled by the requeries made', () => {
    const step = decide(
      instruction({ state: 'sending', requeryAttempts: 0 }),
      { to: 'send', result: answered('pending', '09') },
      NOW,
      rules('send'),
    )
    expect(step).toEqual({
      change: {
        next: 'sent',
        fields: expect.objectContaining({ accepted: true, responseCode: '09' }),
        release: true,
        progress: 'accepted',
        runAt: at(FIRST_DELAY_MS),
      },
      thenSend: false,
    })
  })

  it('96 and 97 are asked about again, never failed: the money may have moved', () => {
    for (const code of ['96', '97'])
      expect(
        decide(instruction({ state: 'sent' }), requery(answered('failed', code)), NOW, rules('work')).change.next,
      ).toBe('sent')
  })

  it('a send with no answer stays sending, its owner told no_answer', () => {
    const step = decide(instruction({ state: 'sending' }), { to: 'send', result: noAnswer }, NOW, rules('send'))
    expect(step.change).toMatchObject({ next: 'sending', progress: 'no_answer', release: true })
  })

  it('no record, sends left, before the deadline: the same reference again; a look, inside the window, only waits', () => {
    const inside = {
      state: 'sending' as InstructionState,
      lastSentAt: at(-2 * MINUTE_MS),
      lastSignedAt: at(-2 * MINUTE_MS),
    }
    expect(decide(instruction(inside), requery(answered('failed', '25')), NOW, rules('work'))).toMatchObject({
      change: { next: 'sending', release: false, fields: { sendAttempts: 2 } },
      thenSend: true,
    })
    expect(decide(instruction(inside), requery(answered('failed', '25')), NOW, rules('look'))).toMatchObject({
      change: { next: 'sending', release: true, progress: 'no_answer' },
      thenSend: false,
    })
  })

  it('no record of an unknown one the bank never had, past its window: never received; of one it once accepted: still unknown', () => {
    const facts = { state: 'unknown' as InstructionState, deadlineAt: at(-HOUR_MS), sendAttempts: 3 }
    expect(
      decide(instruction({ ...facts, acceptedAt: null }), requery(answered('failed', '25')), NOW, rules('look')).change,
    ).toMatchObject({ next: 'failed', fields: { failureCode: 'not_received' }, progress: 'failed' })
    const accepted = decide(
      instruction({ ...facts, acceptedAt: at(-2 * HOUR_MS) }),
      requery(answered('failed', '25')),
      NOW,
      rules('look'),
    ).change
    expect(accepted).toMatchObject({ next: 'unknown', fields: { nextAttemptAt: at(HOUR_MS) } })
    expect(accepted.progress).toBeUndefined()
  })

  it('a reversal is a failure, whatever code comes with it', () => {
    expect(
      decide(instruction({ state: 'sent' }), requery(answered('failed', '00', { reversed: true })), NOW, rules('work'))
        .change,
    ).toMatchObject({ next: 'failed', fields: { failureCode: 'provider_declined' } })
  })
})

describe('opening and the name enquiry', () => {
  it('a step opens by its instruction and how it was started', () => {
    const opened = (state: InstructionState, mode: StepMode, nameKnown = false, deadlineAt = at(HOUR_MS)) =>
      opening(instruction({ state, verifiedAccountName: nameKnown ? 'ADAEZE OKORO' : null, deadlineAt }), mode, NOW)
    expect(MODES.map((mode) => opened('ready', mode))).toEqual(['name_enquiry', 'name_enquiry', 'give_back'])
    expect(MODES.map((mode) => opened('ready', mode, true))).toEqual(['first_send', 'first_send', 'give_back'])
    expect(opening(instruction({ state: 'ready', nameCheck: false, verifiedAccountName: null }), 'work', NOW)).toBe(
      'first_send',
    )
    // Never sent, its deadline come: failed, neither sent nor its name asked; a look still only gives it back.
    for (const nameKnown of [false, true])
      expect(MODES.map((mode) => opened('ready', mode, nameKnown, NOW))).toEqual([
        'never_sent',
        'never_sent',
        'give_back',
      ])
    for (const state of ['sending', 'sent', 'unknown'] as const)
      expect(MODES.map((mode) => opened(state, mode))).toEqual([
        'requery',
        state === 'sending' ? 'send' : 'requery',
        'requery',
      ])
  })

  const ready = (overrides: Partial<Instruction> = {}) =>
    instruction({
      state: 'ready',
      sendAttempts: 0,
      lastSentAt: null,
      lastSignedAt: null,
      requeryAttempts: 0,
      verifiedAccountName: null,
      ...overrides,
    })
  const enquiry = (result: ProviderResult<{ accountName: string }>, overrides: Partial<Instruction> = {}) =>
    decide(ready(overrides), { to: 'name_enquiry', result }, NOW, rules('work'))
  it('the holder the given name names: the first send, committed with the name found', () => {
    expect(enquiry(named('OKORO ADAEZE'))).toEqual(firstSend(ready(), 'OKORO ADAEZE'))
    expect(enquiry(named('SOMEONE ELSE'), { expectedAccountName: null })).toEqual(firstSend(ready(), 'SOMEONE ELSE'))
  })

  it('another holder, or a refusal: failed before anything is sent', () => {
    expect(enquiry(named('CHUKWU OBI')).change).toMatchObject({
      next: 'failed',
      fields: { failureCode: 'name_mismatch', responseCode: '08', verifiedAccountName: 'CHUKWU OBI' },
      progress: 'failed',
    })
    expect(enquiry(answered('failed', '07') as ProviderResult<{ accountName: string }>).change).toMatchObject({
      next: 'failed',
      fields: { failureCode: 'name_enquiry_failed', responseCode: '07' },
    })
  })

  it('no answer: asked again later, backing off; at the deadline failed, nothing having been sent', () => {
    for (const result of [
      { outcome: 'unknown', error: 'timeout' } as const,
      answered('pending', '09') as ProviderResult<{ accountName: string }>,
    ]) {
      expect(enquiry(result)).toEqual({
        change: {
          next: 'ready',
          fields: { requeryAttempts: 1, nextAttemptAt: at(2 * FIRST_DELAY_MS) },
          release: true,
          progress: undefined,
          runAt: at(2 * FIRST_DELAY_MS),
        },
        thenSend: false,
      })
      expect(enquiry(result, { deadlineAt: NOW }).change).toMatchObject({
        next: 'failed',
        fields: { failureCode: 'provider_unavailable' },
      })
    }
  })

  it('a ready one past its deadline is failed as never sent: not_sent if never worked, provider_unavailable if its enquiries went unanswered', () => {
    expect(neverSent(ready())).toEqual({
      change: {
        next: 'failed',
        fields: { failureCode: 'not_sent', failureMessage: 'Its deadline came before it was sent; nothing was sent' },
        release: true,
        progress: 'failed',
      },
      thenSend: false,
    })
    expect(neverSent(ready({ requeryAttempts: 2 })).change.fields).toEqual({
      failureCode: 'provider_unavailable',
      failureMessage: 'Name enquiry gave no answer before the deadline; nothing was sent',
    })
  })

  it('a name enquiry answered only once the deadline came: the holder it names is not sent to', () => {
    expect(enquiry(named('OKORO ADAEZE'), { deadlineAt: NOW })).toEqual(neverSent(ready()))
    expect(enquiry(named('OKORO ADAEZE'), { deadlineAt: at(1) })).toEqual(firstSend(ready(), 'OKORO ADAEZE'))
  })

  it('a first send is never decided from a timeout: only a committed send is made', () => {
    expect(firstSend(ready())).toEqual({
      change: { next: 'sending', fields: { sendAttempts: 1, verifiedAccountName: undefined }, release: false },
      thenSend: true,
    })
  })
})
