// The payment pipeline's rules, each against the defect it removed: a payout the bank accepted is
// never failed by a retry (and its float never spent twice); one name rule on every path; the
// sandbox schedule short enough to watch `unknown`; an operator's resolution of `unknown` with
// evidence, exactly once, refused otherwise.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nuban } from '../../src/banking/nip/nuban.ts'
import {
  LIVE_SCHEDULE_DEFAULT,
  newInstruction,
  paymentSettings,
  requeryNow,
  SANDBOX_SCHEDULE_DEFAULT,
  sweepUnknown,
} from '../../src/money-out/pipeline/service.ts'
import { getProvider } from '../../src/banking/providers/service.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { writeFaults } from '../../src/sandbox/faults.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import { runRail } from '../support/cli.ts'
import { BANK_SECRET } from '../collections/support.ts'
import {
  expectExactlyOnce,
  failNext,
  instructionState,
  PAYEE,
  paymentParty,
  PAYMENT_WORKERS,
  settle,
  startPayment,
  type PaymentParty,
} from '../support/payments.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'
import { fundFloat } from '../support/float.ts'
import { advanceSandboxClock } from '../support/clock.ts'

/** The deadline is far off: a test reaches it by moving the partner's sandbox clock past it, not by waiting. */
/** The sandbox bank acts on a request this long after it was signed: short, so that "never received" is seen in seconds. */
const REQUEST_VALIDITY_S = 3
/**
 * The deadline is far off, and unknown payments are asked about again every 200 ms (instead of
 * hourly) once the sweep finds them due; the bank shares the app's clock (no skew margin).
 */
const SETTINGS = {
  sandbox: { firstDelayMs: 200, deadlineMs: 600_000 },
  leaseMs: 5_000,
  providerClockSkewMs: 0,
  unknownPolls: [{ everyMs: 200, untilMs: 86_400_000 }],
}

/**
 * Moves the partner's time past the requery deadline of its payments in flight (the sandbox test
 * clock), once the workers have sent each: one still ready at its deadline is never sent
 * (docs/decisions/0008-payment-pipeline.md §Rules).
 */
async function pastTheDeadline(party: PaymentParty): Promise<void> {
  await waitFor(
    async () =>
      (
        await app.db.pool.query(`SELECT 1 FROM bank_instructions WHERE partner_id = $1 AND state = 'ready'`, [
          party.partnerId,
        ])
      ).rowCount === 0,
    10_000,
    'its payments sent',
  )
  await advanceSandboxClock(party.client, SETTINGS.sandbox.deadlineMs / 1000 + 1)
}
let app: Rail
let hook: Receiver
let party: PaymentParty

// The workers take the app's request validity and payment settings.
beforeAll(async () => {
  app = await startRail({
    sandboxBankSecret: BANK_SECRET,
    payments: SETTINGS,
    sandboxBankRequestValidityS: REQUEST_VALIDITY_S,
    workers: PAYMENT_WORKERS,
    receiver: true,
  })
  hook = app.receiver
  party = await paymentParty(app, hook.url)
})
afterAll(() => app?.close())

const cli = (args: string[]) =>
  runRail(['payments', ...args], {
    DATABASE_URL: app.db.url,
    SANDBOX_BANK_URL: app.baseUrl,
    SANDBOX_BANK_SECRET: BANK_SECRET,
  })

async function outbound(client: PaymentParty['client'], amountKobo: number, extra: Record<string, unknown> = {}) {
  const answer = await client.post<{
    id: string
    state: string
    failureReason: { code: string; providerResponseCode?: string } | null
  }>('/api/v1/rail/outbound', {
    clientReference: randomUUID(),
    amountKobo,
    beneficiaryAccountNumber: PAYEE.accountNumber,
    beneficiaryBankCode: PAYEE.bankCode,
    beneficiaryAccountName: PAYEE.accountName,
    currency: 'NGN',
    ...extra,
  })
  expect(answer.status).toBe(202)
  return answer.body
}

const read = async (client: PaymentParty['client'], id: string) =>
  (
    await client.get<{
      state: string
      failureReason: { code: string; providerResponseCode?: string } | null
      providerResponseCode: string | null
    }>(`/api/v1/rail/outbound/${id}`)
  ).body

