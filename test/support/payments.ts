// Drives each kind of payment through the real API (wallet debit, wallet external send, outbound
// transfer, triage refund), and checks what "exactly once" means for one of them: one payment at
// the bank per reference, one final state, one terminal callback, its hold posted or voided once,
// and a ledger that verifies.
import { randomUUID } from 'node:crypto'
import type { Runner } from 'graphile-worker'
import { expect } from 'vitest'
import { startBackgroundWorkers } from '../../src/app.ts'
import type { RailClient } from '../../src/client/index.ts'
import type { PartnerCredentials } from '../../src/partners/service.ts'
import { verifyLedger } from '../../src/ledger/verify.ts'
import type { PaymentSettings } from '../../src/money-out/pipeline/service.ts'
import { nuban } from '../../src/banking/nip/nuban.ts'
import { clearFailpoint, setFailpoint } from '../../src/platform/failpoints.ts'
import { syntheticAccountName } from '../../src/sandbox/names.ts'
import type { TestApp } from './app.ts'
import type { WorkerSettings } from './rail.ts'
import { postBankNotice } from '../collections/support.ts'
import { fundFloat } from './float.ts'
import { waitFor } from './wait.ts'

export type PaymentKind = 'wallet debit' | 'wallet external send' | 'outbound transfer' | 'triage refund'
export const PAYMENT_KINDS: readonly PaymentKind[] = [
  'wallet debit',
  'wallet external send',
  'outbound transfer',
  'triage refund',
]

/** An account at another bank, and the name the sandbox bank answers for it. */
export const PAYEE = {
  accountNumber: nuban('058', '246813579'),
  bankCode: '058',
  accountName: syntheticAccountName('058', nuban('058', '246813579')),
}

export interface PaymentParty {
  client: RailClient
  credentials: PartnerCredentials
  partnerId: string
  walletId: string
}

/** The payment tests' workers (`startRail({ workers: PAYMENT_WORKERS })`): eight jobs at once, a refused callback tried again after 200 ms. */
export const PAYMENT_WORKERS: WorkerSettings = { concurrency: 8, events: { retryDelaysMs: [200] } }

/**
 * Background workers on the test app's database and bank, with the given pipeline settings: what a
 * kill test starts after the processes it killed, and stops itself.
 */
export function startPaymentWorkers(
  app: TestApp,
  bankSecret: string,
  settings: Partial<PaymentSettings>,
  options: { providerTimeoutMs?: number; concurrency?: number; requestValidityS?: number } = {},
): Promise<Runner> {
  return startBackgroundWorkers({
    pool: app.db.pool,
    masterKey: app.masterKey,
    concurrency: options.concurrency ?? 8,
    providers: {
      sandboxBankUrl: () => app.baseUrl,
      sandboxBankSecret: bankSecret,
      timeoutMs: options.providerTimeoutMs,
      requestValidityS: options.requestValidityS,
    },
    events: { allowLoopbackCallbacks: true, retryDelaysMs: [200] },
    payments: settings,
  })
}

/** A sandbox partner with a funded float and a funded wallet, its callbacks to `callbackUrl`. */
export async function paymentParty(app: TestApp, callbackUrl: string): Promise<PaymentParty> {
  const { client, credentials } = await app.newPartner({ callbackUrl })
  expect((await fundFloat(client, 25_000_000_000)).status).toBe(200)
  const wallet = (
    await client.post<{ walletId: string }>('/wallet', { customerReference: randomUUID(), name: 'Payer' })
  ).body
  expect(
    (
      await client.post('/wallet/credit', {
        walletId: wallet.walletId,
        reference: randomUUID(),
        amountKobo: 25_000_000_000,
        currency: 'NGN',
      })
    ).status,
  ).toBe(200)
  return { client, credentials, partnerId: credentials.partnerId, walletId: wallet.walletId }
}

