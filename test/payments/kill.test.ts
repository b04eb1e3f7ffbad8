// The process working a payment is killed with SIGKILL at a boundary — with its send committed and
// nothing sent, after the bank accepted and before Rail recorded it, or with the bank's answer
// written and the ledger not yet (one transaction, left open) — for each kind of payment:
// a real `rail api` (wallet moves are sent by the request) or `rail worker` (payouts), stopped
// there by a failpoint (RAIL_FAILPOINTS). After it, a new worker takes the payment once the dead
// one's lease has run out, asks the bank first, and it ends exactly once. Then several worker
// processes work the same payments at once — payouts and refunds, and wallet debits and external
// sends a killed `rail api` left `sending` — with extra jobs for each: still one payment at the
// bank per reference.
import type { Runner } from 'graphile-worker'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RailClient } from '../../src/client/index.ts'
import { SWEEP_TASK } from '../../src/money-out/pipeline/service.ts'
import { findFreePort } from '../../src/platform/embedded-db.ts'
import { addJob } from '../../src/platform/jobs.ts'
import { BANK_SECRET } from '../collections/support.ts'
import type { TestApp } from '../support/app.ts'
import { killRail, startKillBench, type KillBench, type RailProcess } from '../support/rail-process.ts'
import {
  expectExactlyOnce,
  instructionState,
  PAYMENT_KINDS,
  settle,
  startPayment,
  startPaymentWorkers,
  type PaymentKind,
  type PaymentParty,
} from '../support/payments.ts'
import { waitFor } from '../support/wait.ts'

const SETTINGS = { sandbox: { firstDelayMs: 200, deadlineMs: 60_000 }, leaseMs: 5_000 }
let bench: KillBench
let app: TestApp
let party: PaymentParty

beforeAll(async () => {
  bench = await startKillBench({ sandboxBankSecret: BANK_SECRET, payments: SETTINGS })
  ;({ app, party } = bench)
})
afterAll(async () => {
  await bench?.close()
})

/** A real `rail api` or `rail worker` on the test database, reaching the test app's sandbox bank. */
function rail(role: 'api' | 'worker', env: Record<string, string> = {}): RailProcess {
  return bench.rail(role, env)
}

const kill = killRail