describe('a payout the bank accepted', () => {
  it('is never failed by a retry of its job, and its float is not spent twice', { timeout: 60_000 }, async () => {
    const { client } = await app.newPartner({ callbackUrl: hook.url })
    await fundFloat(client, 500_000)
    failNext('payments.after_send') // the worker fails after the bank accepted, before Rail recorded it
    const first = await outbound(client, 500_000)
    await waitFor(
      async () => (await read(client, first.id)).state === 'submitted',
      20_000,
      'submitted after the retry asked the bank',
    )
    // The whole float is held by the first: a second payout of it fails for funds.
    const second = await outbound(client, 500_000)
    expect(second.state).toBe('failed')
    expect(second.failureReason?.code).toBe('insufficient_funds')
    expect(
      (
        await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: first.id,
          outcome: 'confirmed',
        })
      ).status,
    ).toBe(200)
    await waitFor(async () => (await read(client, first.id)).state === 'confirmed', 20_000, 'confirmed')
    const enquiries = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM provider_calls WHERE operation = 'name_enquiry' AND created_at >= (SELECT created_at FROM bank_instructions WHERE id = $1)`,
      [first.id],
    )
    expect(enquiries.rows[0].n).toBe(1) // the retry asked the bank first; it did not check the name again
  })
})

describe('one name rule on every path', () => {
  it(
    'an outbound transfer to an account held by someone else fails with name_mismatch (08), and nothing is sent',
    { timeout: 30_000 },
    async () => {
      const transfer = await outbound(party.client, 10_000, { beneficiaryAccountName: 'Test Payee' })
      await waitFor(async () => (await read(party.client, transfer.id)).state === 'failed', 15_000, 'failed')
      const failed = await read(party.client, transfer.id)
      expect(failed.failureReason).toMatchObject({ code: 'name_mismatch', providerResponseCode: '08' })
      expect(failed.providerResponseCode).toBe('08')
      expect(
        (await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [transfer.id])).rowCount,
      ).toBe(0)
      const resolutions = await app.db.pool.query(
        `SELECT phase FROM ledger_transfers WHERE pending_id = (SELECT hold_transfer_id FROM outbound_transfers WHERE id = $1)`,
        [transfer.id],
      )
      expect(resolutions.rows).toEqual([{ phase: 'void' }])
    },
  )

  it('the holder named in another order, case and spacing is paid', { timeout: 30_000 }, async () => {
    const [first, last] = PAYEE.accountName.split(' ')
    const transfer = await outbound(party.client, 10_000, {
      beneficiaryAccountName: `  ${last!.toLowerCase()},   ${first}`,
    })
    await waitFor(async () => (await read(party.client, transfer.id)).state === 'submitted', 15_000, 'submitted')
  })

  it('a wallet external send to someone else fails the same way: nothing sent, its hold voided, the name asked once', async () => {
    const balance = async () =>
      (
        await party.client.get<{ availableBalanceKobo: number; bookedBalanceKobo: number }>(
          `/wallet/customer?customerId=${party.walletId}`,
        )
      ).body
    const before = await balance()
    const reference = randomUUID()
    const answer = await party.client.post<{ status: string; responseCode: string }>('/transfer/bank/customer', {
      walletId: party.walletId,
      reference,
      amountKobo: 5_000,
      currency: 'NGN',
      destinationAccountNumber: PAYEE.accountNumber,
      destinationBankCode: PAYEE.bankCode,
      destinationAccountName: 'Test Payee',
    })
    expect(answer.body).toMatchObject({ status: 'failed', responseCode: '08' })
    const id = (
      await app.db.pool.query<{ id: string }>(`SELECT id FROM wallet_moves WHERE partner_id = $1 AND reference = $2`, [
        party.partnerId,
        reference,
      ])
    ).rows[0]!.id
    expect(await instructionState(app, id)).toBe('failed')
    // Nothing reached the bank under this reference, and Rail never tried to send it.
    expect((await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount).toBe(
      0,
    )
    expect((await app.db.pool.query(`SELECT 1 FROM provider_calls WHERE reference = $1`, [id])).rowCount).toBe(0)
    // The hold was voided, once: the wallet's available balance is its booked balance again, unchanged.
    const resolutions = await app.db.pool.query(
      `SELECT phase FROM ledger_transfers WHERE pending_id = (SELECT hold_transfer_id FROM wallet_moves WHERE id = $1)`,
      [id],
    )
    expect(resolutions.rows).toEqual([{ phase: 'void' }])
    const after = await balance()
    expect(after.availableBalanceKobo).toBe(after.bookedBalanceKobo)
    expect(after).toEqual(before)
    // One name enquiry for this payment.
    const enquiries = await app.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM provider_calls WHERE operation = 'name_enquiry' AND reference = $1 AND created_at >= (SELECT created_at FROM bank_instructions WHERE id = $2)`,
      [`${PAYEE.bankCode}:${PAYEE.accountNumber}`, id],
    )
    expect(enquiries.rows[0]!.n).toBe(1)
  })
})