/** Starts one payment of `kind`; answers its instruction's id (its owner's id, the bank's reference) once it exists. */
export async function startPayment(
  app: TestApp,
  party: PaymentParty,
  kind: PaymentKind,
  amountKobo: number,
): Promise<string> {
  const reference = randomUUID()
  if (kind === 'wallet debit' || kind === 'wallet external send') {
    const path = kind === 'wallet debit' ? '/wallet/debit' : '/transfer/bank/customer'
    const payee =
      kind === 'wallet debit'
        ? {}
        : {
            destinationAccountNumber: PAYEE.accountNumber,
            destinationBankCode: PAYEE.bankCode,
            destinationAccountName: PAYEE.accountName,
          }
    const answer = await party.client.post(path, {
      walletId: party.walletId,
      reference,
      amountKobo,
      currency: 'NGN',
      ...payee,
    })
    expect(answer.status).toBe(200)
    return (
      await app.db.pool.query<{ id: string }>(`SELECT id FROM wallet_moves WHERE partner_id = $1 AND reference = $2`, [
        party.partnerId,
        reference,
      ])
    ).rows[0]!.id
  }
  if (kind === 'outbound transfer') {
    const answer = await party.client.post<{ id: string }>('/api/v1/rail/outbound', {
      clientReference: reference,
      amountKobo,
      beneficiaryAccountNumber: PAYEE.accountNumber,
      beneficiaryBankCode: PAYEE.bankCode,
      beneficiaryAccountName: PAYEE.accountName,
      currency: 'NGN',
    })
    expect(answer.status).toBe(202)
    return answer.body.id
  }
  return startRefund(app, party, amountKobo)
}

/** An unmatched credit (to an archived account) of `amountKobo` from PAYEE, refunded: answers the refund payout's id. */
async function startRefund(app: TestApp, party: PaymentParty, amountKobo: number): Promise<string> {
  const account = (
    await party.client.post<{ trackingId: string; virtualAccount: string }>('/api/v1/rail/virtual-account', {
      reference: randomUUID(),
    })
  ).body
  expect((await party.client.post(`/api/v1/rail/virtual-account/${account.trackingId}/archive`)).status).toBe(200)
  // Announced to Rail as the bank would: the amount reaches Rail whatever the bank's magic amounts do to requests.
  const sessionId = `999${Date.now()}${Math.floor(Math.random() * 1e6)}`
  const notice = {
    type: 'credit.received',
    sessionId,
    accountNumber: account.virtualAccount,
    bankCode: '101',
    amountKobo,
    currency: 'NGN',
    payerName: PAYEE.accountName,
    payerAccountNumber: PAYEE.accountNumber,
    payerBankCode: PAYEE.bankCode,
    narration: null,
    creditedAt: new Date().toISOString(),
  }
  expect((await postBankNotice(app.baseUrl, JSON.stringify(notice))).status).toBe(200)
  let creditId = ''
  await waitFor(
    async () => {
      const found = await app.db.pool.query<{ id: string }>(
        `SELECT id FROM inbound_credits WHERE session_id = $1 AND status = 'unmatched'`,
        [sessionId],
      )
      creditId = found.rows[0]?.id ?? ''
      return creditId !== ''
    },
    15_000,
    'unmatched credit',
  )
  const resolved = await party.client.post<{ resolution: { outboundTransferId: string } }>(
    `/api/v1/rail/unmatched/${creditId}/resolve`,
    { action: 'refund' },
  )
  expect(resolved.status).toBe(200)
  return resolved.body.resolution.outboundTransferId
}

export async function instructionState(app: TestApp, id: string): Promise<string> {
  return (await app.db.pool.query<{ state: string }>(`SELECT state FROM bank_instructions WHERE id = $1`, [id]))
    .rows[0]!.state
}

/**
 * Waits for the payment to end. Payouts from the merchant's funds stay in progress at the sandbox
 * bank until an outcome is registered: registered `confirmed` as soon as the bank has one in progress.
 */
export async function settle(
  app: TestApp,
  party: PaymentParty,
  kind: PaymentKind,
  id: string,
  timeoutMs = 45_000,
): Promise<string> {
  let registered = false
  let state = ''
  await waitFor(
    async () => {
      await retryFailedJobsNow(app)
      state = await instructionState(app, id)
      if (!registered && state === 'sent' && (kind === 'outbound transfer' || kind === 'triage refund')) {
        const answer = await party.client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', {
          transferId: id,
          outcome: 'confirmed',
        })
        registered = answer.status === 200
      }
      return state === 'succeeded' || state === 'failed'
    },
    timeoutMs,
    `payment ${id} (${kind}) to end`,
  )
  return state
}