/** Starts the payment in a process that stops at `failpoint`; answers its id once it stands there. */
async function stoppedAt(
  kind: PaymentKind,
  failpoint: string,
): Promise<{ id: string; process: ReturnType<typeof rail> }> {
  const viaApi = kind === 'wallet debit' || kind === 'wallet external send'
  const port = await findFreePort()
  const process = rail(viaApi ? 'api' : 'worker', { RAIL_FAILPOINTS: `${failpoint}=hang`, PORT: String(port) })
  let id: string
  if (viaApi) {
    const childUrl = `http://127.0.0.1:${port}`
    await waitFor(
      async () => (await fetch(`${childUrl}/healthz`).catch(() => undefined))?.ok === true,
      30_000,
      'rail api listening',
    )
    const client = new RailClient(childUrl, party.credentials)
    // The request never answers: its process stops at the failpoint, and is killed there.
    const before = await app.db.pool.query<{ id: string }>(`SELECT id FROM wallet_moves WHERE partner_id = $1`, [
      party.partnerId,
    ])
    void startPayment(app, { ...party, client }, kind, 130_000).catch(() => undefined)
    let found: string | undefined
    await waitFor(
      async () => {
        const rows = await app.db.pool.query<{ id: string }>(`SELECT id FROM wallet_moves WHERE partner_id = $1`, [
          party.partnerId,
        ])
        found = rows.rows.map((row) => row.id).find((candidate) => !before.rows.some((row) => row.id === candidate))
        return found !== undefined
      },
      30_000,
      'the move claimed',
    )
    id = found!
  } else {
    id = await startPayment(app, party, kind, 130_000)
  }
  // Standing at the failpoint: the send committed (and, after the send, the bank has it).
  await waitFor(async () => (await instructionState(app, id)) === 'sending', 30_000, 'sending')
  if (failpoint === 'payments.after_send') {
    await waitFor(
      async () =>
        (await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount === 1,
      30_000,
      'the bank has it',
    )
  } else if (failpoint === 'payments.before_owner') {
    // The bank's answer written, in a transaction left open before the owner's ledger write.
    await waitFor(
      async () =>
        (await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount === 1,
      30_000,
      'the bank has it',
    )
    await waitFor(
      async () =>
        (
          await app.db.pool.query(
            `SELECT 1 FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE '%UPDATE bank_instructions%'`,
          )
        ).rowCount! >= 1,
      30_000,
      'the answer written, uncommitted',
    )
  } else {
    await new Promise((resolve) => setTimeout(resolve, 300)) // time to send, were it not stopped
    expect((await app.db.pool.query(`SELECT 1 FROM sandbox_bank.transfers WHERE reference = $1`, [id])).rowCount).toBe(
      0,
    )
  }
  return { id, process }
}

function workers(): Promise<Runner> {
  return startPaymentWorkers(app, BANK_SECRET, SETTINGS, { concurrency: 4 })
}

describe.each(PAYMENT_KINDS)('%s', (kind) => {
  it.each(['payments.before_send', 'payments.after_send', 'payments.before_owner'])(
    'its process killed at %s: it ends exactly once',
    { timeout: 120_000 },
    async (failpoint) => {
      const { id, process } = await stoppedAt(kind, failpoint)
      await kill(process)
      expect(await instructionState(app, id)).toBe('sending')
      // The dead process's lease runs out and the sweep (every minute) finds it overdue: brought forward here.
      await app.db.pool.query(
        `UPDATE bank_instructions SET lease_expires_at = now() - interval '1 second', next_attempt_at = now() - interval '31 seconds' WHERE id = $1`,
        [id],
      )
      const runner = await workers()
      try {
        await addJob(app.db.pool, SWEEP_TASK, {})
        expect(await settle(app, party, kind, id)).toBe('succeeded')
        await expectExactlyOnce(app, kind, id, 'succeeded')
      } finally {
        await runner.stop()
      }
    },
  )
})

/** Wallet moves sent by a real `rail api` that stops at `failpoint` and is killed there: left `sending`, their lease run out. */
async function walletMovesLeftSending(
  failpoint: string,
  amounts: readonly number[],
): Promise<{ kind: PaymentKind; id: string }[]> {
  const port = await findFreePort()
  const api = rail('api', { RAIL_FAILPOINTS: `${failpoint}=hang`, PORT: String(port) })
  try {
    const childUrl = `http://127.0.0.1:${port}`
    await waitFor(
      async () => (await fetch(`${childUrl}/healthz`).catch(() => undefined))?.ok === true,
      30_000,
      'rail api listening',
    )
    const client = new RailClient(childUrl, party.credentials)
    const moves = async () =>
      (
        await app.db.pool.query<{ id: string; type: string }>(
          `SELECT id, type FROM wallet_moves WHERE partner_id = $1 AND type <> 'credit'`,
          [party.partnerId],
        )
      ).rows
    const before = new Set((await moves()).map((move) => move.id))
    const kinds: PaymentKind[] = ['wallet debit', 'wallet external send']
    // The requests never answer: their process stops at the failpoint, and is killed there.
    for (const [index, amountKobo] of amounts.entries())
      void startPayment(app, { ...party, client }, kinds[index % 2]!, amountKobo).catch(() => undefined)
    let left: { kind: PaymentKind; id: string }[] = []
    await waitFor(
      async () => {
        left = (await moves())
          .filter((move) => !before.has(move.id))
          .map((move) => ({ id: move.id, kind: move.type === 'debit' ? 'wallet debit' : 'wallet external send' }))
        return left.length === amounts.length
      },
      30_000,
      'the moves claimed',
    )
    const ids = left.map((move) => move.id)
    await waitFor(
      async () =>
        (
          await app.db.pool.query(`SELECT 1 FROM bank_instructions WHERE id = ANY ($1::uuid[]) AND state = 'sending'`, [
            ids,
          ])
        ).rowCount === ids.length,
      30_000,
      'all sending',
    )
    if (failpoint === 'payments.after_send') {
      // Each send made (the bank has it, or dropped the first submission of a 9097 amount), none recorded.
      const reached = `SELECT (SELECT count(*) FROM sandbox_bank.transfers WHERE reference = ANY ($1::text[])) + (SELECT count(*) FROM sandbox_bank.dropped_submissions WHERE reference = ANY ($1::text[])) AS n`
      await waitFor(
        async () => Number((await app.db.pool.query<{ n: string }>(reached, [ids])).rows[0]!.n) === ids.length,
        30_000,
        'every send made',
      )
    }
    return left
  } finally {
    await kill(api)
  }
}

describe('several worker processes', () => {
  it('working the same payments at once: one payment at the bank per reference', { timeout: 240_000 }, async () => {
    // Plain amounts, first submissions lost (9097) and answers lost (9098).
    const amounts = [150_000, 159_097, 159_098]
    // Wallet moves whose `rail api` died with the send committed and nothing sent, or after the send
    // and before recording it; the dead process's lease runs out (brought forward here).
    const walletMoves = [
      ...(await walletMovesLeftSending('payments.before_send', [...amounts, ...amounts])),
      ...(await walletMovesLeftSending('payments.after_send', [...amounts, ...amounts])),
    ]
    await app.db.pool.query(
      `UPDATE bank_instructions SET lease_expires_at = now() - interval '1 second' WHERE id = ANY ($1::uuid[])`,
      [walletMoves.map((move) => move.id)],
    )
    expect(new Set(await Promise.all(walletMoves.map((move) => instructionState(app, move.id))))).toEqual(
      new Set(['sending']),
    )

    const children = [rail('worker'), rail('worker')]
    const runner = await workers()
    try {
      // Payouts and refunds, started now.
      const kinds: PaymentKind[] = ['outbound transfer', 'outbound transfer', 'triage refund']
      const payouts = await Promise.all(
        Array.from({ length: 18 }, (_unused, index) => amounts[index % 3]!).map(async (amountKobo, index) => ({
          kind: kinds[index % 3]!,
          id: await startPayment(app, party, kinds[index % 3]!, amountKobo),
        })),
      )
      const started = [...walletMoves, ...payouts]
      // Every instruction gets extra jobs: all processes race for each.
      await app.db.pool.query(
        `SELECT graphile_worker.add_job('payment_work', json_build_object('id', id)) FROM unnest($1::uuid[]) AS id, generate_series(1, 3)`,
        [started.map((payment) => payment.id)],
      )
      for (const payment of started)
        expect(await settle(app, party, payment.kind, payment.id, 90_000)).toBe('succeeded')
      for (const payment of started) await expectExactlyOnce(app, payment.kind, payment.id, 'succeeded')
      // The wallet moves each reached the bank once, whatever the resends.
      const paid = await app.db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM sandbox_bank.transfers WHERE reference = ANY ($1::text[]) AND response_code = '00'`,
        [walletMoves.map((move) => move.id)],
      )
      expect(paid.rows[0]!.n).toBe(walletMoves.length)
    } finally {
      await runner.stop()
      await Promise.all(children.map(kill))
    }
  })
})