describe('after the deadline nothing is sent', () => {
  it(
    'a payout not yet sent when its deadline comes (the workers stopped that long) fails as not_sent: no name asked, nothing sent, its hold voided',
    { timeout: 60_000 },
    async () => {
      await app.stopWorkers()
      let id: string
      try {
        id = (await outbound(party.client, 73_000)).id
        await advanceSandboxClock(party.client, SETTINGS.sandbox.deadlineMs / 1000 + 1)
      } finally {
        await app.startWorkers()
      }
      await waitFor(async () => (await read(party.client, id)).state === 'failed', 20_000, 'failed')
      expect((await read(party.client, id)).failureReason).toMatchObject({ code: 'not_sent' })
      const instruction = await app.db.pool.query(
        `SELECT state, failure_code, send_attempts, verified_account_name FROM bank_instructions WHERE id = $1`,
        [id],
      )
      expect(instruction.rows).toEqual([
        { state: 'failed', failure_code: 'not_sent', send_attempts: 0, verified_account_name: null },
      ])
      expect((await app.db.pool.query(`SELECT 1 FROM provider_calls WHERE reference = $1`, [id])).rowCount).toBe(0)
      expect(
        (await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount,
      ).toBe(0)
      const resolutions = await app.db.pool.query(
        `SELECT phase FROM ledger_transfers WHERE pending_id = (SELECT hold_transfer_id FROM outbound_transfers WHERE id = $1)`,
        [id],
      )
      expect(resolutions.rows).toEqual([{ phase: 'void' }])
    },
  )
})

describe('the requery schedule', () => {
  it('ends within 3 minutes for sandbox partners and after 24 hours for live ones, by default', () => {
    const settings = paymentSettings()
    const spec = {
      id: randomUUID(),
      partnerId: randomUUID(),
      ownerType: 'outbound_transfer' as const,
      provider: 'sandbox',
      operation: 'payout' as const,
      amountKobo: 1,
      narration: null,
      debitAccountNumber: null,
      creditAccountNumber: null,
      destinationBankCode: '058',
      destinationAccountNumber: PAYEE.accountNumber,
      nameCheck: true,
      expectedAccountName: null,
    }
    const clock = { now: () => new Date('2026-01-01T00:00:00Z') }
    expect(newInstruction(settings, clock, 'sandbox', spec).deadlineAt.toISOString()).toBe('2026-01-01T00:03:00.000Z')
    expect(newInstruction(settings, clock, 'live', spec).deadlineAt.toISOString()).toBe('2026-01-02T00:00:00.000Z')
    expect(SANDBOX_SCHEDULE_DEFAULT.deadlineMs).toBeLessThanOrEqual(3 * 60 * 1000)
    expect(LIVE_SCHEDULE_DEFAULT).toEqual({ firstDelayMs: 5_000, deadlineMs: 24 * 60 * 60 * 1000 })
  })

  it('is configured by RAIL_REQUERY_FIRST_DELAY_MS, RAIL_REQUERY_DEADLINE_S and RAIL_SANDBOX_REQUERY_DEADLINE_S', () => {
    expect(loadConfig({}).payments).toEqual({
      live: { firstDelayMs: 5_000, deadlineMs: 86_400_000 },
      sandbox: { firstDelayMs: 5_000, deadlineMs: 180_000 },
    })
    const set = loadConfig({
      RAIL_REQUERY_FIRST_DELAY_MS: '1000',
      RAIL_REQUERY_DEADLINE_S: '3600',
      RAIL_SANDBOX_REQUERY_DEADLINE_S: '60',
    })
    expect(set.payments).toEqual({
      live: { firstDelayMs: 1_000, deadlineMs: 3_600_000 },
      sandbox: { firstDelayMs: 1_000, deadlineMs: 60_000 },
    })
    expect(() => loadConfig({ RAIL_SANDBOX_REQUERY_DEADLINE_S: '0' })).toThrow(/RAIL_SANDBOX_REQUERY_DEADLINE_S/)
    expect(() => loadConfig({ RAIL_REQUERY_DEADLINE_S: 'soon' })).toThrow(/RAIL_REQUERY_DEADLINE_S/)
  })
})

describe('"no record" (25) once the schedule ran out', () => {
  const NO_FAULTS = { noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 }
  /** The bank drops every request unanswered and unprocessed: sends never reach it, requeries learn nothing. */
  const SILENT = { ...NO_FAULTS, noAnswerRate: 1 }

  /** Sends of this reference Rail made (every call is recorded). */
  const sends = async (id: string) =>
    (
      await app.db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM provider_calls WHERE reference = $1 AND operation IN ('debit', 'send_to_bank')`,
        [id],
      )
    ).rows[0]!.n

  interface NoRecordCase {
    /** Starts the payment; the bank is silent until it is unknown when `silent`. */
    start: () => Promise<string>
    silent: boolean
    /** Before the later requery: what makes the bank answer 25. */
    before?: (id: string) => Promise<void>
    /** Requeries until the payment is in this state (one requery when it stays unknown). */
    until: 'succeeded' | 'failed' | 'unknown'
    check: (id: string) => Promise<void>
  }

  const CASES: Record<string, NoRecordCase> = {
    'never accepted (the bank silent to the deadline), sends left: never sent after the deadline; once its send can no longer be acted on, failed as not_received':
      {
        start: () => startPayment(app, party, 'wallet debit', 6_000),
        silent: true,
        until: 'failed',
        check: async (id) => {
          await expectExactlyOnce(app, 'wallet debit', id, 'failed')
          expect(await sends(id)).toBe(1)
          expect(
            (await app.db.pool.query(`SELECT failure_code FROM bank_instructions WHERE id = $1`, [id])).rows[0]
              .failure_code,
          ).toBe('not_received')
        },
      },
    'accepted by the bank (09) before the deadline: 25 proves nothing, it stays unknown and nothing is sent': {
      start: async () => {
        const never = nuban('058', '135792999') // the sandbox bank never settles it: 09 to the deadline
        const reference = randomUUID()
        const sent = await party.client.post<{ status: string }>('/transfer/bank/customer', {
          walletId: party.walletId,
          reference,
          amountKobo: 7_000,
          currency: 'NGN',
          destinationAccountNumber: never,
          destinationBankCode: '058',
          destinationAccountName: syntheticAccountName('058', never),
        })
        expect(sent.body.status).toBe('pending')
        return (
          await app.db.pool.query<{ id: string }>(`SELECT id FROM wallet_moves WHERE reference = $1`, [reference])
        ).rows[0]!.id
      },
      silent: false,
      // The bank now says it has no record of what it accepted (its record hidden from requery).
      before: async (id) => {
        await app.db.pool.query(
          `UPDATE sandbox_bank.transfers SET reference = reference || ':hidden' WHERE reference = $1`,
          [id],
        )
      },
      until: 'unknown',
      check: async (id) => {
        const instruction = (
          await app.db.pool.query(`SELECT state, send_attempts, response_code FROM bank_instructions WHERE id = $1`, [
            id,
          ])
        ).rows[0]
        expect(instruction).toEqual({ state: 'unknown', send_attempts: 1, response_code: '25' })
        expect(await sends(id)).toBe(1)
        const resolutions = await app.db.pool.query(
          `SELECT phase FROM ledger_transfers WHERE pending_id = (SELECT hold_transfer_id FROM wallet_moves WHERE id = $1)`,
          [id],
        )
        expect(resolutions.rows).toEqual([])
        await app.db.pool.query(`UPDATE sandbox_bank.transfers SET reference = $1 WHERE reference = $1 || ':hidden'`, [
          id,
        ])
      },
    },
  }

  it.each(Object.keys(CASES))('%s', { timeout: 60_000 }, async (name) => {
    const noRecord = CASES[name]!
    try {
      if (noRecord.silent) await writeFaults(app.db.pool, SILENT)
      const id = await noRecord.start()
      await pastTheDeadline(party)
      await waitFor(async () => (await instructionState(app, id)) === 'unknown', 20_000, 'unknown')
      await writeFaults(app.db.pool, NO_FAULTS)
      await noRecord.before?.(id)
      const payments = app.payments(SETTINGS)
      // A later requery (the partner's, an operator's): the bank has no record.
      await waitFor(
        async () => {
          await requeryNow(payments, id)
          return (await instructionState(app, id)) === noRecord.until
        },
        20_000,
        noRecord.until,
      )
      await noRecord.check(id)
    } finally {
      await writeFaults(app.db.pool, NO_FAULTS)
    }
  })
})

describe('rail payments resolve', () => {
  /** An outbound transfer nobody settles: the schedule runs out and it is unknown, its hold in place. */
  async function unknownPayout(): Promise<string> {
    const transfer = await outbound(party.client, 70_000)
    await pastTheDeadline(party)
    await waitFor(async () => (await read(party.client, transfer.id)).state === 'unknown', 20_000, 'unknown')
    await waitFor(
      async () =>
        (
          await app.db.pool.query(`SELECT 1 FROM events WHERE object_id = $1 AND type = 'transfer.unknown'`, [
            transfer.id,
          ])
        ).rowCount === 1,
      10_000,
      'transfer.unknown',
    )
    return transfer.id
  }

  it(
    'decides an unknown payout with evidence: the hold posts once, who and why are recorded, the terminal callback is sent',
    { timeout: 60_000 },
    async () => {
      const id = await unknownPayout()
      const resolved = await cli([
        'resolve',
        id,
        '--outcome',
        'successful',
        '--evidence',
        'GTBank statement 2026-11-24 line 14: NIP 00',
        '--operator',
        'ada@ops',
      ])
      expect(resolved.code).toBe(0)
      expect(JSON.parse(resolved.stdout)).toMatchObject({
        id,
        state: 'succeeded',
        resolution: {
          outcome: 'successful',
          operator: 'ada@ops',
          evidence: 'GTBank statement 2026-11-24 line 14: NIP 00',
        },
      })
      expect((await read(party.client, id)).state).toBe('confirmed')
      const resolutions = await app.db.pool.query(
        `SELECT phase FROM ledger_transfers WHERE pending_id = (SELECT hold_transfer_id FROM outbound_transfers WHERE id = $1)`,
        [id],
      )
      expect(resolutions.rows).toEqual([{ phase: 'post' }])
      await waitFor(
        async () =>
          (await app.db.pool.query(`SELECT 1 FROM events WHERE object_id = $1 AND type = 'transfer.confirmed'`, [id]))
            .rowCount === 1,
        10_000,
        'transfer.confirmed',
      )

      // Once: a second decision is refused, and changes nothing.
      const again = await cli(['resolve', id, '--outcome', 'failed', '--evidence', 'changed my mind'])
      expect(again.code).toBe(1)
      expect(again.stderr).toMatch(/is succeeded; an operator resolves only an unknown payment/)
      expect((await read(party.client, id)).state).toBe('confirmed')
    },
  )

  it('decides an unknown one failed: the hold is voided and the partner told', { timeout: 60_000 }, async () => {
    const id = await unknownPayout()
    const resolved = await cli([
      'resolve',
      id,
      '--outcome',
      'failed',
      '--evidence',
      'Bank letter ref 88: never credited',
    ])
    expect(resolved.code).toBe(0)
    const transfer = await read(party.client, id)
    expect(transfer).toMatchObject({ state: 'failed', failureReason: { code: 'operator' } })
    const resolutions = await app.db.pool.query(
      `SELECT phase FROM ledger_transfers WHERE pending_id = (SELECT hold_transfer_id FROM outbound_transfers WHERE id = $1)`,
      [id],
    )
    expect(resolutions.rows).toEqual([{ phase: 'void' }])
  })

  it(
    'refuses, changing nothing: no evidence, a payment that is not unknown, another partner’s, an unknown id, a bad outcome',
    { timeout: 60_000 },
    async () => {
      const id = await unknownPayout()
      const before = await app.db.pool.query(`SELECT state, resolution FROM bank_instructions WHERE id = $1`, [id])
      const other = await app.newPartner()
      const refusals: [string[], RegExp][] = [
        [['resolve', id, '--outcome', 'successful', '--evidence', '   '], /evidence/],
        [['resolve', id, '--outcome', 'successful', '--evidence', 'line\u0007bell'], /control characters/],
        [['resolve', id, '--outcome', 'successful'], /evidence/],
        [['resolve', id, '--outcome', 'maybe', '--evidence', 'x'], /maybe/],
        [
          ['resolve', id, '--outcome', 'successful', '--evidence', 'x', '--partner', other.credentials.partnerId],
          /not found/i,
        ],
        [['resolve', randomUUID(), '--outcome', 'successful', '--evidence', 'x'], /not found/i],
      ]
      for (const [args, message] of refusals) {
        const refused = await cli(args)
        expect(refused.code, args.join(' ')).not.toBe(0)
        expect(refused.stderr, args.join(' ')).toMatch(message)
      }
      expect(
        (await app.db.pool.query(`SELECT state, resolution FROM bank_instructions WHERE id = $1`, [id])).rows,
      ).toEqual(before.rows)

      // A payment in flight is not an operator's to decide.
      const live = await startPayment(app, party, 'wallet external send', 5_000)
      const inFlight = await cli(['resolve', live, '--outcome', 'failed', '--evidence', 'x'])
      expect(inFlight.code).toBe(1)
      expect(inFlight.stderr).toMatch(/only an unknown payment/)
      expect(await settle(app, party, 'wallet external send', live)).toBe('succeeded')
    },
  )

  it(
    'a wallet move never settled by its bank becomes unknown, and an operator decides it',
    { timeout: 60_000 },
    async () => {
      const never = nuban('058', '135792999') // the sandbox bank never settles it
      const reference = randomUUID()
      const sent = await party.client.post<{ status: string }>('/transfer/bank/customer', {
        walletId: party.walletId,
        reference,
        amountKobo: 4_000,
        currency: 'NGN',
        destinationAccountNumber: never,
        destinationBankCode: '058',
        destinationAccountName: syntheticAccountName('058', never),
      })
      expect(sent.body.status).toBe('pending')
      const id = (
        await app.db.pool.query<{ id: string }>(`SELECT id FROM wallet_moves WHERE reference = $1`, [reference])
      ).rows[0]!.id
      await pastTheDeadline(party)
      await waitFor(async () => (await instructionState(app, id)) === 'unknown', 20_000, 'unknown')
      expect((await party.client.get<{ status: string }>(`/transaction/batch/${reference}`)).body.status).toBe(
        'unknown',
      )
      expect((await cli(['resolve', id, '--outcome', 'successful', '--evidence', 'bank statement line 3'])).code).toBe(
        0,
      )
      expect((await party.client.get<{ status: string }>(`/transaction/batch/${reference}`)).body.status).toBe(
        'successful',
      )
      const shown = await cli(['show', id])
      expect(JSON.parse(shown.stdout)).toMatchObject({
        id,
        ownerType: 'wallet_move',
        state: 'succeeded',
        resolution: { outcome: 'successful' },
      })
    },
  )
})

/** Sends of this reference Rail made (every call is recorded). */
async function sendsOf(id: string): Promise<number> {
  return (
    await app.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM provider_calls WHERE reference = $1 AND operation IN ('debit', 'send_to_bank', 'payout')`,
      [id],
    )
  ).rows[0]!.n
}

describe('a requery someone asks for only asks', () => {
  it(
    'GET /transaction/batch/{reference} on an unknown move the bank never received sends nothing',
    { timeout: 60_000 },
    async () => {
      const reference = randomUUID()
      const silent = { noAnswerRate: 1, errorRate: 0, lostResponseRate: 0, delayMs: 0 }
      let id: string
      try {
        await writeFaults(app.db.pool, silent) // the send never reaches the bank
        const debited = await party.client.post('/wallet/debit', {
          walletId: party.walletId,
          reference,
          amountKobo: 6_100,
          currency: 'NGN',
        })
        expect(debited.status).toBe(200)
        id = (await app.db.pool.query<{ id: string }>(`SELECT id FROM wallet_moves WHERE reference = $1`, [reference]))
          .rows[0]!.id
        await pastTheDeadline(party)
        await waitFor(async () => (await instructionState(app, id)) === 'unknown', 20_000, 'unknown')
      } finally {
        await writeFaults(app.db.pool, { ...silent, noAnswerRate: 0 })
      }
      const asked = await party.client.get<{ status: string }>(`/transaction/batch/${reference}`)
      expect(asked.status).toBe(200)
      expect(asked.body.status).not.toBe('successful')
      expect(await sendsOf(id)).toBe(1)
      expect(
        (await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount,
      ).toBe(0)
    },
  )
})

describe('unknown payments are asked about again on a slow schedule', () => {
  it(
    'an unknown payout the bank settled late is settled by the sweep, its hold posted and its callback sent, without anyone asking',
    { timeout: 60_000 },
    async () => {
      const transfer = await outbound(party.client, 71_000)
      await pastTheDeadline(party)
      await waitFor(async () => (await read(party.client, transfer.id)).state === 'unknown', 20_000, 'unknown')
      const unknownSince = (
        await app.db.pool.query<{ next: Date }>(`SELECT next_attempt_at AS next FROM bank_instructions WHERE id = $1`, [
          transfer.id,
        ])
      ).rows[0]!.next
      expect(unknownSince.getTime()).toBeGreaterThan(Date.now() - 60_000) // its slow requery is scheduled

      // The bank settles it late, and tells nobody.
      const payments = app.payments(SETTINGS)
      const controls = payments.providers.sandboxControlsFor(await getProvider(app.db.pool, 'sandbox'))
      expect((await controls.registerPayoutOutcome(transfer.id, 'confirmed')).outcome).toBe('successful')

      await waitFor(
        async () => {
          await sweepUnknown(payments) // the minute's sweep, run now: the unknown payout's requery is due
          return (await read(party.client, transfer.id)).state === 'confirmed'
        },
        20_000,
        'confirmed by its slow requery',
      )
      const resolutions = await app.db.pool.query(
        `SELECT phase FROM ledger_transfers WHERE pending_id = (SELECT hold_transfer_id FROM outbound_transfers WHERE id = $1)`,
        [transfer.id],
      )
      expect(resolutions.rows).toEqual([{ phase: 'post' }])
      await waitFor(
        async () =>
          (
            await app.db.pool.query(`SELECT 1 FROM events WHERE object_id = $1 AND type = 'transfer.confirmed'`, [
              transfer.id,
            ])
          ).rowCount === 1,
        10_000,
        'transfer.confirmed',
      )
    },
  )

  it(
    'no unknown instruction is asked about past the schedule’s horizon, nor before it is due',
    { timeout: 60_000 },
    async () => {
      const transfer = await outbound(party.client, 72_000)
      await pastTheDeadline(party)
      await waitFor(async () => (await read(party.client, transfer.id)).state === 'unknown', 20_000, 'unknown')
      const payments = app.payments({ ...SETTINGS, unknownPolls: [{ everyMs: 3_600_000, untilMs: 7 * 86_400_000 }] })
      const due = async () =>
        (
          await app.db.pool.query(`SELECT 1 FROM bank_instructions WHERE id = $1 AND next_attempt_at <= now()`, [
            transfer.id,
          ])
        ).rowCount === 1
      // Due (200 ms after it went unknown): found; not due: not found; past the horizon: never.
      await waitFor(due, 5_000, 'due')
      await app.db.pool.query(
        `UPDATE bank_instructions SET next_attempt_at = now() + interval '1 hour' WHERE id = $1`,
        [transfer.id],
      )
      const jobs = async () =>
        (await app.db.pool.query(`SELECT 1 FROM graphile_worker.jobs WHERE key = $1`, [`payment:${transfer.id}`]))
          .rowCount
      await sweepUnknown(payments)
      expect(await jobs()).toBe(0)
      await app.db.pool.query(
        `UPDATE bank_instructions SET next_attempt_at = now() - interval '1 second', deadline_at = now() - interval '8 days' WHERE id = $1`,
        [transfer.id],
      )
      await sweepUnknown(payments)
      expect(await jobs()).toBe(0)
      await app.db.pool.query(`UPDATE bank_instructions SET deadline_at = now() - interval '6 days' WHERE id = $1`, [
        transfer.id,
      ])
      expect(await sweepUnknown(payments)).toBeGreaterThanOrEqual(1)
    },
  )
})
