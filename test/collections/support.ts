// Shared by the collections tests: an app with real workers, a callback receiver, and helpers
// that drive the sandbox bank and read what arrived.
import { expect } from 'vitest'
import { signRequest } from '../../src/client/signing.ts'
import { verifyRailSignature, type RailClient } from '../../src/client/index.ts'
import type { TestApp } from '../support/app.ts'
import { startRail, type Rail } from '../support/rail.ts'
import type { ReceivedRequest, Receiver } from '../support/receiver.ts'
import { waitFor } from '../support/wait.ts'

export const BANK_SECRET = 'collections-test-secret'

export interface CollectionsHarness {
  /** Its close() closes the receiver and the app, its database dropped once the ledger verifies. */
  app: Rail
  hook: Receiver
  /** Stops the workers: a test reads what they left before it closes the app. */
  close(): Promise<void>
}

/**
 * A real app with the sandbox bank, workers and a receiver. A payout nobody settles becomes
 * `unknown` at the requery deadline: 5 s unless `deadlineMs` says otherwise (tests that settle a
 * payout by hand after slow steps, such as a browser's, give it longer).
 */
export async function startCollections(options: { deadlineMs?: number } = {}): Promise<CollectionsHarness> {
  const sandbox = { firstDelayMs: 200, deadlineMs: options.deadlineMs ?? 5_000 }
  const app = await startRail({
    sandboxBankSecret: BANK_SECRET,
    payments: { sandbox },
    workers: { concurrency: 8, events: { retryDelaysMs: [200] } },
    receiver: true,
  })
  return { app, hook: app.receiver, close: app.stopWorkers }
}

export interface EventBody<T = Record<string, unknown>> {
  id: string
  event: string
  eventKind: string
  timestamp: string
  data: T
}

/** The callbacks received for an object, parsed, after their signature was checked with the partner's secret. */
export function callbacksFor(hook: Receiver, secret: string, match: (body: EventBody) => boolean): EventBody[] {
  return hook.requests
    .map((request: ReceivedRequest) => ({ request, body: JSON.parse(request.rawBody) as EventBody }))
    .filter(({ body }) => match(body))
    .map(({ request, body }) => {
      expect(verifyRailSignature(request.rawBody, String(request.headers['x-rail-signature']), secret)).toBe(true)
      return body
    })
}

/**
 * Waits for the callbacks. Up to 45 s: on a busy machine Rail may answer the bank's credit
 * notice 503 (overloaded), and the bank retries with graphile-worker's exponential backoff
 * (about 3 s, 7 s, then 20 s), so a callback two refusals late is still a callback.
 */
export async function waitForCallback(
  hook: Receiver,
  secret: string,
  match: (body: EventBody) => boolean,
  count = 1,
): Promise<EventBody[]> {
  await waitFor(() => callbacksFor(hook, secret, match).length >= count, 45_000, 'callback')
  return callbacksFor(hook, secret, match)
}

/** Pays into a virtual account through the sandbox bank (which then announces it to Rail). */
export async function payIn(
  client: RailClient,
  virtualAccount: string,
  amountKobo: number,
  payer: Record<string, string> = {},
) {
  const response = await client.post<{ sessionId: string; notified: boolean }>(
    '/api/v1/rail/sandbox/simulate-inbound-credit',
    { virtualAccount, amountKobo, ...payer },
  )
  expect(response.status).toBe(200)
  return response.body
}

/** POSTs a notice to Rail's provider webhook as the sandbox bank would (signed unless told otherwise). */
export async function postBankNotice(
  baseUrl: string,
  body: string,
  options: { secret?: string; unsigned?: boolean; provider?: string } = {},
): Promise<Response> {
  const path = `/providers/${options.provider ?? 'sandbox'}/webhooks`
  const signed = signRequest({
    keyId: 'bank',
    signingSecret: options.secret ?? BANK_SECRET,
    method: 'POST',
    pathWithQuery: path,
    body,
  })
  const headers: Record<string, string> = { 'Content-Type': 'application/json' }
  if (!options.unsigned) {
    headers['X-Sandbox-Timestamp'] = signed['X-Rail-Timestamp']!
    headers['X-Sandbox-Signature'] = signed['X-Rail-Signature']!
  }
  return fetch(`${baseUrl}${path}`, { method: 'POST', headers, body })
}

/** A ledger account's booked balance, by partner and kind. */
export async function bookedKobo(app: TestApp, partnerId: string, kind: string): Promise<number> {
  const result = await app.db.pool.query<{ booked: string }>(
    `SELECT coalesce(sum(credits_posted - debits_posted), 0) AS booked FROM ledger_accounts WHERE partner_id = $1 AND kind = $2`,
    [partnerId, kind],
  )
  return Number(result.rows[0]!.booked)
}