/** Everything "exactly once" means for one payment that ended in `outcome`. */
export async function expectExactlyOnce(
  app: TestApp,
  kind: PaymentKind,
  id: string,
  outcome: 'succeeded' | 'failed',
): Promise<void> {
  const { pool } = app.db
  expect(await instructionState(app, id)).toBe(outcome)
  const paid = await pool.query<{ response_code: string }>(
    `SELECT response_code FROM sandbox_bank.transfers WHERE reference = $1`,
    [id],
  )
  expect(paid.rows.filter((row) => row.response_code === '00')).toHaveLength(outcome === 'succeeded' ? 1 : 0)
  expect(paid.rows.length).toBeLessThanOrEqual(1)
  const wallet = kind === 'wallet debit' || kind === 'wallet external send'
  const owner = wallet
    ? await pool.query<{ state: string; hold: string }>(
        `SELECT status AS state, hold_transfer_id AS hold FROM wallet_moves WHERE id = $1`,
        [id],
      )
    : await pool.query<{ state: string; hold: string }>(
        `SELECT state, hold_transfer_id AS hold FROM outbound_transfers WHERE id = $1`,
        [id],
      )
  const ownerState = owner.rows[0]!.state
  expect(ownerState).toBe(
    wallet ? (outcome === 'succeeded' ? 'successful' : 'failed') : outcome === 'succeeded' ? 'confirmed' : 'failed',
  )
  const resolutions = await pool.query<{ phase: string }>(`SELECT phase FROM ledger_transfers WHERE pending_id = $1`, [
    owner.rows[0]!.hold,
  ])
  expect(resolutions.rows).toEqual([{ phase: outcome === 'succeeded' ? 'post' : 'void' }])
  const callbacks = await pool.query<{ type: string }>(
    `SELECT type FROM events WHERE object_id = $1 AND type LIKE 'transfer.%' AND type <> 'transfer.unknown'`,
    [id],
  )
  // Wallet moves have no callbacks; a payout has exactly one terminal callback.
  expect(callbacks.rows).toEqual(
    wallet ? [] : [{ type: outcome === 'succeeded' ? 'transfer.confirmed' : 'transfer.failed' }],
  )
  if (kind === 'triage refund') {
    const credit = await pool.query<{ status: string }>(
      `SELECT status FROM inbound_credits WHERE resolution ->> 'outboundTransferId' = $1`,
      [id],
    )
    expect(credit.rows[0]!.status).toBe(outcome === 'succeeded' ? 'refunded' : 'unmatched')
  }
  expect((await verifyLedger(pool)).problems).toEqual([])
}

/**
 * A job that failed waits out graphile-worker's backoff (e^attempts seconds) before its retry: the
 * queue's clock is moved instead, as its own rescheduleJobs does. Only failed jobs not being
 * worked are brought forward; what the retry then does is the product's, unchanged.
 */
async function retryFailedJobsNow(app: TestApp): Promise<void> {
  await app.db.pool.query(
    `SELECT graphile_worker.reschedule_jobs(ARRAY(SELECT id FROM graphile_worker.jobs WHERE last_error IS NOT NULL AND locked_at IS NULL AND run_at > now()), run_at => now())`,
  )
}

/** Makes failpoint `name` throw for its next `times` hits (whatever the payment), then turns it off. */
export function failNext(name: string, times = 1): { hits: string[] } {
  const hits: string[] = []
  setFailpoint(name, ({ id }) => {
    hits.push(id)
    if (hits.length >= times) clearFailpoint(name)
    throw new Error(`injected fault at ${name}`)
  })
  return { hits }
}

/** Runs `action` at failpoint `name` once (its next hit), then turns it off. */
export function onceAt(name: string, action: () => Promise<void>): void {
  setFailpoint(name, async () => {
    clearFailpoint(name)
    await action()
  })
}
