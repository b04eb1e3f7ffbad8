// Shared by the routed-provider tests: an app whose partners are routed through the sandbox's
// Paystack and Monnify dialects (Rail's real adapters over real HTTP), with real workers, a real
// callback receiver, and helpers that read what the pipeline did with a payout.
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import type { RailClient } from '../../src/client/index.ts'
import type { PaymentSettings } from '../../src/money-out/pipeline/service.ts'
import { setPartnerRoutes } from '../../src/banking/providers/service.ts'
import { writeFaults, type Faults } from '../../src/sandbox/faults.ts'
import type { TestApp } from '../support/app.ts'
import { fundFloat } from '../support/float.ts'
import { PAYEE } from '../support/payments.ts'
import { startRail } from '../support/rail.ts'
import type { Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'

/** The sandbox's dialects of the two real providers (migration 0050). */
export const ROUTED_PROVIDERS = ['sandbox-paystack', 'sandbox-monnify'] as const
export type RoutedProvider = (typeof ROUTED_PROVIDERS)[number]

export interface RoutedHarness {
  app: TestApp
  hook: Receiver
  /** Stops the workers and the receiver; closes the app once its ledger verifies. */
  close(): Promise<void>
}

/** A real app and its workers; the pipeline's first requery 200 ms after a send. */
export async function startRouted(secret: string, payments: Partial<PaymentSettings>): Promise<RoutedHarness> {
  const app = await startRail({
    sandboxBankSecret: secret,
    payments,
    workers: { concurrency: 8, events: { retryDelaysMs: [200] } },
    receiver: true,
  })
  return { app, hook: app.receiver, close: app.close }
}

/** A partner with its callbacks to `hook`, routed as given, its float funded. */
export async function routedPartner(
  app: TestApp,
  hook: Receiver,
  routes: Parameters<typeof setPartnerRoutes>[2],
  floatKobo = 50_000_000,
): Promise<{ client: RailClient; partnerId: string }> {
  const { client, credentials } = await app.newPartner({ callbackUrl: `${hook.url}/hooks` })
  await setPartnerRoutes(app.db.pool, credentials.partnerId, routes)
  expect((await fundFloat(client, floatKobo)).status).toBe(200)
  return { client, partnerId: credentials.partnerId }
}

/** An outbound transfer to PAYEE of `amountKobo`, accepted (202): its id, the bank's reference. */
export async function payOut(client: RailClient, amountKobo: number): Promise<string> {
  const answer = await client.post<{ id: string }>('/api/v1/rail/outbound', {
    clientReference: randomUUID(),
    amountKobo,
    beneficiaryAccountNumber: PAYEE.accountNumber,
    beneficiaryBankCode: PAYEE.bankCode,
    beneficiaryAccountName: PAYEE.accountName,
    currency: 'NGN',
  })
  expect(answer.status, JSON.stringify(answer.body)).toBe(202)
  return answer.body.id
}

export const NO_FAULTS: Faults = { noAnswerRate: 0, errorRate: 0, lostResponseRate: 0, delayMs: 0 }

/** Runs `work` with the bank's fault rates set, and always switches them off again. */
export async function withFaults<T>(app: TestApp, faults: Partial<Faults>, work: () => Promise<T>): Promise<T> {
  await writeFaults(app.db.pool, { ...NO_FAULTS, ...faults })
  try {
    return await work()
  } finally {
    await writeFaults(app.db.pool, NO_FAULTS)
  }
}

/** The callbacks of one type that mention `objectId`, parsed. */
export function eventsOf(hook: Receiver, type: string, objectId: string): Record<string, unknown>[] {
  return hook.requests
    .map((request) => JSON.parse(request.rawBody) as { event?: string })
    .filter((body) => body.event === type && JSON.stringify(body).includes(objectId))
}

export async function outboundState(client: RailClient, id: string): Promise<string> {
  return (await client.get<{ state: string }>(`/api/v1/rail/outbound/${id}`)).body.state
}

/** Waits for the payout to reach the provider, registers the bank's outcome, and waits for its end. */
export async function settlePayout(
  client: RailClient,
  id: string,
  outcome: 'confirmed' | 'failed' = 'confirmed',
): Promise<void> {
  if ((await outboundState(client, id)) === outcome) return
  await waitFor(async () => (await outboundState(client, id)) === 'submitted', 30_000, `payout ${id} submitted`)
  const settled = await client.post('/api/v1/rail/sandbox/simulate-outbound-settlement', { transferId: id, outcome })
  expect(settled.status, JSON.stringify(settled.body)).toBe(200)
  await waitFor(async () => (await outboundState(client, id)) === outcome, 30_000, `payout ${id} ${outcome}`)
}

/**
 * What the pipeline did with one instruction at the provider: it is the routed provider's, every
 * call made for it went to that provider alone, and the bank holds at most one payment under its
 * reference (one paid, when it succeeded).
 */
export async function expectOnceThrough(
  app: TestApp,
  id: string,
  provider: string,
  outcome?: 'succeeded' | 'failed',
): Promise<void> {
  const { pool } = app.db
  const instruction = await pool.query<{ provider: string; state: string }>(
    `SELECT provider, state FROM bank_instructions WHERE id = $1`,
    [id],
  )
  expect(instruction.rows[0]?.provider).toBe(provider)
  if (outcome) expect(instruction.rows[0]?.state).toBe(outcome)
  const calledProviders = await pool.query<{ provider: string }>(
    `SELECT DISTINCT provider FROM provider_calls WHERE reference = $1`,
    [id],
  )
  expect(calledProviders.rows.map((row) => row.provider)).toEqual([provider])
  const atBank = await pool.query<{ response_code: string }>(
    `SELECT response_code FROM sandbox_bank.transfers WHERE reference = $1`,
    [id],
  )
  expect(atBank.rows.length).toBeLessThanOrEqual(1)
  if (outcome === 'succeeded') expect(atBank.rows.map((row) => row.response_code)).toEqual(['00'])
}

/** The provider that holds a virtual account, as Rail recorded it. */
export async function accountProvider(app: TestApp, accountNumber: string): Promise<string | undefined> {
  return (
    await app.db.pool.query<{ provider: string }>(`SELECT provider FROM virtual_accounts WHERE account_number = $1`, [
      accountNumber,
    ])
  ).rows[0]?.provider
}
